package compare_test

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/starsim/starsim/calibrate"
	"github.com/starsim/starsim/models"
	"github.com/starsim/starsim/runtime/cost"
	"github.com/starsim/starsim/runtime/graph"
	"github.com/starsim/starsim/runtime/sim"
	"github.com/starsim/starsim/traces"
	"github.com/starsim/starsim/traces/chrome"
	"github.com/starsim/starsim/traces/compare"
	"github.com/starsim/starsim/traces/formats"
	"github.com/starsim/starsim/traces/internal/tracetest"
	"github.com/starsim/starsim/traces/rec"
)

// loadNative loads the native StarPU trace, skipping the test without it.
func loadNative(t *testing.T) *traces.Trace {
	t.Helper()
	if _, err := os.Stat(filepath.Join(tracetest.Native, "tasks.rec")); err != nil {
		t.Skipf("native trace not available: %v", err)
	}
	tr, err := formats.Load(tracetest.Native)
	require.NoError(t, err)
	return tr
}

// TestCompareNativeSelf: the native trace compared with itself gives
// exactly zero differences, and its makespan is the README's 706.3 ms.
func TestCompareNativeSelf(t *testing.T) {
	a := loadNative(t)
	assert.Equal(t, "tasks.rec", a.Format)
	assert.Len(t, a.Tasks, 120)
	assert.Equal(t, []traces.WorkerInfo{{ID: 0, Name: "CPU", Type: traces.WorkerCPU}, {ID: 1, Name: "CPU", Type: traces.WorkerCPU, Node: 0}}, a.Workers)
	assert.InDelta(t, 706.3, a.Makespan(), 0.1)
	assert.Equal(t, "data.rec", a.TransferSource, "data.rec sits beside tasks.rec")
	assert.Empty(t, a.Transfers, "a CPU-only run copies nothing")

	// The file path and the directory give the same trace.
	f, err := formats.Load(filepath.Join(tracetest.Native, "tasks.rec"))
	require.NoError(t, err)
	assert.Equal(t, a.Tasks, f.Tasks)

	r := compare.Compare(a, a)
	assert.Equal(t, r.MakespanA, r.MakespanB)
	assert.Zero(t, r.MakespanErrPct)
	assert.InDelta(t, 213.9, r.GFlopsA, 0.1, "StarPU printed 212.7 GFlop/s over its own 710 ms")
	assert.Zero(t, r.GFlopsErrPct)
	counts := map[string]int{}
	for _, k := range r.Kernels {
		assert.Equal(t, traces.WorkerCPU, k.WorkerType)
		assert.Equal(t, k.CountA, k.CountB)
		assert.Equal(t, k.TotalMsA, k.TotalMsB)
		assert.Zero(t, k.MeanErrPct)
		counts[k.Kernel] = k.CountA
	}
	assert.Equal(t, map[string]int{"POTRF": 8, "TRSM": 28, "SYRK": 28, "GEMM": 56}, counts)
	require.Len(t, r.Workers, 2)
	for _, w := range r.Workers {
		assert.Equal(t, w.BusyMsA, w.BusyMsB)
		assert.Equal(t, w.IdlePctA, w.IdlePctB)
		assert.Greater(t, w.BusyPctA, 85.0, "the native run keeps both cores busy")
		assert.Equal(t, 100-w.BusyPctA, w.IdlePctA)
	}
	assert.Equal(t, 120, r.Workers[0].TasksA+r.Workers[1].TasksA)
	require.Len(t, r.Distributions, 4)
	for _, d := range r.Distributions {
		assert.Zero(t, d.KS, d.Kernel)
		assert.Equal(t, d.A, d.B)
		assert.Equal(t, d.NA, d.NB)
		assert.True(t, d.A.P10 <= d.A.P50 && d.A.P50 <= d.A.P90 && d.A.P90 <= d.A.P99, "%+v", d.A)
	}
	assert.Empty(t, r.Transfers)
}

