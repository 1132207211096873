#!/usr/bin/env python3
"""ref_fluid: an independent, exact-as-float64 reference of the fluid semantics.

NOT SimGrid. Written from ../../../shared/docs/fluid-network.md (plus the FATPIPE
weighting observed in SimGrid, see README.md), only to characterise how far the real
SimGrid (sgnetsim.py) is from an exact event-driven computation of the same model.

Usage: ref_fluid.py SCENARIO.json [--exact] [--fatpipe-unweighted]   (links/routes scenarios only)
Prints the same JSON as sgnetsim.py. --exact computes in rational arithmetic
(fractions.Fraction of the float inputs; finish times rounded to float at the end),
otherwise float64 (agrees with --exact to ~1e-14 on the random scenarios).

Model: flow i with route latency L_i (links counted with multiplicity) takes no
bandwidth in [s_i, s_i + L_i); then it joins weighted max-min sharing with penalty
p_i = L_i (1.0 when L_i == 0): progressive filling, every unfixed flow at rate
level / p_i; a SHARED link saturates when sum(mult * rate) = bw, a FATPIPE link when
max(mult * rate) = bw; the flows on the first saturated link are fixed, repeat.
Rates are recomputed at every activation and completion; no event merging.
"""

import json
import sys
from fractions import Fraction


def solve(active, flows, links, fatpipe_weighted=True):
    """Return {flow index: rate} for the active flows."""
    rate = {}
    unfixed = set(active)
    used = {}  # link -> capacity consumed by fixed flows (SHARED)
    while unfixed:
        best = None
        best_links = []
        # per link: level at which it saturates given the unfixed flows on it
        link_flows = {}
        for i in unfixed:
            for lid, m in flows[i]["mult"].items():
                link_flows.setdefault(lid, []).append(i)
        for lid, fl in link_flows.items():
            lk = links[lid]
            if lk["policy"] == "FATPIPE":
                if fatpipe_weighted:
                    denom = max(flows[i]["mult"][lid] / flows[i]["pen"] for i in fl)
                    level = lk["bw"] / denom
                else:
                    level = min(lk["bw"] / flows[i]["mult"][lid] * flows[i]["pen"] for i in fl)
            else:
                denom = sum(flows[i]["mult"][lid] / flows[i]["pen"] for i in fl)
                level = max(lk["bw"] - used.get(lid, 0), 0) / denom
            if best is None or level < best:
                best, best_links = level, [lid]
            elif level == best:
                best_links.append(lid)
        fix = set()
        for lid in best_links:
            lk = links[lid]
            if lk["policy"] == "FATPIPE" and not fatpipe_weighted:
                for i in link_flows[lid]:
                    if lk["bw"] / flows[i]["mult"][lid] * flows[i]["pen"] == best:
                        fix.add(i)
            else:
                fix.update(link_flows[lid])
        for i in fix:
            if i in unfixed:
                r = best / flows[i]["pen"]
                rate[i] = r
                unfixed.discard(i)
                for lid, m in flows[i]["mult"].items():
                    used[lid] = used.get(lid, 0) + m * r
    return rate


def simulate(scn, fatpipe_weighted=True, exact=False):
    num = Fraction if exact else float
    links = {l["id"]: {"bw": num(l["bandwidth"]), "lat": num(l.get("latency", 0.0)),
                       "policy": l.get("sharing_policy", "SHARED") or "SHARED"} for l in scn["links"]}
    routes = {(r["src"], r["dst"]): r["links"] for r in scn["routes"]}
    flows = []
    for f in scn["flows"]:
        rl = routes[(f["src"], f["dst"])]
        lat = num(0)
        for lid in rl:
            lat += links[lid]["lat"]
        mult = {}
        for lid in rl:
            mult[lid] = mult.get(lid, 0) + 1
        flows.append({"start": num(f["start"]), "act": num(f["start"]) + lat, "pen": lat if lat > 0 else num(1),
                      "rem": num(f["bytes"]), "mult": mult, "finish": None})
    pending = sorted(range(len(flows)), key=lambda i: (flows[i]["act"], i))
    active = set()
    t = num(0)
    pi = 0
    while pi < len(pending) or active:
        # activate everything due now
        while pi < len(pending) and flows[pending[pi]]["act"] <= t:
            i = pending[pi]
            pi += 1
            if flows[i]["rem"] == 0:
                flows[i]["finish"] = flows[i]["act"]
            else:
                active.add(i)
        if not active:
            if pi < len(pending):
                t = flows[pending[pi]]["act"]
                continue
            break
        rate = solve(active, flows, links, fatpipe_weighted)
        dt_done = min(flows[i]["rem"] / rate[i] for i in active)
        t_next = t + dt_done
        if pi < len(pending) and flows[pending[pi]]["act"] < t_next:
            t_next = flows[pending[pi]]["act"]
        dt = t_next - t
        done = []
        for i in active:
            if flows[i]["rem"] / rate[i] == dt_done and t + dt_done == t_next:
                done.append(i)
            else:
                flows[i]["rem"] -= rate[i] * dt
                if flows[i]["rem"] <= 0:
                    done.append(i)
        for i in done:
            active.discard(i)
            flows[i]["finish"] = t_next
        t = t_next
    out = []
    for f, st in zip(scn["flows"], flows):
        out.append({"id": f["id"], "src": f["src"], "dst": f["dst"], "bytes": f["bytes"], "start": float(st["start"]),
                    "finish": float(st["finish"]), "duration": float(st["finish"] - st["start"])})
    return {"flows": out, "makespan": max((o["finish"] for o in out), default=0.0)}


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    with open(args[0]) as fh:
        scn = json.load(fh)
    print(json.dumps(simulate(scn, fatpipe_weighted="--fatpipe-unweighted" not in sys.argv,
                              exact="--exact" in sys.argv), indent=1))
