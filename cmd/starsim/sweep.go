package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	goruntime "runtime"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/starsim/starsim/internal/sweep"
	"github.com/starsim/starsim/runtime"
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
GFlop/s per unit of money.; --currency
names the price unit (default "units of money").

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
	plan := &sweep.Plan{Double: *double}
	if plan.Apps, err = splitList(*apps); err != nil {
		return err
	}
	if plan.Scheds, err = splitList(*scheds); err != nil {
		return err
	}
	for _, s := range plan.Scheds {
		found := false
		for _, k := range runtime.SchedulerNames() {
			found = found || k == s
		}
		if !found {
			return &usageError{fmt.Sprintf("unknown scheduler %q (known: %s)", s, strings.Join(runtime.SchedulerNames(), ", "))}
		}
	}
	if plan.Ns, err = parseInts(*ns, true); err != nil {
		return err
	}
	if plan.Blocks, err = parseInts(*blocks, false); err != nil {
		return err
	}
	o := runtime.DefaultOptions()
	o.NCPU, o.NCUDA, o.Seed, o.Check, o.SampleIntervalS = *ncpu, *ncuda, *seed, *check, *sample
	if *sample < 0 {
		return &usageError{"--sample-interval must be >= 0 s"}
	}
	switch d := runtime.Durations(*durations); d {
	case runtime.DurMean, runtime.DurNormal, runtime.DurHistogram:
		o.Durations = d
	default:
		return &usageError{fmt.Sprintf("--durations must be mean, normal or histogram, got %q", *durations)}
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
	if *price != "" {
		if err := applyPrices(plan.Machines, *price, *ncuda); err != nil {
			return err
		}
	}
	jobs := plan.Jobs()
	if *shard != "" {
		var i, n int
		if _, err := fmt.Sscanf(*shard, "%d/%d", &i, &n); err != nil {
			return &usageError{fmt.Sprintf("--shard wants i/n, got %q", *shard)}
		}
		if jobs, err = sweep.Shard(jobs, i, n); err != nil {
			return &usageError{err.Error()}
		}
	}
	var progress func(done, total int)
	if f, ok := stderr.(*os.File); ok && isTerminal(f) {
		progress = func(done, total int) {
			const width = 30
			k := done * width / max(total, 1)
			fmt.Fprintf(stderr, "\r[%s%s] %d/%d runs", strings.Repeat("#", k), strings.Repeat(" ", width-k), done, total)
			if done == total {
				fmt.Fprintln(stderr)
			}
		}
	}
	rows, err := sweep.Run(plan, jobs, *jobsN, progress)
	if err != nil {
		return err
	}
	if err := writeOutputs(rows, *csvOut, *jsonOut); err != nil {
		return err
	}
	money := *currency
	if money == "" {
		money = "units of money"
		if *price != "" {
			fmt.Fprintf(stderr, "starsim: note: prices have no currency (--currency): per price columns and axes say \"units of money\"\n")
		}
	}
	if *plotOut != "" {
		if err := plotSweep(plan, rows, *plotOut, false, money); err != nil {
			return err
		}
	}
	if *plotPrice != "" {
		if *price == "" {
			return &usageError{"--plot-price needs --price FILE"}
		}
		if err := plotSweep(plan, rows, *plotPrice, true, money); err != nil {
			return err
		}
	}
	for _, h := range header {
		fmt.Fprintln(stdout, h)
	}
	return printRows(stdout, rows, money)
}

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func splitList(s string) ([]string, error) {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	if len(out) == 0 {
		return nil, &usageError{fmt.Sprintf("empty list %q", s)}
	}
	return out, nil
}

// parseInts reads "a,b,c" or, when ranges is set, also "FROM:TO:STEP".
func parseInts(s string, ranges bool) ([]int, error) {
	items, err := splitList(s)
	if err != nil {
		return nil, err
	}
	var out []int
	for _, it := range items {
		if parts := strings.Split(it, ":"); ranges && len(parts) == 3 {
			var v [3]int
			for i, p := range parts {
				if v[i], err = strconv.Atoi(p); err != nil {
					return nil, &usageError{fmt.Sprintf("range %q: %q is not an integer", it, p)}
				}
			}
			if v[2] <= 0 || v[1] < v[0] {
				return nil, &usageError{fmt.Sprintf("range %q: want FROM <= TO and STEP > 0", it)}
			}
			for x := v[0]; x <= v[1]; x += v[2] {
				out = append(out, x)
			}
			continue
		}
		x, err := strconv.Atoi(it)
		if err != nil || x <= 0 {
			return nil, &usageError{fmt.Sprintf("%q is not a positive integer", it)}
		}
		out = append(out, x)
	}
	return out, nil
}

func parseFloats(s string) ([]float64, error) {
	items, err := splitList(s)
	if err != nil {
		return nil, err
	}
	var out []float64
	for _, it := range items {
		x, err := strconv.ParseFloat(it, 64)
		if err != nil || !(x > 0) {
			return nil, &usageError{fmt.Sprintf("%q is not a positive number", it)}
		}
		out = append(out, x)
	}
	return out, nil
}

// applyPrices prices each machine: its CUDA GPUs in use (all, or ncuda)
// by model, plus the host ("cpu").
func applyPrices(ms []sweep.Machine, path string, ncuda int) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var prices map[string]float64
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&prices); err != nil {
		return fmt.Errorf("%s: want a JSON object of prices (device model or \"cpu\" -> number): %v", path, err)
	}
	for i := range ms {
		total, used := prices["cpu"], 0
		for _, d := range ms[i].File.Machine.Devices {
			if d.Kind != "cuda" || (ncuda >= 0 && used >= ncuda) {
				continue
			}
			p, ok := prices[d.Model]
			if !ok {
				return fmt.Errorf("%s: no price for device model %q", path, d.Model)
			}
			total += p
			used++
		}
		ms[i].PriceUnits = total
	}
	return nil
}

func writeOutputs(rows []sweep.Row, csvOut, jsonOut string) error {
	if csvOut != "" {
		var b bytes.Buffer
		if err := sweep.WriteCSV(&b, rows); err != nil {
			return err
		}
		if err := os.WriteFile(csvOut, b.Bytes(), 0o644); err != nil {
			return err
		}
	}
	if jsonOut != "" {
		var b bytes.Buffer
		if err := sweep.WriteJSON(&b, rows); err != nil {
			return err
		}
		if err := os.WriteFile(jsonOut, b.Bytes(), 0o644); err != nil {
			return err
		}
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
	var parts [][]sweep.Row
	for _, p := range pos {
		rows, err := sweep.ReadCSV(p)
		if err != nil {
			return err
		}
		parts = append(parts, rows)
	}
	rows, err := sweep.Merge(parts...)
	if err != nil {
		return err
	}
	return writeOutputs(rows, *out, "")
}
