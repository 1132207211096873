// Command peerdiff runs Cholesky/LU configurations on the peer (StarPU over
// the real SimGrid, ../shared/peer/run-peer.sh) and on starsim, and reports
// where they differ: GFlop/s and error per configuration, a summary per
// machine, and with --trace the tasks per kernel and worker, the bytes per
// transfer direction, starsim's evictions and write-backs, and the first
// task (in submission order) whose worker, start or end differs, with both
// sides' context. Peer results are cached (they take seconds to minutes):
// see --cache. A development tool: it needs the peer build, so it is not
// part of the tests; `make peerdiff PEERDIFF_FLAGS="..."` runs it.
package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
)

type options struct {
	starpu, peerPrefix, runPeer, starsim, cloneGPU, cache, tsv string
	hosts, apps, scheds, ncpus                                 []string
	ns                                                         []int
	block, gpus, gpuMemMiB, ensemble                           int
	trace, cacheOnly, noStarsim                                bool
	tolMs                                                      float64
	context                                                    int
	starsimArgs, peerTSV                                       string
}

// config is one run: the peer's and starsim's inputs.
type config struct {
	host, app, sched, ncpu string
	n, block, gpus         int // gpus 0: the machine's own
	gpuMemMiB              int // GPU memory limit per GPU, MiB (0: none)
}

func (c config) String() string {
	g := ""
	if c.gpus > 0 {
		g = fmt.Sprintf(" gpus=%d", c.gpus)
	}
	if c.gpuMemMiB > 0 {
		g += fmt.Sprintf(" gpu-mem=%dMiB", c.gpuMemMiB)
	}
	return fmt.Sprintf("%s%s %s %s ncpu=%s N=%d", c.host, g, c.app, c.sched, c.ncpu, c.n)
}

// peerRow is run-peer.sh's output row.
type peerRow struct {
	ncpu, ncuda int
	simMs       float64
	gflops      float64
	wallS       float64
}

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "peerdiff:", err)
		os.Exit(1)
	}
}

