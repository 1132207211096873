package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"runtime/pprof"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/starsim/starsim/internal/gcpause"
	"github.com/starsim/starsim/internal/plot"
	"github.com/starsim/starsim/models"
	"github.com/starsim/starsim/models/generation"
	"github.com/starsim/starsim/runtime/agent"
	"github.com/starsim/starsim/runtime/cost"
	"github.com/starsim/starsim/runtime/graph"
	"github.com/starsim/starsim/runtime/sched"
	"github.com/starsim/starsim/runtime/sim"
	"github.com/starsim/starsim/traces"
	"github.com/starsim/starsim/traces/formats"
)

const runDoc = `
Predicts what a StarPU-style runtime achieves: emulates the application's
tasks on the calibrated machine in simulated time (data transfers on the
fluid network, GPU memory capacity, the scheduler's decisions) and prints
GFlop/s and makespan, then per-worker, per-transfer-direction and memory
tables. The first line names the machine and where it came from.

The machine: --calib FILE, or a StarPU calibration found as StarPU finds
it (--starpu DIR, else STARPU_PERF_MODEL_DIR, else
$STARPU_HOME/.starpu/sampling...; --host NAME, else STARPU_HOSTNAME, else
this machine's name), or with none of these the built-in example machine
(--calib default), which the first line then names. The task graph and
model names are those of the calibration's StarPU generation (1.3 or 1.4,
detected from its model names; --starpu-generation overrides).

Environment (used when the flag is absent; the output lists those used):
STARPU_SCHED, STARPU_NCPU, STARPU_NCUDA, STARPU_PERF_MODEL_DIR,
STARPU_HOSTNAME, STARPU_LIMIT_CUDA_MEM and STARPU_LIMIT_CUDA_<id>_MEM (MiB),
STARPU_SCHED_ALPHA, STARPU_SCHED_BETA, STARPU_SCHED_GAMMA.`

// runFlags are the flags of run (and, later, of sweep and replay).
type runFlags struct {
	mf                     machineFlags
	set                    map[string]bool
	setup                  *machineSetup
	info                   *machineInfo
	app                    string
	n, block               int
	sched                  string
	ncpu, ncuda            int
	durations              string
	seed                   uint64
	double, noPrio, asJSON bool
	ib                     int // QR's inner block size (0: Chameleon's default)
	check, noPrefetch      bool
	noTransferFactor       bool
	noHiddenHoles          bool
	noPrioClamp            bool
	noPrefetchJoinLoss     bool
	noOwnAtFetch           bool
	syrkPrioRelease        bool
	parity                 parityValues // the StarPU behaviours' flags (parityflags.go)
	explain                string
	explainTask            int
	sampleS                float64
	// traceOut are the --trace-NAME paths, one per formats.Writers.
	traceOut []string
	// dag is --dag's task graph file (run only); dagRate its --dag-rate.
	dag, dagRate string
	// schedTimeout bounds an external scheduler's replies (s, wall
	// clock); newSched makes it (nil: the registry's --sched).
	schedTimeout float64
	newSched     func() sched.Scheduler
	stderr       io.Writer
	cpuProfile   string
	command      string
	// plot is --plot's file; config names the run in its title (with
	// the machine's name).
	plot, config string
	// observer is the trace writers of the run; panel records --plot's
	// panel.
	observer sim.Observer
	panel    *traces.PanelRecorder
	// ensemble is --ensemble's run count (0: off); ens its result.
	ensemble int
	ens      *ensembleInfo
}

