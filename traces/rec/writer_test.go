package rec

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/starsim/starsim/runtime/graph"
	"github.com/starsim/starsim/runtime/machine"
	"github.com/starsim/starsim/runtime/sim"
	"github.com/starsim/starsim/traces"
	"github.com/starsim/starsim/traces/internal/tracetest"
)

// timesObs records every task's times (s) as the writer sees them.
type timesObs struct {
	*Writer
	tasks map[int]*sim.TaskState
}

func (o *timesObs) TaskDone(t *sim.TaskState) {
	o.Writer.TaskDone(t)
	o.tasks[t.ID()] = t
}

// closeRel: a and b agree to 1e-9 relative (exactly when one is 0).
func closeRel(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b))
}

// TestRecWriterRoundTrip runs a 8×8-tile Cholesky under dmdas on the
// default machine with the writer as observer, then reads both files back.
func TestRecWriterRoundTrip(t *testing.T) {
	g := tracetest.CholeskyGraph(t)
	var tasks, data bytes.Buffer
	w := NewWriter(&tasks, &data, traces.Header{Tool: "starsim", Version: "test", Command: "starsim run cholesky", Seed: 3})
	require.NoError(t, w.WriteData(g.Handles))
	obs := &timesObs{Writer: w, tasks: map[int]*sim.TaskState{}}
	res := tracetest.RunCholesky(t, g, obs)
	// End flushed everything: Close adds nothing.
	before := tasks.Len()
	require.NoError(t, w.Close())
	assert.Equal(t, before, tasks.Len())
	require.NoError(t, w.Close(), "Close twice")

	assert.True(t, strings.HasPrefix(tasks.String(), "# tasks.rec: StarPU starpu_fxt_tool format (recutils), times in ms\n"+
		"# Tool: starsim\n# Version: test\n# Command: starsim run cholesky\n# Seed: 3\n\n"), tasks.String()[:200])
	assert.True(t, strings.HasPrefix(data.String(), "# data.rec: "))

	drecs, err := ReadData(&data, "data.rec")
	require.NoError(t, err)
	require.Len(t, drecs, len(g.Handles))
	addr := map[string]*graph.Handle{}
	for i, d := range drecs {
		h := &g.Handles[i]
		addr[d.Handle] = h
		assert.Equal(t, h.Name, d.Name)
		assert.Equal(t, 0, *d.HomeNode)
		assert.Equal(t, h.SizeBytes, *d.Size)
		assert.Equal(t, "M960x960x4", d.Description)
		assert.Equal(t, "0", d.ParentHandle)
		require.Len(t, d.Coordinates, 2)
		assert.Equal(t, fmt.Sprintf("A[%d][%d]", d.Coordinates[0], d.Coordinates[1]), h.Name)
	}
	assert.Len(t, addr, len(g.Handles), "distinct handle addresses")

	all, err := ReadTasks(&tasks, "tasks.rec")
	require.NoError(t, err)
	recs, wontUse := splitControl(all)
	require.Len(t, recs, res.NTasks)
	nwu := 0
	for _, tk := range g.Tasks {
		nwu += len(tk.WontUse)
	}
	assert.Len(t, wontUse, nwu, "one WontUse record per starpu_data_wont_use")
	require.Len(t, obs.tasks, res.NTasks)
	byJob := map[int64]*traces.TaskRecord{}
	for i := range recs {
		r := &recs[i]
		require.NotNil(t, r.JobID)
		byJob[*r.JobID] = r
	}
	require.Len(t, byJob, res.NTasks)
	workers := map[int]*machine.Worker{}
	for _, ts := range obs.tasks {
		workers[ts.Worker().ID] = ts.Worker()
	}
	maxEnd := 0.0
	for id, ts := range obs.tasks {
		spec := &g.Tasks[id]
		r := byJob[int64(id)+1]
		require.NotNil(t, r, "task %d", id)
		assert.Equal(t, int64(id)+1, *r.SubmitOrder)
		assert.Equal(t, spec.Name, r.Name)
		assert.Equal(t, spec.Model, r.Model)
		assert.Equal(t, spec.Priority, *r.Priority)
		assert.Equal(t, spec.Footprint, *r.Footprint)
		assert.True(t, closeRel(spec.Flops/1e9, *r.GFlop))
		for _, c := range []struct {
			name string
			got  *float64
			s    float64
		}{{"SubmitTime", r.SubmitTime, ts.SubmitS()}, {"ReadyTime", r.ReadyTime, ts.ReadyS()},
			{"StartTime", r.StartTime, ts.StartS()}, {"EndTime", r.EndTime, ts.EndS()}} {
			require.NotNil(t, c.got, "task %d %s", id, c.name)
			assert.True(t, closeRel(c.s*1e3, *c.got), "task %d %s: %v ms, want %v", id, c.name, *c.got, c.s*1e3)
		}
		maxEnd = math.Max(maxEnd, *r.EndTime)
		assert.Equal(t, ts.Worker().ID, *r.WorkerID)
		assert.Equal(t, ts.Worker().Node, *r.MemoryNode)
		require.Len(t, r.Handles, len(spec.Buffers))
		for k, b := range spec.Buffers {
			assert.Same(t, &g.Handles[b.Handle], addr[r.Handles[k]])
			assert.Equal(t, b.Mode.String(), r.Modes[k])
			assert.Equal(t, g.Handles[b.Handle].SizeBytes, r.Sizes[k])
			assert.Equal(t, "M960x960x4", r.Parameters[k])
		}
		// Dependencies: exactly the runtime's, each ended before the start.
		require.Len(t, r.DependsOn, len(ts.Preds()))
		for k, d := range r.DependsOn {
			assert.Equal(t, int64(ts.Preds()[k])+1, d)
			p := byJob[d]
			require.NotNil(t, p, "task %d: dep %d", id, d)
			assert.LessOrEqual(t, *p.EndTime, *r.StartTime, "task %d: dep %d", id, d)
		}
		if id > 0 {
			assert.NotEmpty(t, r.DependsOn, "task %d", id)
		}
	}
	assert.True(t, closeRel(res.MakespanS*1e3, maxEnd), "makespan %v ms, last EndTime %v", res.MakespanS*1e3, maxEnd)
	assert.Greater(t, len(workers), 1)
	nodes := map[int]bool{}
	for _, wk := range workers {
		nodes[wk.Node] = true
	}
	assert.Greater(t, len(nodes), 1, "tasks ran on GPUs too (MemoryNode > 0)")
}

