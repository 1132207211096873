package starpu

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
)

// Write writes m in performance model format 45, laid out like StarPU's own
// files (one count per line, tab-separated rows, a "#" comment before each
// field group) so that StarPU and starpu_perfmodel_display can read it.
// Floats are written with the shortest representation that reads back
// exactly (NaN as "nan", infinities as "inf"), so ParsePerfModel(Write(m))
// equals m except for the Line fields and Notes. Counts are taken from the slices; a MultiRegression with
// no coefficient is written as none. Write refuses, before writing anything,
// a model that ParsePerfModel would reject (a comb without devices or
// implementations, an unknown device type, a negative mean...).
func (m *PerfModel) Write(w io.Writer) error {
	if err := m.check(); err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	pr := func(format string, args ...any) { fmt.Fprintf(bw, format, args...) }

	pr("##################\n# StarPU performance model, format version\n%d\n\n", PerfModelVersion)
	pr("####################\n# number of device combinations (combs)\n%d\n", len(m.Combs))
	for c := range m.Combs {
		comb := &m.Combs[c]
		pr("####################\n# comb %d: %s\n# number of devices\n%d\n", c, comb.Arch(), len(comb.Devices))
		for d, dev := range comb.Devices {
			pr("####################\n# device %d: type (0 CPU, 1 CUDA, 2 OpenCL, 3 MIC, 4 FPGA, 5 MPI_SC, 6 TCPIP_SC, 7 HIP, 8 SYCL)\n%d\n", d, int(dev.Type))
			pr("# device %d: device id\n%d\n", d, dev.DevID)
			pr("# device %d: number of cores\n%d\n", d, dev.NCores)
		}
		pr("##########\n# number of implementations\n%d\n", len(comb.Impls))
		for i := range comb.Impls {
			im := &comb.Impls[i]
			pr("#####\n# model of %s_impl%d\n# number of history entries\n%d\n", comb.Arch(), i, len(im.Entries))
			r := &im.Regression
			pr("# sumlnx\tsumlnx2\tsumlny\tsumlnxlny\talpha\tbeta\tn\tminx\tmaxx\n")
			pr("%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\n",
				formatFloat(r.SumLnX), formatFloat(r.SumLnX2), formatFloat(r.SumLnY), formatFloat(r.SumLnXLnY),
				formatFloat(r.Alpha), formatFloat(r.Beta), r.N, r.MinX, r.MaxX)
			nl := &im.NLRegression
			pr("# a\tb\tc\n%s\t%s\t%s\n", formatFloat(nl.A), formatFloat(nl.B), formatFloat(nl.C))
			if mr := im.MultiRegression; mr == nil || len(mr.Coeffs) == 0 {
				pr("# multiple regression: none\n0\n")
			} else {
				pr("# multiple regression: number of coefficients, intercept, one coefficient per term\n%d", len(mr.Coeffs))
				for _, v := range mr.Coeffs {
					pr("\t%s", formatFloat(v))
				}
				pr("\n")
			}
			pr("# hash\tsize\tflops\tmean (us)\tdev (us)\tsum\tsum2\tn\n")
			for _, e := range im.Entries {
				pr("%08x\t%s\t%s\t%s\t%s\t%s\t%s\t%d\n", e.Footprint, strconv.FormatUint(e.Size, 10),
					formatFloat(e.Flops), formatFloat(e.MeanUS), formatFloat(e.DevUS),
					formatFloat(e.Sum), formatFloat(e.Sum2), e.N)
			}
			pr("\n")
		}
	}
	return bw.Flush()
}

// check reports the first thing in m that format 45 cannot hold or that
// ParsePerfModel would refuse.
func (m *PerfModel) check() error {
	for c := range m.Combs {
		comb := &m.Combs[c]
		if len(comb.Devices) == 0 {
			return fmt.Errorf("starpu: model %s: comb %d has no device", m.Symbol, c)
		}
		if len(comb.Impls) == 0 {
			return fmt.Errorf("starpu: model %s: comb %d (%s) has no implementation", m.Symbol, c, comb.Arch())
		}
		for _, d := range comb.Devices {
			if !d.Type.Valid() || d.DevID < 0 || d.NCores < 0 || d.DevID > maxCount || d.NCores > maxCount {
				return fmt.Errorf("starpu: model %s: comb %d: invalid device %+v", m.Symbol, c, d)
			}
		}
		for i := range comb.Impls {
			im := &comb.Impls[i]
			if im.Regression.N > 1<<32-1 {
				return fmt.Errorf("starpu: model %s: %s_impl%d: regression sample count %d does not fit in 32 bits", m.Symbol, comb.Arch(), i, im.Regression.N)
			}
			if mr := im.MultiRegression; mr != nil && len(mr.Coeffs) > maxCount {
				return fmt.Errorf("starpu: model %s: %s_impl%d: too many multiple-regression coefficients", m.Symbol, comb.Arch(), i)
			}
			for _, e := range im.Entries {
				if e.N > 1<<32-1 {
					return fmt.Errorf("starpu: model %s: %s_impl%d: entry %08x: sample count %d does not fit in 32 bits", m.Symbol, comb.Arch(), i, e.Footprint, e.N)
				}
				for _, v := range []float64{e.Flops, e.MeanUS, e.DevUS, e.Sum, e.Sum2} {
					if v < 0 {
						return fmt.Errorf("starpu: model %s: %s_impl%d: entry %08x: negative value %v", m.Symbol, comb.Arch(), i, e.Footprint, v)
					}
				}
			}
		}
	}
	return nil
}
