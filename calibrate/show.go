package calibrate

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"text/tabwriter"
)

// KernelRow is one (model, arch, footprint) line of `calibrate show`, the
// fields starpu_perfmodel_display prints. Flops is null when unknown.
type KernelRow struct {
	Model     string  `json:"model"`
	Arch      string  `json:"arch"`
	Impl      int     `json:"impl"`
	Footprint string  `json:"footprint"`
	Size      uint64  `json:"size"`
	Flops     Float   `json:"flops"`
	N         uint64  `json:"n"`
	MeanUS    float64 `json:"mean_us"`
	StddevUS  float64 `json:"stddev_us"`
	HistBins  int     `json:"histogram_bins"`
}

// Summary is what `calibrate show --json` prints.
type Summary struct {
	Name      string      `json:"name"`
	Machine   Machine     `json:"machine"`
	Links     []Link      `json:"links"`
	Routes    []Route     `json:"routes"`
	Transfers []Transfer  `json:"transfers"`
	Costs     Costs       `json:"costs"`
	Kernels   []KernelRow `json:"kernels"`
	// Unreadable are the model files the import skipped.
	Unreadable []UnreadableModel `json:"unreadable_models,omitempty"`
}

// Rows flattens the kernel models, sorted by model, arch, impl, then size
// and footprint.
func (f *File) Rows() []KernelRow {
	var rows []KernelRow
	for _, k := range f.Kernels {
		for _, e := range k.Entries {
			r := KernelRow{Model: k.Model, Arch: k.Arch, Impl: k.Impl, Footprint: e.Footprint, Size: e.SizeBytes,
				Flops: e.Flops, N: e.N, MeanUS: e.MeanUS, StddevUS: e.StddevUS}
			if e.Histogram != nil {
				r.HistBins = len(e.Histogram.Counts)
			}
			rows = append(rows, r)
		}
	}
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		switch {
		case a.Model != b.Model:
			return a.Model < b.Model
		case a.Arch != b.Arch:
			return archLess(a.Arch, b.Arch)
		case a.Impl != b.Impl:
			return a.Impl < b.Impl
		case a.Size != b.Size:
			return a.Size < b.Size
		}
		return a.Footprint < b.Footprint
	})
	return rows
}

// archLess orders "cpu0" < "cuda0" < "cuda2" < "cuda10" (numeric suffix).
func archLess(a, b string) bool {
	pa, na := splitArch(a)
	pb, nb := splitArch(b)
	if pa != pb {
		return pa < pb
	}
	if na != nb {
		return na < nb
	}
	return a < b
}

func splitArch(s string) (string, int) {
	i := 0
	for i < len(s) && (s[i] < '0' || s[i] > '9') {
		i++
	}
	j := i
	for j < len(s) && s[j] >= '0' && s[j] <= '9' {
		j++
	}
	n, _ := strconv.Atoi(s[i:j])
	return s[:i], n
}

// Summarize returns the data `calibrate show` prints.
func (f *File) Summarize() *Summary {
	return &Summary{Name: f.Name, Machine: f.Machine, Links: f.Network.Links, Routes: f.Network.Routes,
		Transfers: f.Transfers, Costs: f.Costs, Kernels: f.Rows(), Unreadable: f.Unreadable}
}

// WriteText prints the calibration for people: machine, kernels (as
// starpu_perfmodel_display), transfer predictions, links, costs.
func (f *File) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "calibration %s: %d CPU cores, %d devices\n", f.Name, f.Machine.CPUCores, len(f.Machine.Devices))
	if f.Description != "" {
		fmt.Fprintf(tw, "%s\n", f.Description)
	}
	fmt.Fprintf(tw, "\nDEVICE\tKIND\tARCH\tMODEL\tMEMORY (MiB)\tDRIVER CORE\tPEER\n")
	for _, d := range f.Machine.Devices {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%v\n", d.Name, d.Kind, d.Arch, d.Model, d.MemoryBytes>>20, d.DriverCore, d.PeerAccess)
	}
	fmt.Fprintf(tw, "\nMODEL\tARCH\tIMPL\tFOOTPRINT\tSIZE (B)\tFLOPS\tN\tMEAN (us)\tSTDDEV (us)\tHIST BINS\n")
	for _, r := range f.Rows() {
		flops := "nan"
		if !math.IsNaN(float64(r.Flops)) {
			flops = fmt.Sprintf("%g", float64(r.Flops))
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%d\t%s\t%d\t%.6g\t%.6g\t%d\n", r.Model, r.Arch, r.Impl, r.Footprint, r.Size, flops, r.N, r.MeanUS, r.StddevUS, r.HistBins)
	}
	fmt.Fprintf(tw, "\nTRANSFER\tPRED LATENCY (us)\tPRED BANDWIDTH (MB/s)\tPITCH MODELS\n")
	for _, t := range f.Transfers {
		fmt.Fprintf(tw, "%s -> %s\t%.6g\t%.6g\t%d\n", t.Src, t.Dst, t.PredictedLatencyS*1e6, t.PredictedBandwidthBps/1e6, len(t.PitchModels))
	}
	fmt.Fprintf(tw, "\nLINK\tBANDWIDTH (MB/s)\tLATENCY (us)\tSHARING\n")
	for _, l := range f.Network.Links {
		sh := l.Sharing
		if sh == "" {
			sh = "SHARED"
		}
		fmt.Fprintf(tw, "%s\t%.6g\t%.6g\t%s\n", l.ID, l.BandwidthBps/1e6, l.LatencyS*1e6, sh)
	}
	c := f.Costs
	fmt.Fprintf(tw, "\nCOST\tVALUE (us)\n")
	for _, kv := range []struct {
		k string
		v float64
	}{
		{"device alloc", c.DeviceAllocS}, {"device free", c.DeviceFreeS}, {"pinned alloc per MiB", c.PinnedAllocSPerMiB},
		{"transfer queue", c.TransferQueueS}, {"device task queue", c.DeviceTaskQueueS}, {"task submit", c.TaskSubmitS},
		{"task push", c.TaskPushS}, {"fetch input per buffer", c.FetchInputPerBufS},
	} {
		fmt.Fprintf(tw, "%s\t%.6g\n", kv.k, kv.v*1e6)
	}
	if len(f.Unreadable) > 0 {
		fmt.Fprintf(tw, "\nUNREADABLE MODEL\tWHERE AND WHY (a run that needs it fails)\n")
		for _, u := range f.Unreadable {
			fmt.Fprintf(tw, "%s\t%v\n", u.Model, u.Err())
		}
	}
	return tw.Flush()
}
