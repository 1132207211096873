package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"text/tabwriter"

	"github.com/starsim/starsim/calibrate"
	"github.com/starsim/starsim/internal/atomicfile"
	"github.com/starsim/starsim/internal/plot"
	"github.com/starsim/starsim/internal/sweep"
	"github.com/starsim/starsim/runtime"
)

const sweepDoc = `
Runs the cartesian product of machines (calibrations x what-ifs), apps,
schedulers, block sizes and matrix sizes, in parallel on -j workers; the
results do not depend on -j or on sharding. Lists are comma-separated; --n
also takes ranges FROM:TO:STEP. Prints a table; --csv/--json write one row
per run in a fixed order; --plot draws GFlop/s vs N (PNG or SVG).

What-ifs (each list multiplies the machines): --gpus K (add GPUs by cloning
the last one, or remove), --pci-bw-scale X (every link and prediction),
--gpu-mem BYTES (every GPU's memory), --gpu-from OTHER.calib.json (another
GPU's kernel models and memory). --price FILE (JSON: device model -> price,
"cpu" -> price of the host) adds GFlop/s per unit of money.

starsim sweep merge A.csv B.csv ... --csv OUT joins shards (--shard i/n)
into the same bytes as the unsharded sweep.`

func runSweep(args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "merge" {
		return runSweepMerge(args[1:], stdout, stderr)
	}
	fs := newFlagSet("sweep", "", sweepDoc, stderr)
	calibs := fs.String("calib", "", "calibration files, comma-separated")
	dir := fs.String("starpu", "", "StarPU sampling directory (with --host)")
	hosts := fs.String("host", "", "host names in the StarPU directory, comma-separated")
	apps := fs.String("app", "cholesky", "applications: cholesky, lu")
	ns := fs.String("n", "9600:38400:9600", "matrix orders: list or FROM:TO:STEP")
	blocks := fs.String("block", "960", "tile sizes")
	scheds := fs.String("sched", "dmda,dmdar,dmdas", "schedulers")
	ncpu := fs.Int("ncpu", -1, "CPU workers (default: cores - GPUs)")
	ncuda := fs.Int("ncuda", -1, "GPU workers (default: all)")
	durations := fs.String("durations", "mean", "kernel durations: mean, normal, histogram")
	seed := fs.Uint64("seed", 1, "seed of every random choice")
	double := fs.Bool("double", false, "double-precision tiles")
	check := fs.Bool("check", false, "verify every run's invariants")
	sample := fs.Float64("sample-interval", 0, "with --json: each run's busy-fraction time series, per interval of this many seconds")
	gpus := fs.String("gpus", "", "what-if: GPU counts, comma-separated")
	pci := fs.String("pci-bw-scale", "", "what-if: PCI bandwidth factors, comma-separated")
	gpuMem := fs.String("gpu-mem", "", "what-if: GPU memory sizes in bytes, comma-separated")
	gpuFrom := fs.String("gpu-from", "", "what-if: calibration whose GPU is swapped in")
	price := fs.String("price", "", "JSON file of prices: device model -> price, \"cpu\" -> host price")
	jobsN := fs.Int("j", goruntime.NumCPU(), "parallel runs")
	csvOut := fs.String("csv", "", "write results as CSV")
	jsonOut := fs.String("json", "", "write results as JSON")
	plotOut := fs.String("plot", "", "draw GFlop/s vs N (.png or .svg)")
	plotPrice := fs.String("plot-price", "", "with --price: draw GFlop/s per 1000 units of money vs N")
	shard := fs.String("shard", "", "run only slice i of n (i/n)")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return &usageError{fmt.Sprintf("unexpected argument %q", pos[0])}
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	// Flags, outputs and the sweep's size are checked before anything is
	// read or run.
	plan := &sweep.Plan{Double: *double}
	if plan.Apps, err = parseList("app", *apps); err != nil {
		return err
	}
	for i, a := range plan.Apps {
		if plan.Apps[i], err = lookupApp(a); err != nil {
			return err
		}
	}
	if plan.Scheds, err = parseList("sched", *scheds); err != nil {
		return err
	}
	for _, s := range plan.Scheds {
		if !slices.Contains(runtime.SchedulerNames(), s) {
			return flagError("sched", *scheds, "unknown scheduler %q (known: %s)", s, strings.Join(runtime.SchedulerNames(), ", "))
		}
	}
	if plan.Ns, err = parseInts("n", *ns, true, maxSweepJobs); err != nil {
		return err
	}
	if plan.Blocks, err = parseInts("block", *blocks, false, maxSweepJobs); err != nil {
		return err
	}
	for _, c := range []struct {
		name string
		v    int
	}{{"ncpu", *ncpu}, {"ncuda", *ncuda}} {
		if set[c.name] && c.v < 0 {
			return flagError(c.name, c.v, "want a worker count >= 0 (leave the flag out for StarPU's default)")
		}
	}
	if *jobsN < 1 || *jobsN > maxParallel {
		return flagError("j", *jobsN, "want 1 to %d parallel runs", maxParallel)
	}
	if err := checkSampleInterval(*sample); err != nil {
		return err
	}
	o := runtime.DefaultOptions()
	o.NCPU, o.NCUDA, o.Seed, o.Check, o.SampleIntervalS = *ncpu, *ncuda, *seed, *check, *sample
	switch d := runtime.Durations(*durations); d {
	case runtime.DurMean, runtime.DurNormal, runtime.DurHistogram:
		o.Durations = d
	default:
		return flagError("durations", *durations, "want mean, normal or histogram")
	}
	plan.Options = o
	var w whatIfs
	if *gpus != "" {
		if w.gpus, err = parseInts("gpus", *gpus, false, maxGPUs); err != nil {
			return err
		}
		for _, k := range w.gpus {
			if k > maxGPUs {
				return flagError("gpus", *gpus, "%d GPUs: at most %d (64 memory nodes with RAM)", k, maxGPUs)
			}
		}
	}
	if *pci != "" {
		if w.pci, err = parseFloats("pci-bw-scale", *pci, minPCIScale, maxPCIScale); err != nil {
			return err
		}
	}
	if *gpuMem != "" {
		if w.mem, err = parseGPUMems(*gpuMem); err != nil {
			return err
		}
	}
	shardI, shardN := 0, 0
	if *shard != "" {
		if shardI, shardN, err = parseShard(*shard); err != nil {
			return err
		}
	}
	if *plotPrice != "" && *price == "" {
		return &usageError{"--plot-price needs --price FILE"}
	}
	outs := outputList{}
	outs.add("csv", *csvOut)
	outs.add("json", *jsonOut)
	outs.add("plot", *plotOut, ".png", ".svg")
	outs.add("plot-price", *plotPrice, ".png", ".svg")
	if err := outs.check(); err != nil {
		return err
	}
	var prices map[string]float64
	if *price != "" {
		if prices, err = sweep.ReadPrices(*price); err != nil {
			return err
		}
	}
	if *gpuFrom != "" {
		if w.from, err = calibrate.ReadFile(*gpuFrom); err != nil {
			return err
		}
	}
	if plan.Machines, err = sweepMachines(*calibs, *dir, *hosts, w, stderr); err != nil {
		return err
	}
	if prices != nil {
		if err := applyPrices(plan.Machines, prices, *price, *ncuda); err != nil {
			return err
		}
	}
	jobs := plan.Jobs()
	if *shard != "" {
		if shardN > len(jobs) {
			return flagError("shard", *shard, "the sweep has %d jobs: at most %d shards", len(jobs), len(jobs))
		}
		if jobs, err = sweep.Shard(jobs, shardI, shardN); err != nil {
			return &usageError{err.Error()}
		}
	}
	if err := checkSweepSize(plan, jobs, *jobsN); err != nil {
		return err
	}
	if err := dryRun(plan, *gpuMem != ""); err != nil {
		return err
	}
	var done atomic.Int64
	note := func() string { return fmt.Sprintf("%d of %d jobs had finished", done.Load(), len(jobs)) }
	interruptNote.Store(&note)
	defer interruptNote.Store(nil)
	tty := false
	if f, ok := stderr.(*os.File); ok && isTerminal(f) {
		tty = true
	}
	progress := func(d, total int) {
		done.Store(int64(d))
		if !tty {
			return
		}
		const width = 30
		k := d * width / max(total, 1)
		fmt.Fprintf(stderr, "\r[%s%s] %d/%d runs", strings.Repeat("#", k), strings.Repeat(" ", width-k), d, total)
		if d == total {
			fmt.Fprintln(stderr)
		}
	}
	rows, err := sweep.Run(plan, jobs, *jobsN, progress)
	if err != nil {
		return fmt.Errorf("%w (%d of %d jobs had finished; nothing written)", err, done.Load(), len(jobs))
	}
	files := map[string]func() ([]byte, error){}
	if *csvOut != "" {
		files[*csvOut] = func() ([]byte, error) { var b bytes.Buffer; err := sweep.WriteCSV(&b, rows); return b.Bytes(), err }
	}
	if *jsonOut != "" {
		files[*jsonOut] = func() ([]byte, error) { var b bytes.Buffer; err := sweep.WriteJSON(&b, rows); return b.Bytes(), err }
	}
	if *plotOut != "" {
		files[*plotOut] = func() ([]byte, error) { return plotRows(rows, *plotOut, false) }
	}
	if *plotPrice != "" {
		files[*plotPrice] = func() ([]byte, error) { return plotRows(rows, *plotPrice, true) }
	}
	var table bytes.Buffer
	if err := printRows(&table, rows); err != nil {
		return err
	}
	if err := writeAll(files, []string{*csvOut, *jsonOut, *plotOut, *plotPrice}); err != nil {
		return err
	}
	_, err = stdout.Write(table.Bytes())
	return err
}

