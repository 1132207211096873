#!/usr/bin/env python3
"""scale-bw.py DIR HOST X OUT: copies HOST's part of the StarPU sampling
directory DIR into OUT with every bandwidth multiplied by X, as `starsim
--pci-bw-scale X` scales it (calibrate/whatif.go), so that StarPU over
SimGrid (the peer) runs the same perturbed machine:

- platform files (bus/HOST.platform.xml and .platform.v4.xml): every link's
  bandwidth attribute (latencies unchanged);
- bus/HOST.bandwidth: every measured bandwidth (MB/s; nan and the zero
  diagonal unchanged), which StarPU's transfer predictions use;
- everything else of HOST (bus/HOST.*, codelets/*/*.HOST) copied as is.
"""
import os
import re
import shutil
import sys


def scale_num(text, x):
    v = float(text)
    return repr(v * x) if v != 0 else text


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    src, host, xs, out = sys.argv[1:]
    x = float(xs)
    if not x > 0:
        sys.exit("scale-bw.py: X must be > 0")
    if os.path.exists(out):
        sys.exit(f"scale-bw.py: {out} exists")
    for sub, _, files in os.walk(src):
        rel = os.path.relpath(sub, src)
        for f in files:
            if not (f.startswith(host + ".") or f.endswith("." + host)):
                continue
            os.makedirs(os.path.join(out, rel), exist_ok=True)
            shutil.copy(os.path.join(sub, f), os.path.join(out, rel, f))
    bus = os.path.join(out, "bus")
    for f in (host + ".platform.xml", host + ".platform.v4.xml"):
        p = os.path.join(bus, f)
        if not os.path.exists(p):
            continue
        t = open(p).read()
        n = [0]

        def link(m):
            n[0] += 1
            return re.sub(r'bandwidth="([0-9.eE+-]+)', lambda b: 'bandwidth="' + scale_num(b.group(1), x), m.group(0))
        t = re.sub(r'<link [^>]*>', link, t)
        if n[0] == 0:
            sys.exit(f"scale-bw.py: {p}: no <link>")
        open(p, "w").write(t)
    p = os.path.join(bus, host + ".bandwidth")
    lines = open(p).read().split("\n")
    for i, l in enumerate(lines):
        if l.startswith("#") or not l.strip():
            continue
        lines[i] = "\t".join(c if c in ("nan", "") else "%f" % (float(c) * x) if float(c) != 0 else c for c in l.split("\t"))
    open(p, "w").write("\n".join(lines))


main()
