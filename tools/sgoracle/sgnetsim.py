#!/usr/bin/python3
"""sgnetsim: run a starsim network-flow scenario through the real SimGrid 3.32.

Usage:
    sgnetsim.py SCENARIO.json [--cfg KEY:VALUE ...] [--keep-xml PATH] [--extra]

Reads the scenario (links/routes/flows, or platform_file/flows), builds a SimGrid
platform configured the way StarPU's generated platforms are, issues one
host-to-host communication per flow at its start time (Comm.sendto_async: no
mailbox, no actor matching), and prints the finish time of every flow as JSON:

    {"flows": [{"id","src","dst","bytes","start","finish","duration"}, ...], "makespan": X}

Flows are reported in input order; makespan = max finish (0 with no flows).

This is a test oracle only; it needs the Debian package python3-simgrid
(SimGrid 3.32), which installs into the system interpreter /usr/bin/python3.
"""

import json
import os
import sys

SYSTEM_PYTHON = "/usr/bin/python3"
SYSTEM_DIST = "/usr/lib/python3/dist-packages"


def _try_import():
    """import simgrid, hiding the one INFO line it prints on import (contexts/factory)."""
    import tempfile
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as tf:
        os.dup2(tf.fileno(), 2)
        try:
            import simgrid
            return simgrid
        except ImportError:
            return None
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            tf.seek(0)
            for line in tf.read().decode(errors="replace").splitlines():
                if "Set 'contexts/factory' to 'thread'" not in line:
                    sys.stderr.write(line + "\n")


def _import_simgrid():
    mod = _try_import()
    if mod is not None:
        return mod
    # The Debian module is built for the system interpreter; a pyenv/venv python
    # of the same minor version can still load it from dist-packages.
    if os.path.isdir(SYSTEM_DIST) and SYSTEM_DIST not in sys.path:
        sys.path.append(SYSTEM_DIST)
        mod = _try_import()
        if mod is not None:
            return mod
        sys.path.remove(SYSTEM_DIST)
    if os.path.realpath(sys.executable) != os.path.realpath(SYSTEM_PYTHON) and \
            os.path.exists(SYSTEM_PYTHON) and not os.environ.get("SGNETSIM_REEXEC"):
        os.environ["SGNETSIM_REEXEC"] = "1"
        sys.stdout.flush()
        sys.stderr.flush()
        os.execv(SYSTEM_PYTHON, [SYSTEM_PYTHON] + sys.argv)
    sys.stderr.write("sgnetsim: cannot import simgrid; install it with\n"
                     "  apt-get update && apt-get install -y python3-simgrid\n")
    sys.exit(2)


# The <config> block of StarPU's generated platform files (v4 spelling).
STARPU_CONFIG = [
    ("network/TCP-gamma", "-1"),
    ("network/latency-factor", "1"),
    ("network/bandwidth-factor", "1"),
    ("network/weight-S", "0.0"),
    ("network/crosstraffic", "0"),
]

POLICIES = {"SHARED", "FATPIPE"}


class ScenarioError(Exception):
    pass