// runCmd is `starsim run`; cmdline is the whole command line, for the
// traces' headers.
func runCmd(cmdline string) *cobra.Command {
	return leaf("run", "predict an application's performance (Cholesky, LU) on a calibrated machine", runDoc, func(fs *pflag.FlagSet) runner {
		f := &runFlags{}
		f.register(fs, "run", cmdline)
		fs.StringVar(&f.app, "app", "cholesky", "application `APP`: "+strings.Join(models.Names(), " or "))
		fs.IntVar(&f.n, "n", 9600, "matrix order `N`")
		fs.IntVar(&f.block, "block", 960, "tile size `B` (N must be a multiple)")
		fs.BoolVar(&f.double, "double", false, "double-precision tiles (default float)")
		fs.BoolVar(&f.noPrio, "no-prio", false, "all task priorities 0")
		fs.BoolVar(&f.syrkPrioRelease, "starpu-14-release-syrk-prio", false, "give Cholesky's SYRK tasks StarPU 1.4 releases' priority (2nb-2k-2n) instead of StarPU 1.4.99's (2nb-2k-n, its GEMM formula)")
		addLegacySYRKPrio(fs)
		fs.IntVar(&f.ib, "ib", 0, "QR's inner block size `IB` (the rows of its T tiles; default Chameleon's, 48)")
		fs.StringVar(&f.dag, "dag", "", "run the task graph of `FILE` instead of a built-in application: starsim's JSON format, DOT (DAGGEN, SimGrid) or WfCommons' WfFormat")
		fs.IntVar(&f.ensemble, "ensemble", 0, "also run the configuration `K`-1 more times with every link bandwidth x1±k·1e-4 (k = 1, 2, ...), and print the median and range of the K runs' GFlop/s: how much the prediction hinges on events microseconds apart (docs/fidelity.md)")
		fs.StringVar(&f.dagRate, "dag-rate", "", "with --dag: derive durations from the tasks' flops where the file gives none, per arch or kind (`ARCH=FLOPS,...`: cpu=2e10,cuda=7e12)")
		return func(pos []string, stdout, stderr io.Writer) error {
			if err := f.parse(fs, stderr); err != nil {
				return err
			}
			if err := legacySYRKPrio(fs, &f.syrkPrioRelease); err != nil {
				return err
			}
			if len(pos) != 0 {
				return &usageError{fmt.Sprintf("unexpected argument %q", pos[0])}
			}
			validate := f.validateRun
			if f.dag != "" || f.set["dag-rate"] {
				validate = f.validateDAG
			}
			if err := validate(); err != nil {
				return err
			}
			if err := f.checkEnsemble(); err != nil {
				return err
			}
			out := &outputSet{}
			if err := f.startProfile(out); err != nil {
				return err
			}
			res, err := f.run(stderr, out)
			return f.finish(stdout, res, err, out)
		}
	})
}

// finish ends a run or replay: it commits the outputs when the run
// succeeded (giving them all up otherwise), then prints the result, so
// that nothing reaches stdout on failure.
func (f *runFlags) finish(stdout io.Writer, res *sim.Result, err error, out *outputSet) error {
	var buf bytes.Buffer
	if err == nil {
		err = f.print(&buf, res)
	}
	if ferr := out.finish(err == nil); err == nil {
		err = ferr
	}
	if err != nil {
		return err
	}
	_, err = stdout.Write(buf.Bytes())
	return err
}

// startProfile starts the CPU profile --cpuprofile asks for; out stops it
// and commits the file.
func (f *runFlags) startProfile(out *outputSet) error {
	if f.cpuProfile == "" {
		return nil
	}
	file, err := out.create(f.cpuProfile)
	if err != nil {
		return err
	}
	if err := pprof.StartCPUProfile(file); err != nil {
		out.abort()
		return fmt.Errorf("%s: %w", f.cpuProfile, err)
	}
	out.onClose(func() error {
		pprof.StopCPUProfile()
		return nil
	})
	return nil
}