// writeAll renders every output, then writes them all or none. order lists
// the paths ("" skipped) in the order to write them.
func writeAll(files map[string]func() ([]byte, error), order []string) error {
	data := map[string][]byte{}
	for _, p := range order {
		if p == "" {
			continue
		}
		b, err := files[p]()
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		data[p] = b
	}
	out := &outputSet{}
	for _, p := range order {
		if p == "" {
			continue
		}
		f, err := out.create(p)
		if err != nil {
			out.abort()
			return err
		}
		if _, err := f.Write(data[p]); err != nil {
			out.abort()
			return fmt.Errorf("%s: %w", p, err)
		}
	}
	return out.finish(true)
}

// whatIfs are sweep's machine transforms, each list multiplying the
// machines.
type whatIfs struct {
	gpus []int
	pci  []float64
	mem  []int64
	from *calibrate.File
}

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// sweepMachines loads the calibrations and multiplies them by the what-ifs.
func sweepMachines(calibs, dir, hosts string, w whatIfs, stderr io.Writer) ([]sweep.Machine, error) {
	var base []*calibrate.File
	if calibs != "" {
		files, err := parseList("calib", calibs)
		if err != nil {
			return nil, err
		}
		for _, p := range files {
			f, err := calibrate.ReadFile(p)
			if err != nil {
				return nil, err
			}
			base = append(base, f)
		}
	}
	if dir != "" || hosts != "" {
		if dir == "" || hosts == "" {
			return nil, &usageError{"--starpu DIR and --host NAME[,NAME] go together"}
		}
		hs, err := parseList("host", hosts)
		if err != nil {
			return nil, err
		}
		for _, h := range hs {
			f, err := loadCalibration("", dir, h, stderr)
			if err != nil {
				return nil, err
			}
			base = append(base, f)
		}
	}
	if len(base) == 0 {
		base = append(base, calibrate.Default())
	}
	type transform func(*calibrate.File) (*calibrate.File, error)
	var stages [][]transform
	if len(w.gpus) > 0 {
		var st []transform
		for _, k := range w.gpus {
			st = append(st, func(f *calibrate.File) (*calibrate.File, error) { return f.WithGPUs(k) })
		}
		stages = append(stages, st)
	}
	if len(w.pci) > 0 {
		var st []transform
		for _, x := range w.pci {
			st = append(st, func(f *calibrate.File) (*calibrate.File, error) { return f.ScalePCIBandwidth(x) })
		}
		stages = append(stages, st)
	}
	if len(w.mem) > 0 {
		var st []transform
		for _, m := range w.mem {
			st = append(st, func(f *calibrate.File) (*calibrate.File, error) { return f.WithGPUMemory(m) })
		}
		stages = append(stages, st)
	}
	if w.from != nil {
		stages = append(stages, []transform{func(f *calibrate.File) (*calibrate.File, error) { return f.WithGPUFrom(w.from) }})
	}
	files := base
	for _, st := range stages {
		var next []*calibrate.File
		for _, f := range files {
			for _, tr := range st {
				g, err := tr(f)
				if err != nil {
					return nil, fmt.Errorf("what-if on %s: %w", f.Name, err)
				}
				next = append(next, g)
			}
		}
		files = next
	}
	if len(files) > maxSweepJobs {
		return nil, &usageError{fmt.Sprintf("%d machines (calibrations x what-ifs): at most %d", len(files), maxSweepJobs)}
	}
	var out []sweep.Machine
	for _, f := range files {
		out = append(out, sweep.Machine{Label: f.Name, File: f})
	}
	return out, nil
}

