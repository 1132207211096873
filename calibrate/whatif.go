package calibrate

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
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
