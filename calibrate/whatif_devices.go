package calibrate

// Devices of a what-if machine: removing devices and what names them,
// cloning the last CUDA device, and deep copies.

import (
	"fmt"
	"slices"

	"github.com/starsim/starsim/runtime/machine"
)

// whatifRemoveDevices drops the named devices and everything naming them
// (see WithGPUs).
func whatifRemoveDevices(g *File, names []string) {
	gone := map[string]bool{}
	for _, n := range names {
		gone[n] = true
	}
	archs := map[string]bool{}
	devs := g.Machine.Devices[:0:0]
	for _, d := range g.Machine.Devices {
		if gone[d.Name] {
			archs[d.Arch] = true
			continue
		}
		devs = append(devs, d)
	}
	g.Machine.Devices = devs

	routes := g.Network.Routes[:0:0]
	used, usedByDropped := map[string]bool{}, map[string]bool{}
	for _, r := range g.Network.Routes {
		if gone[r.Src] || gone[r.Dst] {
			for _, id := range r.Links {
				usedByDropped[id] = true
			}
			continue
		}
		for _, id := range r.Links {
			used[id] = true
		}
		routes = append(routes, r)
	}
	g.Network.Routes = routes
	links := g.Network.Links[:0:0]
	for _, l := range g.Network.Links {
		if !used[l.ID] && (usedByDropped[l.ID] || whatifNames(l.ID, gone)) {
			continue
		}
		links = append(links, l)
	}
	g.Network.Links = links

	transfers := g.Transfers[:0:0]
	for _, t := range g.Transfers {
		if !gone[t.Src] && !gone[t.Dst] {
			transfers = append(transfers, t)
		}
	}
	g.Transfers = transfers

	serial := g.Serial[:0:0]
	for _, p := range g.Serial {
		a1, a2 := whatifDirEnds(p.A)
		b1, b2 := whatifDirEnds(p.B)
		if !gone[a1] && !gone[a2] && !gone[b1] && !gone[b2] {
			serial = append(serial, p)
		}
	}
	g.Serial = serial
	g.Kernels = whatifDropArchs(g.Kernels, func(k KernelModel) string { return k.Arch }, archs)
	g.Power = whatifDropArchs(g.Power, func(p ArchPower) string { return p.Arch }, archs)
}

// whatifSameSerial reports whether a and b hold the same unordered pairs.
func whatifSameSerial(a, b []SerialPair) bool {
	set := func(ps []SerialPair) map[[2]string]bool {
		m := map[[2]string]bool{}
		for _, p := range ps {
			x, y := p.A, p.B
			if y < x {
				x, y = y, x
			}
			m[[2]string{x, y}] = true
		}
		return m
	}
	sa, sb := set(a), set(b)
	if len(sa) != len(sb) {
		return false
	}
	for k := range sa {
		if !sb[k] {
			return false
		}
	}
	return true
}

