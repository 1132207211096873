#!/usr/bin/env python3
"""compare: check flow finish times against expected ones.

Usage: compare.py EXPECTED ACTUAL [--rtol R] [--atol A] [--quiet] [--label NAME]

EXPECTED is either a fluid case (a scenario with an "expected": {id: {finish,...}} key)
or an output of sgnetsim.py ({"flows": [{"id", "finish", ...}]}); ACTUAL is an
output in sgnetsim.py's format. A flow passes when |actual - expected| <= R*|expected| + A
for its finish (default R = 1e-12, A = 0). Exit status 0 if every flow passes
and both sides have the same flow ids, 1 otherwise.
"""
import argparse
import json
import sys


def finishes(doc):
    if "expected" in doc:
        return {k: float(v["finish"]) for k, v in doc["expected"].items()}
    return {f["id"]: float(f["finish"]) for f in doc["flows"]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("expected")
    ap.add_argument("actual")
    ap.add_argument("--rtol", type=float, default=1e-12)
    ap.add_argument("--atol", type=float, default=0.0)
    ap.add_argument("--quiet", action="store_true")
    ap.add_argument("--label", help="name to print instead of ACTUAL")
    a = ap.parse_args()
    with open(a.expected) as fh:
        exp = finishes(json.load(fh))
    with open(a.actual) as fh:
        act = finishes(json.load(fh))
    name = a.label or a.actual
    ok = True
    if set(exp) != set(act):
        ok = False
        print("%s: flow ids differ: missing %s, extra %s" % (name, sorted(set(exp) - set(act)),
                                                            sorted(set(act) - set(exp))))
    worst = 0.0
    for k in sorted(set(exp) & set(act)):
        e, v = exp[k], act[k]
        err = abs(v - e)
        rel = err / abs(e) if e != 0 else (0.0 if err == 0 else float("inf"))
        worst = max(worst, rel)
        if err > a.rtol * abs(e) + a.atol:
            ok = False
            print("%s: flow %s: finish %r, expected %r (abs %.3g, rel %.3g)" % (name, k, v, e, err, rel))
    if not a.quiet:
        print("%s: %s, %d flows, worst relative error %.3g" % (name, "OK" if ok else "MISMATCH", len(exp), worst))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
