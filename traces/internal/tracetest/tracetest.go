// Package tracetest holds what the trace packages' tests share: small runs
// with a writer, the native StarPU trace's path, checks of errors and reports.
package tracetest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/starsim/starsim/calibrate"
	"github.com/starsim/starsim/internal/srcerr"
	"github.com/starsim/starsim/models"
	"github.com/starsim/starsim/runtime/graph"
	"github.com/starsim/starsim/runtime/machine"
	"github.com/starsim/starsim/runtime/sim"
	"github.com/starsim/starsim/traces"
	"github.com/starsim/starsim/traces/compare"
)

// Header heads the tests' traces.
var Header = traces.Header{Tool: "starsim", Version: "test", Command: "starsim run --app cholesky", Seed: 7}

// Recorder remembers what the traces must show.
type Recorder struct {
	sim.NopObserver
	Nodes   []string
	Workers []string
	Kernels map[string]bool
	Preds   int
	Starts  int
}

func (r *Recorder) Start(ws []*machine.Worker, nodes []string) {
	r.Nodes = append([]string(nil), nodes...)
	for _, w := range ws {
		r.Workers = append(r.Workers, w.Name)
	}
}

func (r *Recorder) TransferStart(float64, uint64, string, string, int64, string, *graph.Handle) {
	r.Starts++
}

func (r *Recorder) TaskDone(t *sim.TaskState) {
	if r.Kernels == nil {
		r.Kernels = map[string]bool{}
	}
	r.Kernels[t.Spec().Name] = true
	r.Preds += len(t.Preds())
}

// Cholesky runs the 8×8-tile Cholesky under dmdas on the default
// calibration (CPUs and 4 GPUs) with obs.
func Cholesky(t *testing.T, obs sim.Observer) *sim.Result {
	t.Helper()
	return RunCholesky(t, CholeskyGraph(t), obs)
}

// CholeskyGraph is the graph Cholesky runs, for writers that need its
// handles before the run.
func CholeskyGraph(t *testing.T) *graph.Graph {
	t.Helper()
	g, err := models.New("cholesky", models.Options{N: 960 * 8, Block: 960, Prio: graph.UnboundedPrio})
	require.NoError(t, err)
	return g
}

// RunCholesky runs g (CholeskyGraph's) as Cholesky does.
func RunCholesky(t *testing.T, g *graph.Graph, obs sim.Observer) *sim.Result {
	t.Helper()
	opts := sim.DefaultOptions()
	opts.Sched = "dmdas"
	opts.Check = true
	opts.Observer = obs
	sim, err := sim.New(calibrate.Default().RuntimeMachine(), g, opts)
	require.NoError(t, err)
	res, err := sim.Run()
	require.NoError(t, err)
	return res
}

// Tiny runs a hand-built graph on one CPU and one GPU: kernel names
// that need an alias of their own, transfers both ways.
func Tiny(t testing.TB, obs sim.Observer) *sim.Result {
	t.Helper()
	m := &machine.Machine{
		CPUCores: 2, CPUArch: "cpu0",
		Devices: []machine.Device{{Name: "CUDA0", Kind: "cuda", Arch: "cuda0", MemoryBytes: 1 << 30}},
		Links:   []machine.Link{{ID: "pci", BandwidthBps: 1e9, LatencyS: 1e-6}},
		Routes:  map[machine.Dir][]string{{Src: "RAM", Dst: "CUDA0"}: {"pci"}, {Src: "CUDA0", Dst: "RAM"}: {"pci"}},
		Predict: map[machine.Dir]machine.Prediction{{Src: "RAM", Dst: "CUDA0"}: {LatencyS: 1e-6, BandwidthBps: 1e9},
			{Src: "CUDA0", Dst: "RAM"}: {LatencyS: 1e-6, BandwidthBps: 1e9}},
		Costs: machine.Costs{TaskSubmitS: 1e-6, TaskPushS: 2e-6},
		Kernels: map[machine.KernelKey]machine.KernelStats{
			{Model: "init", Arch: "cpu0"}:                    {MeanUS: 100},
			{Model: "init", Arch: "cuda0"}:                   {MeanUS: 1000},
			{Model: "big", Arch: "cpu0", Footprint: 0xbeef}:  {MeanUS: 50000},
			{Model: "big", Arch: "cuda0", Footprint: 0xbeef}: {MeanUS: 50},
			{Model: "e", Arch: "cpu0"}:                       {MeanUS: 30},
		},
	}
	g := &graph.Graph{Name: "tiny",
		Handles: []graph.Handle{{ID: 0, Name: "A", SizeBytes: 1 << 20}, {ID: 1, Name: "B", SizeBytes: 1 << 20}},
		Tasks: []graph.Task{
			{ID: 0, Name: "INIT", Model: "init", Buffers: []graph.Access{{Handle: 0, Mode: graph.W}}},
			{ID: 1, Name: "INIT", Model: "init", Buffers: []graph.Access{{Handle: 1, Mode: graph.W}}},
			{ID: 2, Name: `odd "kernel" 1`, Model: "big", Flops: 1e9, Priority: 2, Footprint: 0xbeef,
				Buffers: []graph.Access{{Handle: 0, Mode: graph.R}, {Handle: 1, Mode: graph.RW}}},
			{ID: 3, Name: "E", Model: "e", Buffers: []graph.Access{{Handle: 1, Mode: graph.R}}},
		}}
	opts := sim.DefaultOptions()
	opts.Check = true
	opts.Observer = obs
	sim, err := sim.New(m, g, opts)
	require.NoError(t, err)
	res, err := sim.Run()
	require.NoError(t, err)
	return res
}

