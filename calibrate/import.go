package calibrate

import (
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/starsim/starsim/calibrate/starpu"
	"github.com/starsim/starsim/platforms"
	"github.com/starsim/starsim/runtime/machine"
)

// Import builds a calibration from a StarPU sampling directory for host:
//   - machine: CPU count from bus/HOST.config; devices from its node list,
//     with model, memsize and memcpy_peer from the SimGrid platform file; each
//     device's driver core is the first core of its affinity row not taken by
//     an earlier device (StarPU binds driver threads that way);
//   - network: the links, routes and network config of HOST.platform.v4.xml
//     (else HOST.platform.xml) verbatim, so platform build reproduces them;
//     without a platform file, StarPU's flat layout from the bus matrices;
//   - transfers: .latency (µs) and .bandwidth (MB/s) as the scheduler's
//     predictions, for every finite pair;
//   - serialized: StarPU's rules (crossed device-to-device copies, and a
//     device-to-device copy with any copy into one of its ends);
//   - kernels: every comb, implementation, regression and history entry of
//     every readable codelets/45/*.HOST model; the files that cannot be
//     read are listed in Unreadable (StarPU reads a model only when a
//     codelet uses it, so they matter only to work that needs them).
//
// NUMA nodes beyond the first are ignored, as StarPU's simulator does. It
// returns warnings for what it had to leave out or read in a way worth a
// word (Warning.Model names the model when the warning is about one).
// Without any readable model it fails, naming the first unreadable file.
func Import(dir, host string) (*File, []Warning, error) {
	return ImportWith(dir, host, ImportOptions{})
}

// ImportOptions change how Import treats what StarPU's reader accepts.
type ImportOptions struct {
	// Strict fails on the first model file that cannot be read, and on
	// any model read only the way StarPU reads it (data after the declared
	// combinations, another section order), instead of going on.
	Strict bool
}

// Warning is a remark of Import; Model is the model symbol it is about,
// "" for the machine, bus and platform files.
type Warning struct {
	Model, Msg string
}

func (w Warning) String() string { return w.Msg }

// ImportWith is Import with options.
func ImportWith(dir, host string, o ImportOptions) (*File, []Warning, error) {
	s, err := starpu.ReadSampling(dir, host)
	if err != nil {
		return nil, nil, err
	}
	if o.Strict && len(s.Unreadable) > 0 {
		return nil, nil, s.Unreadable[0].Err
	}
	if len(s.Models) == 0 {
		return nil, nil, fmt.Errorf("%s (host %s): no model file could be read, the first: %w", dir, host, s.Unreadable[0].Err)
	}
	var warn []Warning
	machineWarn := func(format string, args ...any) {
		warn = append(warn, Warning{Msg: fmt.Sprintf(format, args...)})
	}
	var plat *platforms.Platform
	var platErr error // why the platform file was not used
	platFile := s.PlatformV4
	if platFile == "" {
		platFile = s.PlatformV3
	}
	if platFile != "" {
		// StarPU writes unusable platforms for some machines (a CPU-only host
		// gets links of bandwidth 0): fall back on the bus matrices then.
		if plat, err = platforms.ParseFile(platFile); err != nil {
			machineWarn("platform file not used: %v", err)
			plat, platFile, platErr = nil, "", err
		}
	}
	f := &File{
		Format: Format, Version: Version, Name: host,
		Description: fmt.Sprintf("Imported from the StarPU sampling directory %s for host %s.", dir, host),
		Sources:     []string{filepath.Join(dir, "bus", host+".{config,bandwidth,latency,affinity}")},
		Costs:       DefaultCosts(),
	}
	if platFile != "" {
		f.Sources = append(f.Sources, platFile)
	}
	f.Sources = append(f.Sources, filepath.Join(dir, "codelets", "45", "*."+host)+fmt.Sprintf(" (%d models)", len(s.Models)))

	nodes, busIdx := memoryNodes(s.Bus)
	if err := importMachine(f, s.Bus, nodes, plat); err != nil {
		if platErr != nil {
			return nil, nil, fmt.Errorf("%w (the platform file was not used: %v)", err, platErr)
		}
		return nil, nil, err
	}
	if plat != nil {
		for _, c := range plat.Config {
			f.Network.Config = append(f.Network.Config, Prop{ID: platforms.CanonicalConfigID(c.ID), Value: c.Value})
		}
		for _, l := range plat.Links {
			f.Network.Links = append(f.Network.Links, Link{ID: l.ID, BandwidthBps: l.BandwidthBps, LatencyS: l.LatencyS, Sharing: string(l.Sharing)})
		}
		for _, r := range plat.DirectedRoutes() {
			f.Network.Routes = append(f.Network.Routes, Route{Src: r.Src, Dst: r.Dst, Links: r.Links})
		}
	} else {
		flatNetwork(f, s.Bus, nodes, busIdx)
		machineWarn("no usable %s.platform[.v4].xml: built StarPU's flat network from the bus matrices", host)
	}
	for i, src := range nodes {
		for j, dst := range nodes {
			if i == j {
				continue
			}
			bw := s.Bus.BandwidthMBps[busIdx[i]][busIdx[j]]
			lat := s.Bus.LatencyUS[busIdx[i]][busIdx[j]]
			if !(bw > 0) || math.IsInf(bw, 0) || !(lat >= 0) || math.IsInf(lat, 0) {
				machineWarn("transfer %s->%s: no finite bandwidth/latency in the bus files", src, dst)
				continue
			}
			f.Transfers = append(f.Transfers, Transfer{Src: src, Dst: dst, PredictedLatencyS: lat * 1e-6, PredictedBandwidthBps: bw * 1e6})
		}
	}
	f.Serial = starpuSerialPairs(f.Machine.Devices)
	for _, m := range s.Models {
		if o.Strict && len(m.Notes) > 0 {
			return nil, nil, m.Notes[0]
		}
		for _, n := range m.Notes {
			warn = append(warn, Warning{Model: m.Symbol, Msg: n.Error()})
		}
	}
	for _, u := range s.Unreadable {
		f.Unreadable = append(f.Unreadable, UnreadableModel{Model: u.Symbol, File: u.Err.File, Line: u.Err.Line, Reason: u.Err.Msg})
	}
	warn = append(warn, importKernels(f, s.Models)...)
	if err := f.Validate(); err != nil {
		return nil, nil, fmt.Errorf("%s (host %s): imported calibration is inconsistent: %w", dir, host, err)
	}
	return f, warn, nil
}