// register declares the flags run and replay share: machine, workers,
// scheduler, durations, outputs, decision log and traces.
func (f *runFlags) register(fs *pflag.FlagSet, cmd, cmdline string) {
	f.mf.register(fs, false, cmd == "run")
	fs.StringVar(&f.sched, "sched", "", "scheduler `S`: "+schedulerChoices()+" (default dmda)")
	fs.Float64Var(&f.schedTimeout, "sched-timeout", agent.DefaultTimeout.Seconds(), "with --sched external:COMMAND: the most `SECONDS` (wall clock) the agent may take to reply")
	fs.IntVar(&f.ncpu, "ncpu", -1, "`N` CPU workers; -1: StarPU's default, the cores less one per GPU")
	fs.IntVar(&f.ncuda, "ncuda", -1, "`N` GPU workers; -1: StarPU's default, all GPUs")
	fs.StringVar(&f.durations, "durations", "mean", "kernel durations `D`: mean, normal or histogram (seeded)")
	fs.Uint64Var(&f.seed, "seed", 1, "seed `S` of every random choice")
	fs.BoolVar(&f.asJSON, "json", false, "print JSON")
	fs.BoolVar(&f.check, "check", false, "verify the run's invariants: dependencies, one kernel at a time per worker, each task run once, memory within capacity, every read and the final data of the last written version, busy time within the makespan")
	fs.BoolVar(&f.noPrefetch, "no-prefetch", false, "no push-time prefetch (STARPU_PREFETCH=0)")
	f.parity.register(fs, false)
	fs.BoolVar(&f.noHiddenHoles, "no-starpu-hidden-holes", false, "let the GPU suballocator find every freed slot (StarPU 1.4 hides slots freed between allocated neighbours)")
	fs.BoolVar(&f.noPrefetchJoinLoss, "no-starpu-prefetch-join-loss", false, "let every task prefetch protect its copy from eviction by other prefetches (StarPU loses the protection of a prefetch that finds the copy already being loaded for another task)")
	fs.BoolVar(&f.noOwnAtFetch, "no-starpu-own-at-fetch", false, "let a task's copy of data it writes take ownership when the task ends (StarPU gives it ownership when it is fetched or prefetched: the other copies are invalid and the copy dirty from then on)")
	fs.BoolVar(&f.noPrioClamp, "no-starpu-prio-clamp", false, "keep task priorities outside the scheduler's range (StarPU clamps them at submission: dmda's and dmdar's 0..0 makes them all 0)")
	fs.BoolVar(&f.noTransferFactor, "no-starpu-transfer-factor", false, "predict transfers without StarPU's 2x#GPUs factor on the bandwidth term")
	fs.StringVar(&f.explain, "explain", "", "write the decision log (JSON lines: every scheduling decision with each candidate's start, length, penalty, fitness; every eviction) to `FILE`, - for stderr")
	fs.IntVar(&f.explainTask, "explain-task", -1, "with --explain: only the decisions of task `ID` (its submission index; -1: all)")
	fs.Float64Var(&f.sampleS, "sample-interval", 0, "record each worker's busy fraction per interval of `S` seconds (--json: utilization; 0: none)")
	f.traceOut = make([]string, len(formats.Writers))
	for i, w := range formats.Writers {
		fs.StringVar(&f.traceOut[i], "trace-"+w.Name, "", w.Usage)
	}
	fs.StringVar(&f.cpuProfile, "cpuprofile", "", "write a Go CPU profile of the whole command to `FILE` (go tool pprof)")
	fs.StringVar(&f.plot, "plot", "", "draw a panel of the run (Gantt of the workers, ready tasks, GPU memory, bytes in flight) to `FILE` (.png or .svg)")
	f.command = cmdline
}

// parse applies StarPU's environment to the flags fs did not get
// (STARPU_SCHED, STARPU_NCPU, STARPU_NCUDA; the machine's variables are
// read when the machine is resolved). --plot's extension is checked at
// once; the other values by validateCommon.
func (f *runFlags) parse(fs *pflag.FlagSet, stderr io.Writer) error {
	f.stderr = stderr
	if f.plot != "" {
		if err := checkExt("plot", f.plot, ".png", ".svg"); err != nil {
			return err
		}
	}
	f.set = flagsSet(fs)
	used, err := applyStarPUEnv(f.set, &f.sched, &f.ncpu, &f.ncuda, stderr)
	if err != nil {
		return err
	}
	f.setup = &machineSetup{env: used}
	if f.sched == "" {
		f.sched = "dmda"
	}
	return nil
}

// machine resolves the machine flags (cmd: "run" or "replay") into the
// one machine the command runs on.
func (f *runFlags) machine(cmd string, stderr io.Writer) (*machine, error) {
	s, err := f.mf.resolve(cmd, f.set, stderr)
	if err != nil {
		return nil, err
	}
	s.env = dedupe(sortedCopy(append(s.env, f.setup.env...)))
	f.setup = s
	return s.machines[0], nil
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}