// TestKSDistance checks the two-sample KS distance on known cases, with
// ties, and with infinite and NaN values (which must not hang it).
func TestKSDistance(t *testing.T) {
	cases := []struct {
		a, b []float64
		want float64
	}{
		{nil, nil, 0},
		{nil, []float64{1}, 1},
		{[]float64{1, 2, 3}, []float64{1, 2, 3}, 0},
		{[]float64{1, 2}, []float64{3, 4}, 1},
		{[]float64{1, 2, 3}, []float64{2, 3, 4}, 1.0 / 3},
		{[]float64{1, 1, 2, 2}, []float64{1, 2}, 0},         // ties, same CDF
		{[]float64{1, 1, 1, 2}, []float64{1, 2, 2, 2}, 0.5}, // ties, CDF 3/4 vs 1/4 at 1
	}
	for _, c := range cases {
		assert.InDelta(t, c.want, compare.KSDistance(c.a, c.b), 1e-15, "%v vs %v", c.a, c.b)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20 {
		a := make([]float64, 1+rng.IntN(40))
		b := make([]float64, 1+rng.IntN(40))
		for i := range a {
			a[i] = float64(rng.IntN(20)) // ties on purpose
		}
		for i := range b {
			b[i] = float64(rng.IntN(20)) + 2
		}
		sort.Float64s(a)
		sort.Float64s(b)
		// The definition, evaluated after every distinct value.
		want := 0.0
		for _, x := range append(append([]float64(nil), a...), b...) {
			fa := float64(sort.SearchFloat64s(a, math.Nextafter(x, math.Inf(1)))) / float64(len(a))
			fb := float64(sort.SearchFloat64s(b, math.Nextafter(x, math.Inf(1)))) / float64(len(b))
			want = math.Max(want, math.Abs(fa-fb))
		}
		assert.InDelta(t, want, compare.KSDistance(a, b), 1e-12)
	}
	inf := math.Inf(1)
	assert.InDelta(t, 0.5, compare.KSDistance([]float64{-inf, 1}, []float64{1, inf}), 1e-15)
	assert.Zero(t, compare.KSDistance([]float64{inf, inf}, []float64{inf}))
	assert.True(t, math.IsNaN(compare.KSDistance([]float64{math.NaN(), 1}, []float64{1})))
}

// writeStarsimRun runs an 8x8-tile Cholesky on the default machine with
// normal durations, writing tasks.rec + data.rec into dir/rec and a
// Chrome trace to dir/trace.json.
func writeStarsimRun(t *testing.T, dir string, seed uint64) *sim.Result {
	t.Helper()
	g, err := models.New("cholesky", models.Options{N: 960 * 8, Block: 960, Prio: graph.UnboundedPrio})
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "rec"), 0o755))
	var tasks, data, chromeJSON bytes.Buffer
	rw := rec.NewWriter(&tasks, &data, traces.Header{Tool: "test", Seed: seed})
	require.NoError(t, rw.WriteData(g.Handles))
	ch := chrome.NewWriter(&chromeJSON, traces.Header{Tool: "test", Seed: seed})
	opts := sim.DefaultOptions()
	opts.Sched, opts.Seed, opts.Durations = "dmdas", seed, cost.Normal
	opts.Observer = traces.Multi(rw, ch)
	sim, err := sim.New(calibrate.Default().RuntimeMachine(), g, opts)
	require.NoError(t, err)
	res, err := sim.Run()
	require.NoError(t, err)
	require.NoError(t, rw.Close())
	require.NoError(t, ch.Close())
	require.NoError(t, os.WriteFile(filepath.Join(dir, "rec", "tasks.rec"), tasks.Bytes(), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "rec", "data.rec"), data.Bytes(), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "trace.json"), chromeJSON.Bytes(), 0o644))
	return res
}