// tinyGraph is a hand-built graph: square float and double tiles, a
// non-square tile, a vector, an explicit dependency, a task without model.
func tinyGraph() (*machine.Machine, *graph.Graph) {
	m := &machine.Machine{
		CPUCores: 2, CPUArch: "cpu0",
		Routes: map[machine.Dir][]string{}, Predict: map[machine.Dir]machine.Prediction{},
		Costs: machine.Costs{TaskSubmitS: 1e-6, TaskPushS: 2e-6},
		Kernels: map[machine.KernelKey]machine.KernelStats{
			{Model: "tiny_init", Arch: "cpu0", Footprint: 0xabc}:      {MeanUS: 100},
			{Model: "tiny_scale", Arch: "cpu0", Footprint: 0x1234567}: {MeanUS: 250},
			{Model: "", Arch: "cpu0", Footprint: 1}:                   {MeanUS: 40},
		},
	}
	g := &graph.Graph{
		Name: "tiny",
		Handles: []graph.Handle{
			{ID: 0, Name: "A[0][0]", SizeBytes: 64, RowBytes: 16, Rows: 4, PitchBytes: 32},
			{ID: 1, Name: "A[1][0]", SizeBytes: 64, RowBytes: 16, Rows: 4, PitchBytes: 32},
			{ID: 2, Name: "D[12]", SizeBytes: 32, RowBytes: 16, Rows: 2, PitchBytes: 16},
			{ID: 3, Name: "panel", SizeBytes: 40, RowBytes: 10, Rows: 4, PitchBytes: 10},
			{ID: 4, Name: "v", SizeBytes: 8},
		},
		Tasks: []graph.Task{
			{ID: 0, Name: "INIT", Model: "tiny_init", Flops: 1e6, Footprint: 0xabc,
				Buffers: []graph.Access{{Handle: 0, Mode: graph.W}}},
			{ID: 1, Name: "SCALE", Model: "tiny_scale", Flops: 2.5e6, Priority: 3, Footprint: 0x1234567,
				Buffers: []graph.Access{{Handle: 0, Mode: graph.R}, {Handle: 1, Mode: graph.RW}}},
			{ID: 2, Name: "SUM", Flops: 123, Priority: -1, Footprint: 1, Deps: []int{0},
				Buffers: []graph.Access{{Handle: 2, Mode: graph.W}, {Handle: 3, Mode: graph.RW},
					{Handle: 4, Mode: graph.R}},
				WontUse: []int{4}},
			{ID: 3, Name: "SCALE", Model: "tiny_scale", Flops: 2.5e6, Footprint: 0x1234567,
				Buffers: []graph.Access{{Handle: 1, Mode: graph.R}, {Handle: 2, Mode: graph.RW}}},
		},
	}
	return m, g
}

