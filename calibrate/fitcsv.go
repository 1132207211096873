package calibrate

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/starsim/starsim/calibrate/fit"
	"github.com/starsim/starsim/internal/inputfile"
	"github.com/starsim/starsim/internal/srcerr"
	"github.com/starsim/starsim/runtime/machine"
)

// KernelSample is one measured kernel execution
// (CSV: model,arch,footprint,size,duration_us).
type KernelSample struct {
	Model, Arch, Footprint string
	SizeBytes              uint64
	DurationUS             float64
	// File and Line locate the sample (for Fit's errors; "" and 0: none).
	File string
	Line int
}

// TransferSample is one measured copy (CSV: src,dst,bytes,pitch,duration_us).
type TransferSample struct {
	Src, Dst   string
	Bytes      float64
	PitchBytes float64
	DurationUS float64
	// File and Line locate the sample (for Fit's errors; "" and 0: none).
	File string
	Line int
}

// Bounds of a sample: a duration to about 11.6 days (µs), a size or pitch
// to a PiB.
const (
	maxSampleUS    = 1e12
	maxSampleBytes = 1 << 50
)

var (
	kernelHeader   = []string{"model", "arch", "footprint", "size", "duration_us"}
	transferHeader = []string{"src", "dst", "bytes", "pitch", "duration_us"}
)

// ReadKernelCSV reads kernel samples. A header line equal to the column
// names is optional; blank lines and lines starting with # are skipped.
func ReadKernelCSV(path string) ([]KernelSample, error) {
	var out []KernelSample
	err := readCSV(path, kernelHeader, func(rec []string, line int) error {
		s := KernelSample{Model: rec[0], Arch: rec[1], Footprint: strings.ToLower(rec[2]), File: path, Line: line}
		if s.Model == "" {
			return fmt.Errorf("empty model")
		}
		if !ValidArch(s.Arch) {
			return fmt.Errorf("unknown arch %q (want e.g. cpu0, cuda1)", s.Arch)
		}
		if !hexRe.MatchString(s.Footprint) {
			return fmt.Errorf("footprint must be 8 hex digits, got %q", rec[2])
		}
		size, err := strconv.ParseUint(rec[3], 10, 64)
		if err != nil || size > maxSampleBytes {
			return fmt.Errorf("size must be a number of bytes from 0 to %d, got %q", uint64(maxSampleBytes), rec[3])
		}
		s.SizeBytes = size
		if s.DurationUS, err = bounded(rec[4], "duration_us", maxSampleUS); err != nil {
			return err
		}
		out = append(out, s)
		return nil
	})
	if err == nil && len(out) == 0 {
		err = srcerr.Errorf(path, 0, "no kernel samples: want rows %s", strings.Join(kernelHeader, ","))
	}
	return out, err
}

// ReadTransferCSV reads transfer samples (same conventions as ReadKernelCSV).
func ReadTransferCSV(path string) ([]TransferSample, error) {
	var out []TransferSample
	err := readCSV(path, transferHeader, func(rec []string, line int) error {
		s := TransferSample{Src: rec[0], Dst: rec[1], File: path, Line: line}
		if s.Src == "" || s.Dst == "" || s.Src == s.Dst {
			return fmt.Errorf("src and dst must be two different memory nodes")
		}
		var err error
		if s.Bytes, err = bounded(rec[2], "bytes", maxSampleBytes); err != nil {
			return err
		}
		if s.PitchBytes, err = bounded(rec[3], "pitch", maxSampleBytes); err != nil {
			return err
		}
		if s.DurationUS, err = bounded(rec[4], "duration_us", maxSampleUS); err != nil {
			return err
		}
		out = append(out, s)
		return nil
	})
	if err == nil && len(out) == 0 {
		err = srcerr.Errorf(path, 0, "no transfer samples: want rows %s", strings.Join(transferHeader, ","))
	}
	return out, err
}

// bounded parses a finite number from 0 to max.
func bounded(s, what string, max float64) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%s must be a finite number, got %q", what, s)
	}
	if v < 0 {
		return 0, fmt.Errorf("%s must be >= 0, got %v", what, v)
	}
	if v > max {
		return 0, fmt.Errorf("%s must be at most %g, got %v", what, max, v)
	}
	return v, nil
}

// at locates an error at a sample's line (plain when it has none).
func at(file string, line int, err error) error {
	if file == "" {
		return err
	}
	return srcerr.Wrap(file, line, err)
}