// memoryNodes maps the bus nodes to calibration memory nodes: the first
// RAM/NUMA node becomes "RAM"; other NUMA nodes are dropped.
func memoryNodes(b *starpu.Bus) (names []string, busIdx []int) {
	for i, n := range b.Nodes {
		switch {
		case n == "RAM" || n == "NUMA0":
			names = append(names, "RAM")
		case strings.HasPrefix(n, "NUMA"):
			continue
		default:
			names = append(names, n)
		}
		busIdx = append(busIdx, i)
	}
	return names, busIdx
}

func importMachine(f *File, b *starpu.Bus, nodes []string, plat *platforms.Platform) error {
	f.Machine.CPUCores = b.NCPU
	f.Machine.CPUSpeedFlops = 2e9
	if plat != nil {
		if h, ok := plat.Host("CPU0"); ok && h.SpeedFlops > 0 {
			f.Machine.CPUSpeedFlops = h.SpeedFlops
		}
	}
	taken := map[int]bool{}
	nth := 0 // device index in affinity-row order (CUDA, then OpenCL)
	for _, n := range nodes[1:] {
		d := Device{Name: n}
		switch {
		case strings.HasPrefix(n, "CUDA"):
			d.Kind, d.Arch = "cuda", "cuda"+n[4:]
		case strings.HasPrefix(n, "OpenCL"):
			d.Kind, d.Arch = "opencl", "opencl"+n[6:]
		case strings.HasPrefix(n, "HIP"):
			d.Kind, d.Arch = "hip", "hip"+n[3:]
		default:
			return fmt.Errorf("bus node %s: unsupported device kind", n)
		}
		if plat != nil {
			if h, ok := plat.Host(n); ok {
				d.Model, _ = h.Prop("model")
				if v, ok := h.Prop("memsize"); ok {
					d.MemoryBytes, _ = strconv.ParseInt(v, 10, 64)
				}
				peer, _ := h.Prop("memcpy_peer")
				d.PeerAccess = peer == "1"
			}
		}
		if d.MemoryBytes <= 0 {
			return fmt.Errorf("device %s: no memsize in the platform file; give its memory in the calibration", n)
		}
		d.DriverCore = -1
		if nth < len(b.Affinity) && b.AffinityUnit == "CPU" {
			for _, c := range b.Affinity[nth] {
				if !taken[c] && c < b.NCPU {
					d.DriverCore = c
					break
				}
			}
		}
		for c := 0; d.DriverCore < 0 && c < b.NCPU; c++ {
			if !taken[c] {
				d.DriverCore = c
			}
		}
		if d.DriverCore < 0 { // more devices than cores: share
			d.DriverCore = nth % max(b.NCPU, 1)
		}
		taken[d.DriverCore] = true
		nth++
		f.Machine.Devices = append(f.Machine.Devices, d)
	}
	return nil
}