// print writes a result as JSON or tables, the machine first.
func (f *runFlags) print(w io.Writer, res *sim.Result) error {
	if f.asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Machine *machineInfo `json:"machine"`
			*sim.Result
			Ensemble *ensembleInfo `json:"ensemble,omitempty"`
		}{f.info, res, f.ens})
	}
	f.info.writeHeader(w)
	extra := ""
	if f.ens != nil {
		extra = f.ens.text()
	}
	return printResult(w, res, extra)
}

func (f *runFlags) run(stderr io.Writer, out *outputSet) (*sim.Result, error) {
	if f.dag != "" {
		return f.runDAG(stderr, out)
	}
	gcpause.Pause()
	defer gcpause.Resume()
	prec := models.Single
	if f.double {
		prec = models.Double
	}
	// The graph depends on the calibration only through its StarPU
	// generation and model names: StarPU 1.4's graph under its own names
	// is built on another core while the calibration loads, and rebuilt
	// when the calibration asks for another (errors are reported as
	// before, the calibration's first).
	type built struct {
		g   *graph.Graph
		err error
	}
	prio, ok := prioRange(f.sched)
	if !ok {
		return nil, flagError("sched", f.sched, "unknown scheduler (known: %s)", strings.Join(sched.Names(), ", "))
	}
	o := models.Options{N: f.n, Block: f.block, Precision: prec, Prio: prio, NoPrio: f.noPrio, InnerBlock: f.ib, SYRKPrioRelease: f.syrkPrioRelease}
	graph := make(chan built, 1)
	go func() {
		g, err := models.New(f.app, o)
		graph <- built{g, err}
	}()
	mc, err := f.machine("run", stderr)
	b := <-graph
	if err != nil {
		return nil, err
	}
	if err := checkWorkers(f.source("ncpu"), f.source("ncuda"), f.ncpu, f.ncuda, mc.file); err != nil {
		return nil, err
	}
	if b.err != nil {
		return nil, &usageError{strings.TrimPrefix(b.err.Error(), "models: ")}
	}
	res, err := mc.file.ResolveApp(f.app, f.double, f.setup.gen)
	if err != nil {
		return nil, err
	}
	used := map[string]bool{}
	for _, k := range res.Kernels {
		used[k.Symbol] = true
	}
	reportModels(stderr, mc, used)
	app, _ := models.Lookup(f.app) // resolved: known
	if def := app.Kernels(generation.V14, f.double); res.Gen != generation.V14 || !sameSymbols(def, res.Kernels) {
		o.Generation, o.Symbols = res.Gen, res.Symbols()
		if b.g, err = models.New(f.app, o); err != nil {
			return nil, &usageError{strings.TrimPrefix(err.Error(), "models: ")}
		}
	}
	f.info = f.setup.info(mc, res)
	f.config = fmt.Sprintf("%s N=%d, block %d, %s", f.app, f.n, f.block, prec)
	return f.simulate(stderr, mc, b.g, out)
}

// sameSymbols says whether a and b name the same kernels the same way.
func sameSymbols(a, b []generation.KernelSymbol) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// simulate runs g on mc with the run flags' options, explain log, traces
// and panel (written through out).
func (f *runFlags) simulate(stderr io.Writer, mc *machine, g *graph.Graph, out *outputSet) (*sim.Result, error) {
	m := mc.file.RuntimeMachine()
	opts := sim.DefaultOptions()
	opts.Sched, opts.NCPU, opts.NCUDA, opts.Seed, opts.Check = f.sched, f.ncpu, f.ncuda, f.seed, f.check
	opts.NewScheduler = f.newSched
	opts.NoPrefetch = f.noPrefetch
	f.setup.apply(mc, &opts)
	opts.StarPUTransferFactor = !f.noTransferFactor
	opts.StarPUHiddenHoles = !f.noHiddenHoles
	opts.StarPUPrioClamp = !f.noPrioClamp
	opts.StarPUPrefetchJoinLoss = !f.noPrefetchJoinLoss
	opts.StarPUOwnAtFetch = !f.noOwnAtFetch
	f.parity.apply(&opts)
	opts.ExplainTask, opts.SampleIntervalS = f.explainTask, f.sampleS
	opts.Durations = cost.Durations(f.durations)
	if f.explainTask >= len(g.Tasks) {
		return nil, &usageError{fmt.Sprintf("--explain-task %d: the graph has %d tasks (ids 0 to %d)", f.explainTask, len(g.Tasks), len(g.Tasks)-1)}
	}
	if f.explain != "" {
		w := stderr
		if f.explain != "-" {
			fh, err := out.create(f.explain)
			if err != nil {
				return nil, err
			}
			bw := bufio.NewWriter(fh)
			out.onClose(bw.Flush)
			w = bw
		}
		opts.Explain = w
	}
	if err := f.openTraces(g, out); err != nil {
		return nil, err
	}
	if f.observer != nil {
		opts.Observer = f.observer
	}
	sim, err := sim.New(m, g, opts)
	gcpause.CollectLater()
	if err != nil {
		return nil, explainNew(mc, err)
	}
	warnUncalibrated(stderr, "", m, g, f.ncpu, f.ncuda, map[string]bool{})
	res, err := sim.Run()
	if err == nil && f.panel != nil {
		err = f.savePanel(res, f.panel, out)
	}
	if err == nil && f.ensemble >= 2 {
		if f.ens, err = runEnsemble(mc, g, opts, res, f.ensemble); err == nil {
			f.ens.note(stderr)
		}
	}
	return res, err
}

