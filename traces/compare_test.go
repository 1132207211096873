package traces

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/starsim/starsim/calibrate"
	"github.com/starsim/starsim/models"
	"github.com/starsim/starsim/runtime/cost"
	"github.com/starsim/starsim/runtime/graph"
	"github.com/starsim/starsim/runtime/sim"
)

// loadNative loads the native StarPU trace, skipping the test without it.
func loadNative(t *testing.T) *Trace {
	t.Helper()
	if _, err := os.Stat(filepath.Join(nativeTrace, "tasks.rec")); err != nil {
		t.Skipf("native trace not available: %v", err)
	}
	tr, err := LoadTrace(nativeTrace)
	require.NoError(t, err)
	return tr
}

// TestCompareNativeSelf: the native trace compared with itself gives
// exactly zero differences, and its makespan is the README's 706.3 ms.
func TestCompareNativeSelf(t *testing.T) {
	a := loadNative(t)
	assert.Equal(t, "tasks.rec", a.Format)
	assert.Len(t, a.Tasks, 120)
	assert.Equal(t, []WorkerInfo{{ID: 0, Name: "CPU", Type: WorkerCPU}, {ID: 1, Name: "CPU", Type: WorkerCPU, Node: 0}}, a.Workers)
	assert.InDelta(t, 706.3, a.Makespan(), 0.1)
	assert.Equal(t, "data.rec", a.TransferSource, "data.rec sits beside tasks.rec")
	assert.Empty(t, a.Transfers, "a CPU-only run copies nothing")

	// The file path and the directory give the same trace.
	f, err := LoadTrace(filepath.Join(nativeTrace, "tasks.rec"))
	require.NoError(t, err)
	assert.Equal(t, a.Tasks, f.Tasks)

	r := Compare(a, a)
	assert.Equal(t, r.MakespanA, r.MakespanB)
	assert.Zero(t, r.MakespanErrPct)
	assert.InDelta(t, 213.9, r.GFlopsA, 0.1, "StarPU printed 212.7 GFlop/s over its own 710 ms")
	assert.Zero(t, r.GFlopsErrPct)
	counts := map[string]int{}
	for _, k := range r.Kernels {
		assert.Equal(t, WorkerCPU, k.WorkerType)
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
		assert.InDelta(t, c.want, KSDistance(c.a, c.b), 1e-15, "%v vs %v", c.a, c.b)
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
		assert.InDelta(t, want, KSDistance(a, b), 1e-12)
	}
	inf := math.Inf(1)
	assert.InDelta(t, 0.5, KSDistance([]float64{-inf, 1}, []float64{1, inf}), 1e-15)
	assert.Zero(t, KSDistance([]float64{inf, inf}, []float64{inf}))
	assert.True(t, math.IsNaN(KSDistance([]float64{math.NaN(), 1}, []float64{1})))
}

// writeStarsimRun runs an 8x8-tile Cholesky on the default machine with
// normal durations, writing tasks.rec + data.rec into dir/rec and a
// Chrome trace to dir/trace.json.
func writeStarsimRun(t *testing.T, dir string, seed uint64) *sim.Result {
	t.Helper()
	g, err := models.New("cholesky", models.Options{N: 960 * 8, Block: 960, Prio: graph.UnboundedPrio})
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "rec"), 0o755))
	var tasks, data, chrome bytes.Buffer
	rw := NewRecWriter(&tasks, &data, Header{Tool: "test", Seed: seed})
	require.NoError(t, rw.WriteData(g.Handles))
	ch := NewChrome(&chrome, Header{Tool: "test", Seed: seed})
	opts := sim.DefaultOptions()
	opts.Sched, opts.Seed, opts.Durations = "dmdas", seed, cost.Normal
	opts.Observer = Multi(rw, ch)
	sim, err := sim.New(calibrate.Default().RuntimeMachine(), g, opts)
	require.NoError(t, err)
	res, err := sim.Run()
	require.NoError(t, err)
	require.NoError(t, rw.Close())
	require.NoError(t, ch.Close())
	require.NoError(t, os.WriteFile(filepath.Join(dir, "rec", "tasks.rec"), tasks.Bytes(), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "rec", "data.rec"), data.Bytes(), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "trace.json"), chrome.Bytes(), 0o644))
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
	rec, err := LoadTrace(filepath.Join(dir, "rec"))
	require.NoError(t, err)
	chrome, err := LoadTrace(filepath.Join(dir, "trace.json"))
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

	r := Compare(rec, chrome)
	assert.Zero(t, r.MakespanErrPct)
	assert.Positive(t, r.GFlopsA)
	assert.Zero(t, r.GFlopsB, "no GFlop in Chrome traces")
	types := map[string]bool{}
	for _, k := range r.Kernels {
		assert.Equal(t, k.CountA, k.CountB, "%s on %s", k.Kernel, k.WorkerType)
		assert.Equal(t, k.TotalMsA, k.TotalMsB)
		types[k.WorkerType] = true
	}
	assert.Equal(t, map[string]bool{WorkerCPU: true, WorkerCUDA: true}, types, "the default machine runs kernels on both")
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

