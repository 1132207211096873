package calibrate

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
)

// ModelSymbols are the kernel model symbols of the calibration, sorted.
func (f *File) ModelSymbols() []string {
	seen := map[string]bool{}
	var out []string
	for _, k := range f.Kernels {
		if !seen[k.Model] {
			seen[k.Model] = true
			out = append(out, k.Model)
		}
	}
	sort.Strings(out)
	return out
}

// SelectModels returns the calibration's models of symbol, on the archs
// arch names, sorted by arch then implementation. arch is "" (every arch),
// an arch of the calibration ("cuda0", "cpu0"), a kind ("cpu", "cuda": every
// arch of it) or StarPU's spelling of a device ("cuda_0"), as
// starpu_perfmodel_display -a takes it. An unknown symbol or arch is an
// error that lists the choices.
func (f *File) SelectModels(symbol, arch string) ([]KernelModel, error) {
	var of []KernelModel
	for _, k := range f.Kernels {
		if k.Model == symbol {
			of = append(of, k)
		}
	}
	if len(of) == 0 {
		return nil, fmt.Errorf("calibration %s has no model %q (models: %s)", f.Name, symbol, strings.Join(f.ModelSymbols(), ", "))
	}
	sort.SliceStable(of, func(i, j int) bool {
		if of[i].Arch != of[j].Arch {
			return archLess(of[i].Arch, of[j].Arch)
		}
		return of[i].Impl < of[j].Impl
	})
	if arch == "" {
		return of, nil
	}
	want := strings.ToLower(strings.Replace(arch, "_", "", 1))
	var out []KernelModel
	var archs []string
	kinds := map[string]bool{}
	for _, k := range of {
		kind, _ := splitArch(k.Arch)
		if len(archs) == 0 || archs[len(archs)-1] != k.Arch {
			archs = append(archs, k.Arch)
		}
		kinds[kind] = true
		if k.Arch == want || kind == want {
			out = append(out, k)
		}
	}
	if len(out) == 0 {
		var ks []string
		for k := range kinds {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		return nil, fmt.Errorf("model %s has no arch %q (archs: %s; or a kind: %s)", symbol, arch, strings.Join(archs, ", "), strings.Join(ks, ", "))
	}
	return out, nil
}

// finiteAll says whether every value is a number (not NaN nor infinite).
func finiteAll(vs ...Float) bool {
	for _, v := range vs {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return false
		}
	}
	return true
}

// LinearValid says whether the model has a usable power law
// (starpu_perfmodel_display prints it only then).
func (k *KernelModel) LinearValid() bool {
	r := k.Regression
	return r != nil && finiteAll(r.Alpha, r.Beta) && r.N > 0
}

// NonLinearValid says whether the model has a usable a·size^b + c.
func (k *KernelModel) NonLinearValid() bool {
	r := k.NLRegression
	return r != nil && finiteAll(r.A, r.B, r.C)
}

// WriteModels prints models as starpu_perfmodel_display -s prints a
// symbol's performance model: per arch and implementation a "# performance
// model for ARCH_implI" line, the regressions when there are usable ones
// (times in µs, sizes in bytes), then one line per footprint: hash, total
// data size (bytes), flops, mean and standard deviation (µs), sample
// count. The arch names are starsim's (cpu0, cuda0), not StarPU's
// (cpu0_cores1_impl0 (Comb0)); a footprint with a histogram gets a
// "# histogram" line after it (starsim's, StarPU's files have none).
func WriteModels(w io.Writer, models []KernelModel) error {
	var b strings.Builder
	for _, k := range models {
		fmt.Fprintf(&b, "# performance model for %s_impl%d\n", k.Arch, k.Impl)
		if r := k.Regression; r != nil && r.N > 0 {
			fmt.Fprintf(&b, "\tRegression : #sample = %d\n", r.N)
		}
		if k.LinearValid() {
			fmt.Fprintf(&b, "\tLinear: y = alpha size ^ beta\n\t\talpha = %e\n\t\tbeta = %e\n", float64(k.Regression.Alpha), float64(k.Regression.Beta))
		}
		if k.NonLinearValid() {
			r := k.NLRegression
			fmt.Fprintf(&b, "\tNon-Linear: y = a size ^b + c\n\t\ta = %e\n\t\tb = %e\n\t\tc = %e\n", float64(r.A), float64(r.B), float64(r.C))
		}
		if len(k.Entries) == 0 {
			continue
		}
		fmt.Fprintf(&b, "# hash\t\tsize\t\tflops\t\tmean (us or J)\tstddev (us or J)\t\tn\n")
		entries := append([]KernelEntry(nil), k.Entries...)
		sort.SliceStable(entries, func(i, j int) bool {
			if entries[i].SizeBytes != entries[j].SizeBytes {
				return entries[i].SizeBytes < entries[j].SizeBytes
			}
			return entries[i].Footprint < entries[j].Footprint
		})
		for _, e := range entries {
			fmt.Fprintf(&b, "%s\t%-15d\t%-15s\t%-15e\t%-15e\t%d\n", e.Footprint, e.SizeBytes, cE(e.Flops), e.MeanUS, e.StddevUS, e.N)
			if h := e.Histogram; h != nil && len(h.Counts) > 0 {
				fmt.Fprintf(&b, "# histogram: %d bins from %g to %g us\n", len(h.Counts), h.EdgesUS[0], h.EdgesUS[len(h.EdgesUS)-1])
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// cE formats v as C's %e does ("nan" for NaN).
func cE(v Float) string {
	if math.IsNaN(float64(v)) {
		return "nan"
	}
	return strconv.FormatFloat(float64(v), 'e', 6, 64)
}