func readCSV(path string, header []string, row func(rec []string, line int) error) error {
	data, err := inputfile.ReadFile(path)
	if err != nil {
		return err
	}
	r := csv.NewReader(bytes.NewReader(data))
	r.Comment = '#'
	r.FieldsPerRecord = len(header)
	r.TrimLeadingSpace = true
	first := true
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return srcerr.Errorf(path, pe.Line, "want %d columns (%s): %v", len(header), strings.Join(header, ","), pe.Err)
			}
			return srcerr.Errorf(path, 0, "%v", err)
		}
		line, _ := r.FieldPos(0) // valid only after a successful Read
		if first {
			first = false
			if strings.EqualFold(strings.Join(rec, ","), strings.Join(header, ",")) {
				continue
			}
		}
		if err := row(rec, line); err != nil {
			return srcerr.Errorf(path, line, "%v", err)
		}
	}
}

// Fit returns base with kernel entries built from kernel samples (an
// irregular histogram, n, mean, deviation and sums per (model, arch,
// footprint), replacing an existing entry's statistics and keeping its flops)
// and pitch models fitted from transfer samples (replacing those of the
// direction). A direction absent from base is added with a prediction taken
// from its fit: latency = the first segment's intercept at the smallest
// pitch, bandwidth = 1/slope of its last segment.
//
// Errors name the sample's FILE:LINE (the first sample of the entry or
// direction at fault): a transfer between nodes the base lacks, samples
// that disagree, or a fit that makes an invalid entry.
func Fit(base *File, kernels []KernelSample, transfers []TransferSample) (*File, error) {
	f := *base
	f.Kernels = append([]KernelModel(nil), base.Kernels...)
	f.Transfers = append([]Transfer(nil), base.Transfers...)
	nodes := map[string]bool{}
	for _, n := range base.Nodes() {
		nodes[n] = true
	}
	for _, s := range transfers {
		for _, n := range []string{s.Src, s.Dst} {
			if !nodes[n] {
				return nil, at(s.File, s.Line, fmt.Errorf("%q is not a memory node of %s (%s)", n, base.Name, strings.Join(base.Nodes(), ", ")))
			}
		}
	}
	if err := fitKernels(&f, kernels); err != nil {
		return nil, err
	}
	if err := fitTransfers(&f, transfers); err != nil {
		return nil, err
	}
	if err := f.Validate(); err != nil {
		return nil, fitValidationError(&f, err, kernels, transfers)
	}
	return &f, nil
}

// fitValidationError locates a fitted file's validation error at the first
// sample of the entry or direction it names.
func fitValidationError(f *File, err error, kernels []KernelSample, transfers []TransferSample) error {
	var ve *ValidationError
	if !errors.As(err, &ve) || len(ve.Path) < 2 {
		return err
	}
	i, _ := ve.Path[1].(int)
	switch ve.Path[0] {
	case "transfers":
		if i < len(f.Transfers) {
			t := f.Transfers[i]
			for _, s := range transfers {
				if s.Src == t.Src && s.Dst == t.Dst {
					return at(s.File, s.Line, fmt.Errorf("the samples of %s->%s fit no valid model: %s", t.Src, t.Dst, ve.Msg))
				}
			}
		}
	case "kernels":
		if i < len(f.Kernels) {
			k := f.Kernels[i]
			for _, s := range kernels {
				if s.Model == k.Model && s.Arch == k.Arch {
					return at(s.File, s.Line, fmt.Errorf("the samples of %s on %s fit no valid model: %s", k.Model, k.Arch, ve.Msg))
				}
			}
		}
	}
	return err
}

