package traces

import (
	"bytes"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/starsim/starsim/internal/timeline"
)

// TestReadPajeStarPUQuirks reads a small trace written by hand in the
// format starpu_fxt_tool writes: "%EventDef PajeSetState 10" with spaces,
// "" fields, quoted names with blanks, a '#' comment after an event, a
// kernel given by an extended SetState alone (20) or twice (10, then 20),
// a state pushed and popped during a kernel, a variable out of time order,
// PajeAddVariable's other field order, a link with StarPU's extra fields.
func TestReadPajeStarPUQuirks(t *testing.T) {
	tr, err := LoadTrace(filepath.Join("testdata", "starpu-quirks.paje"))
	require.NoError(t, err)
	assert.Equal(t, "paje", tr.Format)
	assert.Equal(t, []WorkerInfo{{ID: 0, Name: "CUDA0_0", Type: WorkerCUDA, Node: 1}, {ID: 1, Name: "CPU0", Type: WorkerCPU, Node: 0}}, tr.Workers)
	require.Len(t, tr.Tasks, 2)
	potrf, gemm := tr.Tasks[0], tr.Tasks[1]
	assert.Equal(t, "POTRF", potrf.Name)
	assert.Equal(t, 2.5, *potrf.StartTime)
	assert.Equal(t, 9.0, *potrf.EndTime, "ends at the worker's next state")
	assert.Equal(t, int64(6), *potrf.JobID)
	assert.Equal(t, uint32(0x617e5fe6), *potrf.Footprint)
	assert.Equal(t, []int64{3686400}, potrf.Sizes)
	assert.Equal(t, 1, *potrf.MemoryNode)

	assert.Equal(t, "GEMM", gemm.Name)
	assert.Equal(t, 3.0, *gemm.StartTime)
	assert.Equal(t, 6.0, *gemm.EndTime, "a pushed and popped state does not end the kernel")
	assert.Equal(t, int64(7), *gemm.JobID, "fields of the extended record that repeats the state")
	assert.Equal(t, int64(5), *gemm.SubmitOrder)
	assert.Equal(t, 2, *gemm.Priority)
	assert.Equal(t, 1.769472, *gemm.GFlop)
	assert.Equal(t, 1, *gemm.WorkerID)

	assert.Equal(t, []Transfer{{Src: "RAM", Dst: "CUDA0", Count: 1, Bytes: 3686400}}, tr.Transfers)
	assert.InDelta(t, 6.5, tr.Makespan(), 1e-12)
	g, ok := tr.GFlop()
	assert.True(t, ok)
	assert.InDelta(t, 0.295372+1.769472, g, 1e-12)

	// The panel: ready tasks sorted by time (0, 1, 2, then +1), GPU memory
	// in bytes, the copy in flight from 1.5 to 2.4 ms.
	levels := map[string]levelSeries{}
	for _, l := range tr.panel.levels {
		levels[l.group+" "+l.name] = l
	}
	assert.Equal(t, []float64{0, 1, 2, 2.5}, levels["ready ready tasks"].t)
	assert.Equal(t, []float64{0, 1, 2, 3}, levels["ready ready tasks"].v)
	assert.Equal(t, []float64{0, 32 << 20}, levels["memory CUDA0"].v)
	assert.Equal(t, []float64{0, 1.5, 2.4}, levels["inflight RAM->CUDA0"].t)
	assert.Equal(t, []float64{0, 3686400, 0}, levels["inflight RAM->CUDA0"].v)
	spans := map[string]float64{}
	for _, s := range tr.panel.spans {
		spans[WorkerInfo{ID: s.worker}.Label()[1:]+" "+s.state] += s.e - s.s
	}
	assert.Equal(t, map[string]float64{
		"(w1) " + timeline.StateIdle:    1 + 4, // 1-2, then 6-10 (destroyed)
		"(w1) " + timeline.StateFetch:   1,
		"(w1) " + timeline.StateRuntime: 0.5, // Scheduling, pushed
		"(w0) " + timeline.StateRuntime: 0.5, // PushingOutput
		"(w0) " + timeline.StateIdle:    0.5, // to the last event of the trace
	}, spans)

	tl, absent := tr.Timeline()
	assert.Empty(t, absent)
	assert.Len(t, tl.Rows(), 2)
}