// applyPrices prices each machine: its CUDA GPUs in use (all, or ncuda)
// by model, plus the host ("cpu", 0 when not priced).
func applyPrices(ms []sweep.Machine, prices map[string]float64, path string, ncuda int) error {
	for i := range ms {
		total, used := prices["cpu"], 0
		for _, d := range ms[i].File.Machine.Devices {
			if d.Kind != "cuda" || (ncuda >= 0 && used >= ncuda) {
				continue
			}
			p, ok := prices[d.Model]
			if !ok {
				return fmt.Errorf("%s: no price for device model %q (of %s)", path, d.Model, ms[i].Label)
			}
			total += p
			used++
		}
		ms[i].PriceUnits = total
	}
	return nil
}

// plotRows draws GFlop/s against N, one curve per (machine, app, sched,
// block) configuration, as path's extension asks.
func plotRows(rows []sweep.Row, path string, perPrice bool) ([]byte, error) {
	var order []string
	series := map[string]*plot.Series{}
	for _, r := range rows {
		name := fmt.Sprintf("%s %s %s", r.Machine, r.App, r.Sched)
		if r.Block != 960 {
			name += fmt.Sprintf(" b%d", r.Block)
		}
		s, ok := series[name]
		if !ok {
			s = &plot.Series{Name: name}
			series[name] = s
			order = append(order, name)
		}
		s.X = append(s.X, float64(r.N))
		y := r.GFlops
		if perPrice {
			y = 1000 * r.GFlopsPerPrice()
		}
		s.Y = append(s.Y, y)
	}
	fig := plot.Figure{Title: "Predicted performance", XLabel: "matrix order N", YLabel: "GFlop/s"}
	if perPrice {
		fig.Title, fig.YLabel = "Predicted performance per price", "GFlop/s per 1000 units"
	}
	for _, name := range order {
		s := series[name]
		idx := make([]int, len(s.X))
		for i := range idx {
			idx[i] = i
		}
		sort.SliceStable(idx, func(a, b int) bool { return s.X[idx[a]] < s.X[idx[b]] })
		var sx, sy []float64
		for _, i := range idx {
			sx, sy = append(sx, s.X[i]), append(sy, s.Y[i])
		}
		fig.Series = append(fig.Series, plot.Series{Name: name, X: sx, Y: sy})
	}
	return plot.Encode(fig, filepath.Ext(path))
}

