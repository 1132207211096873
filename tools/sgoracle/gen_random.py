#!/usr/bin/env python3
"""gen_random: seeded random "PCI-like" network scenarios, with SimGrid's answers.

Usage:
    gen_random.py SEED N OUTDIR [--no-oracle] [--jobs J] [--oracle-arg ARG ...]

Writes OUTDIR/pci_<SEED>_<i>.json (the scenario, i = 000..N-1) and, unless
--no-oracle, OUTDIR/pci_<SEED>_<i>.expected.json (sgnetsim.py's output for it:
the real SimGrid 3.32 with StarPU's network settings).

Same SEED and N -> byte-identical scenario files (each scenario i has its own
random.Random seeded from (SEED, i), so scenario i does not depend on N either).

Shape of a scenario:
  * hosts RAM and CUDA0..CUDA{K-1}, K in 1..8;
  * per GPU an up link CUDAi-RAM and a down link RAM-CUDAi: bandwidth in
    [1e9, 1.6e10] B/s (sometimes a round value, sometimes up == down), latency in
    [0, 3e-5] s, about 15% exactly 0; about 8% of private links are FATPIPE;
  * one shared link "Share", latency 0, bandwidth 0.5..1.5 x the largest private
    bandwidth (sometimes exactly equal to it or to another link's);
  * routes RAM->CUDAi = [RAM-CUDAi, Share], CUDAi->RAM = [CUDAi-RAM, Share];
    for some GPU pairs a peer route, either [CUDAi-RAM, Share, Share, RAM-CUDAj]
    (StarPU's hwloc platforms list the host link twice) or the 3-link
    [CUDAi-RAM, Share, RAM-CUDAj];
  * 5..200 flows on those routes, sizes 0, 1 B, small, StarPU tile sizes, up to
    64 MiB, with repeated sizes; start times drawn in a window scaled to the
    traffic, many flows sharing an instant (0, a few "batch" instants, a previous
    flow's start), some a previous flow's start plus a tiny offset.
"""

import argparse
import json
import os
import random
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
ORACLE = os.path.join(HERE, "sgnetsim.py")
MIB = 1 << 20
TILE_SIZES = [960 * 960 * 8, 960 * 960 * 4, 1024 * 1024 * 8, 2048 * 2048 * 4, 512 * 512 * 8,
              4 * MIB, 8 * MIB, 16 * MIB, 32 * MIB, 64 * MIB]


def rand_bw(rng):
    r = rng.random()
    if r < 0.2:
        return float(rng.choice([1e9, 2e9, 4e9, 5e9, 6e9, 8e9, 1e10, 1.2e10, 1.6e10]))
    if r < 0.4:
        return float(rng.randint(1000, 16000)) * 1e6
    return rng.uniform(1e9, 1.6e10)


def rand_lat(rng):
    r = rng.random()
    if r < 0.15:
        return 0.0
    if r < 0.4:
        return float(rng.choice([1e-6, 5e-6, 9e-6, 1e-5, 1.1e-5, 1.5e-5, 2e-5, 2.5e-5, 3e-5]))
    return rng.uniform(0.0, 3e-5)


def rand_size(rng, sizes_so_far):
    r = rng.random()
    if r < 0.05:
        return 0
    if r < 0.09:
        return 1
    if r < 0.25 and sizes_so_far:
        return rng.choice(sizes_so_far)  # repeated size -> ties
    if r < 0.45:
        return rng.choice(TILE_SIZES)
    if r < 0.60:
        return rng.randint(2, 64 * 1024)
    return rng.randint(64 * 1024, 64 * MIB)