def xml_attr(s):
    return (str(s).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;").replace("'", "&apos;"))


def fnum(x):
    """A float in a form SimGrid parses back exactly (repr round-trips through strtod)."""
    return repr(float(x))


V3_CONFIG_RENAMES = {
    "network/TCP_gamma": "network/TCP-gamma",
    "network/latency_factor": "network/latency-factor",
    "network/bandwidth_factor": "network/bandwidth-factor",
    "network/weight_S": "network/weight-S",
}


def upgrade_v3(text):
    """Translate a SimGrid v3 platform (StarPU's *.platform.xml) to v4, in memory.

    SimGrid 3.32 refuses v3 files. This does what simgrid_update_xml does for the
    constructs StarPU generates: power= -> speed=...f, unit-less link bandwidth
    (B/s) and latency (s) get explicit units, v3 config names (underscores) get
    their v4 names, and the DOCTYPE is normalised (3.32's parser rejects the
    single-quoted one StarPU writes). Values are copied verbatim, not re-printed.
    """
    import re
    text = re.sub(r"<!DOCTYPE[^>]*>", '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">', text, count=1)
    text = re.sub(r'(<platform\b[^>]*\bversion=)(["\'])3(?:\.\d+)?\2', r'\g<1>"4"', text, count=1)

    def host(m):
        return re.sub(r'\bpower=(["\'])([^"\']*)\1',
                      lambda a: 'speed="%s%s"' % (a.group(2), "" if a.group(2)[-1:].isalpha() else "f"),
                      m.group(0))
    text = re.sub(r"<host\b[^>]*>", host, text)

    def link(m):
        t = m.group(0)
        for attr, unit in (("bandwidth", "Bps"), ("latency", "s")):
            t = re.sub(r'\b%s=(["\'])([^"\']*)\1' % attr,
                       lambda a: '%s="%s%s"' % (attr, a.group(2), "" if a.group(2)[-1:].isalpha() else unit), t)
        return t
    text = re.sub(r"<link\b[^>]*>", link, text)

    def prop(m):
        t = m.group(0)
        for old, new in V3_CONFIG_RENAMES.items():
            t = t.replace('"%s"' % old, '"%s"' % new).replace("'%s'" % old, "'%s'" % new)
        return t
    text = re.sub(r"<prop\b[^>]*>", prop, text)
    return text


def platform_version(text):
    import re
    m = re.search(r'<platform\b[^>]*\bversion=["\']([0-9.]+)["\']', text)
    return float(m.group(1)) if m else None


def platform_xml(scn, config=True):
    """Build a SimGrid v4.1 platform from the scenario's links and routes."""
    links = scn.get("links") or []
    routes = scn.get("routes") or []
    link_ids = set()
    out = ["<?xml version='1.0'?>",
           '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">',
           '<platform version="4.1">']
    if config:
        out.append(' <config id="General">')
        for k, v in STARPU_CONFIG:
            out.append('  <prop id="%s" value="%s"/>' % (k, v))
        out.append(" </config>")
    out.append(' <zone id="AS0" routing="Full">')
    hosts = []
    for r in routes:
        for h in (r["src"], r["dst"]):
            if h not in hosts:
                hosts.append(h)
    for f in scn.get("flows") or []:
        for h in (f["src"], f["dst"]):
            if h not in hosts:
                hosts.append(h)
    for h in hosts:
        out.append('  <host id="%s" speed="1f"/>' % xml_attr(h))
    for l in links:
        lid = l["id"]
        if lid in link_ids:
            raise ScenarioError("duplicate link id %r" % lid)
        link_ids.add(lid)
        bw = float(l["bandwidth"])
        lat = float(l.get("latency", 0.0))
        if not bw > 0:
            raise ScenarioError("link %r: bandwidth must be > 0" % lid)
        if lat < 0:
            raise ScenarioError("link %r: latency must be >= 0" % lid)
        pol = l.get("sharing_policy", "SHARED") or "SHARED"
        if pol not in POLICIES:
            raise ScenarioError("link %r: unsupported sharing_policy %r" % (lid, pol))
        attrs = 'id="%s" bandwidth="%sBps" latency="%ss"' % (xml_attr(lid), fnum(bw), fnum(lat))
        if pol != "SHARED":
            attrs += ' sharing_policy="%s"' % pol
        out.append("  <link %s/>" % attrs)
    seen = set()
    for r in routes:
        key = (r["src"], r["dst"])
        if key in seen:
            raise ScenarioError("duplicate route %s -> %s" % key)
        seen.add(key)
        if r["src"] == r["dst"]:
            raise ScenarioError("route %s -> %s: src == dst" % key)
        if not r.get("links"):
            raise ScenarioError("route %s -> %s has no links" % key)
        out.append('  <route src="%s" dst="%s" symmetrical="NO">' % (xml_attr(r["src"]), xml_attr(r["dst"])))
        for lid in r["links"]:
            if lid not in link_ids:
                raise ScenarioError("route %s -> %s: unknown link %r" % (key[0], key[1], lid))
            out.append('   <link_ctn id="%s"/>' % xml_attr(lid))
        out.append("  </route>")
    out.append(" </zone>")
    out.append("</platform>")
    return "\n".join(out) + "\n", seen


def main(argv):
    import argparse
    import tempfile

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("scenario", help="scenario JSON file ('-' for stdin)")
    ap.add_argument("--cfg", action="append", default=[], metavar="KEY:VALUE",
                    help="extra SimGrid configuration (command line wins over the platform's <config>)")
    ap.add_argument("--starpu-cfg", action="store_true",
                    help="also pass StarPU's network settings on SimGrid's command line (overrides a platform_file's <config>)")
    ap.add_argument("--no-starpu-config", action="store_true",
                    help="omit StarPU's <config> block from the generated platform (for experiments: SimGrid defaults)")
    ap.add_argument("--keep-xml", metavar="PATH", help="also write the generated platform XML here")
    ap.add_argument("--extra", action="store_true",
                    help="add per-flow 'sg_start' (clock when the comm was issued), 'sg_finish_time' "
                         "(Comm.finish_time) and 'route_latency' (SimGrid's Host.route_to)")
    ap.add_argument("--log", default="root.thres:warning", help="SimGrid --log setting (default %(default)s)")
    args = ap.parse_args(argv)

    if args.scenario == "-":
        scn = json.load(sys.stdin)
        base_dir = os.getcwd()
    else:
        with open(args.scenario) as fh:
            scn = json.load(fh)
        base_dir = os.path.dirname(os.path.abspath(args.scenario))

    flows = scn.get("flows") or []
    ids = set()
    for i, f in enumerate(flows):
        for k in ("id", "src", "dst", "bytes", "start"):
            if k not in f:
                raise ScenarioError("flow #%d lacks %r" % (i, k))
        if f["id"] in ids:
            raise ScenarioError("duplicate flow id %r" % f["id"])
        ids.add(f["id"])
        if f["src"] == f["dst"]:
            raise ScenarioError("flow %r: src == dst (%r); a flow needs two distinct hosts" % (f["id"], f["src"]))
        b = f["bytes"]
        if isinstance(b, bool) or not (isinstance(b, int) or (isinstance(b, float) and b.is_integer())) or b < 0:
            raise ScenarioError("flow %r: bytes must be a non-negative integer (got %r)" % (f["id"], b))
        if not float(f["start"]) >= 0:
            raise ScenarioError("flow %r: start must be >= 0" % f["id"])

    tmpdir = None
    if "platform_file" in scn:
        plat = scn["platform_file"]
        if not os.path.isabs(plat):
            plat = os.path.join(base_dir, plat)
        if not os.path.exists(plat):
            raise ScenarioError("platform_file %s not found" % plat)
        with open(plat) as fh:
            text = fh.read()
        ver = platform_version(text)
        if ver is not None and ver < 4:
            tmpdir = tempfile.mkdtemp(prefix="sgnetsim.")
            plat = os.path.join(tmpdir, "platform.xml")
            with open(plat, "w") as fh:
                fh.write(upgrade_v3(text))
        for k, _ in STARPU_CONFIG:
            if k not in text and k.replace("-", "_") not in text:
                sys.stderr.write("sgnetsim: warning: platform_file sets no %s; SimGrid's default applies "
                                 "(use --starpu-cfg to force StarPU's value)\n" % k)
    else:
        xml, routes = platform_xml(scn, config=not args.no_starpu_config)
        for f in flows:
            if (f["src"], f["dst"]) not in routes:
                raise ScenarioError("flow %r: no route %s -> %s" % (f["id"], f["src"], f["dst"]))
        tmpdir = tempfile.mkdtemp(prefix="sgnetsim.")
        plat = os.path.join(tmpdir, "platform.xml")
        with open(plat, "w") as fh:
            fh.write(xml)
        if args.keep_xml:
            with open(args.keep_xml, "w") as fh:
                fh.write(xml)

    sg = _import_simgrid()
    cfg = list(args.cfg)
    if args.starpu_cfg:
        cfg = ["%s:%s" % kv for kv in STARPU_CONFIG] + cfg
    sg_argv = ["sgnetsim", "--log=%s" % args.log] + ["--cfg=%s" % c for c in cfg]
    e = sg.Engine(sg_argv)
    try:
        e.load_platform(plat)
    finally:
        if tmpdir:
            import shutil
            shutil.rmtree(tmpdir, ignore_errors=True)

    hosts = {}
    for f in flows:
        for h in (f["src"], f["dst"]):
            if h not in hosts:
                hh = e.host_by_name(h) if h in {x.name for x in e.all_hosts} else None
                if hh is None:
                    raise ScenarioError("flow %r: host %r is not in the platform" % (f["id"], h))
                hosts[h] = hh
    route_lat = {}
    for f in flows:
        key = (f["src"], f["dst"])
        if key not in route_lat:
            rlinks, lat = hosts[key[0]].route_to(hosts[key[1]])
            if not rlinks:
                raise ScenarioError("flow %r: the platform has no route %s -> %s" % (f["id"], key[0], key[1]))
            route_lat[key] = lat

    results = [None] * len(flows)

    def flow_actor(i):
        f = flows[i]
        start = float(f["start"])
        # Every actor starts at t=0, so sleeping `start` lands on `start` (unless SimGrid merges
        # that wake-up with an event less than surf/precision earlier; reported below).
        if start > 0:
            sg.this_actor.sleep_for(start)
        issued = sg.Engine.clock
        comm = sg.Comm.sendto_async(hosts[f["src"]], hosts[f["dst"]], int(f["bytes"]))
        comm.wait()
        results[i] = (issued, sg.Engine.clock, comm.finish_time)

    for i, f in enumerate(flows):
        sg.Actor.create("flow-%d" % i, hosts[f["src"]], flow_actor, i)
    e.run()

    out = []
    for f, r in zip(flows, results):
        if r is None:
            raise ScenarioError("flow %r did not complete" % f["id"])
        start = float(f["start"])
        rec = {"id": f["id"], "src": f["src"], "dst": f["dst"], "bytes": f["bytes"],
               "start": start, "finish": r[1], "duration": r[1] - start}
        if args.extra:
            rec["sg_start"] = r[0]
            rec["sg_finish_time"] = r[2]
            rec["route_latency"] = route_lat[(f["src"], f["dst"])]
        out.append(rec)
    snapped = [(f["id"], float(f["start"]), r[0]) for f, r in zip(flows, results) if r[0] != float(f["start"])]
    if snapped:
        sys.stderr.write("sgnetsim: note: SimGrid issued %d flow(s) at a time other than their start (it merges "
                         "events closer than surf/precision, 1e-9 s by default): %s\n"
                         % (len(snapped), ", ".join("%s %r->%r" % x for x in snapped[:10])
                            + (" ..." if len(snapped) > 10 else "")))
    makespan = max((r["finish"] for r in out), default=0.0)
    sys.stdout.write(json.dumps({"flows": out, "makespan": makespan}, indent=1) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    try:
        rc = main(sys.argv[1:])
    except ScenarioError as ex:
        sys.stderr.write("sgnetsim: error: %s\n" % ex)
        rc = 1
    sys.stdout.flush()
    # SimGrid's teardown of Python thread contexts can be noisy or slow; leave at once.
    os._exit(rc)