// whatifCloneLastCUDA adds a copy of the highest-numbered CUDA device (see
// WithGPUs) and returns its name.
func whatifCloneLastCUDA(g *File) (string, error) {
	cu := whatifCUDAOrder(g)
	last := cu[len(cu)-1]
	d := g.Machine.Devices[last]
	num, ok := whatifCUDANum(d.Name)
	if !ok {
		return "", fmt.Errorf("the last CUDA device %q is not named CUDA<n>", d.Name)
	}
	c := d
	c.Name, c.Arch = fmt.Sprintf("CUDA%d", num+1), fmt.Sprintf("cuda%d", num+1)
	taken := map[int]bool{}
	for _, x := range g.Machine.Devices {
		if x.Name == c.Name || x.Arch == c.Arch {
			return "", fmt.Errorf("cannot add %s (arch %s): the name or arch is taken by device %s", c.Name, c.Arch, x.Name)
		}
		taken[x.DriverCore] = true
	}
	for _, r := range g.Network.Routes {
		if r.Src == c.Name || r.Dst == c.Name {
			return "", fmt.Errorf("cannot add %s: the network already has a route %s->%s", c.Name, r.Src, r.Dst)
		}
	}
	c.DriverCore = -1
	for core := 0; core < g.Machine.CPUCores; core++ {
		if !taken[core] {
			c.DriverCore = core
			break
		}
	}
	if c.DriverCore < 0 {
		return "", fmt.Errorf("cannot add %s: every one of the %d CPU cores already drives a device", c.Name, g.Machine.CPUCores)
	}
	oldSerialIsStarPU := len(g.Serial) > 0 && whatifSameSerial(g.Serial, starpuSerialPairs(g.Machine.Devices))
	pos := 0
	for _, i := range cu {
		pos = max(pos, i)
	}
	devs := append([]Device(nil), g.Machine.Devices[:pos+1]...)
	devs = append(devs, c)
	g.Machine.Devices = append(devs, g.Machine.Devices[pos+1:]...)

	// The peer X whose pair with D is copied as the pair (C, D).
	peer := ""
	for _, has := range []func(a, b string) bool{
		func(a, b string) bool { return g.whatifRoute(a, b) != nil },
		func(a, b string) bool { return g.transfer(a, b) != nil },
	} {
		for i := len(cu) - 2; i >= 0 && peer == ""; i-- {
			x := g.Machine.Devices[cu[i]].Name
			if has(d.Name, x) || has(x, d.Name) {
				peer = x
			}
		}
	}
	m1 := map[string]string{d.Name: c.Name}
	var m2 map[string]string
	if peer != "" {
		m2 = map[string]string{d.Name: c.Name, peer: d.Name}
	}
	isPair := func(a, b string) bool {
		return peer != "" && (a == d.Name && b == peer || a == peer && b == d.Name)
	}
	renameEnd := func(n string, m map[string]string) string {
		if r, ok := m[n]; ok {
			return r
		}
		return n
	}

	linkIdx := map[string]int{}
	for i, l := range g.Network.Links {
		linkIdx[l.ID] = i
	}
	mapLinks := func(ids []string, m map[string]string) []string {
		out := make([]string, len(ids))
		for i, id := range ids {
			nid := whatifRename(id, m)
			out[i] = nid
			if _, ok := linkIdx[nid]; ok {
				continue // shared link, or the renamed device's own link
			}
			l := g.Network.Links[linkIdx[id]]
			l.ID = nid
			linkIdx[nid] = len(g.Network.Links)
			g.Network.Links = append(g.Network.Links, l)
		}
		return out
	}
	routes := g.Network.Routes
	for _, r := range routes[:len(routes):len(routes)] {
		for _, m := range whatifMaps(r.Src, r.Dst, d.Name, isPair, m1, m2) {
			g.Network.Routes = append(g.Network.Routes, Route{Src: renameEnd(r.Src, m), Dst: renameEnd(r.Dst, m), Links: mapLinks(r.Links, m)})
		}
	}
	transfers := g.Transfers
	for _, t := range transfers[:len(transfers):len(transfers)] {
		for _, m := range whatifMaps(t.Src, t.Dst, d.Name, isPair, m1, m2) {
			nt := t.whatifCopy()
			nt.Src, nt.Dst = renameEnd(t.Src, m), renameEnd(t.Dst, m)
			g.Transfers = append(g.Transfers, nt)
		}
	}

	if oldSerialIsStarPU {
		g.Serial = starpuSerialPairs(g.Machine.Devices)
	} else {
		seen := map[[2]string]bool{}
		for _, p := range g.Serial {
			seen[[2]string{p.A, p.B}] = true
		}
		renameDir := func(dir string, m map[string]string) string {
			a, b := whatifDirEnds(dir)
			return machine.Dir{Src: renameEnd(a, m), Dst: renameEnd(b, m)}.String()
		}
		for _, p := range g.Serial[:len(g.Serial):len(g.Serial)] {
			a1, a2 := whatifDirEnds(p.A)
			b1, b2 := whatifDirEnds(p.B)
			var maps []map[string]string
			if a1 == d.Name || a2 == d.Name || b1 == d.Name || b2 == d.Name {
				maps = append(maps, m1)
			}
			if isPair(a1, a2) || isPair(b1, b2) {
				maps = append(maps, m2)
			}
			for _, m := range maps {
				np := SerialPair{A: renameDir(p.A, m), B: renameDir(p.B, m)}
				if np.A == np.B || seen[[2]string{np.A, np.B}] || seen[[2]string{np.B, np.A}] {
					continue
				}
				seen[[2]string{np.A, np.B}] = true
				g.Serial = append(g.Serial, np)
			}
		}
	}

	newArch := map[string]bool{c.Arch: true}
	g.Kernels = whatifDropArchs(g.Kernels, func(k KernelModel) string { return k.Arch }, newArch)
	g.Power = whatifDropArchs(g.Power, func(p ArchPower) string { return p.Arch }, newArch)
	oldArch := map[string]bool{d.Arch: true}
	for _, km := range g.Kernels[:len(g.Kernels):len(g.Kernels)] {
		if whatifArchHas(km.Arch, oldArch) {
			nk := km.whatifCopy()
			nk.Arch = whatifRenameArch(km.Arch, d.Arch, c.Arch)
			g.Kernels = append(g.Kernels, nk)
		}
	}
	for _, p := range g.Power[:len(g.Power):len(g.Power)] {
		if whatifArchHas(p.Arch, oldArch) {
			p.Arch = whatifRenameArch(p.Arch, d.Arch, c.Arch)
			g.Power = append(g.Power, p)
		}
	}
	return c.Name, nil
}