// TestInferTransfers: tasks on two devices; reads copy from RAM first,
// then from the writer's node; a write invalidates the other copies.
func TestInferTransfers(t *testing.T) {
	dir := t.TempDir()
	tasks := `Name: A
WorkerId: 1
MemoryNode: 1
StartTime: 0
EndTime: 1
Handles: 10 20
Modes: R RW
Sizes: 100 200

Name: B
WorkerId: 2
MemoryNode: 2
StartTime: 2
EndTime: 3
Handles: 10 20
Modes: R R
Sizes: 100 200

Name: C
WorkerId: 0
MemoryNode: 0
StartTime: 4
EndTime: 5
Handles: 20 30
Modes: R W
Sizes: 200 300

Name: D
WorkerId: 1
MemoryNode: 1
StartTime: 6
EndTime: 7
Handles: 30
Modes: R
Sizes: 300
`
	data := "Handle: 10\nHomeNode: 0\n\nHandle: 20\nHomeNode: 0\n\nHandle: 30\nHomeNode: 1\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tasks.rec"), []byte(tasks), 0o644))
	tr, err := LoadTrace(filepath.Join(dir, "tasks.rec"))
	require.NoError(t, err)
	assert.Empty(t, tr.TransferSource, "no data.rec: transfers unknown")
	assert.Empty(t, tr.Transfers)
	assert.Equal(t, []WorkerInfo{{0, "CPU", WorkerCPU, 0}, {1, "CUDA0", WorkerCUDA, 1}, {2, "CUDA1", WorkerCUDA, 2}}, tr.Workers)

	require.NoError(t, os.WriteFile(filepath.Join(dir, "data.rec"), []byte(data), 0o644))
	tr, err = LoadTrace(dir)
	require.NoError(t, err)
	assert.Equal(t, "data.rec", tr.TransferSource)
	assert.Equal(t, []Transfer{
		{Src: "RAM", Dst: "CUDA0", Count: 3, Bytes: 600},   // A reads 10, 20; D reads 30, written in RAM by C
		{Src: "RAM", Dst: "CUDA1", Count: 1, Bytes: 100},   // B reads 10 from RAM
		{Src: "CUDA0", Dst: "RAM", Count: 1, Bytes: 200},   // C reads 20, written by A
		{Src: "CUDA0", Dst: "CUDA1", Count: 1, Bytes: 200}, // B reads 20: only CUDA0 holds it
	}, tr.Transfers)
	r := Compare(tr, tr)
	require.Len(t, r.Transfers, 4)
	assert.Equal(t, TransferRow{Src: "RAM", Dst: "CUDA0", CountA: 3, CountB: 3, BytesA: 600, BytesB: 600}, r.Transfers[0])
}