// runTiny runs the tiny graph with w (WriteData(handles) first unless nil).
func runTiny(t *testing.T, w *Writer, handles []graph.Handle) {
	t.Helper()
	m, g := tinyGraph()
	if handles != nil {
		require.NoError(t, w.WriteData(handles))
	}
	opts := sim.DefaultOptions()
	opts.Check = true
	opts.Observer = w
	sim, err := sim.New(m, g, opts)
	require.NoError(t, err)
	_, err = sim.Run()
	require.NoError(t, err)
}

// TestRecWriterGolden compares both files for the tiny graph with
// testdata/rec-tiny-{tasks,data}.golden (go test -run Golden -update
// rewrites them), and reads them back.
func TestRecWriterGolden(t *testing.T) {
	var tasks, data bytes.Buffer
	w := NewWriter(&tasks, &data, traces.Header{Tool: "starsim", Version: "v0-test", Command: "starsim run\ntiny", Seed: 42})
	_, g := tinyGraph()
	runTiny(t, w, g.Handles)
	require.NoError(t, w.Close())

	for _, c := range []struct {
		file string
		got  []byte
	}{{"rec-tiny-tasks.golden", tasks.Bytes()}, {"rec-tiny-data.golden", data.Bytes()}} {
		path := filepath.Join("testdata", c.file)
		if *update {
			require.NoError(t, os.WriteFile(path, c.got, 0o644))
		}
		want, err := os.ReadFile(path)
		require.NoError(t, err, "run go test -run Golden -update to create it")
		assert.Equal(t, string(want), string(c.got), c.file)
	}

	all, err := ReadTasks(bytes.NewReader(tasks.Bytes()), "tasks.rec")
	require.NoError(t, err)
	recs, _ := splitControl(all)
	require.Len(t, recs, 4)
	sum := recs[0]
	for _, r := range recs {
		if r.Name == "SUM" {
			sum = r
		}
	}
	assert.Equal(t, "SUM", sum.Model, "Model defaults to the name")
	assert.Equal(t, -1, *sum.Priority)
	assert.Equal(t, []int64{1}, sum.DependsOn)
	assert.Equal(t, []string{"M2x2x8", "M10x4x1", "V8x1"}, sum.Parameters)
	assert.Equal(t, []string{"1200", "1300", "1400"}, sum.Handles)
	assert.Equal(t, []string{"W", "RW", "R"}, sum.Modes)
	assert.Equal(t, []int64{32, 40, 8}, sum.Sizes)
	assert.Equal(t, uint32(1), *sum.Footprint)
	assert.Equal(t, 1.23e-7, *sum.GFlop)

	drecs, err := ReadData(bytes.NewReader(data.Bytes()), "data.rec")
	require.NoError(t, err)
	require.Len(t, drecs, 5)
	assert.Equal(t, []int{1, 0}, drecs[1].Coordinates)
	assert.Equal(t, []int{12}, drecs[2].Coordinates)
	assert.Nil(t, drecs[3].Coordinates)
	assert.Equal(t, "1400", drecs[4].Handle)
}