func splitList(s string) []string {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

// parseNs reads "9600,19200" or "9600:76800:9600".
func parseNs(s string) ([]int, error) {
	var out []int
	for _, x := range splitList(s) {
		if p := strings.Split(x, ":"); len(p) == 3 {
			a, e1 := strconv.Atoi(p[0])
			b, e2 := strconv.Atoi(p[1])
			st, e3 := strconv.Atoi(p[2])
			if e1 != nil || e2 != nil || e3 != nil || st <= 0 || a > b {
				return nil, fmt.Errorf("--n: bad range %q (FROM:TO:STEP)", x)
			}
			for v := a; v <= b; v += st {
				out = append(out, v)
			}
			continue
		}
		v, err := strconv.Atoi(x)
		if err != nil || v <= 0 {
			return nil, fmt.Errorf("--n: bad size %q", x)
		}
		out = append(out, v)
	}
	return out, nil
}

func run(args []string, stdout io.Writer) error {
	var o options
	fs := flag.NewFlagSet("peerdiff", flag.ContinueOnError)
	home, _ := os.UserHomeDir()
	fs.StringVar(&o.starpu, "starpu", "../shared/calibrations/starpu-sampling", "StarPU sampling directory")
	hosts := fs.String("host", "attila", "hosts, comma-separated")
	apps := fs.String("app", "cholesky", "applications (cholesky, lu), comma-separated")
	scheds := fs.String("sched", "dmda", "schedulers, comma-separated")
	ncpus := fs.String("ncpu", "0", "CPU workers, comma-separated: a count, or default (StarPU's own: hybrid)")
	ns := fs.String("n", "19200", "matrix sizes: list or FROM:TO:STEP")
	fs.IntVar(&o.block, "block", 960, "tile size")
	fs.IntVar(&o.gpus, "gpus", 0, "what-if: one more GPU than the machine has, a clone of its last (clone-gpu.py for the peer, --gpus for starsim)")
	fs.IntVar(&o.gpuMemMiB, "gpu-mem", 0, "what-if: GPU memory each GPU may use, MiB (STARPU_LIMIT_CUDA_MEM for the peer, --gpu-mem for starsim; 0: the machine's)")
	fs.StringVar(&o.peerPrefix, "peer-prefix", "/tmp/starpu-peer", "the peer's install prefix (build-peer.sh)")
	fs.StringVar(&o.runPeer, "run-peer", "../shared/peer/run-peer.sh", "the peer's run script")
	fs.StringVar(&o.starsim, "starsim", "bin/starsim", "starsim binary")
	fs.StringVar(&o.starsimArgs, "starsim-args", "", "extra starsim run flags (space-separated), e.g. --no-starpu-prio-clamp")
	fs.StringVar(&o.cloneGPU, "clone-gpu", "tools/peerdiff/clone-gpu.py", "the GPU-cloning script")
	fs.StringVar(&o.cache, "cache", filepath.Join(home, ".cache/starsim-peerdiff/v1"), "peer result cache (keyed by the peer build, the sampling files and the configuration)")
	fs.BoolVar(&o.cacheOnly, "cache-only", false, "never run the peer: configurations not cached are skipped")
	fs.BoolVar(&o.noStarsim, "peer-only", false, "run (or fetch) the peer only: fills the cache")
	fs.BoolVar(&o.trace, "trace", false, "keep both sides' traces and report kernels per worker, transfers and the first divergence")
	fs.Float64Var(&o.tolMs, "tol-ms", 0.01, "with --trace: start/end differences up to this many ms are equal")
	fs.IntVar(&o.context, "context", 4, "with --trace: tasks of context before the first divergence")
	fs.IntVar(&o.ensemble, "ensemble", 0, "compare the median GFlop/s of starsim's ensemble of K runs (run --ensemble K) and say whether the peer falls inside its range")
	fs.StringVar(&o.tsv, "tsv", "", "also write the rows as TSV to this file")
	fs.StringVar(&o.peerTSV, "peer-tsv", "", "write the peer's side of the rows (no starsim column) as TSV to this file: the grid TestPeerGridFidelity reads")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	o.hosts, o.apps, o.scheds, o.ncpus = splitList(*hosts), splitList(*apps), splitList(*scheds), splitList(*ncpus)
	var err error
	if o.ns, err = parseNs(*ns); err != nil {
		return err
	}
	for _, a := range o.apps {
		if a != "cholesky" && a != "lu" {
			return fmt.Errorf("--app: %q: cholesky or lu", a)
		}
	}
	for _, c := range o.ncpus {
		if _, err := strconv.Atoi(c); err != nil && c != "default" {
			return fmt.Errorf("--ncpu: %q: a count or default", c)
		}
	}
	if o.ensemble != 0 && (o.ensemble < 2 || o.trace) {
		return fmt.Errorf("--ensemble %d: a run count from 2, without --trace (a trace is one run's)", o.ensemble)
	}
	if o.gpuMemMiB < 0 {
		return fmt.Errorf("--gpu-mem: %d: a size in MiB", o.gpuMemMiB)
	}
	if o.gpuMemMiB > 0 && (o.peerTSV != "" || o.tsv != "") {
		return fmt.Errorf("--tsv, --peer-tsv: their rows have no GPU memory limit column (not with --gpu-mem)")
	}
	if o.gpuMemMiB > 0 && !o.cacheOnly {
		// run-peer.sh clears every STARPU_ variable: a copy that sets the
		// limit after that runs the peer.
		script, err := limitedRunPeer(o.runPeer, o.gpuMemMiB)
		if err != nil {
			return err
		}
		defer os.RemoveAll(filepath.Dir(script))
		o.runPeer = script
	}
	if !o.noStarsim {
		warnStale(o.starsim)
	}
	peerID := ""
	if !o.cacheOnly {
		if peerID, err = peerBuildID(o.peerPrefix); err != nil {
			return err
		}
	}

	var rows []result
	for _, h := range o.hosts {
		dir := o.starpu
		if o.gpus > 0 {
			if dir, err = cloneDir(o, h); err != nil {
				return err
			}
			defer os.RemoveAll(dir)
		}
		sampID, err := samplingID(dir, h)
		if err != nil {
			return err
		}
		for _, a := range o.apps {
			for _, s := range o.scheds {
				for _, nc := range o.ncpus {
					for _, n := range o.ns {
						c := config{host: h, app: a, sched: s, ncpu: nc, n: n, block: o.block, gpus: o.gpus, gpuMemMiB: o.gpuMemMiB}
						r, err := runOne(o, c, dir, peerID, sampID, stdout)
						if err != nil {
							return fmt.Errorf("%v: %w", c, err)
						}
						if r != nil {
							rows = append(rows, *r)
							if !o.trace {
								printRow(stdout, *r)
							}
						}
					}
				}
			}
		}
	}
	if o.peerTSV != "" {
		if err := writePeerTSV(o.peerTSV, rows); err != nil {
			return err
		}
	}
	if o.noStarsim {
		return nil
	}
	fmt.Fprintln(stdout)
	summarize(stdout, rows)
	if o.tsv != "" {
		return writeTSV(o.tsv, rows)
	}
	return nil
}

// result is one configuration's outcome on both sides.
type result struct {
	c       config
	peer    peerRow
	starsim float64
	// ens is starsim's ensemble (--ensemble), nil without.
	ens *ensembleJSON
}

func (r result) errPct() float64 { return (r.starsim - r.peer.gflops) / r.peer.gflops * 100 }

func printRow(w io.Writer, r result) {
	if r.starsim == 0 {
		fmt.Fprintf(w, "%-44s peer %8.1f GFlop/s (%d CPU + %d CUDA, %.1f s)\n", r.c, r.peer.gflops, r.peer.ncpu, r.peer.ncuda, r.peer.wallS)
		return
	}
	ens := ""
	if r.ens != nil {
		in := "outside"
		if r.peer.gflops >= r.ens.Min && r.peer.gflops <= r.ens.Max {
			in = "inside"
		}
		ens = fmt.Sprintf("  (ensemble %+.2f to %+.2f %%: peer %s)", (r.ens.Min-r.peer.gflops)/r.peer.gflops*100, (r.ens.Max-r.peer.gflops)/r.peer.gflops*100, in)
	}
	fmt.Fprintf(w, "%-44s peer %8.1f  starsim %8.1f GFlop/s  %+6.2f %%%s\n", r.c, r.peer.gflops, r.starsim, r.errPct(), ens)
}

func summarize(w io.Writer, rows []result) {
	groups := map[string][]float64{}
	var names []string
	for _, r := range rows {
		if r.starsim == 0 {
			continue
		}
		g := r.c.host
		if r.c.gpus > 0 {
			g += fmt.Sprintf("+gpus%d", r.c.gpus)
		}
		if r.c.gpuMemMiB > 0 {
			g += fmt.Sprintf(" %dMiB", r.c.gpuMemMiB)
		}
		if r.peer.ncpu > 0 {
			g += " hybrid"
		}
		if _, ok := groups[g]; !ok {
			names = append(names, g)
		}
		groups[g] = append(groups[g], math.Abs(r.errPct()))
		groups["all"] = append(groups["all"], math.Abs(r.errPct()))
	}
	if len(names) == 0 {
		return
	}
	if len(names) > 1 {
		names = append(names, "all")
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "group\trows\tmedian |err| %\tmax |err| %\t> 2 %\t> 3 %\t")
	for _, g := range names {
		e := groups[g]
		sort.Float64s(e)
		med := e[len(e)/2]
		if len(e)%2 == 0 {
			med = (e[len(e)/2-1] + e[len(e)/2]) / 2
		}
		n2, n3 := 0, 0
		for _, x := range e {
			if x > 2 {
				n2++
			}
			if x > 3 {
				n3++
			}
		}
		fmt.Fprintf(tw, "%s\t%d\t%.2f\t%.2f\t%d\t%d\t\n", g, len(e), med, e[len(e)-1], n2, n3)
	}
	tw.Flush()
}

// writeTSV writes the measured rows: the peer's numbers and starsim's.
func writeTSV(path string, rows []result) error {
	var b bytes.Buffer
	b.WriteString("host\tgpus\tapp\tsched\tncpu\tncuda\tn\tblock\tpeer_ms\tpeer_gflops\tstarsim_gflops\terr_pct\n")
	for _, r := range rows {
		if r.starsim == 0 {
			continue
		}
		fmt.Fprintf(&b, "%s\t%d\t%s\t%s\t%d\t%d\t%d\t%d\t%.3f\t%.2f\t%.2f\t%+.2f\n", r.c.host, r.c.gpus, r.c.app, r.c.sched,
			r.peer.ncpu, r.peer.ncuda, r.c.n, r.c.block, r.peer.simMs, r.peer.gflops, r.starsim, r.errPct())
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

// writePeerTSV writes the peer's measurements only: what starsim is
// checked against.
func writePeerTSV(path string, rows []result) error {
	var b bytes.Buffer
	b.WriteString("host\tgpus\tapp\tsched\tncpu\tncuda\tn\tblock\tpeer_ms\tpeer_gflops\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "%s\t%d\t%s\t%s\t%d\t%d\t%d\t%d\t%.3f\t%.2f\n", r.c.host, r.c.gpus, r.c.app, r.c.sched,
			r.peer.ncpu, r.peer.ncuda, r.c.n, r.c.block, r.peer.simMs, r.peer.gflops)
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

// hashFiles hashes each file's name relative to root and its content, in
// the order given.
func hashFiles(root string, rel []string) (string, error) {
	h := sha256.New()
	for _, r := range rel {
		b, err := os.ReadFile(filepath.Join(root, r))
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s\n%d\n", r, len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))[:12], nil
}

// peerBuildID identifies the peer build: its library and example binaries.
func peerBuildID(prefix string) (string, error) {
	libs, _ := filepath.Glob(filepath.Join(prefix, "lib/libstarpu-1.4.so.*.*"))
	if len(libs) == 0 {
		return "", fmt.Errorf("no peer in %s (../shared/peer/build-peer.sh %s), or use --cache-only", prefix, prefix)
	}
	rel := []string{}
	for _, p := range append(libs, filepath.Join(prefix, "lib/starpu/examples/cholesky_implicit"),
		filepath.Join(prefix, "lib/starpu/examples/lu_implicit_example_float")) {
		r, _ := filepath.Rel(prefix, p)
		rel = append(rel, r)
	}
	sort.Strings(rel)
	return hashFiles(prefix, rel)
}

// samplingID identifies the sampling files the peer reads for host.
func samplingID(dir, host string) (string, error) {
	a, _ := filepath.Glob(filepath.Join(dir, "bus", host+".*"))
	b, _ := filepath.Glob(filepath.Join(dir, "codelets/45", "*."+host))
	if len(a) == 0 {
		return "", fmt.Errorf("%s: no bus/%s.* files", dir, host)
	}
	var rel []string
	for _, p := range append(a, b...) {
		r, _ := filepath.Rel(dir, p)
		rel = append(rel, r)
	}
	sort.Strings(rel)
	return hashFiles(dir, rel)
}

// cloneDir writes, in a directory of its own (the caller removes it), the
// sampling files of host with one more GPU.
func cloneDir(o options, host string) (string, error) {
	cfg, err := os.ReadFile(filepath.Join(o.starpu, "bus", host+".config"))
	if err != nil {
		return "", err
	}
	var n int
	for _, l := range strings.Split(string(cfg), "\n") {
		if strings.Contains(l, "# Number of CUDA devices") {
			n, _ = strconv.Atoi(strings.Fields(l)[0])
		}
	}
	if o.gpus != n+1 {
		return "", fmt.Errorf("--gpus %d: %s has %d GPUs; the peer's what-if adds one (--gpus %d)", o.gpus, host, n, n+1)
	}
	out, err := os.MkdirTemp("", fmt.Sprintf("peerdiff-%s-gpus%d-", host, o.gpus))
	if err != nil {
		return "", err
	}
	cmd := exec.Command("python3", o.cloneGPU, o.starpu, host, out)
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		os.RemoveAll(out)
		return "", fmt.Errorf("%s: %w", o.cloneGPU, err)
	}
	return out, nil
}

func cachePath(o options, c config, peerID, sampID string) string {
	g := ""
	if c.gpus > 0 {
		g = fmt.Sprintf("-gpus%d", c.gpus)
	}
	if c.gpuMemMiB > 0 {
		g += fmt.Sprintf("-mem%d", c.gpuMemMiB)
	}
	return filepath.Join(o.cache, peerID, sampID+"-"+c.host+g, fmt.Sprintf("%s-%s-ncpu%s-%d-b%d", c.app, c.sched, c.ncpu, c.n, c.block))
}

// peer returns the peer's row for c, from the cache or by running it; with
// trace, also the row of a run with StarPU's FxT tracing on and the folder
// of starpu_fxt_tool's output (trace/, which holds that row as row.tsv).
// The two runs are kept apart because tracing can change the simulated
// result: with FxT, StarPU initializes its workers one after the other.
// (A cache entry written before they were kept apart holds only the traced
// run: its row moves to trace/ and the untraced run is made.)
func peer(o options, c config, dir, peerID, sampID string) (row, traced *peerRow, traceDir string, err error) {
	var base string
	if o.cacheOnly {
		// Any peer build's entry will do: the newest.
		ents, _ := filepath.Glob(cachePath(o, c, "*", sampID))
		var best string
		var bt int64
		for _, e := range ents {
			if st, err := os.Stat(filepath.Join(e, "row.tsv")); err == nil && st.ModTime().UnixNano() > bt && (!o.trace || exists(filepath.Join(e, "trace/tasks.rec"))) {
				best, bt = e, st.ModTime().UnixNano()
			}
		}
		if best == "" {
			return nil, nil, "", nil
		}
		base = best
	} else {
		base = cachePath(o, c, peerID, sampID)
	}
	rowFile := filepath.Join(base, "row.tsv")
	traceDir = filepath.Join(base, "trace")
	tracedFile := filepath.Join(traceDir, "row.tsv")
	if exists(filepath.Join(traceDir, "tasks.rec")) && !exists(tracedFile) && exists(rowFile) {
		if o.cacheOnly {
			// Which run the row is of is unknown: both are taken as one.
			if row, err = readPeerRow(rowFile); err != nil {
				return nil, nil, "", err
			}
			return row, row, traceDir, nil
		}
		if err := os.Rename(rowFile, tracedFile); err != nil {
			return nil, nil, "", err
		}
	}
	if !exists(rowFile) {
		if o.cacheOnly {
			return nil, nil, "", nil
		}
		if err := os.MkdirAll(base, 0o755); err != nil {
			return nil, nil, "", err
		}
		b, err := runPeer(o, c, dir, "")
		if err == nil {
			err = writeAtomic(rowFile, b)
		}
		if err != nil {
			return nil, nil, "", err
		}
	}
	if row, err = readPeerRow(rowFile); err != nil {
		return nil, nil, "", err
	}
	if !o.trace {
		return row, nil, "", nil
	}
	if !exists(tracedFile) || !exists(filepath.Join(traceDir, "tasks.rec")) {
		if o.cacheOnly {
			return nil, nil, "", nil
		}
		os.RemoveAll(traceDir)
		b, err := runPeer(o, c, dir, traceDir)
		if err == nil {
			// (written last: its presence says the trace is whole)
			err = writeAtomic(tracedFile, b)
		}
		if err != nil {
			return nil, nil, "", err
		}
	}
	traced, err = readPeerRow(tracedFile)
	return row, traced, traceDir, err
}

// runPeer runs the peer's script on c and returns its row; with traceDir,
// StarPU's trace goes there.
func runPeer(o options, c config, dir, traceDir string) ([]byte, error) {
	args := []string{"--starpu", dir, "--host", c.host, "--app", c.app, "--n", strconv.Itoa(c.n), "--block", strconv.Itoa(c.block),
		"--sched", c.sched, "--ncpu", c.ncpu, "--prefix", o.peerPrefix}
	if traceDir != "" {
		args = append(args, "--trace", traceDir)
	}
	var out bytes.Buffer
	cmd := exec.Command(o.runPeer, args...)
	cmd.Stdout, cmd.Stderr = &out, os.Stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s: %w", o.runPeer, err)
	}
	return out.Bytes(), nil
}

// writeAtomic writes b to path through a temporary file, so that an
// interrupted run leaves no partial row in the cache.
func writeAtomic(path string, b []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// limitedRunPeer writes a copy of the run script runPeer that exports
// STARPU_LIMIT_CUDA_MEM=mib after the line that clears the environment's
// STARPU_ variables, and returns its path (in a new temporary folder).
func limitedRunPeer(runPeer string, mib int) (string, error) {
	b, err := os.ReadFile(runPeer)
	if err != nil {
		return "", err
	}
	lines := strings.SplitAfter(string(b), "\n")
	at := -1
	for i, l := range lines {
		if strings.Contains(l, "STARPU_") && strings.Contains(l, "unset") {
			at = i
		}
	}
	if at < 0 {
		return "", fmt.Errorf("--gpu-mem: %s has no line that unsets the STARPU_ variables to set STARPU_LIMIT_CUDA_MEM after", runPeer)
	}
	out := strings.Join(lines[:at+1], "") + fmt.Sprintf("export STARPU_LIMIT_CUDA_MEM=%d\n", mib) + strings.Join(lines[at+1:], "")
	dir, err := os.MkdirTemp("", "peerdiff-run-peer-")
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, filepath.Base(runPeer))
	if err := os.WriteFile(path, []byte(out), 0o755); err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	return path, nil
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

func readPeerRow(path string) (*peerRow, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	f := strings.Split(strings.TrimSpace(string(b)), "\t")
	if len(f) < 11 {
		return nil, fmt.Errorf("%s:1: %d fields, want 11 (run-peer.sh's row)", path, len(f))
	}
	var r peerRow
	var errs []error
	atoi := func(s string) int { v, e := strconv.Atoi(s); errs = append(errs, e); return v }
	atof := func(s string) float64 { v, e := strconv.ParseFloat(s, 64); errs = append(errs, e); return v }
	r.ncpu, r.ncuda, r.simMs, r.gflops, r.wallS = atoi(f[3]), atoi(f[4]), atof(f[7]), atof(f[8]), atof(f[9])
	if err := errors.Join(errs...); err != nil || !(r.gflops > 0) || math.IsInf(r.gflops, 0) {
		return nil, fmt.Errorf("%s:1: bad row %q", path, strings.TrimSpace(string(b)))
	}
	return &r, nil
}

// starsimJSON is the part of `starsim run --json` read here.
type starsimJSON struct {
	GFlops  float64 `json:"gflops"`
	Workers []struct {
		Name    string         `json:"name"`
		ByKern  map[string]int `json:"tasks_by_kernel"`
		NTasks  int            `json:"ntasks"`
		BusyPct float64        `json:"busy_pct"`
	} `json:"workers"`
	Transfers []struct {
		Src   string `json:"src"`
		Dst   string `json:"dst"`
		Bytes int64  `json:"bytes"`
		N     int    `json:"transfers"`
	} `json:"transfers"`
	Evictions  json.RawMessage `json:"evictions"`
	WriteBacks json.RawMessage `json:"write_backs"`
	Ensemble   *ensembleJSON   `json:"ensemble"`
}

// ensembleJSON is the part of run --ensemble's "ensemble" read here.
type ensembleJSON struct {
	Median float64 `json:"gflops_median"`
	Min    float64 `json:"gflops_min"`
	Max    float64 `json:"gflops_max"`
}

func runStarsim(o options, c config, p *peerRow, traceDir string) (*starsimJSON, error) {
	args := []string{"run", "--starpu", o.starpu, "--host", c.host, "--app", c.app, "--n", strconv.Itoa(c.n),
		"--block", strconv.Itoa(c.block), "--sched", c.sched, "--ncpu", strconv.Itoa(p.ncpu), "--json"}
	if c.gpus > 0 {
		args = append(args, "--gpus", strconv.Itoa(c.gpus))
	}
	if c.gpuMemMiB > 0 {
		args = append(args, "--gpu-mem", fmt.Sprintf("%dMiB", c.gpuMemMiB))
	}
	if traceDir != "" {
		args = append(args, "--trace-rec", traceDir, "--trace-paje", filepath.Join(traceDir, "paje.trace"))
	}
	if o.ensemble >= 2 {
		args = append(args, "--ensemble", strconv.Itoa(o.ensemble))
	}
	args = append(args, strings.Fields(o.starsimArgs)...)
	var out, errb bytes.Buffer
	cmd := exec.Command(o.starsim, args...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s %s: %w: %s", o.starsim, strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	var j starsimJSON
	if err := json.Unmarshal(out.Bytes(), &j); err != nil {
		return nil, fmt.Errorf("starsim --json: %w", err)
	}
	return &j, nil
}

func runOne(o options, c config, dir, peerID, sampID string, w io.Writer) (*result, error) {
	p, traced, peerTrace, err := peer(o, c, dir, peerID, sampID)
	if err != nil {
		return nil, err
	}
	if p == nil {
		fmt.Fprintf(os.Stderr, "peerdiff: %v: not cached, skipped\n", c)
		return nil, nil
	}
	r := &result{c: c, peer: *p}
	if o.noStarsim {
		return r, nil
	}
	ssTrace := ""
	if o.trace {
		if ssTrace, err = os.MkdirTemp("", "peerdiff-starsim-"); err != nil {
			return nil, err
		}
		defer os.RemoveAll(ssTrace)
	}
	j, err := runStarsim(o, c, p, ssTrace)
	if err != nil {
		return nil, err
	}
	r.starsim = j.GFlops
	if o.ensemble >= 2 {
		if j.Ensemble == nil {
			return nil, fmt.Errorf("%s: no ensemble in run --ensemble's output", o.starsim)
		}
		r.starsim, r.ens = j.Ensemble.Median, j.Ensemble
	}
	if o.trace {
		printRow(w, *r)
		if traced.gflops != p.gflops {
			fmt.Fprintf(w, "  the peer traced (FxT on): %.1f GFlop/s, %+.2f %% from its untraced run above; the trace compared below is that run's\n",
				traced.gflops, 100*(traced.gflops-p.gflops)/p.gflops)
		}
		if err := detail(w, o, peerTrace, ssTrace, j); err != nil {
			return nil, err
		}
		fmt.Fprintln(w)
	}
	return r, nil
}

// warnStale says on stderr when the starsim binary is older than a Go
// source of the repository it runs in (tools/ aside: not part of it): the
// comparison would be of an older starsim (make peerdiff builds it first;
// go run ./tools/peerdiff does not).
func warnStale(bin string) {
	st, err := os.Stat(bin)
	if err != nil {
		return // the run itself will say the binary is missing
	}
	var newest string
	_ = filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata" || path == "tools") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			if fi, err := d.Info(); err == nil && fi.ModTime().After(st.ModTime()) {
				newest = path
				return filepath.SkipAll
			}
		}
		return nil
	})
	if newest != "" {
		fmt.Fprintf(os.Stderr, "peerdiff: warning: %s is older than %s: run make build (or make peerdiff) to compare the current starsim\n", bin, newest)
	}
}
