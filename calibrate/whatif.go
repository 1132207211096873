package calibrate

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/starsim/starsim/runtime/machine"
)

// What-if transforms: each returns a new, valid *File derived from f (f is
// never modified: the result is a deep copy), whose Name gets a "+..." suffix
// and whose Sources get one line saying what was changed, so a derived file
// says what it is.

// WithGPUs returns f with k CUDA GPUs (k >= 1). "Highest-numbered" and "last"
// go by the number in the device name (CUDA<n>); OpenCL and HIP devices, and
// everything about them, are left untouched.
//
// Removing (k below the current count) drops the highest-numbered CUDA
// devices and everything that names them: routes and transfers with one of
// them at an end, serialized pairs with a direction to or from one of them,
// kernel models and power entries whose arch is (or, for a combined arch,
// contains) one of their archs. A link is dropped when no remaining route
// uses it and either its id names a removed device (RAM-CUDA3, CUDA2-CUDA3)
// or only removed routes used it (e.g. the PCI-tree links of a removed
// GPU's slot); links that no route used before are kept.
//
// Adding clones the last CUDA device D once per new device (each clone
// clones the previous one, so every new device carries D's numbers). The
// clone C is named CUDA<n+1> with arch cuda<n+1>, placed after the last CUDA
// device, and gets:
//   - D's kind, model, memory and peer access, and a new driver core: the
//     first core not used as any device's driver core (an error if every
//     core drives a device already);
//   - a copy of every route and transfer (predictions and pitch models) with
//     D at one end, D renamed C and the other end kept (RAM->CUDA2 becomes
//     RAM->CUDA3, CUDA2->CUDA0 becomes CUDA3->CUDA0, CUDA0->CUDA2 becomes
//     CUDA0->CUDA3; also to and from OpenCL nodes when D had them);
//   - in those routes, every link whose id names D (as a whole node name:
//     CUDA1 is not named in CUDA10) is replaced by a copy under the renamed
//     id with the same bandwidth, latency and sharing (RAM-CUDA2 ->
//     RAM-CUDA3, CUDA2-CUDA0 -> CUDA3-CUDA0). Every other link is shared and
//     reused as it is: "Host", "Share", "Socket1-PCIe" and the PCI-tree
//     links (whose ids name no device) — so C sits behind the same switch
//     and slot as D and contends with it there. A renamed id that already
//     exists is reused as that link;
//   - for the pair (C, D): the routes and transfers between D and a peer X
//     (both directions, those that exist), with D renamed C and X renamed D
//     (CUDA3->CUDA2 becomes CUDA4->CUDA3, with link CUDA3-CUDA2 copied as
//     CUDA4-CUDA3). X is the highest-numbered other CUDA device with a
//     route to or from D, else the highest-numbered one with a transfer to
//     or from D; without one C and D get neither route nor transfer and
//     their copies go through RAM;
//   - serialized pairs: if f has pairs and they are exactly StarPU's rules
//     for its devices (what Import writes), the result gets StarPU's rules
//     for its new device list; otherwise every pair naming D is copied with
//     D renamed C, and every pair with a direction between D and X is copied
//     with the (C, D) renaming above (CUDA2->CUDA3/CUDA3->CUDA2 gives
//     CUDA3->CUDA4/CUDA4->CUDA3);
//   - a copy of every kernel model (all implementations) and power entry of
//     D's arch under C's arch (a combined arch containing D's arch is copied
//     with that component renamed); stale models or power entries already
//     under C's arch are replaced.
//
// An error is returned for k < 1, for a file without CUDA devices, or when a
// new name or arch is already taken or the last device is not named
// CUDA<n>. k equal to the current count returns a renamed copy.
func (f *File) WithGPUs(k int) (*File, error) {
	if k < 1 {
		return nil, fmt.Errorf("what-if: WithGPUs(%d): need at least 1 CUDA GPU", k)
	}
	cu := whatifCUDAOrder(f)
	if len(cu) == 0 {
		return nil, fmt.Errorf("what-if: WithGPUs(%d): calibration %q has no CUDA device", k, f.Name)
	}
	n := len(cu)
	g := f.whatifCopy()
	detail := "unchanged"
	switch {
	case k < n:
		var names []string
		for _, i := range cu[k:] {
			names = append(names, g.Machine.Devices[i].Name)
		}
		whatifRemoveDevices(g, names)
		detail = "removed " + strings.Join(names, ", ")
	case k > n:
		src := g.Machine.Devices[cu[n-1]].Name
		var added []string
		for i := n; i < k; i++ {
			name, err := whatifCloneLastCUDA(g)
			if err != nil {
				return nil, fmt.Errorf("what-if: WithGPUs(%d): %w", k, err)
			}
			added = append(added, name)
		}
		detail = fmt.Sprintf("added %s as copies of %s (memory, model, links, routes, transfers, kernel models, power)", strings.Join(added, ", "), src)
	}
	g.Name = f.Name + fmt.Sprintf("+gpus%d", k)
	g.Sources = append(g.Sources, fmt.Sprintf("what-if: %d CUDA GPUs instead of %d: %s", k, n, detail))
	return whatifValid(g)
}

