package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
	"golang.org/x/term"

	"github.com/starsim/starsim/internal/atomicfile"
	"github.com/starsim/starsim/internal/sweep"
	"github.com/starsim/starsim/models"
	"github.com/starsim/starsim/runtime/agent"
	"github.com/starsim/starsim/runtime/cost"
	"github.com/starsim/starsim/runtime/sched"
	"github.com/starsim/starsim/runtime/sim"
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

// sweepFlags are sweep's flags.
type sweepFlags struct {
	mf                                          machineFlags
	apps, ns, blocks, scheds, durations         string
	ncpu, ncuda, jobs, ib                       int
	seed                                        uint64
	double, check                               bool
	syrkPrioRelease                             bool
	parity                                      parityValues // (parityflags.go)
	sample                                      float64
	price, csv, json, plot, plotPrice, currency string
	shard                                       string
	dags, dagRate                               string
	schedTimeout                                float64
}

// sweepCmd is `starsim sweep` (and `sweep merge`).
func sweepCmd() *cobra.Command {
	c := leaf("sweep", "run many predictions (sizes, schedulers, what-if machines); CSV, JSON, plots, shards", sweepDoc, func(fs *pflag.FlagSet) runner {
		f := &sweepFlags{}
		f.mf.register(fs, true, true)
		fs.StringVar(&f.apps, "app", "cholesky", "applications `APP`: "+strings.Join(models.Names(), ", ")+", comma-separated")
		fs.StringVar(&f.ns, "n", "9600:38400:9600", "matrix orders `N`: comma-separated, or a range FROM:TO:STEP")
		fs.StringVar(&f.blocks, "block", "960", "tile sizes `B`, comma-separated")
		fs.StringVar(&f.scheds, "sched", "dmda,dmdar,dmdas", "schedulers `S`, comma-separated: "+schedulerChoices())
		fs.Float64Var(&f.schedTimeout, "sched-timeout", agent.DefaultTimeout.Seconds(), "with an external:COMMAND scheduler: the most `SECONDS` (wall clock) its agents may take to reply")
		fs.IntVar(&f.ncpu, "ncpu", -1, "`N` CPU workers; -1: StarPU's default, the cores less one per GPU")
		fs.IntVar(&f.ncuda, "ncuda", -1, "`N` GPU workers; -1: StarPU's default, all GPUs")
		fs.StringVar(&f.durations, "durations", "mean", "kernel durations `D`: mean, normal or histogram (seeded)")
		fs.Uint64Var(&f.seed, "seed", 1, "seed `S` of every random choice")
		fs.BoolVar(&f.double, "double", false, "double-precision tiles")
		fs.IntVar(&f.ib, "ib", 0, "QR's inner block size `IB` (default Chameleon's, 48)")
		fs.BoolVar(&f.check, "check", false, "verify every run's invariants")
		f.parity.register(fs, true)
		fs.BoolVar(&f.syrkPrioRelease, "starpu-14-release-syrk-prio", false, "as run --starpu-14-release-syrk-prio: Cholesky's SYRK tasks get StarPU 1.4 releases' priority")
		addLegacySYRKPrio(fs)
		fs.Float64Var(&f.sample, "sample-interval", 0, "with --json: each run's busy-fraction time series, per interval of `S` seconds (0: none)")
		fs.StringVar(&f.price, "price", "", "JSON `FILE` of prices: device model -> price, \"cpu\" -> host price")
		fs.IntVarP(&f.jobs, "jobs", "j", 0, "`N` parallel runs (default: the machine's cores)")
		fs.StringVar(&f.csv, "csv", "", "write the results to `FILE` as CSV")
		fs.StringVar(&f.json, "json", "", "write the results to `FILE` as JSON")
		fs.StringVar(&f.plot, "plot", "", "draw GFlop/s against N, or against the what-if that varies, to `FILE` (.png or .svg)")
		fs.StringVar(&f.plotPrice, "plot-price", "", "with --price: draw GFlop/s per 1000 units of money to `FILE`, as --plot")
		fs.StringVar(&f.currency, "currency", "", "with --price: the prices' currency `C` (EUR, USD...), named on --plot-price's axis and in the table")
		fs.StringVar(&f.shard, "shard", "", "run only slice I of N (`I/N`)")
		fs.StringVar(&f.dags, "dag", "", "run the task graphs of these `FILES` (comma-separated; JSON, DOT or WfFormat, as run --dag) instead of built-in applications")
		fs.StringVar(&f.dagRate, "dag-rate", "", "with --dag: durations from flops where a file gives none (`ARCH=FLOPS,...`, as run --dag-rate)")
		return func(pos []string, stdout, stderr io.Writer) error { return f.run(fs, pos, stdout, stderr) }
	})
	c.AddCommand(sweepMergeCmd())
	return c
}