// savePanel draws --plot's panel of a run, titled with the machine and the
// configuration, into out.
func (f *runFlags) savePanel(res *sim.Result, rec *traces.PanelRecorder, out *outputSet) error {
	var ncpu, ngpu int
	for _, w := range res.Workers {
		if strings.HasPrefix(w.Arch, "cpu") {
			ncpu++
		} else {
			ngpu++
		}
	}
	p := plot.Panel{
		Title: fmt.Sprintf("%s: %s, %s, %d CPU + %d GPU workers", f.info.Name, f.config, res.Sched, ncpu, ngpu),
		Blocks: []plot.Block{{
			Title: fmt.Sprintf("starsim prediction: %s, makespan %.3f ms, %d tasks", gflopsText(res), res.MakespanS*1e3, res.NTasks),
			TL:    rec.Timeline(), XLabel: "simulated time (ms)",
		}},
	}
	data, err := plot.EncodePanel(p, f.plot)
	if err != nil {
		return err
	}
	fh, err := out.create(f.plot)
	if err != nil {
		return err
	}
	if _, err := fh.Write(data); err != nil {
		return fmt.Errorf("%s: %w", f.plot, err)
	}
	return nil
}

// gflopsText is "412.4 GFlop/s", or says that the flop count is unknown.
func gflopsText(r *sim.Result) string {
	if r.GFlops > 0 {
		return fmt.Sprintf("%.1f GFlop/s", r.GFlops)
	}
	return "GFlop/s unknown (no flop count)"
}

// openTraces creates the requested trace writers (f.observer: nil when
// none) and --plot's recorder (f.panel).
func (f *runFlags) openTraces(g *graph.Graph, out *outputSet) error {
	f.observer, f.panel = nil, nil
	if !slices.ContainsFunc(f.traceOut, func(p string) bool { return p != "" }) && f.plot == "" {
		return nil
	}
	h := traces.Header{Tool: "starsim", Version: version, Command: f.command, Seed: f.seed, Machine: strings.TrimPrefix(f.info.line(), "machine: ")}
	var obs []sim.Observer
	for i, w := range formats.Writers {
		if f.traceOut[i] == "" {
			continue
		}
		o, err := w.Open(traceOutput{out}, f.traceOut[i], h, g)
		if err != nil {
			return err
		}
		obs = append(obs, o)
	}
	if f.plot != "" {
		f.panel = traces.NewPanelRecorder()
		obs = append(obs, f.panel)
	}
	f.observer = traces.Multi(obs...)
	return nil
}

// traceOutput is out as the trace writers see it.
type traceOutput struct{ out *outputSet }

func (o traceOutput) Create(path string) (io.Writer, error) { return o.out.create(path) }
func (o traceOutput) Mkdir(path string) error               { return o.out.mkdir(path) }
func (o traceOutput) OnClose(c func() error)                { o.out.onClose(c) }

