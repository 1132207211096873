#!/usr/bin/env python3
"""An eager scheduler for starsim, as an external agent (starsim-sched protocol,
version 1; docs/agent/protocol.md). Standard library only.

    starsim run --sched "external:python3 tools/agents/eager.py"

StarPU's eager keeps one central FIFO: a ready task joins its end; an idle
worker takes the first task it can run. Here every push is deferred into
that FIFO, and every pop hands the worker the first task it can run (the
push's candidates say which workers can). It reproduces starsim's built-in
eager schedule exactly.
"""
import json
import sys


def reply(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def main():
    fifo = []  # (task id, the workers that can run it), oldest first
    for line in sys.stdin:
        msg = json.loads(line)
        kind = msg["type"]
        if kind == "hello":
            if msg["version"] != 1:
                sys.exit("eager.py speaks version 1 of the protocol, not %s" % msg["version"])
            reply({"type": "hello", "version": 1, "name": "eager.py"})
        elif kind == "push":
            fifo.append((msg["task"]["id"], {c["worker"] for c in msg["candidates"]}))
            reply({"seq": msg["seq"], "defer": True})
        elif kind == "pop":
            worker = msg["worker"]
            for i, (task, workers) in enumerate(fifo):
                if worker in workers:
                    del fifo[i]
                    reply({"seq": msg["seq"], "task": task})
                    break
            else:
                reply({"seq": msg["seq"], "task": None})
        elif kind == "end":
            break


if __name__ == "__main__":
    main()