func fitKernels(f *File, samples []KernelSample) error {
	type key struct{ model, arch, fp string }
	groups := map[key][]float64{}
	sizes := map[key]uint64{}
	firsts := map[key]KernelSample{}
	var keys []key
	for _, s := range samples {
		k := key{s.Model, s.Arch, s.Footprint}
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
			sizes[k] = s.SizeBytes
			firsts[k] = s
		} else if sizes[k] != s.SizeBytes {
			return at(s.File, s.Line, fmt.Errorf("kernel %s %s %s: samples disagree on size (%d bytes on line %d, %d here)", k.model, k.arch, k.fp, sizes[k], firsts[k].Line, s.SizeBytes))
		}
		groups[k] = append(groups[k], s.DurationUS)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.model != b.model {
			return a.model < b.model
		}
		if a.arch != b.arch {
			return a.arch < b.arch
		}
		return a.fp < b.fp
	})
	for _, k := range keys {
		xs := groups[k]
		h, err := fit.FitHistogram(xs)
		if err != nil {
			return at(firsts[k].File, firsts[k].Line, fmt.Errorf("kernel %s %s %s: %w", k.model, k.arch, k.fp, err))
		}
		var sum, sum2 float64
		for _, x := range xs {
			sum += x
			sum2 += x * x
		}
		n := float64(len(xs))
		// StarPU's deviation: sqrt(|sum2 - sum^2/n| / n).
		e := KernelEntry{Footprint: k.fp, SizeBytes: sizes[k], Flops: Float(math.NaN()), N: uint64(len(xs)),
			MeanUS: sum / n, StddevUS: math.Sqrt(math.Abs(sum2-sum*sum/n) / n), SumUS: sum, Sum2US2: sum2,
			Histogram: &Histogram{EdgesUS: h.EdgesUS, Counts: h.Counts}}
		km := f.kernelModel(k.model, k.arch)
		replaced := false
		for i := range km.Entries {
			if km.Entries[i].Footprint == k.fp {
				e.Flops = km.Entries[i].Flops
				km.Entries[i] = e
				replaced = true
			}
		}
		if !replaced {
			km.Entries = append(km.Entries, e)
		}
	}
	return nil
}

// kernelModel returns the (model, arch, impl 0) model of f, adding it.
func (f *File) kernelModel(model, arch string) *KernelModel {
	for i := range f.Kernels {
		if k := &f.Kernels[i]; k.Model == model && k.Arch == arch && k.Impl == 0 {
			k.Entries = append([]KernelEntry(nil), k.Entries...)
			return k
		}
	}
	f.Kernels = append(f.Kernels, KernelModel{Model: model, Arch: arch})
	return &f.Kernels[len(f.Kernels)-1]
}

func fitTransfers(f *File, samples []TransferSample) error {
	groups := map[[2]string][]fit.TransferSample{}
	firsts := map[[2]string]TransferSample{}
	var dirs [][2]string
	for _, s := range samples {
		d := [2]string{s.Src, s.Dst}
		if _, ok := groups[d]; !ok {
			dirs = append(dirs, d)
			firsts[d] = s
		}
		groups[d] = append(groups[d], fit.TransferSample{Bytes: s.Bytes, Pitch: s.PitchBytes, DurationUS: s.DurationUS})
	}
	sort.Slice(dirs, func(i, j int) bool {
		return machine.Dir{Src: dirs[i][0], Dst: dirs[i][1]}.String() < machine.Dir{Src: dirs[j][0], Dst: dirs[j][1]}.String()
	})
	for _, d := range dirs {
		pms, err := fit.FitPitchModels(groups[d])
		if err != nil {
			return at(firsts[d].File, firsts[d].Line, fmt.Errorf("transfers %s->%s: %w", d[0], d[1], err))
		}
		var models []PitchModel
		for _, pm := range pms {
			m := PitchModel{PitchLoBytes: pm.PitchLo, PitchHiBytes: pm.PitchHi}
			for _, s := range pm.Segments {
				seg := Segment{LoBytes: s.LoBytes, InterceptS: s.InterceptUS * 1e-6, SlopeSPerByte: s.SlopeUSPerByte * 1e-6}
				if !math.IsInf(s.HiBytes, 1) {
					hi := s.HiBytes
					seg.HiBytes = &hi
				}
				m.Segments = append(m.Segments, seg)
			}
			models = append(models, m)
		}
		t := f.transfer(d[0], d[1])
		if t == nil {
			first, last := models[0].Segments[0], models[0].Segments[len(models[0].Segments)-1]
			bw := math.Inf(1)
			if last.SlopeSPerByte > 0 {
				bw = 1 / last.SlopeSPerByte
			}
			f.Transfers = append(f.Transfers, Transfer{Src: d[0], Dst: d[1], PredictedLatencyS: math.Max(first.InterceptS, 0), PredictedBandwidthBps: bw})
			t = &f.Transfers[len(f.Transfers)-1]
		}
		t.PitchModels = models
	}
	return nil
}

func (f *File) transfer(src, dst string) *Transfer {
	for i := range f.Transfers {
		if f.Transfers[i].Src == src && f.Transfers[i].Dst == dst {
			return &f.Transfers[i]
		}
	}
	return nil
}