// TestLoadTraceErrors: bad input is located, FILE:LINE where there is a
// line.
func TestLoadTraceErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
		return p
	}
	truncatedRec := "# header\n\nName: GEMM\nWorkerId: 0\nMemoryNode: 0\nStartTime: 1.5\nEndTime: 2\n\nName: GEMM\nJobId: 7\nWorkerId: 1\nMemoryNode: 0\nStartTime: 3\n"
	chromeNoDur := "{\"traceEvents\":[\n{\"ph\":\"M\",\"pid\":1,\"tid\":1,\"name\":\"thread_name\",\"args\":{\"name\":\"CPU0\"}},\n{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":1,\"name\":\"GEMM\",\"cat\":\"kernel\"}\n]}\n"
	cases := []struct {
		name, path, want string
	}{
		{"not a trace", write("notes.txt", "hello world\n"), "notes.txt:1: expected \"Field: value\""},
		{"binary", write("img.png", "\x89PNG\r\n\x1a\n\x00\x00"), "img.png:1:"},
		{"truncated record", write("cut.rec", truncatedRec), "cut.rec:9: task GEMM (job 7) has a WorkerId but no StartTime or EndTime"},
		{"truncated line", write("cut2.rec", "Name: GEMM\nWorkerId: 0\nStartTime: 1\nEndT"), "cut2.rec:4: expected \"Field: value\""},
		{"bad number", write("bad.rec", "Name: GEMM\nWorkerId: x\n"), "bad.rec:2: WorkerId"},
		{"no executed task", write("data.rec.txt", "Handle: 1000\nHomeNode: 0\nSize: 64\n"), "data.rec.txt: no executed task"},
		{"two nodes", write("nodes.rec", "WorkerId: 0\nMemoryNode: 0\nStartTime: 0\nEndTime: 1\n\nWorkerId: 0\nMemoryNode: 1\nStartTime: 1\nEndTime: 2\n"),
			"nodes.rec:6: worker 0 on memory node 1, but on node 0 in the record of line 1"},
		{"JSON not a trace", write("calib.json", "{\n  \"version\": 1\n}\n"), "calib.json:1: JSON object without \"traceEvents\""},
		{"truncated JSON", write("cut.json", "{\"traceEvents\":[\n{\"ph\":\"M\",\"pid\":1},\n{\"ph\":\"X\",\"pid\""), "cut.json:3: invalid JSON"},
		{"kernel without dur", write("nodur.json", chromeNoDur), "nodur.json:3: kernel event \"GEMM\" without"},
		{"no kernels", write("empty.json", "{\"traceEvents\":[]}"), "empty.json: no kernel event"},
		{"empty dir", t.TempDir(), "holds no tasks.rec"},
		{"missing", filepath.Join(dir, "nope"), "nope"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := LoadTrace(c.path)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
	// The native trace cut inside its last executed record.
	native, err := os.ReadFile(filepath.Join(nativeTrace, "tasks.rec"))
	if err != nil {
		t.Skipf("native trace not available: %v", err)
	}
	cut := bytes.LastIndex(native, []byte("\nStartTime: "))
	require.Positive(t, cut)
	p := write("tasks.rec", string(native[:cut+1]))
	recStart := bytes.LastIndex(native[:cut], []byte("\n\n")) + 2
	line := bytes.Count(native[:recStart], []byte("\n")) + 1
	_, err = LoadTrace(p)
	require.Error(t, err)
	assert.Contains(t, err.Error(), filepath.Base(p)+":"+strconv.Itoa(line)+": task ")
}

// TestReportOutputs: WriteText prints every table; the JSON form uses
// snake_case keys.
func TestReportOutputs(t *testing.T) {
	a := loadNative(t)
	r := Compare(a, a)
	var text bytes.Buffer
	require.NoError(t, r.WriteText(&text))
	for _, want := range []string{"makespan (ms)  706.276  706.276  +0.00", "KERNEL", "WORKER", "DURATIONS ms", "GEMM", "no copies", "KS"} {
		assert.Contains(t, text.String(), want)
	}
	for _, line := range strings.Split(text.String(), "\n") {
		assert.Equal(t, strings.TrimRight(line, " "), line, "no trailing blanks")
	}
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