// whatifMaps lists the renamings under which the route or transfer src->dst
// is copied for a clone of dev: the plain one when dev is an end, and the
// pair one when src->dst is between dev and its chosen peer.
func whatifMaps(src, dst, dev string, isPair func(a, b string) bool, m1, m2 map[string]string) []map[string]string {
	var out []map[string]string
	if src == dev || dst == dev {
		out = append(out, m1)
	}
	if isPair(src, dst) {
		out = append(out, m2)
	}
	return out
}

// whatifRoute returns the route src->dst, or nil.
func (f *File) whatifRoute(src, dst string) *Route {
	for i := range f.Network.Routes {
		if r := &f.Network.Routes[i]; r.Src == src && r.Dst == dst {
			return r
		}
	}
	return nil
}

// whatifCopy returns a deep copy of f (nil and empty slices kept apart, so
// the copy writes the same JSON).
func (f *File) whatifCopy() *File {
	g := *f
	g.Sources = slices.Clone(f.Sources)
	g.Machine.Devices = slices.Clone(f.Machine.Devices)
	g.Network.Config = slices.Clone(f.Network.Config)
	g.Network.Links = slices.Clone(f.Network.Links)
	g.Network.Routes = whatifMapSlice(f.Network.Routes, func(r Route) Route {
		r.Links = slices.Clone(r.Links)
		return r
	})
	g.Transfers = whatifMapSlice(f.Transfers, Transfer.whatifCopy)
	g.Serial = slices.Clone(f.Serial)
	g.Kernels = whatifMapSlice(f.Kernels, KernelModel.whatifCopy)
	g.Power = slices.Clone(f.Power)
	g.Unreadable = slices.Clone(f.Unreadable)
	return &g
}

// whatifMapSlice applies fn to each element, keeping a nil slice nil.
func whatifMapSlice[T any](in []T, fn func(T) T) []T {
	if in == nil {
		return nil
	}
	out := make([]T, len(in))
	for i, v := range in {
		out[i] = fn(v)
	}
	return out
}

func (t Transfer) whatifCopy() Transfer {
	t.PitchModels = whatifMapSlice(t.PitchModels, func(pm PitchModel) PitchModel {
		pm.Segments = whatifMapSlice(pm.Segments, func(s Segment) Segment {
			if s.HiBytes != nil {
				hi := *s.HiBytes
				s.HiBytes = &hi
			}
			return s
		})
		return pm
	})
	return t
}

func (k KernelModel) whatifCopy() KernelModel {
	k.Entries = whatifMapSlice(k.Entries, func(e KernelEntry) KernelEntry {
		if e.Histogram != nil {
			e.Histogram = &Histogram{EdgesUS: slices.Clone(e.Histogram.EdgesUS), Counts: slices.Clone(e.Histogram.Counts)}
		}
		return e
	})
	if k.Regression != nil {
		r := *k.Regression
		k.Regression = &r
	}
	if k.NLRegression != nil {
		r := *k.NLRegression
		k.NLRegression = &r
	}
	if k.MultiRegression != nil {
		k.MultiRegression = &MultiRegression{Coefs: slices.Clone(k.MultiRegression.Coefs)}
	}
	return k
}