func printRows(w io.Writer, rows []sweep.Row) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	priced := len(rows) > 0 && rows[0].PriceUnits > 0
	fmt.Fprintf(tw, "MACHINE\tAPP\tSCHED\tN\tBLOCK\tGFLOP/S\tMAKESPAN (s)\tSLR\tEFFICIENCY\tBUSY %%\tENERGY (J)")
	if priced {
		fmt.Fprintf(tw, "\tGFLOP/S PER 1000 UNITS")
	}
	fmt.Fprintln(tw)
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%.1f\t%.3f\t%.2f\t%.2f\t%.1f\t%.1f", r.Machine, r.App, r.Sched, r.N, r.Block, r.GFlops, r.MakespanS, r.SLR, r.Eff, r.BusyPct, r.EnergyJ)
		if priced {
			fmt.Fprintf(tw, "\t%.2f", 1000*r.GFlopsPerPrice())
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

func runSweepMerge(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("sweep merge", "A.csv B.csv ...", "Joins sweep shards (--shard i/n) into the CSV of the whole sweep.", stderr)
	out := fs.String("csv", "", "output CSV")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 || *out == "" {
		return &usageError{"want shard CSV files and --csv OUT"}
	}
	if err := checkOutput("csv", *out); err != nil {
		return err
	}
	var parts []sweep.CSVFile
	for _, p := range pos {
		sh, err := sweep.ReadCSVFile(p)
		if err != nil {
			return err
		}
		parts = append(parts, sh)
	}
	rows, err := sweep.MergeFiles(parts...)
	if err != nil {
		return err
	}
	return atomicfile.Write(*out, func(w io.Writer) error { return sweep.WriteCSV(w, rows) })
}
