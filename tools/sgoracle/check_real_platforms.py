#!/usr/bin/python3
"""Compare `starsim netsim` with real SimGrid on random flows over real platform files.

Usage: check_real_platforms.py STARSIM_BINARY PLATFORM.xml... [--seed S] [--per-file K]

For each platform file, K seeded random scenarios (5 to 60 flows between the
ends of its routes, either direction, 1 B to 40 MiB, starts in [0, 20 ms)) are
run through tools/sgoracle/sgnetsim.py (SimGrid at its default configuration)
and through starsim; prints the worst |finish difference| / duration per file.
Exits 1 if any exceeds 1e-6 (the issue's bound).
"""
import argparse, json, os, random, re, subprocess, sys, tempfile

here = os.path.dirname(os.path.abspath(__file__))
ap = argparse.ArgumentParser()
ap.add_argument('starsim')
ap.add_argument('platforms', nargs='+')
ap.add_argument('--seed', type=int, default=424242)
ap.add_argument('--per-file', type=int, default=5)
args = ap.parse_args()
rng = random.Random(args.seed)
bad = False
with tempfile.TemporaryDirectory() as tmp:
    for plat in args.platforms:
        plat = os.path.abspath(plat)
        routes = re.findall(r'<route src=["\']([^"\']+)["\'] dst=["\']([^"\']+)', open(plat).read())
        if not routes:
            sys.exit(f'{plat}: no <route src=... dst=...> found')
        worst, n = 0.0, 0
        for s in range(args.per_file):
            flows = []
            for i in range(rng.randint(5, 60)):
                a, b = rng.choice(routes)
                if rng.random() < 0.5:
                    a, b = b, a
                size = rng.choice([1, 1000, rng.randint(1, 8) * 3686400, rng.randint(1, 40) * 1048576])
                flows.append(dict(id=f'f{i}', src=a, dst=b, bytes=size, start=round(rng.random() * 0.02, 6)))
            p = os.path.join(tmp, f'{os.path.basename(plat)}.{s}.json')
            with open(p, 'w') as f:
                json.dump(dict(platform_file=plat, flows=flows), f)
            sg = json.loads(subprocess.check_output([os.path.join(here, 'sgnetsim.py'), p]))
            me = json.loads(subprocess.check_output([args.starsim, 'netsim', p]))
            for x, y in zip(sg['flows'], me['flows'], strict=True):
                assert x['id'] == y['id']
                worst = max(worst, abs(x['finish'] - y['finish']) / max(x['duration'], 1e-300))
                n += 1
        bad |= worst > 1e-6
        print(f'{os.path.basename(plat)}: {len(routes)} routes, {n} flows, worst |dfinish|/duration {worst:.3g}')
sys.exit(1 if bad else 0)
