package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	goruntime "runtime"
	"slices"
	"strings"
	"sync/atomic"
	"text/tabwriter"
	"unicode"

	"github.com/starsim/starsim/internal/atomicfile"
	"github.com/starsim/starsim/internal/sweep"
	"github.com/starsim/starsim/runtime"
	"github.com/starsim/starsim/runtime/cost"
)

const sweepDoc = `
Runs the cartesian product of machines (calibrations x what-ifs), apps,
schedulers, block sizes and matrix sizes, in parallel on -j workers; the
results do not depend on -j or on sharding. Lists are comma-separated; --n
also takes ranges FROM:TO:STEP. Prints a table; --csv/--json write one row
per run in a fixed order; --plot draws GFlop/s (PNG or SVG) against N, or,
when a what-if takes several values, against it, one panel per value of
the other varying quantities; the title says what the runs share.

Machines as for run (--calib, --starpu, --host, StarPU's variables; the
built-in example machine when none is named), each named on the first
lines and in every row with where it came from and the StarPU generation
its runs used. What-ifs (each list multiplies the machines): --gpus K (add
GPUs by cloning the last one, or remove), --pci-bw-scale X (every link and
prediction), --gpu-mem SIZE (the GPU memory StarPU may use, e.g. 400MiB),
--gpu-from OTHER.calib.json (another GPU's kernel models and memory).
--price FILE (JSON: device model -> price, "cpu" -> price of the host) adds
GFlop/s per unit of money; --currency names the price unit (default "units
of money").

starsim sweep merge A.csv B.csv ... --csv OUT joins shards (--shard i/n)
into the same bytes as the unsharded sweep.`

func runSweep(args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "merge" {
		return runSweepMerge(args[1:], stdout, stderr)
	}
	fs := newFlagSet("sweep", "", sweepDoc, stderr)
	var mf machineFlags
	mf.register(fs, true, true)
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
	price := fs.String("price", "", "JSON file of prices: device model -> price, \"cpu\" -> host price")
	jobsN := fs.Int("j", goruntime.NumCPU(), "parallel runs")
	csvOut := fs.String("csv", "", "write results as CSV")
	jsonOut := fs.String("json", "", "write results as JSON")
	plotOut := fs.String("plot", "", "draw GFlop/s vs N (.png or .svg)")
	plotPrice := fs.String("plot-price", "", "with --price: draw GFlop/s per 1000 units of money, as --plot")
	currency := fs.String("currency", "", "with --price: the prices' currency (EUR, USD...), named on --plot-price's axis and in the table")
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
	envUsed, err := applyStarPUEnv(set, scheds, ncpu, ncuda, stderr)
	if err != nil {
		return err
	}
	// Flags, outputs and the sweep's size are checked before anything is
	// read or run.
	src := func(flag string) string {
		if env := envOf[flag]; env != "" && !set[flag] && getenv(env) != "" {
			return env
		}
		return "--" + flag
	}
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
			return sourceError(src("sched"), *scheds, "unknown scheduler %q (known: %s)", s, strings.Join(runtime.SchedulerNames(), ", "))
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
	switch d := cost.Durations(*durations); d {
	case cost.Mean, cost.Normal, cost.Histogram:
		o.Durations = d
	default:
		return flagError("durations", *durations, "want mean, normal or histogram")
	}
	if err := mf.check("sweep", set); err != nil {
		return err
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
	if set["currency"] {
		if *price == "" {
			return &usageError{"--currency needs --price FILE"}
		}
		if err := checkCurrency(*currency); err != nil {
			return err
		}
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
	setup, err := mf.resolve("sweep", set, stderr)
	if err != nil {
		return err
	}
	setup.env = dedupe(sortedCopy(append(setup.env, envUsed...)))
	o.DMWeights = setup.weights
	plan.Options = o
	var header []string
	for _, mc := range setup.machines {
		used := map[string]bool{}
		for _, app := range plan.Apps {
			res, err := mc.file.ResolveApp(app, *double, setup.gen)
			if err != nil {
				return err
			}
			for _, k := range res.Kernels {
				used[k.Symbol] = true
			}
		}
		reportModels(stderr, mc, used)
		plan.Machines = append(plan.Machines, sweep.Machine{Label: mc.label(), File: mc.file, Source: mc.source, Generation: setup.gen, Base: mc.base, WhatIfs: mc.whatIfs,
			GPUMemLimitBytes: mc.gpuMemLimit, GPUMemLimitByDevice: mc.perGPU})
		in := setup.info(mc, nil)
		in.Environment = nil
		header = append(header, in.line())
	}
	if len(setup.env) > 0 {
		header = append(header, "environment: "+strings.Join(setup.env, ", "))
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
	if err := dryRun(plan, setup.machines, src("ncpu"), src("ncuda")); err != nil {
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
	money := *currency
	if money == "" {
		money = "units of money"
	}
	files := map[string]func() ([]byte, error){}
	if *csvOut != "" {
		files[*csvOut] = func() ([]byte, error) { var b bytes.Buffer; err := sweep.WriteCSV(&b, rows); return b.Bytes(), err }
	}
	if *jsonOut != "" {
		files[*jsonOut] = func() ([]byte, error) { var b bytes.Buffer; err := sweep.WriteJSON(&b, rows); return b.Bytes(), err }
	}
	if *plotOut != "" {
		files[*plotOut] = func() ([]byte, error) { return plotSweep(plan, rows, *plotOut, false, money) }
	}
	if *plotPrice != "" {
		files[*plotPrice] = func() ([]byte, error) { return plotSweep(plan, rows, *plotPrice, true, money) }
	}
	var table bytes.Buffer
	for _, h := range header {
		fmt.Fprintln(&table, h)
	}
	if err := printRows(&table, rows, money); err != nil {
		return err
	}
	if err := writeAll(files, []string{*csvOut, *jsonOut, *plotOut, *plotPrice}); err != nil {
		return err
	}
	if *price != "" && *currency == "" {
		fmt.Fprintf(stderr, "starsim: note: prices have no currency (--currency): per price columns and axes say \"units of money\"\n")
	}
	_, err = stdout.Write(table.Bytes())
	return err
}

// maxCurrency bounds --currency's length (runes): it labels a column and
// an axis.
const maxCurrency = 16

// checkCurrency checks --currency: a short label of printable characters
// (a newline or a control character would break the table's line).
func checkCurrency(c string) error {
	n := 0
	for _, r := range c {
		n++
		if !unicode.IsPrint(r) || r == '\uFFFD' {
			return flagError("currency", c, "want a currency label of printable characters (EUR, USD, €)")
		}
	}
	switch {
	case strings.TrimSpace(c) == "":
		return flagError("currency", c, "want a currency label (EUR, USD, €), not an empty one")
	case n > maxCurrency:
		return flagError("currency", c, "%d characters: a currency label has at most %d", n, maxCurrency)
	}
	return nil
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

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
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

func printRows(w io.Writer, rows []sweep.Row, currency string) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	priced := len(rows) > 0 && rows[0].PriceUnits > 0
	fmt.Fprintf(tw, "MACHINE\tAPP\tSCHED\tN\tBLOCK\tGFLOP/S\tMAKESPAN (s)\tSLR\tEFFICIENCY\tBUSY %%\tENERGY (J)")
	if priced {
		fmt.Fprintf(tw, "\tGFLOP/S PER 1000 %s", strings.ToUpper(currency))
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