// ScalePCIBandwidth multiplies every network link bandwidth (all links of
// the file: host, PCI tree, per-device and peer links, and any others such
// as StarPU's DISK0 links) and every predicted transfer bandwidth by x
// (> 0, finite), and divides pitch-model slopes by x. Latencies and
// pitch-model intercepts are unchanged, so a lone copy of b bytes that took
// latency + t takes latency + t/x.
func (f *File) ScalePCIBandwidth(x float64) (*File, error) {
	if !(x > 0) || !finite(x) {
		return nil, fmt.Errorf("what-if: ScalePCIBandwidth(%v): the factor must be a finite number > 0", x)
	}
	g := f.whatifCopy()
	for i := range g.Network.Links {
		g.Network.Links[i].BandwidthBps *= x
	}
	for i := range g.Transfers {
		t := &g.Transfers[i]
		t.PredictedBandwidthBps *= x
		for j := range t.PitchModels {
			for s := range t.PitchModels[j].Segments {
				t.PitchModels[j].Segments[s].SlopeSPerByte /= x
			}
		}
	}
	xs := strconv.FormatFloat(x, 'g', -1, 64)
	g.Name = f.Name + "+pcix" + xs
	g.Sources = append(g.Sources, fmt.Sprintf("what-if: every link bandwidth and predicted transfer bandwidth x%s, pitch-model slopes /%s (latencies and intercepts unchanged)", xs, xs))
	return whatifValid(g)
}

// WithGPUMemory sets the memory_bytes of every CUDA and HIP device (OpenCL
// devices are left as they are). bytes must be > 0; a file without CUDA or
// HIP devices is an error.
func (f *File) WithGPUMemory(bytes int64) (*File, error) {
	if bytes <= 0 {
		return nil, fmt.Errorf("what-if: WithGPUMemory(%d): memory must be > 0 bytes", bytes)
	}
	g := f.whatifCopy()
	var names []string
	for i := range g.Machine.Devices {
		d := &g.Machine.Devices[i]
		if d.Kind == "cuda" || d.Kind == "hip" {
			d.MemoryBytes = bytes
			names = append(names, d.Name)
		}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("what-if: WithGPUMemory: calibration %q has no CUDA or HIP device", f.Name)
	}
	mem := whatifBytes(bytes)
	g.Name = f.Name + "+mem" + mem
	g.Sources = append(g.Sources, fmt.Sprintf("what-if: memory of %s set to %d bytes (%s)", strings.Join(names, ", "), bytes, mem))
	return whatifValid(g)
}

// WithGPUFrom swaps in another calibration's GPU. Every CUDA device of f
// takes the model name and memory of other's first (lowest-numbered) CUDA
// device G, and for each of f's CUDA devices, f's kernel models of its arch
// (and combined archs containing it) are replaced by copies of other's
// models of G's arch (cuda0 in the files starsim writes; all
// implementations) under that device's arch. Power entries of f's CUDA
// archs take other's entry for G's arch when other has one, and are removed
// otherwise (they described the replaced GPU). Kept from f: the device
// names, archs, driver cores and peer access, the whole network, the
// transfer predictions and pitch models (the host bus stays f's), the CPU
// and OpenCL/HIP models and the costs. An error is returned when other is
// nil or has no CUDA device or no kernel models for G's arch, or when f has
// no CUDA device.
func (f *File) WithGPUFrom(other *File) (*File, error) {
	if other == nil {
		return nil, errors.New("what-if: WithGPUFrom: no other calibration")
	}
	ocu := whatifCUDAOrder(other)
	if len(ocu) == 0 {
		return nil, fmt.Errorf("what-if: WithGPUFrom: calibration %q has no CUDA device", other.Name)
	}
	og := other.Machine.Devices[ocu[0]]
	var models []KernelModel
	for _, km := range other.Kernels {
		if km.Arch == og.Arch {
			models = append(models, km)
		}
	}
	if len(models) == 0 {
		return nil, fmt.Errorf("what-if: WithGPUFrom: calibration %q has no kernel models for %s (%s)", other.Name, og.Arch, og.Name)
	}
	var power *ArchPower
	for i := range other.Power {
		if other.Power[i].Arch == og.Arch {
			power = &other.Power[i]
			break
		}
	}
	cu := whatifCUDAOrder(f)
	if len(cu) == 0 {
		return nil, fmt.Errorf("what-if: WithGPUFrom: calibration %q has no CUDA device to replace", f.Name)
	}
	g := f.whatifCopy()
	archs := map[string]bool{}
	for _, i := range cu {
		d := &g.Machine.Devices[i]
		d.Model, d.MemoryBytes = og.Model, og.MemoryBytes
		archs[d.Arch] = true
	}
	g.Kernels = whatifDropArchs(g.Kernels, func(k KernelModel) string { return k.Arch }, archs)
	g.Power = whatifDropArchs(g.Power, func(p ArchPower) string { return p.Arch }, archs)
	for _, i := range cu {
		arch := g.Machine.Devices[i].Arch
		for _, km := range models {
			c := km.whatifCopy()
			c.Arch = arch
			g.Kernels = append(g.Kernels, c)
		}
		if power != nil {
			g.Power = append(g.Power, ArchPower{Arch: arch, IdleW: power.IdleW, LoadW: power.LoadW})
		}
	}
	g.Name = f.Name + "+gpu(" + other.Name + ")"
	g.Sources = append(g.Sources, fmt.Sprintf("what-if: CUDA devices replaced by %s's %s (%s, %d bytes): its %d %s kernel models copied per device; transfers and network kept from %s",
		other.Name, og.Name, og.Model, og.MemoryBytes, len(models), og.Arch, f.Name))
	return whatifValid(g)
}