def make_scenario(seed, index):
    rng = random.Random(seed * 1000003 + index)
    k = rng.randint(1, 8)
    gpus = ["CUDA%d" % i for i in range(k)]
    links = []
    maxbw = 0.0
    for g in gpus:
        down = {"id": "RAM-%s" % g, "bandwidth": rand_bw(rng), "latency": rand_lat(rng)}
        up = {"id": "%s-RAM" % g, "bandwidth": rand_bw(rng), "latency": rand_lat(rng)}
        if rng.random() < 0.15:
            up["bandwidth"] = down["bandwidth"]
        if rng.random() < 0.15:
            up["latency"] = down["latency"]
        for l in (down, up):
            if rng.random() < 0.08:
                l["sharing_policy"] = "FATPIPE"
            maxbw = max(maxbw, l["bandwidth"])
            links.append(l)
    r = rng.random()
    if r < 0.15:
        share_bw = maxbw
    elif r < 0.25:
        share_bw = rng.choice(links)["bandwidth"]
    else:
        share_bw = maxbw * rng.uniform(0.5, 1.5)
    links.insert(0, {"id": "Share", "bandwidth": share_bw, "latency": 0.0})

    routes = []
    for g in gpus:
        routes.append({"src": "RAM", "dst": g, "links": ["RAM-%s" % g, "Share"]})
        routes.append({"src": g, "dst": "RAM", "links": ["%s-RAM" % g, "Share"]})
    p_peer = rng.choice([0.0, 0.3, 0.7, 1.0]) if k > 1 else 0.0
    peer_style = rng.choice(["twice", "three", "mixed"])
    for a in gpus:
        for b in gpus:
            if a == b or rng.random() >= p_peer:
                continue
            style = peer_style if peer_style != "mixed" else rng.choice(["twice", "three"])
            if style == "twice":
                lk = ["%s-RAM" % a, "Share", "Share", "RAM-%s" % b]
            else:
                lk = ["%s-RAM" % a, "Share", "RAM-%s" % b]
            routes.append({"src": a, "dst": b, "links": lk})

    nflows = rng.randint(5, 200)
    flows = []
    sizes = []
    starts = [0.0]
    # Time window: some multiple of the time the shared link needs for the traffic.
    est_bytes = nflows * 8 * MIB
    window = rng.choice([0.0, 0.1, 0.5, 1.0, 2.0]) * est_bytes / share_bw
    batches = [rng.uniform(0, window) for _ in range(rng.randint(1, 5))] if window > 0 else [0.0]
    for i in range(nflows):
        route = rng.choice(routes)
        size = rand_size(rng, sizes)
        sizes.append(size)
        r = rng.random()
        if window == 0 or r < 0.2:
            start = 0.0
        elif r < 0.4:
            start = rng.choice(batches)
        elif r < 0.5:
            start = rng.choice(starts)
        elif r < 0.55:
            start = rng.choice(starts) + rng.choice([1e-9, 1e-7, 1e-5])
        elif r < 0.65:
            start = round(rng.uniform(0, window), 4)
        else:
            start = rng.uniform(0, window)
        starts.append(start)
        flows.append({"id": "f%d" % i, "src": route["src"], "dst": route["dst"],
                      "bytes": size, "start": start})
    return {"title": "random PCI-like scenario seed=%d index=%d (K=%d GPUs, %d flows)" % (seed, index, k, nflows),
            "generator": "tools/sgoracle/gen_random.py %d" % seed,
            "links": links, "routes": routes, "flows": flows}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("seed", type=int)
    ap.add_argument("n", type=int)
    ap.add_argument("outdir")
    ap.add_argument("--no-oracle", action="store_true", help="write the scenarios only")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--oracle-arg", action="append", default=[], help="extra argument for sgnetsim.py")
    args = ap.parse_args()

    os.makedirs(args.outdir, exist_ok=True)
    names = []
    for i in range(args.n):
        name = "pci_%d_%03d" % (args.seed, i)
        scn = make_scenario(args.seed, i)
        with open(os.path.join(args.outdir, name + ".json"), "w") as fh:
            json.dump(scn, fh, indent=1)
            fh.write("\n")
        names.append(name)
    if args.no_oracle:
        return 0

    def run(name):
        src = os.path.join(args.outdir, name + ".json")
        p = subprocess.run([sys.executable, ORACLE, src] + args.oracle_arg,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if p.returncode != 0:
            return name, p.stderr
        with open(os.path.join(args.outdir, name + ".expected.json"), "w") as fh:
            fh.write(p.stdout)
        return name, None

    failed = 0
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as ex:
        for name, err in ex.map(run, names):
            if err:
                failed += 1
                sys.stderr.write("gen_random: oracle failed on %s:\n%s\n" % (name, err[-2000:]))
    print("gen_random: wrote %d scenarios to %s (%d oracle failures)" % (len(names), args.outdir, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