// flatNetwork is StarPU's platform layout without a PCI tree: per device a
// RAM-dev and a dev-RAM link, one shared link at the largest device
// bandwidth, and routes [RAM-dev, Host], [dev-RAM, Host].
func flatNetwork(f *File, b *starpu.Bus, nodes []string, busIdx []int) {
	maxBw := 0.0
	for i := 1; i < len(nodes); i++ {
		for _, bw := range []float64{b.BandwidthMBps[busIdx[0]][busIdx[i]], b.BandwidthMBps[busIdx[i]][busIdx[0]]} {
			if bw > maxBw && !math.IsInf(bw, 0) {
				maxBw = bw
			}
		}
	}
	f.Network.Config = StarPUNetworkConfig
	if maxBw <= 0 {
		return
	}
	f.Network.Links = append(f.Network.Links, Link{ID: "Host", BandwidthBps: maxBw * 1e6})
	for i := 1; i < len(nodes); i++ {
		for _, dir := range [][2]int{{0, i}, {i, 0}} {
			bw := b.BandwidthMBps[busIdx[dir[0]]][busIdx[dir[1]]]
			lat := b.LatencyUS[busIdx[dir[0]]][busIdx[dir[1]]]
			if !(bw > 0) || math.IsInf(bw, 0) || !(lat >= 0) || math.IsInf(lat, 0) {
				continue
			}
			id := nodes[dir[0]] + "-" + nodes[dir[1]]
			f.Network.Links = append(f.Network.Links, Link{ID: id, BandwidthBps: bw * 1e6, LatencyS: lat * 1e-6})
			f.Network.Routes = append(f.Network.Routes, Route{Src: nodes[dir[0]], Dst: nodes[dir[1]], Links: []string{id, "Host"}})
		}
	}
}

// starpuSerialPairs lists the direction pairs StarPU's simulator serializes
// besides same-direction copies (transfers_are_sequential): the two
// directions of a device pair, and a device-to-device copy with any other
// copy whose destination is one of its ends.
func starpuSerialPairs(devs []Device) []SerialPair {
	var nodes []string
	nodes = append(nodes, "RAM")
	for _, d := range devs {
		nodes = append(nodes, d.Name)
	}
	isDev := func(n string) bool { return n != "RAM" }
	var out []SerialPair
	seen := map[[2]string]bool{}
	add := func(a, b string) {
		if a == b || seen[[2]string{a, b}] || seen[[2]string{b, a}] {
			return
		}
		seen[[2]string{a, b}] = true
		out = append(out, SerialPair{A: a, B: b})
	}
	for _, a := range nodes {
		for _, b := range nodes {
			if a == b || !isDev(a) || !isDev(b) {
				continue
			}
			d2d := machine.Dir{Src: a, Dst: b}.String()
			add(d2d, machine.Dir{Src: b, Dst: a}.String())
			for _, c := range nodes {
				for _, d := range nodes {
					if c != d && (d == a || d == b) {
						add(d2d, machine.Dir{Src: c, Dst: d}.String())
					}
				}
			}
		}
	}
	return out
}

// importKernels adds every implementation of models to f. An entry with a
// NaN or infinite value is left out (StarPU's simulator could not use it);
// infinite regression values, which the calibration cannot hold, become
// unknown (NaN): starsim uses the history only.
func importKernels(f *File, models []*starpu.PerfModel) []Warning {
	var warn []Warning
	noInf := func(v float64) Float {
		if math.IsInf(v, 0) {
			return Float(math.NaN())
		}
		return Float(v)
	}
	for _, m := range models {
		for _, c := range m.Combs {
			arch := c.Arch()
			for i, im := range c.Impls {
				km := KernelModel{Model: m.Symbol, Arch: arch, Impl: i, Entries: []KernelEntry{}}
				r := im.Regression
				km.Regression = &Regression{SumLnX: noInf(r.SumLnX), SumLnX2: noInf(r.SumLnX2), SumLnY: noInf(r.SumLnY), SumLnXLnY: noInf(r.SumLnXLnY),
					Alpha: noInf(r.Alpha), Beta: noInf(r.Beta), N: r.N, MinX: r.MinX, MaxX: r.MaxX}
				nl := im.NLRegression
				km.NLRegression = &NLRegression{A: noInf(nl.A), B: noInf(nl.B), C: noInf(nl.C)}
				if im.MultiRegression != nil {
					mr := &MultiRegression{}
					for _, c := range im.MultiRegression.Coeffs {
						mr.Coefs = append(mr.Coefs, noInf(c))
					}
					km.MultiRegression = mr
				}
				for _, e := range im.Entries {
					if !finite(e.MeanUS) || !finite(e.DevUS) || math.IsInf(e.Sum, 0) || math.IsInf(e.Sum2, 0) || math.IsInf(e.Flops, 0) {
						warn = append(warn, Warning{Model: m.Symbol, Msg: fmt.Sprintf("%s:%d: %s %s footprint %08x: mean, deviation, sum or flops is NaN or infinite; entry left out", m.File, e.Line, m.Symbol, arch, e.Footprint)})
						continue
					}
					km.Entries = append(km.Entries, KernelEntry{
						Footprint: fmt.Sprintf("%08x", e.Footprint), SizeBytes: e.Size, Flops: Float(e.Flops), N: e.N,
						MeanUS: e.MeanUS, StddevUS: e.DevUS, SumUS: e.Sum, Sum2US2: e.Sum2,
					})
				}
				f.Kernels = append(f.Kernels, km)
			}
		}
	}
	return warn
}