// printResult writes a result's tables; extra, when not empty, is a line
// after the summary (--ensemble's).
func printResult(w io.Writer, r *sim.Result, extra string) error {
	fmt.Fprintf(w, "%s, %s: %s, makespan %.3f ms, %d tasks\n", r.App, r.Sched, gflopsText(r), r.MakespanS*1e3, r.NTasks)
	fmt.Fprintf(w, "SLR %.3f, speedup %.3f, efficiency %.3f", r.SLR, r.Speedup, r.Efficiency)
	if r.EnergyJ > 0 {
		fmt.Fprintf(w, ", energy %.1f J (%.2f GFlop/J)", r.EnergyJ, r.GFlops*r.MakespanS/r.EnergyJ)
	}
	fmt.Fprintln(w)
	if extra != "" {
		fmt.Fprintln(w, extra)
	}
	fmt.Fprintln(w)
	kernels := map[string]bool{}
	for _, wr := range r.Workers {
		for k := range wr.ByKernel {
			kernels[k] = true
		}
	}
	var ks []string
	for k := range kernels {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	workers := newTable(append(append([]string{"WORKER", "ARCH", "TASKS"}, ks...), "BUSY %", "WAIT DATA %", "IDLE %")...)
	for _, wr := range r.Workers {
		cells := []string{wr.Name, wr.Arch, strconv.Itoa(wr.NTasks)}
		for _, k := range ks {
			cells = append(cells, strconv.Itoa(wr.ByKernel[k]))
		}
		workers.row(append(cells, fmt.Sprintf("%.1f", wr.BusyPct), fmt.Sprintf("%.1f", wr.WaitPct), fmt.Sprintf("%.1f", wr.IdlePct))...)
	}
	transfers := newTable("TRANSFER", "COPIES", "MB")
	for _, d := range r.Transfers {
		transfers.row(d.Src+" -> "+d.Dst, strconv.Itoa(d.Transfers), fmt.Sprintf("%.1f", d.Bytes/1e6))
	}
	memory := newTable("MEMORY", "CAPACITY (MiB)", "PEAK (MiB)")
	for _, m := range r.Memory {
		capS := "unlimited"
		if m.CapacityBytes > 0 {
			capS = strconv.FormatInt(m.CapacityBytes>>20, 10)
		}
		memory.row(m.Node, capS, strconv.FormatInt(m.PeakBytes>>20, 10))
	}
	for i, t := range []*table{workers, transfers, memory} {
		if i > 0 {
			fmt.Fprintln(w)
		}
		if err := t.write(w); err != nil {
			return err
		}
	}
	fmt.Fprintf(w, "\nallocations %d, evictions %d, write-backs %d\n", r.Allocations, r.Evictions, r.WriteBacks)
	if len(r.Uncalibrated) > 0 {
		fmt.Fprintln(w)
		u := newTable("UNCALIBRATED (not run there)", "ARCH")
		for _, x := range r.Uncalibrated {
			u.row(x.Model, x.Arch)
		}
		return u.write(w)
	}
	return nil
}

// legacySYRKFlag is the flag that chose StarPU 1.4.99's SYRK priority when
// 1.4 releases' was the default. It is hidden and keeps its meaning:
// --starpu-1499-syrk-prio changes nothing, =false is
// --starpu-14-release-syrk-prio.
const legacySYRKFlag = "starpu-1499-syrk-prio"

// addLegacySYRKPrio registers legacySYRKFlag, hidden, on fs.
func addLegacySYRKPrio(fs *pflag.FlagSet) {
	fs.Bool(legacySYRKFlag, true, "")
	_ = fs.MarkHidden(legacySYRKFlag)
}

// legacySYRKPrio applies legacySYRKFlag to *release (the
// --starpu-14-release-syrk-prio setting); the two flags may not
// contradict each other.
func legacySYRKPrio(fs *pflag.FlagSet, release *bool) error {
	if !fs.Changed(legacySYRKFlag) {
		return nil
	}
	v, err := fs.GetBool(legacySYRKFlag)
	if err != nil {
		return err
	}
	if v && *release {
		return flagError(legacySYRKFlag, v, "contradicts --starpu-14-release-syrk-prio (StarPU 1.4.99's SYRK priority is the default)")
	}
	*release = *release || !v
	return nil
}
