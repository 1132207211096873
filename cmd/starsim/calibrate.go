package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/starsim/starsim/calibrate"
	"github.com/starsim/starsim/internal/atomicfile"
)

// calibrateCmd is `starsim calibrate` and its subcommands.
func calibrateCmd() *cobra.Command {
	return group("calibrate", "calibration files: import from StarPU, show, plot, fit from samples",
		calibrateImportCmd(), calibrateShowCmd(), calibratePlotCmd(), calibrateFitCmd())
}

// writeCalibration writes f to path all or nothing (atomicfile).
func writeCalibration(f *calibrate.File, path string) error {
	return atomicfile.Write(path, f.Write)
}

func calibrateImportCmd() *cobra.Command {
	return leaf("import", "read a StarPU sampling directory (bus and codelet models) into a calibration file", `
Reads a StarPU sampling directory (bus/HOST.* and codelets/45/*.HOST, as
starpu_calibrate_bus and calibrating runs leave them) and writes a starsim
calibration: machine, network (the platform file's links and routes), the
scheduler's transfer predictions, StarPU's runtime costs and every kernel
model entry. Warnings (entries left out) go to stderr.

A model file that cannot be read is skipped, as StarPU skips the models no
codelet uses: it is listed on stderr and in the calibration
("unreadable_models"), and a run that needs that model fails naming its
file and line. The command succeeds when the machine is usable (bus files
read, at least one model). --strict fails on the first unreadable model
file instead.`, func(fs *pflag.FlagSet) runner {
		dir := fs.String("starpu", "", "StarPU sampling directory `DIR` (holds bus/ and codelets/)")
		host := fs.String("host", "", "host `NAME` of the files (STARPU_HOSTNAME)")
		out := fs.StringP("output", "o", "", "output calibration `FILE` (*.calib.json)")
		strict := fs.Bool("strict", false, "fail on any model file StarPU's writer would not have written (unreadable, or read only as StarPU's reader tolerates)")
		return func(pos []string, stdout, stderr io.Writer) error {
			return calibrateImport(pos, *dir, *host, *out, *strict, stdout, stderr)
		}
	})
}

func calibrateImport(pos []string, dir, host, out string, strict bool, stdout, stderr io.Writer) error {
	if len(pos) != 0 || dir == "" || host == "" || out == "" {
		return &usageError{"want --starpu DIR --host NAME -o FILE.calib.json"}
	}
	if err := checkOutput("-o", out); err != nil {
		return err
	}
	f, warn, err := calibrate.ImportWith(dir, host, calibrate.ImportOptions{Strict: strict})
	if err != nil {
		return err
	}
	for _, w := range warn {
		fmt.Fprintf(stderr, "starsim: warning: %s\n", w)
	}
	for _, u := range f.Unreadable {
		fmt.Fprintf(stderr, "starsim: warning: model %s skipped: %v\n", u.Model, u.Err())
	}
	if err := writeCalibration(f, out); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: %d CPU cores, %d devices, %d kernel models, %d transfer directions", out, f.Machine.CPUCores, len(f.Machine.Devices), len(f.Kernels), len(f.Transfers))
	if n := len(f.Unreadable); n > 0 {
		fmt.Fprintf(stdout, ", %d unreadable model file(s) skipped", n)
	}
	fmt.Fprintln(stdout)
	return nil
}

// loadCalibration resolves the calibration flags of calibrate show and fit
// and platform build: a file ("default": the embedded one), a StarPU
// directory and host, or the embedded default.
func loadCalibration(file, dir, host string, stderr io.Writer) (*calibrate.File, error) {
	switch {
	case file != "" && dir != "":
		return nil, &usageError{"give a calibration FILE or --starpu DIR --host NAME, not both"}
	case file == builtinCalib:
		return calibrate.Default(), nil
	case file != "":
		return calibrate.ReadFile(file)
	case dir != "" || host != "":
		if dir == "" || host == "" {
			return nil, &usageError{"--starpu and --host go together"}
		}
		f, warn, err := calibrate.Import(dir, host)
		for _, w := range warn {
			fmt.Fprintf(stderr, "starsim: warning: %s\n", w)
		}
		return f, err
	}
	return calibrate.Default(), nil
}