// TestRecWriterStreams: each TaskDone reaches the buffer as a whole record
// by End at the latest, and tasks.rec holds one record per TaskDone.
func TestRecWriterStreams(t *testing.T) {
	var tasks bytes.Buffer
	w := NewWriter(&tasks, nil, traces.Header{})
	_, g := tinyGraph()
	runTiny(t, w, g.Handles) // data == nil: WriteData only keeps handles
	assert.Equal(t, 4, strings.Count(tasks.String(), "\nJobId: "))
	assert.True(t, strings.HasPrefix(tasks.String(), "# tasks.rec: StarPU starpu_fxt_tool format (recutils), times in ms\n# Seed: 0\n\nName: "))
	require.NoError(t, w.Close())

	// Without tasks: only data.rec.
	var data bytes.Buffer
	w = NewWriter(nil, &data, traces.Header{})
	runTiny(t, w, g.Handles)
	require.NoError(t, w.Close())
	assert.Equal(t, 5, strings.Count(data.String(), "\nHandle: "))
}

// TestRecWriterErrors: misuse and write failures come out of Close.
func TestRecWriterErrors(t *testing.T) {
	_, g := tinyGraph()

	w := NewWriter(&bytes.Buffer{}, nil, traces.Header{})
	runTiny(t, w, nil)
	assert.ErrorContains(t, w.Close(), "task 0 done before WriteData")

	w = NewWriter(&bytes.Buffer{}, nil, traces.Header{})
	runTiny(t, w, g.Handles[:1])
	assert.ErrorContains(t, w.Close(), "not among the 1 given to WriteData")

	w = NewWriter(nil, nil, traces.Header{})
	require.NoError(t, w.WriteData(g.Handles))
	assert.ErrorContains(t, w.WriteData(g.Handles), "WriteData called twice")
	assert.Error(t, w.Close())

	fail := errors.New("disk full")
	w = NewWriter(failWriter{fail}, &bytes.Buffer{}, traces.Header{})
	runTiny(t, w, g.Handles)
	err := w.Close()
	assert.ErrorIs(t, err, fail)
}

type failWriter struct{ err error }

func (f failWriter) Write([]byte) (int, error) { return 0, f.err }

// TestRecWriterContinuation: a value with newlines is written as recutils
// continuation lines and read back whole.
func TestRecWriterContinuation(t *testing.T) {
	var data bytes.Buffer
	w := NewWriter(nil, &data, traces.Header{})
	require.NoError(t, w.WriteData([]graph.Handle{{ID: 7, Name: "two\nlines", SizeBytes: 4, RowBytes: 2, Rows: 1}}))
	require.NoError(t, w.Close())
	assert.Contains(t, data.String(), "Name: two\n+ lines\n")
	d, err := ReadData(&data, "d.rec")
	require.NoError(t, err)
	require.Len(t, d, 1)
	assert.Equal(t, "two\nlines", d[0].Name)
	assert.Equal(t, "1700", d[0].Handle)
	assert.Equal(t, "M1x1x2", d[0].Description)
}

func TestCoordinates(t *testing.T) {
	for name, want := range map[string]string{
		"A[3][1]": "3 1", "B[0]": "0", "x[1][2][3]": "1 2 3",
		"A": "", "[1][2]": "", "A[]": "", "A[x][1]": "", "A[1]x": "", "A1]": "", "": "",
	} {
		got, ok := coordinates(name)
		assert.Equal(t, want != "", ok, name)
		assert.Equal(t, want, got, name)
	}
}

// splitControl separates task records from control (WontUse) records.
func splitControl(all []traces.TaskRecord) (tasks, control []traces.TaskRecord) {
	for _, r := range all {
		if r.Control != "" {
			control = append(control, r)
		} else {
			tasks = append(tasks, r)
		}
	}
	return tasks, control
}
