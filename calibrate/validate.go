package calibrate

import (
	"fmt"
	"math"
	"regexp"
	"strings"

	"github.com/starsim/starsim/runtime/machine"
)

// ValidationError is a semantic error at a JSON path of the file (object
// keys and array indexes), so readers can report its line.
type ValidationError struct {
	Path []any
	Msg  string
}

func (e *ValidationError) Error() string {
	return pathString(e.Path) + ": " + e.Msg
}

func pathString(path []any) string {
	var b strings.Builder
	for _, p := range path {
		switch v := p.(type) {
		case int:
			fmt.Fprintf(&b, "[%d]", v)
		default:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			fmt.Fprint(&b, v)
		}
	}
	return b.String()
}

func verr(path []any, format string, args ...any) error {
	return &ValidationError{Path: append([]any(nil), path...), Msg: fmt.Sprintf(format, args...)}
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// archRe matches StarPU's arch names: a device kind and index, optionally
// with a core count ("cpu0", "cuda1", "cpu0_cores4"); combined workers join
// several with "_".
var archRe = regexp.MustCompile(`^(cpu|cuda|opencl|hip|mic|fpga|sycl|mpi_sc|tcpip_sc)[0-9]+(_cores[0-9]+)?(_(cpu|cuda|opencl|hip|mic|fpga|sycl|mpi_sc|tcpip_sc)[0-9]+(_cores[0-9]+)?)*$`)

// ValidArch reports whether s is a StarPU-style arch name.
func ValidArch(s string) bool { return archRe.MatchString(s) }

var hexRe = regexp.MustCompile(`^[0-9a-f]{8}$`)

// minDeviceMemoryBytes is the least memory_bytes of a device (the
// runtime's MinGPUMemoryBytes).
const minDeviceMemoryBytes = 2 << 20

// Bounds of a calibration's numbers, far beyond any machine, so that a
// typo (an exponent too many) fails at its line instead of exhausting the
// memory (a worker per core) or running for simulated eons.
const (
	maxCPUCores    = 4096
	maxDevices     = 256
	maxMemoryBytes = 1 << 50 // a PiB
	maxTimeS       = 1e9     // about 31.7 years, for latencies and costs
	maxTimeUS      = maxTimeS * 1e6
	maxRate        = 1e18 // flop/s, B/s
	maxPowerW      = 1e9
)

// within reports whether v is finite and in [lo, hi].
func within(v, lo, hi float64) bool { return v >= lo && v <= hi }

// Nodes returns the memory nodes: "RAM" then each device.
func (f *File) Nodes() []string {
	nodes := []string{"RAM"}
	for _, d := range f.Machine.Devices {
		nodes = append(nodes, d.Name)
	}
	return nodes
}

// Validate checks the file's consistency. Its errors are *ValidationError.
func (f *File) Validate() error {
	if f.Format != Format {
		return verr([]any{"format"}, "format must be %q, got %q", Format, f.Format)
	}
	if f.Version != Version {
		return verr([]any{"version"}, "unsupported version %d (this starsim reads version %d)", f.Version, Version)
	}
	if f.Name == "" {
		return verr([]any{"name"}, "name is empty")
	}
	for _, check := range []func() error{f.validateMachine, f.validateNetwork, f.validateTransfers, f.validateCosts, f.validateKernels, f.validateUnreadable} {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

func (f *File) validateMachine() error {
	m := &f.Machine
	if m.CPUCores < 1 || m.CPUCores > maxCPUCores {
		if m.CPUCores < 1 {
			return verr([]any{"machine", "cpu_cores"}, "cpu_cores must be >= 1, got %d", m.CPUCores)
		}
		return verr([]any{"machine", "cpu_cores"}, "cpu_cores must be from 1 to %d, got %d", maxCPUCores, m.CPUCores)
	}
	if !(m.CPUSpeedFlops > 0) || !within(m.CPUSpeedFlops, 0, maxRate) {
		return verr([]any{"machine", "cpu_speed_flops"}, "cpu_speed_flops must be > 0 and at most %g, got %v", maxRate, m.CPUSpeedFlops)
	}
	if m.RAMBytes < 0 || m.RAMBytes > maxMemoryBytes*1024 {
		return verr([]any{"machine", "ram_bytes"}, "ram_bytes must be from 0 to %d", int64(maxMemoryBytes*1024))
	}
	if len(m.Devices) > maxDevices {
		return verr([]any{"machine", "devices"}, "%d devices: at most %d", len(m.Devices), maxDevices)
	}
	seen := map[string]bool{"RAM": true}
	arch := map[string]bool{}
	for i, d := range m.Devices {
		p := []any{"machine", "devices", i}
		switch {
		case d.Name == "":
			return verr(p, "device name is empty")
		case seen[d.Name]:
			return verr(append(p, "name"), "duplicate memory node %q", d.Name)
		case d.Kind != "cuda" && d.Kind != "opencl" && d.Kind != "hip":
			return verr(append(p, "kind"), "kind must be cuda, opencl or hip, got %q", d.Kind)
		case !ValidArch(d.Arch) || arch[d.Arch]:
			return verr(append(p, "arch"), "arch %q is not a unique StarPU arch name (e.g. cuda0)", d.Arch)
		case d.MemoryBytes < minDeviceMemoryBytes:
			// StarPU uses 90 % of it in whole MiB: 0, which the runtime
			// would take for unlimited, below 2 MiB.
			return verr(append(p, "memory_bytes"), "memory_bytes must be at least %d (2 MiB: StarPU uses 90 %% of it in whole MiB), got %d", minDeviceMemoryBytes, d.MemoryBytes)
		case d.MemoryBytes > maxMemoryBytes:
			return verr(append(p, "memory_bytes"), "memory_bytes must be at most %d (1 PiB), got %d", int64(maxMemoryBytes), d.MemoryBytes)
		case d.DriverCore < 0 || d.DriverCore >= m.CPUCores:
			return verr(append(p, "driver_core"), "driver_core %d is not a core of the %d-core machine", d.DriverCore, m.CPUCores)
		}
		seen[d.Name] = true
		arch[d.Arch] = true
	}
	for i, pw := range f.Power {
		p := []any{"power", i}
		if !ValidArch(pw.Arch) {
			return verr(append(p, "arch"), "unknown arch %q", pw.Arch)
		}
		if !within(pw.IdleW, 0, maxPowerW) || !within(pw.LoadW, 0, maxPowerW) {
			return verr(p, "idle_w and load_w must be from 0 to %g W", maxPowerW)
		}
	}
	return nil
}

func (f *File) validateNetwork() error {
	links := map[string]bool{}
	for i, l := range f.Network.Links {
		p := []any{"network", "links", i}
		switch {
		case l.ID == "":
			return verr(p, "link id is empty")
		case links[l.ID]:
			return verr(append(p, "id"), "duplicate link id %q", l.ID)
		case !(l.BandwidthBps > 0) || !within(l.BandwidthBps, 0, maxRate):
			return verr(append(p, "bandwidth_Bps"), "link %q: bandwidth must be > 0 B/s and at most %g, got %v", l.ID, maxRate, l.BandwidthBps)
		case !within(l.LatencyS, 0, maxTimeS):
			return verr(append(p, "latency_s"), "link %q: latency must be >= 0 s and at most %g, got %v", l.ID, maxTimeS, l.LatencyS)
		case l.Sharing != "" && l.Sharing != "SHARED" && l.Sharing != "FATPIPE":
			return verr(append(p, "sharing_policy"), "link %q: sharing_policy must be SHARED or FATPIPE, got %q", l.ID, l.Sharing)
		}
		links[l.ID] = true
	}
	routes := map[[2]string]bool{}
	for i, r := range f.Network.Routes {
		p := []any{"network", "routes", i}
		if r.Src == "" || r.Dst == "" {
			return verr(p, "route needs src and dst")
		}
		if routes[[2]string{r.Src, r.Dst}] {
			return verr(p, "duplicate route %s->%s", r.Src, r.Dst)
		}
		routes[[2]string{r.Src, r.Dst}] = true
		if len(r.Links) == 0 {
			return verr(append(p, "links"), "route %s->%s has no links", r.Src, r.Dst)
		}
		for j, id := range r.Links {
			if !links[id] {
				return verr(append(p, "links", j), "route %s->%s: unknown link %q", r.Src, r.Dst, id)
			}
		}
	}
	return nil
}

func (f *File) validateTransfers() error {
	nodes := map[string]bool{}
	for _, n := range f.Nodes() {
		nodes[n] = true
	}
	seen := map[string]bool{}
	for i, t := range f.Transfers {
		p := []any{"transfers", i}
		dir := machine.Dir{Src: t.Src, Dst: t.Dst}.String()
		switch {
		case !nodes[t.Src] || !nodes[t.Dst] || t.Src == t.Dst:
			return verr(p, "transfer %s: src and dst must be two memory nodes of %v", dir, f.Nodes())
		case seen[dir]:
			return verr(p, "duplicate transfer %s", dir)
		case !within(t.PredictedLatencyS, 0, maxTimeS):
			return verr(append(p, "predicted_latency_s"), "transfer %s: latency must be >= 0 s and at most %g", dir, maxTimeS)
		case !(t.PredictedBandwidthBps > 0) || !within(t.PredictedBandwidthBps, 0, maxRate):
			return verr(append(p, "predicted_bandwidth_Bps"), "transfer %s: bandwidth must be > 0 B/s and at most %g", dir, maxRate)
		}
		seen[dir] = true
		for j, pm := range t.PitchModels {
			if err := validatePitch(append(p, "pitch_models", j), pm); err != nil {
				return err
			}
		}
	}
	for i, s := range f.Serial {
		for _, d := range []string{s.A, s.B} {
			dir, ok := machine.ParseDir(d)
			if !ok || !nodes[dir.Src] || !nodes[dir.Dst] || dir.Src == dir.Dst {
				return verr([]any{"serialized", i}, "%q is not a transfer direction SRC->DST between memory nodes", d)
			}
		}
	}
	return nil
}

func validatePitch(p []any, pm PitchModel) error {
	if !(pm.PitchLoBytes >= 0) || !(pm.PitchHiBytes >= pm.PitchLoBytes) || !within(pm.PitchHiBytes, 0, maxMemoryBytes) {
		return verr(p, "pitch range [%v, %v] is not a range of bytes", pm.PitchLoBytes, pm.PitchHiBytes)
	}
	if len(pm.Segments) == 0 {
		return verr(append(p, "segments"), "no segments")
	}
	for k, s := range pm.Segments {
		sp := append(p, "segments", k)
		hi := math.Inf(1)
		if s.HiBytes != nil {
			hi = *s.HiBytes
		}
		switch {
		case !(s.LoBytes >= 0) || !finite(s.LoBytes) || !(hi > s.LoBytes):
			return verr(sp, "segment [%v, %v) is empty or negative", s.LoBytes, hi)
		case k > 0 && pm.Segments[k-1].HiBytes != nil && *pm.Segments[k-1].HiBytes != s.LoBytes:
			return verr(sp, "segments must be contiguous: previous ends at %v, this starts at %v", *pm.Segments[k-1].HiBytes, s.LoBytes)
		case k < len(pm.Segments)-1 && s.HiBytes == nil:
			return verr(sp, "only the last segment may be open-ended")
		case !within(s.InterceptS, -maxTimeS, maxTimeS) || !within(s.SlopeSPerByte, 0, maxTimeS):
			return verr(sp, "segment needs an intercept_s within ±%g s and a slope_s_per_byte from 0 to %g", maxTimeS, maxTimeS)
		}
	}
	return nil
}

func (f *File) validateCosts() error {
	c := f.Costs
	for _, v := range []struct {
		key string
		val float64
	}{
		{"device_alloc_s", c.DeviceAllocS}, {"device_free_s", c.DeviceFreeS},
		{"pinned_alloc_s_per_MiB", c.PinnedAllocSPerMiB}, {"transfer_queue_s", c.TransferQueueS},
		{"device_task_queue_s", c.DeviceTaskQueueS}, {"task_submit_s", c.TaskSubmitS},
		{"task_push_s", c.TaskPushS}, {"fetch_input_per_buffer_s", c.FetchInputPerBufS},
	} {
		if !within(v.val, 0, maxTimeS) {
			return verr([]any{"costs", v.key}, "%s must be >= 0 s and at most %g, got %v", v.key, maxTimeS, v.val)
		}
	}
	return nil
}

func (f *File) validateKernels() error {
	seen := map[string]bool{}
	for i, k := range f.Kernels {
		p := []any{"kernels", i}
		key := fmt.Sprintf("%s/%s/%d", k.Model, k.Arch, k.Impl)
		switch {
		case k.Model == "":
			return verr(append(p, "model"), "model symbol is empty")
		case !ValidArch(k.Arch):
			return verr(append(p, "arch"), "unknown arch %q (want e.g. cpu0, cuda1)", k.Arch)
		case k.Impl < 0:
			return verr(append(p, "impl"), "impl must be >= 0")
		case seen[key]:
			return verr(p, "duplicate model %s arch %s impl %d", k.Model, k.Arch, k.Impl)
		}
		seen[key] = true
		fps := map[string]bool{}
		for j, e := range k.Entries {
			ep := append(p, "entries", j)
			switch {
			case !hexRe.MatchString(e.Footprint):
				return verr(append(ep, "footprint"), "footprint must be 8 lowercase hex digits, got %q", e.Footprint)
			case fps[e.Footprint]:
				return verr(append(ep, "footprint"), "duplicate footprint %s", e.Footprint)
			case !within(e.MeanUS, 0, maxTimeUS):
				return verr(append(ep, "mean_us"), "mean_us must be >= 0 µs and at most %g, got %v", maxTimeUS, e.MeanUS)
			case !within(e.StddevUS, 0, maxTimeUS):
				return verr(append(ep, "stddev_us"), "stddev_us must be >= 0 µs and at most %g, got %v", maxTimeUS, e.StddevUS)
			case !(e.SumUS >= 0) || !(e.Sum2US2 >= 0) || !finite(e.SumUS) || !finite(e.Sum2US2):
				return verr(ep, "sum_us and sum2_us2 must be finite and >= 0")
			}
			fps[e.Footprint] = true
			if e.Histogram != nil {
				if err := e.Histogram.validate(append(ep, "histogram")); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func (f *File) validateUnreadable() error {
	for i, u := range f.Unreadable {
		p := []any{"unreadable_models", i}
		switch {
		case u.Model == "":
			return verr(append(p, "model"), "model symbol is empty")
		case u.File == "":
			return verr(append(p, "file"), "file is empty")
		case u.Line < 0:
			return verr(append(p, "line"), "line must be >= 0 (0: the whole file), got %d", u.Line)
		}
	}
	return nil
}

func (h *Histogram) validate(p []any) error {
	if len(h.Counts) == 0 || len(h.EdgesUS) != len(h.Counts)+1 {
		return verr(p, "a histogram needs n >= 1 counts and n+1 edges, got %d counts and %d edges", len(h.Counts), len(h.EdgesUS))
	}
	var total uint64
	for i, e := range h.EdgesUS {
		if !within(e, 0, maxTimeUS) || (i > 0 && !(e > h.EdgesUS[i-1])) {
			return verr(append(p, "edges_us", i), "edges must be from 0 to %g µs and strictly increasing", maxTimeUS)
		}
	}
	for i, c := range h.Counts {
		if total+c < total {
			return verr(append(p, "counts", i), "counts add up to more than 2^64")
		}
		total += c
	}
	if total == 0 {
		return verr(append(p, "counts"), "histogram has no samples")
	}
	return nil
}