// TestReadPajeErrors: malformed traces fail with FILE:LINE and what was
// expected.
func TestReadPajeErrors(t *testing.T) {
	head := "%EventDef PajeDefineContainerType 1\n% Alias string\n% Type string\n% Name string\n%EndEventDef\n" +
		"%EventDef PajeCreateContainer 7\n% Time date\n% Alias string\n% Type string\n% Container string\n% Name string\n%EndEventDef\n"
	cases := []struct{ name, body, want string }{
		{"undefined event", "42 1 2\n", ":13: event id \"42\" is not defined by a %EventDef"},
		{"field count", "1 W T\n", ":13: event 1 (PajeDefineContainerType) wants 3 fields (Alias Type Name), got 2"},
		{"unterminated quote", "1 W T \"Worker\n", ":13: unterminated quoted value"},
		{"bad time", "1 W 0 Worker\n7 NaN w0 W 0 CPU0\n", ":14: time \"NaN\" is not a number of ms from 0 to 1e+12"},
		{"time beyond", "1 W 0 Worker\n7 1e306 w0 W 0 CPU0\n", ":14: time \"1e306\" is not a number of ms from 0 to 1e+12"},
		{"negative time", "1 W 0 Worker\n7 -1 w0 W 0 CPU0\n", ":14: time \"-1\""},
		{"unknown type", "7 0 w0 W 0 CPU0\n", ":13: unknown type \"W\""},
		{"unknown parent", "1 W 0 Worker\n7 0 w0 W t9 CPU0\n", ":14: unknown container \"t9\""},
		{"no end of definition", "%EventDef PajeNewEvent 9\n% Time date\n", ":14: the definition of event 9 has no %EndEventDef"},
		{"no kernel", "1 W 0 Worker\n7 0 w0 W 0 CPU0\n", ": no kernel on any worker"},
		{"duplicate worker", "1 W 0 Worker\n7 0 w0 W 0 CPU0\n7 0 w0 W 0 CPU1\n", ":15: worker 0 (CPU1) created twice"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "bad.trace")
			require.NoError(t, os.WriteFile(p, []byte(head+c.body), 0o644))
			_, err := LoadTrace(p)
			require.Error(t, err)
			assert.Contains(t, err.Error(), p+c.want)
		})
	}
}

// TestReadPajeOwn: starsim's own Paje trace of a run gives the tasks,
// workers and transfers its Chrome trace gives.
func TestReadPajeOwn(t *testing.T) {
	var paje, chrome bytes.Buffer
	p, c := NewPaje(&paje, traceHeader), NewChrome(&chrome, traceHeader)
	traceCholesky(t, Multi(p, c))
	require.NoError(t, p.Close())
	require.NoError(t, c.Close())
	dir := t.TempDir()
	pp, cp := filepath.Join(dir, "run.paje"), filepath.Join(dir, "run.json")
	require.NoError(t, os.WriteFile(pp, paje.Bytes(), 0o644))
	require.NoError(t, os.WriteFile(cp, chrome.Bytes(), 0o644))
	a, err := LoadTrace(pp)
	require.NoError(t, err)
	b, err := LoadTrace(cp)
	require.NoError(t, err)
	require.Equal(t, len(b.Tasks), len(a.Tasks))
	for i := range a.Tasks {
		x, y := a.Tasks[i], b.Tasks[i]
		assert.Equal(t, y.Name, x.Name)
		assert.Equal(t, *y.WorkerID, *x.WorkerID)
		assert.Equal(t, *y.StartTime, *x.StartTime)
		assert.Equal(t, *y.EndTime, *x.EndTime)
		assert.Equal(t, *y.JobID, *x.JobID)
		assert.Equal(t, *y.Footprint, *x.Footprint)
	}
	assert.Equal(t, b.Transfers, a.Transfers)
	assert.Equal(t, b.Workers, a.Workers)
	r := Compare(a, b)
	assert.Zero(t, r.MakespanErrPct)
}

