package calibrate

import (
	"math"
	"strconv"

	"github.com/starsim/starsim/runtime/machine"
)

// RuntimeMachine converts the calibration into what the runtime runs on.
func (f *File) RuntimeMachine() *machine.Machine {
	m := &machine.Machine{
		CPUCores: f.Machine.CPUCores, CPUArch: "cpu0", RAMBytes: 0,
		Routes: map[machine.Dir][]string{}, Predict: map[machine.Dir]machine.Prediction{},
		Pitch: map[machine.Dir][]machine.PitchModel{}, Kernels: map[machine.KernelKey]machine.KernelStats{},
		Costs: machine.Costs{
			DeviceAllocS: f.Costs.DeviceAllocS, DeviceFreeS: f.Costs.DeviceFreeS,
			TransferQueueS: f.Costs.TransferQueueS, DeviceTaskQueueS: f.Costs.DeviceTaskQueueS, TaskSubmitS: f.Costs.TaskSubmitS,
			TaskPushS: f.Costs.TaskPushS, FetchInputPerBufS: f.Costs.FetchInputPerBufS,
		},
	}
	for _, d := range f.Machine.Devices {
		m.Devices = append(m.Devices, machine.Device{Name: d.Name, Kind: d.Kind, Arch: d.Arch, MemoryBytes: d.MemoryBytes})
	}
	for _, l := range f.Network.Links {
		m.Links = append(m.Links, machine.Link{ID: l.ID, BandwidthBps: l.BandwidthBps, LatencyS: l.LatencyS, Fatpipe: l.Sharing == "FATPIPE"})
	}
	for _, r := range f.Network.Routes {
		m.Routes[machine.Dir{Src: r.Src, Dst: r.Dst}] = r.Links
	}
	for _, t := range f.Transfers {
		dir := machine.Dir{Src: t.Src, Dst: t.Dst}
		m.Predict[dir] = machine.Prediction{LatencyS: t.PredictedLatencyS, BandwidthBps: t.PredictedBandwidthBps}
		for _, pm := range t.PitchModels {
			rp := machine.PitchModel{PitchLoBytes: pm.PitchLoBytes, PitchHiBytes: pm.PitchHiBytes}
			for _, s := range pm.Segments {
				hi := math.Inf(1)
				if s.HiBytes != nil {
					hi = *s.HiBytes
				}
				rp.Segments = append(rp.Segments, machine.PitchSegment{LoBytes: s.LoBytes, HiBytes: hi, InterceptS: s.InterceptS, SlopeSPerByte: s.SlopeSPerByte})
			}
			m.Pitch[dir] = append(m.Pitch[dir], rp)
		}
	}
	if len(f.Power) > 0 {
		m.Power = map[string]machine.Power{}
		for _, p := range f.Power {
			m.Power[p.Arch] = machine.Power{IdleW: p.IdleW, LoadW: p.LoadW}
		}
	}
	for _, p := range f.Serial {
		a, okA := machine.ParseDir(p.A)
		b, okB := machine.ParseDir(p.B)
		if okA && okB { // Validate guarantees both
			m.Serial = append(m.Serial, [2]machine.Dir{a, b})
		}
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
			ks := machine.KernelStats{MeanUS: e.MeanUS, StddevUS: e.StddevUS, N: e.N}
			if e.Histogram != nil {
				ks.EdgesUS, ks.Counts = e.Histogram.EdgesUS, e.Histogram.Counts
			}
			m.Kernels[machine.KernelKey{Model: k.Model, Arch: k.Arch, Footprint: uint32(fp)}] = ks
		}
	}
	return m
}
