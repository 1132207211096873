#!/usr/bin/env python3
"""A dmda-like greedy scheduler for starsim, as an external agent
(starsim-sched protocol, version 1; docs/agent/protocol.md). Standard
library only.

    starsim run --sched "external:python3 tools/agents/greedy.py"
    starsim run --sched "external:python3 tools/agents/greedy.py --alpha 1 --beta 2"

Each ready task goes, at once, to the worker of least fitness

    alpha * (expected_end - least expected_end) + beta * transfer

(StarPU's dmda with its default weights alpha = beta = 1 and no energy
term), ties to the first such worker, and its inputs are prefetched there.
starsim computes expected ends and transfers as dmda does, so with the
default weights this agent makes dmda's decisions.
"""
import argparse
import json
import sys


def reply(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--alpha", type=float, default=1.0)
    ap.add_argument("--beta", type=float, default=1.0)
    args = ap.parse_args()
    for line in sys.stdin:
        msg = json.loads(line)
        kind = msg["type"]
        if kind == "hello":
            if msg["version"] != 1:
                sys.exit("greedy.py speaks version 1 of the protocol, not %s" % msg["version"])
            reply({"type": "hello", "version": 1, "name": "greedy.py"})
        elif kind == "push":
            cands = msg["candidates"]
            end_min = min(c["expected_end_us"] for c in cands)
            best, best_f = None, float("inf")
            for c in cands:
                f = args.alpha * (c["expected_end_us"] - end_min)
                f += args.beta * c["transfer_us"]
                if f < best_f:
                    best, best_f = c["worker"], f
            reply({"seq": msg["seq"], "worker": best, "prefetch": True})
        elif kind == "pop":
            reply({"seq": msg["seq"], "task": None})  # it defers nothing
        elif kind == "end":
            break


if __name__ == "__main__":
    main()