func whatifValid(g *File) (*File, error) {
	if err := g.Validate(); err != nil {
		return nil, fmt.Errorf("what-if: derived calibration %q is invalid: %w", g.Name, err)
	}
	return g, nil
}

// whatifBytes writes a size as whole GiB or MiB when it is one, else bytes.
func whatifBytes(b int64) string {
	switch {
	case b%(1<<30) == 0:
		return fmt.Sprintf("%dGiB", b>>30)
	case b%(1<<20) == 0:
		return fmt.Sprintf("%dMiB", b>>20)
	}
	return fmt.Sprintf("%dB", b)
}

// whatifCUDAOrder returns the indexes of f's CUDA devices ordered by the
// number in their name (CUDA<n>); devices without one come last, in file
// order.
func whatifCUDAOrder(f *File) []int {
	var idx []int
	for i, d := range f.Machine.Devices {
		if d.Kind == "cuda" {
			idx = append(idx, i)
		}
	}
	num := func(i int) int {
		if n, ok := whatifCUDANum(f.Machine.Devices[i].Name); ok {
			return n
		}
		return math.MaxInt
	}
	sort.SliceStable(idx, func(a, b int) bool { return num(idx[a]) < num(idx[b]) })
	return idx
}

func whatifCUDANum(name string) (int, bool) {
	s, ok := strings.CutPrefix(name, "CUDA")
	if !ok || s == "" {
		return 0, false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}

func whatifAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// whatifRename replaces, all at once, every whole occurrence of a key of m in
// s (not preceded by a letter or digit, not followed by a digit: CUDA1 is in
// "CUDA1-RAM" and "RAM-CUDA1" but not in "CUDA10-RAM").
func whatifRename(s string, m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return len(keys[i]) > len(keys[j]) })
	var b strings.Builder
	for i := 0; i < len(s); {
		matched := false
		if i == 0 || !whatifAlnum(s[i-1]) {
			for _, k := range keys {
				end := i + len(k)
				if strings.HasPrefix(s[i:], k) && (end == len(s) || s[end] < '0' || s[end] > '9') {
					b.WriteString(m[k])
					i = end
					matched = true
					break
				}
			}
		}
		if !matched {
			b.WriteByte(s[i])
			i++
		}
	}
	return b.String()
}

// whatifNames reports whether s names one of the nodes of set (see
// whatifRename).
func whatifNames(s string, set map[string]bool) bool {
	m := map[string]string{}
	for k := range set {
		m[k] = "\x00"
	}
	return whatifRename(s, m) != s
}

// whatifArchHas reports whether arch, or a component of a combined arch
// ("cpu0_cuda1"), is in archs.
func whatifArchHas(arch string, archs map[string]bool) bool {
	for _, c := range strings.Split(arch, "_") {
		if archs[c] {
			return true
		}
	}
	return archs[arch]
}

// whatifRenameArch renames the component from of arch to to.
func whatifRenameArch(arch, from, to string) string {
	parts := strings.Split(arch, "_")
	for i, p := range parts {
		if p == from {
			parts[i] = to
		}
	}
	return strings.Join(parts, "_")
}

func whatifDropArchs[T any](in []T, arch func(T) string, archs map[string]bool) []T {
	out := in[:0:0]
	for _, v := range in {
		if !whatifArchHas(arch(v), archs) {
			out = append(out, v)
		}
	}
	return out
}

func whatifDirEnds(dir string) (string, string) {
	d, _ := machine.ParseDir(dir)
	return d.Src, d.Dst
}

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
