#!/usr/bin/env python3
"""clone-gpu.py DIR HOST OUT: copies HOST's part of the StarPU sampling
directory DIR into OUT with one more CUDA GPU, a clone of the last one, made
the way `starsim --gpus K+1` clones it (calibrate/whatif.go), so that StarPU
over SimGrid (the peer) runs the same what-if machine:

- platform files (bus/HOST.platform.xml and .platform.v4.xml): a host CUDAn
  with the last GPU's properties; every route to or from the last GPU copied
  for the clone, links named after the last GPU copied under the clone's name
  (links naming no GPU, the PCI tree's, are shared); the routes between the
  last GPU and the highest-numbered GPU it has a route with are copied as
  the routes between the clone and the last GPU (the GPU before it when
  no route joins GPUs);
- bus/HOST.bandwidth and .latency: memory node n+1 (after RAM and the n
  CUDA nodes) inserted with the same rule, later nodes shifted;
- bus/HOST.affinity: the last GPU's row repeated; bus/HOST.config: n+1 GPUs;
- codelets/45/*.HOST: each model's combination of the last CUDA device
  copied as one for the new device.
"""
import os
import re
import shutil
import sys


def rename(s, m):
    """Replaces whole device names (CUDA2, not CUDA21) in s by m's."""
    return re.sub(r'(?<![A-Za-z0-9])(CUDA\d+)(?!\d)', lambda x: m.get(x.group(1), x.group(1)), s)


def platform(text, last, clone, peer):
    m1 = {last: clone}
    m2 = {last: clone, peer: last}
    routes = re.findall(r'( *<route src="([^"]+)" dst="([^"]+)"[^>]*>.*?</route>\n)', text, re.S)
    pair = {(last, peer), (peer, last)}
    new_routes, new_links = [], []
    links = {l.group(1): l.group(0) for l in re.finditer(r' *<link id="([^"]+)"[^>]*/>\n', text)}
    seen = set(links)
    for block, src, dst in routes:
        maps = []
        if last in (src, dst):
            maps.append(m1)
        if (src, dst) in pair:
            maps.append(m2)
        for m in maps:
            for lid in re.findall(r'<link_ctn id="([^"]+)"/>', block):
                nid = rename(lid, m)
                if nid not in seen:
                    seen.add(nid)
                    new_links.append(links[lid].replace('"%s"' % lid, '"%s"' % nid, 1))
            nb = re.sub(r'src="([^"]+)" dst="([^"]+)"', lambda x: 'src="%s" dst="%s"' % (rename(x.group(1), m), rename(x.group(2), m)), block, 1)
            nb = re.sub(r'<link_ctn id="([^"]+)"/>', lambda x: '<link_ctn id="%s"/>' % rename(x.group(1), m), nb)
            new_routes.append(nb)
    host = re.search(r' *<host id="%s"[^>]*>.*?</host>\n' % last, text, re.S).group(0)
    text = text.replace(host, host + rename(host, m1), 1)
    lastlink = list(re.finditer(r' *<link id="[^"]+"[^>]*/>\n', text))[-1]
    text = text[:lastlink.end()] + ''.join(new_links) + text[lastlink.end():]
    lastroute = list(re.finditer(r'</route>\n', text))[-1]
    return text[:lastroute.end()] + ''.join(new_routes) + text[lastroute.end():]


def matrix(path, n, peer):
    """Node i: 0 RAM, 1..n CUDA. Inserts node n+1 as a copy of node n."""
    lines = open(path).read().split('\n')
    head, rows = lines[0], [l.split('\t') for l in lines[1:] if l.strip()]
    rows = [[c for c in r if c != ''] for r in rows]
    size = len(rows)
    last, new, pn = n, n + 1, peer + 1

    def src(i):  # the old node a new node index copies
        return i if i < new else (last if i == new else i - 1)

    out = []
    for i in range(size):
        row = []
        for j in range(size):
            if i == new and j == new:
                v = rows[last][last]
            elif i == new and j == last:
                v = rows[last][pn]
            elif i == last and j == new:
                v = rows[pn][last]
            else:
                v = rows[src(i)][src(j)]
            row.append(v)
        out.append('\t'.join(row) + '\t')
    open(path, 'w').write(head + '\n' + '\n'.join(out) + '\n')