func calibrateShowCmd() *cobra.Command {
	return leaf("show [FILE]", "show a calibration, or one kernel model as starpu_perfmodel_display -s", `
Shows a calibration: devices; per (model, arch, footprint) the size, flops,
sample count, mean and standard deviation (what starpu_perfmodel_display
shows) and histogram bins; the scheduler's transfer predictions; the network
links; the runtime costs. Without FILE or --starpu, the embedded default.
--json prints {"name","machine","links","routes","transfers","costs",
"kernels":[{"model","arch","impl","footprint","size","flops","n","mean_us",
"stddev_us","histogram_bins"}]}.

--model SYMBOL shows one kernel model as starpu_perfmodel_display -s does:
per arch its regressions and one line per footprint (hash, size, flops,
mean and standard deviation in us, samples); --arch A keeps one arch
(cuda0), or a kind (cpu, cuda). --json then prints the models as the
calibration file holds them.`, func(fs *pflag.FlagSet) runner {
		o := &showOptions{}
		fs.BoolVar(&o.json, "json", false, "print JSON")
		fs.StringVar(&o.model, "model", "", "show only the kernel model `SYMBOL` (chol_model_gemm)")
		fs.StringVar(&o.arch, "arch", "", "with --model: only this `ARCH` (cuda0) or kind (cpu, cuda)")
		fs.StringVar(&o.dir, "starpu", "", "StarPU sampling directory `DIR` instead of a calibration file")
		fs.StringVar(&o.host, "host", "", "host `NAME`, with --starpu")
		return func(pos []string, stdout, stderr io.Writer) error { return o.show(pos, stdout, stderr) }
	})
}

// showOptions are the flags of calibrate show.
type showOptions struct {
	json                   bool
	model, arch, dir, host string
}

func (o *showOptions) show(pos []string, stdout, stderr io.Writer) error {
	if len(pos) > 1 {
		return &usageError{"want at most one calibration FILE"}
	}
	file := ""
	if len(pos) == 1 {
		file = pos[0]
	}
	if o.arch != "" && o.model == "" {
		return &usageError{"--arch goes with --model SYMBOL"}
	}
	f, err := loadCalibration(file, o.dir, o.host, stderr)
	if err != nil {
		return err
	}
	if o.model != "" {
		ms, err := f.SelectModels(o.model, o.arch)
		if err != nil {
			return &usageError{err.Error()}
		}
		if o.json {
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			return enc.Encode(ms)
		}
		return calibrate.WriteModels(stdout, ms)
	}
	if o.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(f.Summarize())
	}
	return writeCalibrationText(stdout, f)
}