// TestCompareChromeVsRec: the Chrome JSON and the tasks.rec of one run
// give the same tasks (both rounded to whole ns), so comparing them shows
// no difference in makespan, kernels, durations or busy times; the
// Chrome trace also lists the idle workers and the exact copies, of
// which data.rec's inference finds a subset.
func TestCompareChromeVsRec(t *testing.T) {
	dir := t.TempDir()
	res := writeStarsimRun(t, dir, 1)
	rec, err := formats.Load(filepath.Join(dir, "rec"))
	require.NoError(t, err)
	chrome, err := formats.Load(filepath.Join(dir, "trace.json"))
	require.NoError(t, err)
	assert.Equal(t, "chrome", chrome.Format)
	require.Len(t, rec.Tasks, res.NTasks)
	require.Len(t, chrome.Tasks, res.NTasks)
	for i := range rec.Tasks {
		a, b := rec.Tasks[i], chrome.Tasks[i]
		assert.Equal(t, *a.JobID, *b.JobID)
		assert.Equal(t, a.Name, b.Name)
		assert.Equal(t, *a.WorkerID, *b.WorkerID)
		assert.Equal(t, *a.MemoryNode, *b.MemoryNode)
		assert.Equal(t, *a.StartTime, *b.StartTime)
		assert.Equal(t, *a.EndTime, *b.EndTime)
		assert.Equal(t, *a.Footprint, *b.Footprint)
	}
	assert.InDelta(t, res.MakespanS*1e3, rec.Makespan(), 0.1)
	assert.Len(t, chrome.Workers, len(res.Workers), "Chrome names every worker")
	for _, w := range chrome.Workers {
		assert.Equal(t, res.Workers[w.ID].Name, w.Name)
	}

	r := compare.Compare(rec, chrome)
	assert.Zero(t, r.MakespanErrPct)
	assert.Positive(t, r.GFlopsA)
	assert.Zero(t, r.GFlopsB, "no GFlop in Chrome traces")
	types := map[string]bool{}
	for _, k := range r.Kernels {
		assert.Equal(t, k.CountA, k.CountB, "%s on %s", k.Kernel, k.WorkerType)
		assert.Equal(t, k.TotalMsA, k.TotalMsB)
		types[k.WorkerType] = true
	}
	assert.Equal(t, map[string]bool{traces.WorkerCPU: true, traces.WorkerCUDA: true}, types, "the default machine runs kernels on both")
	for _, d := range r.Distributions {
		assert.Zero(t, d.KS)
	}
	for _, w := range r.Workers {
		if w.NameA != "" {
			assert.Equal(t, w.BusyMsA, w.BusyMsB, "worker %d", w.ID)
		} else {
			assert.Zero(t, w.TasksB, "a worker missing from tasks.rec ran nothing")
			assert.Equal(t, 100.0, w.IdlePctB)
		}
	}
	// Transfers: exact in Chrome (every copy, idle fetches included),
	// inferred from data.rec (a lower bound, per direction).
	require.NotEmpty(t, r.Transfers)
	var inferred, exact int64
	for _, x := range r.Transfers {
		assert.LessOrEqual(t, x.BytesA, x.BytesB, "%s->%s", x.Src, x.Dst)
		inferred += x.BytesA
		exact += x.BytesB
	}
	assert.Positive(t, inferred)
	var copied int64
	for _, d := range res.Transfers {
		copied += int64(d.Bytes)
	}
	assert.Equal(t, copied, exact)
}

// TestReportOutputs: the JSON form uses snake_case keys (starsim compare
// prints the text form, tested with the command).
func TestReportOutputs(t *testing.T) {
	a := loadNative(t)
	r := compare.Compare(a, a)
	b, err := json.Marshal(r)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	for _, k := range []string{"a", "b", "makespan_a_ms", "makespan_b_ms", "makespan_err_pct", "gflops_a", "gflops_b", "gflops_err_pct", "kernels", "workers", "transfers", "distributions"} {
		assert.Contains(t, m, k)
	}
	k := m["kernels"].([]any)[0].(map[string]any)
	for _, key := range []string{"kernel", "worker_type", "count_a", "count_b", "total_a_ms", "mean_b_ms", "mean_err_pct"} {
		assert.Contains(t, k, key)
	}
	d := m["distributions"].([]any)[0].(map[string]any)
	assert.Contains(t, d, "ks")
	assert.Contains(t, d["a"], "p99_ms")
}

// TestKSDistanceNaN: samples holding NaN (which the readers refuse) give
// NaN at once instead of hanging the statistic.
func TestKSDistanceNaN(t *testing.T) {
	done := make(chan float64, 1)
	go func() { done <- compare.KSDistance([]float64{math.NaN(), 1}, []float64{math.NaN()}) }()
	select {
	case d := <-done:
		assert.True(t, math.IsNaN(d))
	case <-time.After(10 * time.Second):
		t.Fatal("KSDistance did not return")
	}
}