def codelet(path, last):
    text = open(path).read()
    parts = re.split(r'(?=####################\n# COMB_\d+\n)', text)
    head, combs = parts[0], parts[1:]
    # The last comb's trailing text (after its model) belongs to the file.
    cuda = [c for c in combs if re.search(r'# device type \(CPU - 0, CUDA - 1[^\n]*\n1\n####################\n# DEV_0\n# device id \n%d\n' % last, c)]
    if not cuda:
        return
    k = len(combs)
    nc = cuda[0]
    nc = re.sub(r'# COMB_\d+', '# COMB_%d' % k, nc, 1)
    nc = re.sub(r'(# device id \n)%d\n' % last, r'\g<1>%d\n' % (last + 1), nc, 1)
    nc = re.sub(r'cuda%d_impl(\d+) \(Comb\d+\)' % last, lambda x: 'cuda%d_impl%s (Comb%d)' % (last + 1, x.group(1), k), nc)
    if not nc.endswith('\n\n'):
        nc += '\n'
    head = re.sub(r'(# number of combinations\n)(\d+)', lambda x: x.group(1) + str(int(x.group(2)) + 1), head, 1)
    body = ''.join(combs)
    if not body.endswith('\n'):
        body += '\n'
    open(path, 'w').write(head + body + nc)


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    d, host, out = sys.argv[1:]
    os.makedirs(out + '/bus', exist_ok=True)
    os.makedirs(out + '/codelets/45', exist_ok=True)
    for f in os.listdir(d + '/bus'):
        if f.startswith(host + '.'):
            shutil.copyfile(d + '/bus/' + f, out + '/bus/' + f)
    for f in os.listdir(d + '/codelets/45'):
        if f.endswith('.' + host):
            shutil.copyfile(d + '/codelets/45/' + f, out + '/codelets/45/' + f)
    b = out + '/bus/' + host
    cfg = open(b + '.config').read()
    n = int(re.search(r'(\d+) # Number of CUDA devices', cfg).group(1))
    last, clone = 'CUDA%d' % (n - 1), 'CUDA%d' % n
    xml = open(b + '.platform.v4.xml').read()
    peer = None
    for i in range(n - 2, -1, -1):
        if re.search(r'<route src="(%s" dst="CUDA%d|CUDA%d" dst="%s)"' % (last, i, i, last), xml):
            peer = i
            break
    if peer is None:
        # No GPU-GPU route (no peer copies): the transfer matrices still
        # pair the last GPU with the one before it, as calibrate.WithGPUs
        # picks it by transfer when no route names one.
        if n < 2:
            sys.exit('clone-gpu: %s has one GPU: no peer to copy the GPU-GPU figures from' % host)
        peer = n - 2
    for suffix in ('.platform.xml', '.platform.v4.xml'):
        if os.path.exists(b + suffix):
            text = platform(open(b + suffix).read(), last, clone, 'CUDA%d' % peer)
            open(b + suffix, 'w').write(text)
    for suffix in ('.bandwidth', '.latency'):
        matrix(b + suffix, n, peer)
    aff = open(b + '.affinity').read().split('\n')
    aff.insert(1 + n, '\t'.join([str(n)] + aff[n].split('\t')[1:]))
    open(b + '.affinity', 'w').write('\n'.join(aff))
    cfg = re.sub(r'\d+( # Number of CUDA devices)', str(n + 1) + r'\1', cfg)
    open(b + '.config', 'w').write(cfg)
    for f in sorted(os.listdir(out + '/codelets/45')):
        codelet(out + '/codelets/45/' + f, n - 1)


if __name__ == '__main__':
    main()