// writeCalibrationText prints a calibration for people: machine, kernels
// (as starpu_perfmodel_display), transfer predictions, links, costs and
// the model files the import skipped.
func writeCalibrationText(w io.Writer, f *calibrate.File) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "calibration %s: %d CPU cores, %d devices\n", f.Name, f.Machine.CPUCores, len(f.Machine.Devices))
	if f.Description != "" {
		fmt.Fprintf(&b, "%s\n", f.Description)
	}
	devices := newTable("DEVICE", "KIND", "ARCH", "MODEL", "MEMORY (MiB)", "DRIVER CORE", "PEER")
	for _, d := range f.Machine.Devices {
		devices.row(d.Name, d.Kind, d.Arch, d.Model, strconv.FormatInt(d.MemoryBytes>>20, 10), strconv.Itoa(d.DriverCore), fmt.Sprint(d.PeerAccess))
	}
	kernels := newTable("MODEL", "ARCH", "IMPL", "FOOTPRINT", "SIZE (B)", "FLOPS", "N", "MEAN (us)", "STDDEV (us)", "HIST BINS")
	for _, r := range f.Rows() {
		flops := "nan"
		if !math.IsNaN(float64(r.Flops)) {
			flops = fmt.Sprintf("%g", float64(r.Flops))
		}
		kernels.row(r.Model, r.Arch, strconv.Itoa(r.Impl), r.Footprint, strconv.FormatUint(r.Size, 10), flops, strconv.FormatUint(r.N, 10),
			fmt.Sprintf("%.6g", r.MeanUS), fmt.Sprintf("%.6g", r.StddevUS), strconv.Itoa(r.HistBins))
	}
	transfers := newTable("TRANSFER", "PRED LATENCY (us)", "PRED BANDWIDTH (MB/s)", "PITCH MODELS")
	for _, t := range f.Transfers {
		transfers.row(t.Src+" -> "+t.Dst, fmt.Sprintf("%.6g", t.PredictedLatencyS*1e6), fmt.Sprintf("%.6g", t.PredictedBandwidthBps/1e6), strconv.Itoa(len(t.PitchModels)))
	}
	links := newTable("LINK", "BANDWIDTH (MB/s)", "LATENCY (us)", "SHARING")
	for _, l := range f.Network.Links {
		sh := l.Sharing
		if sh == "" {
			sh = "SHARED"
		}
		links.row(l.ID, fmt.Sprintf("%.6g", l.BandwidthBps/1e6), fmt.Sprintf("%.6g", l.LatencyS*1e6), sh)
	}
	c := f.Costs
	costs := newTable("COST", "VALUE (us)")
	for _, kv := range []struct {
		k string
		v float64
	}{
		{"device alloc", c.DeviceAllocS}, {"device free", c.DeviceFreeS}, {"pinned alloc per MiB", c.PinnedAllocSPerMiB},
		{"transfer queue", c.TransferQueueS}, {"device task queue", c.DeviceTaskQueueS}, {"task submit", c.TaskSubmitS},
		{"task push", c.TaskPushS}, {"fetch input per buffer", c.FetchInputPerBufS},
	} {
		costs.row(kv.k, fmt.Sprintf("%.6g", kv.v*1e6))
	}
	tables := []*table{devices, kernels, transfers, links, costs}
	if len(f.Unreadable) > 0 {
		u := newTable("UNREADABLE MODEL", "WHERE AND WHY (a run that needs it fails)")
		for _, m := range f.Unreadable {
			u.row(m.Model, oneLine(m.Err().Error()))
		}
		tables = append(tables, u)
	}
	for _, t := range tables {
		b.WriteByte('\n')
		if err := t.write(&b); err != nil {
			return err
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}

func calibrateFitCmd() *cobra.Command {
	return leaf("fit", "fit histograms and transfer models from raw samples into a calibration", `
Fits raw measurements into a calibration. --kernels K.csv has rows
model,arch,footprint,size,duration_us: each (model, arch, footprint) gets an
irregular histogram (Bayesian blocks), n, mean, deviation and sums.
--transfers T.csv has rows src,dst,bytes,pitch,duration_us: each direction
gets piece-wise linear time models per pitch range, breakpoints detected.
Results replace the matching entries of --base (default: the embedded
calibration). A header line and # comments are allowed.`, func(fs *pflag.FlagSet) runner {
		out := fs.StringP("output", "o", "", "output calibration `FILE`")
		base := fs.String("base", "", "calibration `FILE` to start from (default: the embedded one)")
		kcsv := fs.String("kernels", "", "kernel samples CSV `FILE`")
		tcsv := fs.String("transfers", "", "transfer samples CSV `FILE`")
		return func(pos []string, stdout, stderr io.Writer) error {
			return calibrateFit(pos, *out, *base, *kcsv, *tcsv, stdout, stderr)
		}
	})
}

func calibrateFit(pos []string, out, base, kcsv, tcsv string, stdout, stderr io.Writer) error {
	if len(pos) != 0 || out == "" || (kcsv == "" && tcsv == "") {
		return &usageError{"want -o FILE.calib.json and --kernels K.csv and/or --transfers T.csv"}
	}
	if err := checkOutput("-o", out); err != nil {
		return err
	}
	b, err := loadCalibration(base, "", "", stderr)
	if err != nil {
		return err
	}
	var ks []calibrate.KernelSample
	var ts []calibrate.TransferSample
	if kcsv != "" {
		if ks, err = calibrate.ReadKernelCSV(kcsv); err != nil {
			return err
		}
	}
	if tcsv != "" {
		if ts, err = calibrate.ReadTransferCSV(tcsv); err != nil {
			return err
		}
	}
	f, err := calibrate.Fit(b, ks, ts)
	if err != nil {
		return err
	}
	if err := writeCalibration(f, out); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: fitted %d kernel samples and %d transfer samples\n", out, len(ks), len(ts))
	return nil
}