// Copies is the number of copies of a run.
func Copies(res *sim.Result) int {
	n := 0
	for _, d := range res.Transfers {
		n += d.Transfers
	}
	return n
}

// FailWriter fails every write.
type FailWriter struct{}

func (FailWriter) Write([]byte) (int, error) { return 0, os.ErrClosed }

// SmallRun simulates a 3x3-tile Cholesky (10 tasks) on the default
// machine (2 CPU workers, 1 GPU) with the writer of format f (f.Open at
// path "trace", a directory for a format of several files) and returns
// what it wrote, by file name ("trace", or each of f.Files): seeds written
// by the tool, small enough for the fuzzer to minimize.
func SmallRun(tb testing.TB, f traces.Format) map[string][]byte {
	g, err := models.New("cholesky", models.Options{N: 960 * 3, Block: 960})
	if err != nil {
		tb.Fatal(err)
	}
	out := &memOutput{files: map[string]*bytes.Buffer{}}
	w, err := f.Open(out, "trace", traces.Header{Tool: "fuzz seed"}, g)
	if err != nil {
		tb.Fatal(err)
	}
	o := sim.DefaultOptions()
	o.NCPU, o.NCUDA, o.Observer = 2, 1, w
	s, err := sim.New(calibrate.Default().RuntimeMachine(), g, o)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := s.Run(); err != nil {
		tb.Fatal(err)
	}
	files := map[string][]byte{}
	for _, c := range out.closers {
		if err := c(); err != nil {
			tb.Fatal(err)
		}
	}
	for name, b := range out.files {
		files[name] = b.Bytes()
	}
	return files
}

// memOutput keeps a writer's files in memory, by base name.
type memOutput struct {
	files   map[string]*bytes.Buffer
	closers []func() error
}

func (m *memOutput) Create(path string) (io.Writer, error) {
	b := &bytes.Buffer{}
	m.files[filepath.Base(path)] = b
	return b, nil
}
func (m *memOutput) Mkdir(string) error         { return nil }
func (m *memOutput) OnClose(close func() error) { m.closers = append(m.closers, close) }

// CheckLocated fails unless err is a *srcerr.Error naming file.
func CheckLocated(t *testing.T, err error, file string) {
	t.Helper()
	var se *srcerr.Error
	if !errors.As(err, &se) || se.File != file {
		t.Fatalf("error %v (%T) does not name %s", err, err, file)
	}
}

// CheckReport: comparing a trace with itself gives finite numbers, no
// difference, and a report that encodes as JSON.
func CheckReport(t *testing.T, tr *traces.Trace) {
	t.Helper()
	rep := compare.Compare(tr, tr)
	for _, v := range []float64{rep.MakespanA, rep.GFlopsA, rep.MakespanErrPct} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Fatalf("non-finite number in the report: %+v", rep)
		}
	}
	for _, d := range rep.Distributions {
		if d.KS != 0 {
			t.Fatalf("KS distance %v of a sample with itself", d.KS)
		}
	}
	if _, err := json.Marshal(rep); err != nil {
		t.Fatal(err)
	}
}

// Native is a real StarPU run (git 3f3cc82a6, FxT): cholesky_implicit
// -size 7680 -nblocks 8 (960×960 float tiles), STARPU_SCHED=dmda on 2 CPU
// workers, converted by starpu_fxt_tool. It is read in place, never copied
// into the repository; the path is relative to a package directory
// under traces/; the tests skip without it.
const Native = "../../../shared/reference/native-cpu-trace"

// OpenNative opens file of the native trace, skipping the test without it.
func OpenNative(t *testing.T, file string) *os.File {
	t.Helper()
	f, err := os.Open(filepath.Join(Native, file))
	if err != nil {
		t.Skipf("native trace not available: %v", err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}