// run runs the sweep the flags ask for.
func (f *sweepFlags) run(fs *pflag.FlagSet, pos []string, stdout, stderr io.Writer) error {
	if len(pos) != 0 {
		return &usageError{fmt.Sprintf("unexpected argument %q", pos[0])}
	}
	if err := legacySYRKPrio(fs, &f.syrkPrioRelease); err != nil {
		return err
	}
	set := flagsSet(fs)
	if !set["jobs"] {
		f.jobs = runtime.NumCPU()
	}
	var err error
	mf := &f.mf
	envUsed, err := applyStarPUEnv(set, &f.scheds, &f.ncpu, &f.ncuda, stderr)
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
	plan := &sweep.Plan{Double: f.double, InnerBlock: f.ib, SYRKPrioRelease: f.syrkPrioRelease}
	if err := f.dagPlan(plan, set); err != nil {
		return err
	}
	if plan.DAGs == nil {
		if plan.Apps, err = parseList("app", f.apps); err != nil {
			return err
		}
		for i, a := range plan.Apps {
			if plan.Apps[i], err = lookupApp(a); err != nil {
				return err
			}
		}
	}
	if plan.Scheds, err = parseList("sched", f.scheds); err != nil {
		return err
	}
	hasExternal := false
	for _, s := range plan.Scheds {
		if isExternal(s) {
			timeout, err := checkTimeout(f.schedTimeout)
			if err != nil {
				return err
			}
			mk, err := externalScheduler(src("sched"), s, stderr, timeout)
			if err != nil {
				return err
			}
			if plan.NewSchedulers == nil {
				plan.NewSchedulers = map[string]func() sched.Scheduler{}
			}
			plan.NewSchedulers[s], hasExternal = mk, true
			continue
		}
		if !slices.Contains(sched.Names(), s) {
			return sourceError(src("sched"), f.scheds, "unknown scheduler %q (known: %s; or %sCOMMAND)", s, strings.Join(sched.Names(), ", "), agent.Prefix)
		}
	}
	if set["sched-timeout"] && !hasExternal {
		return flagError("sched-timeout", f.schedTimeout, "only with an external:COMMAND scheduler")
	}
	if plan.Ns, err = parseInts("n", f.ns, true, maxSweepJobs); err != nil {
		return err
	}
	if plan.Blocks, err = parseInts("block", f.blocks, false, maxSweepJobs); err != nil {
		return err
	}
	if err := checkInnerBlock(set["ib"], f.ib, plan.Apps, plan.Blocks); err != nil {
		return err
	}
	for _, c := range []struct {
		name string
		v    int
	}{{"ncpu", f.ncpu}, {"ncuda", f.ncuda}} {
		if set[c.name] && c.v < 0 {
			return flagError(c.name, c.v, "want a worker count >= 0 (leave the flag out for StarPU's default)")
		}
	}
	if f.jobs < 1 || f.jobs > maxParallel {
		return flagError("-j", f.jobs, "want 1 to %d parallel runs", maxParallel)
	}
	if err := checkSampleInterval(f.sample); err != nil {
		return err
	}
	o := sim.DefaultOptions()
	o.NCPU, o.NCUDA, o.Seed, o.Check, o.SampleIntervalS = f.ncpu, f.ncuda, f.seed, f.check, f.sample
	f.parity.apply(&o)
	switch d := cost.Durations(f.durations); d {
	case cost.Mean, cost.Normal, cost.Histogram:
		o.Durations = d
	default:
		return flagError("durations", f.durations, "want mean, normal or histogram")
	}
	if err := mf.check("sweep", set); err != nil {
		return err
	}
	shardI, shardN := 0, 0
	if f.shard != "" {
		if shardI, shardN, err = parseShard(f.shard); err != nil {
			return err
		}
	}
	if f.plotPrice != "" && f.price == "" {
		return &usageError{"--plot-price needs --price FILE"}
	}
	if set["currency"] {
		if f.price == "" {
			return &usageError{"--currency needs --price FILE"}
		}
		if err := checkCurrency(f.currency); err != nil {
			return err
		}
	}
	outs := outputList{}
	outs.add("csv", f.csv)
	outs.add("json", f.json)
	outs.add("plot", f.plot, ".png", ".svg")
	outs.add("plot-price", f.plotPrice, ".png", ".svg")
	if err := outs.check(); err != nil {
		return err
	}
	var prices map[string]float64
	if f.price != "" {
		if prices, err = sweep.ReadPrices(f.price); err != nil {
			return err
		}
	}
	setup, err := mf.resolve("sweep", set, stderr)
	if err != nil {
		return err
	}
	if err := f.readDAGs(plan, stderr); err != nil {
		return err
	}
	setup.env = dedupe(sortedCopy(append(setup.env, envUsed...)))
	o.DMWeights = setup.weights
	plan.Options = o
	var header []string
	for _, mc := range setup.machines {
		used := map[string]bool{}
		for _, app := range plan.Apps {
			if g := plan.DAGs[app]; g != nil {
				for i := range g.Tasks {
					used[g.Tasks[i].Model] = true
				}
				continue
			}
			res, err := mc.file.ResolveApp(app, f.double, setup.gen)
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
		if plan.DAGs != nil {
			in.Generation, in.GenerationReason = "", "task graphs from --dag's files"
		}
		header = append(header, in.line())
	}
	if len(setup.env) > 0 {
		header = append(header, "environment: "+strings.Join(setup.env, ", "))
	}
	if prices != nil {
		if err := applyPrices(plan.Machines, prices, f.price, f.ncuda); err != nil {
			return err
		}
	}
	jobs := plan.Jobs()
	if f.shard != "" {
		if shardN > len(jobs) {
			return flagError("shard", f.shard, "the sweep has %d jobs: at most %d shards", len(jobs), len(jobs))
		}
		if jobs, err = sweep.Shard(jobs, shardI, shardN); err != nil {
			return &usageError{err.Error()}
		}
	}
	if err := checkSweepSize(plan, jobs, f.jobs); err != nil {
		return err
	}
	if err := dryRun(plan, setup.machines, src("ncpu"), src("ncuda")); err != nil {
		return err
	}
	if err := warnSweepUncalibrated(stderr, plan); err != nil {
		return err
	}
	var done atomic.Int64
	note := func() string { return fmt.Sprintf("%d of %d jobs had finished", done.Load(), len(jobs)) }
	interruptNote.Store(&note)
	defer interruptNote.Store(nil)
	bar := newProgress(stderr, isTerminal(stderr), len(jobs))
	progress := func(d, _ int) {
		done.Store(int64(d))
		bar.set(d)
	}
	rows, err := sweep.Run(plan, jobs, f.jobs, progress)
	bar.stop()
	if err != nil {
		return fmt.Errorf("%w (%d of %d jobs had finished; nothing written)", err, done.Load(), len(jobs))
	}
	money := f.currency
	if money == "" {
		money = "units of money"
	}
	files := map[string]func() ([]byte, error){}
	if f.csv != "" {
		files[f.csv] = func() ([]byte, error) { var b bytes.Buffer; err := sweep.WriteCSV(&b, rows); return b.Bytes(), err }
	}
	if f.json != "" {
		files[f.json] = func() ([]byte, error) { var b bytes.Buffer; err := sweep.WriteJSON(&b, rows); return b.Bytes(), err }
	}
	if f.plot != "" {
		files[f.plot] = func() ([]byte, error) { return plotSweep(plan, rows, f.plot, false, money) }
	}
	if f.plotPrice != "" {
		files[f.plotPrice] = func() ([]byte, error) { return plotSweep(plan, rows, f.plotPrice, true, money) }
	}
	var table bytes.Buffer
	for _, h := range header {
		fmt.Fprintln(&table, h)
	}
	if err := printRows(&table, rows, money); err != nil {
		return err
	}
	if err := writeAll(files, []string{f.csv, f.json, f.plot, f.plotPrice}); err != nil {
		return err
	}
	if f.price != "" && f.currency == "" {
		fmt.Fprintf(stderr, "starsim: note: prices have no currency (--currency): per price columns and axes say \"units of money\"\n")
	}
	_, err = stdout.Write(table.Bytes())
	return err
}

// warnSweepUncalibrated says, before the sweep, which workers will sit
// idle and which kernels will not run somewhere for want of a model
// (uncalibratedWarnings), once per machine and app, from a small graph of
// each block size (3 tiles per side: every kernel and footprint of the
// sweep's graphs of that block).
func warnSweepUncalibrated(stderr io.Writer, plan *sweep.Plan) error {
	prec := models.Single
	if plan.Double {
		prec = models.Double
	}
	said := map[string]bool{}
	for _, mc := range plan.Machines {
		m := mc.File.RuntimeMachine()
		for _, app := range plan.Apps {
			if g := plan.DAGs[app]; g != nil {
				if err := checkDurations(app, m, g, plan.Options.NCPU, plan.Options.NCUDA); err != nil {
					return err
				}
				warnUncalibrated(stderr, mc.Label+", "+app+": ", m, g, plan.Options.NCPU, plan.Options.NCUDA, said)
				continue
			}
			res, err := mc.File.ResolveApp(app, plan.Double, mc.Generation)
			if err != nil {
				return err
			}
			for _, b := range plan.Blocks {
				prio, _ := prioRange(plan.Scheds[0]) // checked: known
				g, err := models.New(app, models.Options{N: 3 * b, Block: b, Precision: prec, Prio: prio, Generation: res.Gen, Symbols: res.Symbols(), InnerBlock: plan.InnerBlock, SYRKPrioRelease: plan.SYRKPrioRelease})
				if err != nil {
					return &usageError{strings.TrimPrefix(err.Error(), "models: ")}
				}
				warnUncalibrated(stderr, mc.Label+", "+app+": ", m, g, plan.Options.NCPU, plan.Options.NCUDA, said)
			}
		}
	}
	return nil
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

// isTerminal says whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// progress draws a sweep's progress on a terminal: vbauerster/mpb's bar
// with the runs done, the elapsed time and the time left at the mean pace
// so far. Without a terminal it draws nothing.
type progress struct {
	p   *mpb.Progress
	bar *mpb.Bar
}

// newProgress starts the bar on w when tty is set.
func newProgress(w io.Writer, tty bool, total int) *progress {
	if !tty {
		return &progress{}
	}
	p := mpb.New(mpb.WithOutput(w), mpb.WithWidth(72), mpb.ForceTTY(), mpb.WithAutoRefresh())
	bar := p.AddBar(int64(total),
		mpb.PrependDecorators(decor.Name("sweep "), decor.CountersNoUnit("%d/%d runs")),
		mpb.AppendDecorators(decor.Elapsed(decor.ET_STYLE_GO), decor.Name(" elapsed, "),
			decor.OnAbort(decor.OnComplete(decor.Meta(decor.AverageETA(decor.ET_STYLE_GO), func(s string) string { return s + " left" }), "done"), "stopped")),
	)
	return &progress{p, bar}
}

// set says that done runs have finished.
func (p *progress) set(done int) {
	if p.bar != nil {
		p.bar.SetCurrent(int64(done))
	}
}

// stop ends the bar (stopped before the end: the error that follows says
// how many runs had finished) and waits until it is drawn.
func (p *progress) stop() {
	if p.bar == nil {
		return
	}
	if !p.bar.Completed() {
		p.bar.Abort(false)
	}
	p.p.Wait()
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
	priced := len(rows) > 0 && rows[0].PriceUnits > 0
	header := []string{"MACHINE", "APP", "SCHED", "N", "BLOCK", "GFLOP/S", "MAKESPAN (s)", "SLR", "EFFICIENCY", "BUSY %", "ENERGY (J)"}
	if priced {
		header = append(header, "GFLOP/S PER 1000 "+strings.ToUpper(currency))
	}
	t := newTable(header...)
	for _, r := range rows {
		cells := []string{r.Machine, r.App, r.Sched, strconv.Itoa(r.N), strconv.Itoa(r.Block), fmt.Sprintf("%.1f", r.GFlops), fmt.Sprintf("%.3f", r.MakespanS),
			fmt.Sprintf("%.2f", r.SLR), fmt.Sprintf("%.2f", r.Eff), fmt.Sprintf("%.1f", r.BusyPct), fmt.Sprintf("%.1f", r.EnergyJ)}
		if priced {
			cells = append(cells, fmt.Sprintf("%.2f", 1000*r.GFlopsPerPrice()))
		}
		t.row(cells...)
	}
	return t.write(w)
}

// sweepMergeCmd is `starsim sweep merge`.
func sweepMergeCmd() *cobra.Command {
	return leaf("merge A.csv B.csv ...", "join sweep shards (--shard i/n) into the whole sweep's CSV", "Joins sweep shards (--shard I/N) into the CSV of the whole sweep: the same\nbytes as the unsharded sweep's.", func(fs *pflag.FlagSet) runner {
		out := fs.String("csv", "", "the merged CSV `FILE`")
		return func(pos []string, _, _ io.Writer) error { return sweepMerge(pos, *out) }
	})
}

func sweepMerge(pos []string, out string) error {
	if len(pos) == 0 || out == "" {
		return &usageError{"want shard CSV files and --csv OUT"}
	}
	if err := checkOutput("csv", out); err != nil {
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
	return atomicfile.Write(out, func(w io.Writer) error { return sweep.WriteCSV(w, rows) })
}