// TestReadPajeNative reads StarPU's own paje.trace of the native run
// (../shared): the tasks of its tasks.rec, to the ns.
func TestReadPajeNative(t *testing.T) {
	path := filepath.Join(nativeTrace, "paje.trace")
	if _, err := os.Stat(path); err != nil {
		t.Skipf("native trace not available: %v", err)
	}
	p, err := LoadTrace(path)
	require.NoError(t, err)
	r := loadNative(t)
	assertSameTasks(t, r, p)
	assert.Empty(t, p.Transfers, "a CPU-only run copies nothing")
}

// assertSameTasks: a trace's tasks.rec and paje.trace give the same tasks.
func assertSameTasks(t *testing.T, rec, paje *Trace) {
	t.Helper()
	require.Equal(t, len(rec.Tasks), len(paje.Tasks))
	for i := range rec.Tasks {
		x, y := rec.Tasks[i], paje.Tasks[i]
		assert.Equal(t, x.Name, y.Name)
		assert.Equal(t, *x.JobID, *y.JobID)
		assert.Equal(t, *x.WorkerID, *y.WorkerID)
		assert.Equal(t, *x.StartTime, *y.StartTime, "job %d", *x.JobID)
		assert.Equal(t, *x.EndTime, *y.EndTime, "job %d", *x.JobID)
		assert.Equal(t, *x.GFlop, *y.GFlop)
		assert.Equal(t, *x.Footprint, *y.Footprint)
	}
	assert.Equal(t, rec.Makespan(), paje.Makespan())
}

// peerScript runs StarPU over SimGrid (../shared/peer, built in
// /tmp/starpu-peer by its build-peer.sh) when it is there.
const peerScript = "../../shared/peer/run-peer.sh"

// TestReadPajePeer traces attila's GPU-only Cholesky with StarPU over
// SimGrid, when the peer is built: its paje.trace gives the tasks of its
// tasks.rec, and the copies of its links.
func TestReadPajePeer(t *testing.T) {
	if _, err := os.Stat("/tmp/starpu-peer/lib/starpu/examples/cholesky_implicit"); err != nil {
		t.Skip("StarPU over SimGrid not built in /tmp/starpu-peer")
	}
	if _, err := os.Stat(peerScript); err != nil {
		t.Skip("no ../shared/peer")
	}
	dir := t.TempDir()
	out, err := exec.Command("bash", peerScript, "--starpu", "../../shared/calibrations/starpu-sampling", "--host", "attila",
		"--app", "cholesky", "--n", "9600", "--ncpu", "0", "--sched", "dmda", "--trace", dir).CombinedOutput()
	require.NoError(t, err, string(out))
	require.True(t, strings.HasPrefix(string(out), "attila\tcholesky\tdmda\t0\t3\t9600"), string(out))
	p, err := LoadTrace(filepath.Join(dir, "paje.trace"))
	require.NoError(t, err)
	r, err := LoadTrace(filepath.Join(dir, "tasks.rec"))
	require.NoError(t, err)
	assertSameTasks(t, r, p)
	assert.Len(t, p.Workers, 3)
	for _, w := range p.Workers {
		assert.Equal(t, WorkerCUDA, w.Type)
	}
	var copies int
	for _, x := range p.Transfers {
		copies += x.Count
	}
	assert.Positive(t, copies)
	tl, _ := p.Timeline()
	groups := map[string]int{}
	for _, s := range tl.Series() {
		groups[s.Group]++
	}
	assert.Equal(t, 1, groups[timeline.GroupReady])
	assert.Equal(t, 3, groups[timeline.GroupMemory])
	assert.Positive(t, groups[timeline.GroupInFlight])
}

// StarPU's paje.trace prints priorities as unsigned 64-bit integers: a
// negative one (dmdas' Cholesky at N = 9600 has SYRK and GEMM priorities
// down to -2) comes as its two's complement.
func TestPajePriority(t *testing.T) {
	for s, want := range map[string]int{"0": 0, "19": 19, "-3": -3, "18446744073709551614": -2, "18446744071562067968": math.MinInt32} {
		got, err := pajePriority(s)
		require.NoError(t, err, s)
		assert.Equal(t, want, got, s)
	}
	for _, s := range []string{"", "x", "2147483648", "9223372036854775808", "18446744071562067967", "18446744073709551616"} {
		_, err := pajePriority(s)
		assert.Error(t, err, s)
	}
}
