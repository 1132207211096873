package main

import (
	"fmt"
	"io"
	"sort"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/starsim/starsim/calibrate"
	"github.com/starsim/starsim/internal/plot"
)

func calibratePlotCmd() *cobra.Command {
	return leaf("plot [FILE]", "plot a kernel model's duration against data size, as starpu_perfmodel_plot", `
Draws a kernel model as starpu_perfmodel_plot does: duration (ms) against
the task's total data size (bytes), log-log, one series per arch (the mean
of each footprint, with its standard deviation as an error bar) and the
model's regressions when it has usable ones; below, for each arch whose
footprints have duration histograms (calibrate fit makes them), the
histograms. Calibration: FILE, --starpu DIR --host NAME, or the embedded one.`, func(fs *pflag.FlagSet) runner {
		model := fs.String("model", "", "kernel model `SYMBOL` (chol_model_gemm); required")
		arch := fs.String("arch", "", "only this `ARCH` (cuda0) or kind (cpu, cuda)")
		out := fs.StringP("output", "o", "", "output figure `FILE` (.png or .svg); required")
		dir := fs.String("starpu", "", "StarPU sampling directory `DIR` instead of a calibration file")
		host := fs.String("host", "", "host `NAME`, with --starpu")
		return func(pos []string, stdout, stderr io.Writer) error {
			return calibratePlot(pos, *model, *arch, *out, *dir, *host, stdout, stderr)
		}
	})
}

func calibratePlot(pos []string, model, arch, out, dir, host string, stdout, stderr io.Writer) error {
	if len(pos) > 1 || model == "" || out == "" {
		return &usageError{"want --model SYMBOL -o F.png|F.svg [FILE | --starpu DIR --host NAME]"}
	}
	if err := checkOutput("-o", out, ".png", ".svg"); err != nil {
		return err
	}
	file := ""
	if len(pos) == 1 {
		file = pos[0]
	}
	f, err := loadCalibration(file, dir, host, stderr)
	if err != nil {
		return err
	}
	ms, err := f.SelectModels(model, arch)
	if err != nil {
		return &usageError{err.Error()}
	}
	if err := plot.SaveModelFigure(modelFigure(f.Name, model, ms), out); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: model %s, %d arch(s)\n", out, model, len(ms))
	return nil
}

// modelFigure converts a symbol's models (µs) into the figure's ms.
func modelFigure(machine, symbol string, ms []calibrate.KernelModel) plot.ModelFigure {
	fig := plot.ModelFigure{Title: fmt.Sprintf("Model for codelet %s on %s", symbol, machine)}
	for _, k := range ms {
		a := plot.ModelArch{Name: fmt.Sprintf("%s_impl%d", k.Arch, k.Impl)}
		es := append([]calibrate.KernelEntry(nil), k.Entries...)
		sort.SliceStable(es, func(i, j int) bool { return es[i].SizeBytes < es[j].SizeBytes })
		for _, e := range es {
			a.SizeBytes = append(a.SizeBytes, float64(e.SizeBytes))
			a.MeanMs = append(a.MeanMs, e.MeanUS/1e3)
			a.StddevMs = append(a.StddevMs, e.StddevUS/1e3)
			if h := e.Histogram; h != nil && len(h.Counts) > 0 {
				mh := plot.ModelHist{SizeBytes: float64(e.SizeBytes)}
				for _, x := range h.EdgesUS {
					mh.EdgesMs = append(mh.EdgesMs, x/1e3)
				}
				for _, c := range h.Counts {
					mh.Counts = append(mh.Counts, float64(c))
				}
				a.Hists = append(a.Hists, mh)
			}
		}
		if k.LinearValid() {
			a.Linear = &[2]float64{float64(k.Regression.Alpha) / 1e3, float64(k.Regression.Beta)}
		}
		if k.NonLinearValid() {
			r := k.NLRegression
			a.NonLinear = &[3]float64{float64(r.A) / 1e3, float64(r.B), float64(r.C) / 1e3}
		}
		fig.Archs = append(fig.Archs, a)
	}
	return fig
}
