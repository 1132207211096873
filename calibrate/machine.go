package calibrate

import (
	"math"
	"strconv"

	"github.com/starsim/starsim/runtime"
)

// RuntimeMachine converts the calibration into what the runtime runs on.
func (f *File) RuntimeMachine() *runtime.Machine {
	m := &runtime.Machine{
		CPUCores: f.Machine.CPUCores, CPUArch: "cpu0", RAMBytes: 0,
		Routes: map[string][]string{}, Predict: map[string]runtime.Prediction{},
		Pitch: map[string][]runtime.PitchModel{}, Kernels: map[runtime.KernelKey]runtime.KernelStats{},
		Costs: runtime.Costs{
			DeviceAllocS: f.Costs.DeviceAllocS, DeviceFreeS: f.Costs.DeviceFreeS, PinnedAllocSPerMiB: f.Costs.PinnedAllocSPerMiB,
			TransferQueueS: f.Costs.TransferQueueS, DeviceTaskQueueS: f.Costs.DeviceTaskQueueS, TaskSubmitS: f.Costs.TaskSubmitS,
			TaskPushS: f.Costs.TaskPushS, FetchInputPerBufS: f.Costs.FetchInputPerBufS,
		},
	}
	for _, d := range f.Machine.Devices {
		m.Devices = append(m.Devices, runtime.Device{Name: d.Name, Kind: d.Kind, Arch: d.Arch, MemoryBytes: d.MemoryBytes, DriverCore: d.DriverCore})
	}
	for _, l := range f.Network.Links {
		m.Links = append(m.Links, runtime.Link{ID: l.ID, BandwidthBps: l.BandwidthBps, LatencyS: l.LatencyS, Fatpipe: l.Sharing == "FATPIPE"})
	}
	for _, r := range f.Network.Routes {
		m.Routes[r.Src+"->"+r.Dst] = r.Links
	}
	for _, t := range f.Transfers {
		dir := t.Src + "->" + t.Dst
		m.Predict[dir] = runtime.Prediction{LatencyS: t.PredictedLatencyS, BandwidthBps: t.PredictedBandwidthBps}
		for _, pm := range t.PitchModels {
			rp := runtime.PitchModel{PitchLoBytes: pm.PitchLoBytes, PitchHiBytes: pm.PitchHiBytes}
			for _, s := range pm.Segments {
				hi := math.Inf(1)
				if s.HiBytes != nil {
					hi = *s.HiBytes
				}
				rp.Segments = append(rp.Segments, runtime.PitchSegment{LoBytes: s.LoBytes, HiBytes: hi, InterceptS: s.InterceptS, SlopeSPerByte: s.SlopeSPerByte})
			}
			m.Pitch[dir] = append(m.Pitch[dir], rp)
		}
	}
	if len(f.Power) > 0 {
		m.Power = map[string]runtime.Power{}
		for _, p := range f.Power {
			m.Power[p.Arch] = runtime.Power{IdleW: p.IdleW, LoadW: p.LoadW}
		}
	}
	for _, p := range f.Serial {
		m.Serial = append(m.Serial, [2]string{p.A, p.B})
	}
	for _, k := range f.Kernels {
		if k.Impl != 0 {
			continue // the runtime's tasks have one implementation
		}
		for _, e := range k.Entries {
			fp, err := strconv.ParseUint(e.Footprint, 16, 32)
			if err != nil {
				continue // Validate guarantees 8 hex digits
			}
			ks := runtime.KernelStats{MeanUS: e.MeanUS, StddevUS: e.StddevUS, N: e.N}
			if e.Histogram != nil {
				ks.EdgesUS, ks.Counts = e.Histogram.EdgesUS, e.Histogram.Counts
			}
			m.Kernels[runtime.KernelKey{Model: k.Model, Arch: k.Arch, Footprint: uint32(fp)}] = ks
		}
	}
	return m
}
