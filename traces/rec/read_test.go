package rec

import (
	"math"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/starsim/starsim/traces"
	"github.com/starsim/starsim/traces/internal/tracetest"
)

// TestReadTasksRecNative reads StarPU's own tasks.rec: 120 executed tasks
// (8 POTRF, 28 TRSM, 28 SYRK, 56 GEMM), 36 WontUse control records and 90
// StarPU-internal records without times; every field of the file is a
// known one; the makespan is the README's 706.3 ms.
func TestReadTasksRecNative(t *testing.T) {
	recs, err := ReadTasks(tracetest.OpenNative(t, "tasks.rec"), "tasks.rec")
	require.NoError(t, err)
	require.Len(t, recs, 246)

	byJob := map[int64]*traces.TaskRecord{}
	for i := range recs {
		r := &recs[i]
		require.NotNil(t, r.JobID, "line %d", r.Line)
		require.NotContains(t, byJob, *r.JobID, "line %d", r.Line)
		byJob[*r.JobID] = r
		assert.Nil(t, r.Extra, "line %d: every field is known", r.Line)
		require.NotNil(t, r.MPIRank)
		assert.Equal(t, -1, *r.MPIRank)
	}

	kinds := map[string]int{}
	var control, internal int
	first, last := math.Inf(1), math.Inf(-1)
	nbuf := map[string]int{"POTRF": 1, "TRSM": 2, "SYRK": 2, "GEMM": 3}
	for i := range recs {
		r := &recs[i]
		switch {
		case r.Control != "":
			control++
			assert.Equal(t, "WontUse", r.Control)
			assert.NotNil(t, r.SubmitOrder)
			assert.NotNil(t, r.SubmitTime)
			assert.Len(t, r.Handles, 1)
			assert.Nil(t, r.StartTime)
			assert.Nil(t, r.WorkerID)
		case r.StartTime != nil:
			kinds[r.Name]++
			require.NotNil(t, r.EndTime)
			first, last = math.Min(first, *r.StartTime), math.Max(last, *r.EndTime)
			n := nbuf[r.Name]
			require.NotZero(t, n, "line %d: %s", r.Line, r.Name)
			assert.Equal(t, "chol_model_"+strings.ToLower(r.Name), r.Model)
			assert.Equal(t, "cholesky/cholesky_implicit.c", r.File)
			require.NotNil(t, r.SrcLine)
			for _, p := range []any{r.SubmitOrder, r.Priority, r.WorkerID, r.MemoryNode, r.SubmitTime,
				r.ReadyTime, r.Footprint, r.GFlop, r.Iteration} {
				assert.NotNil(t, p, "line %d", r.Line)
			}
			assert.Equal(t, 0, *r.MemoryNode)
			assert.Contains(t, []int{0, 1}, *r.WorkerID)
			assert.LessOrEqual(t, *r.SubmitTime, *r.ReadyTime)
			assert.LessOrEqual(t, *r.ReadyTime, *r.StartTime)
			assert.Len(t, r.Handles, n)
			assert.Len(t, r.Modes, n)
			assert.Len(t, r.Sizes, n)
			assert.Len(t, r.NumaNodes, n)
			// StarPU leaves the first describe() empty.
			require.Len(t, r.Parameters, n)
			assert.Equal(t, "", r.Parameters[0])
			for _, p := range r.Parameters[1:] {
				assert.Equal(t, "M960x960x4", p)
			}
			for _, s := range r.Sizes {
				assert.Equal(t, int64(960*960*4), s)
			}
			assert.Equal(t, "RW", r.Modes[n-1])
			// Dependencies: known jobs, one label each; executed
			// predecessors ended before this task started.
			assert.Len(t, r.DepLabels, len(r.DependsOn))
			for _, d := range r.DependsOn {
				p := byJob[d]
				require.NotNil(t, p, "line %d: DependsOn %d", r.Line, d)
				if p.EndTime != nil {
					assert.LessOrEqual(t, *p.EndTime, *r.StartTime, "line %d: dep %d", r.Line, d)
				}
			}
		default:
			internal++
			assert.Nil(t, r.WorkerID)
			assert.Nil(t, r.EndTime)
			assert.Nil(t, r.Handles)
		}
	}
	assert.Equal(t, map[string]int{"POTRF": 8, "TRSM": 28, "SYRK": 28, "GEMM": 56}, kinds)
	assert.Equal(t, 36, control)
	assert.Equal(t, 90, internal)
	assert.InDelta(t, 706.3, last-first, 0.1, "makespan (ms)")

	// The first POTRF, field by field.
	r := byJob[19]
	require.NotNil(t, r)
	assert.Equal(t, 397, r.Line)
	assert.Equal(t, "POTRF", r.Name)
	assert.Equal(t, 250, *r.SrcLine)
	assert.Equal(t, int64(1), *r.SubmitOrder)
	assert.Equal(t, 0, *r.Priority)
	assert.Nil(t, r.DependsOn)
	assert.Equal(t, "1000000000000000", r.Tag)
	assert.Equal(t, 0, *r.WorkerID)
	assert.Equal(t, 231.353185, *r.SubmitTime)
	assert.Equal(t, 231.356820, *r.ReadyTime)
	assert.Equal(t, 234.886312, *r.StartTime)
	assert.Equal(t, 246.568897, *r.EndTime)
	assert.Equal(t, uint32(0x617e5fe6), *r.Footprint)
	assert.Equal(t, 0.295372, *r.GFlop)
	assert.Equal(t, 0, *r.Iteration)
	assert.Nil(t, r.Subiteration)
	assert.Equal(t, []string{""}, r.Parameters)
	assert.Equal(t, []string{"55c470657ae0"}, r.Handles)
	assert.Equal(t, []string{"RW"}, r.Modes)
	assert.Equal(t, []int64{3686400}, r.Sizes)
	assert.Equal(t, []int{-1}, r.NumaNodes)

	// A GEMM's lists and a WontUse record.
	g := byJob[20]
	assert.Equal(t, []int64{19}, g.DependsOn)
	assert.Equal(t, []string{"task"}, g.DepLabels)
	assert.Equal(t, []string{"", "M960x960x4"}, g.Parameters)
	w := byJob[27]
	assert.Equal(t, 1, w.Line)
	assert.Equal(t, "WontUse", w.Control)
	assert.Equal(t, int64(9), *w.SubmitOrder)
	assert.Equal(t, 234.376331, *w.SubmitTime)
	assert.Equal(t, []string{"55c470657ae0"}, w.Handles)
}

// TestReadDataRecNative reads StarPU's data.rec: the matrix, its 8 column
// slices and 64 tiles, which every handle of tasks.rec names.
func TestReadDataRecNative(t *testing.T) {
	data, err := ReadData(tracetest.OpenNative(t, "data.rec"), "data.rec")
	require.NoError(t, err)
	require.Len(t, data, 73)
	tasks, err := ReadTasks(tracetest.OpenNative(t, "tasks.rec"), "tasks.rec")
	require.NoError(t, err)

	root := data[0]
	assert.Equal(t, 1, root.Line)
	assert.Equal(t, "55c4706533d0", root.Handle)
	assert.Equal(t, 0, *root.HomeNode)
	assert.Equal(t, "A", root.Name)
	assert.Equal(t, int64(7680*7680*4), *root.Size)
	assert.Equal(t, "M7680x7680x4", root.Description)
	assert.Equal(t, "0", root.ParentHandle)
	assert.Nil(t, root.Coordinates)

	handles := map[string]traces.DataRecord{}
	byDims := map[int]int{}
	for _, d := range data {
		assert.Nil(t, d.Extra, "line %d", d.Line)
		assert.Nil(t, d.MaxSize)
		handles[d.Handle] = d
		byDims[len(d.Coordinates)]++
		switch len(d.Coordinates) {
		case 1:
			assert.Equal(t, root.Handle, d.ParentHandle)
			assert.Equal(t, "M960x7680x4", d.Description)
		case 2:
			assert.Equal(t, "subA", d.Name)
			assert.Equal(t, int64(960*960*4), *d.Size)
			assert.Equal(t, "M960x960x4", d.Description)
			// A tile's parent is the slice of its first coordinate.
			p := handles[d.ParentHandle]
			require.Len(t, p.Coordinates, 1, "line %d", d.Line)
			assert.Equal(t, p.Coordinates[0], d.Coordinates[0])
		}
	}
	assert.Equal(t, map[int]int{0: 1, 1: 8, 2: 64}, byDims)
	assert.Len(t, handles, 73)
	for _, r := range tasks {
		for i, h := range r.Handles {
			d, ok := handles[h]
			require.True(t, ok, "tasks.rec line %d: handle %s", r.Line, h)
			if r.Sizes != nil {
				assert.Equal(t, *d.Size, r.Sizes[i])
			}
		}
	}
}

// TestReadRecSyntax covers the recutils subset: comments anywhere, runs of
// blank lines, CRLF, "+" continuation lines, empty values, unknown fields.
func TestReadRecSyntax(t *testing.T) {
	in := "# a comment\n" +
		"\n\n" +
		"Name: K\r\n" +
		"# inside a record\n" +
		"Model: long\n" +
		"+ symbol\n" +
		"+\n" +
		"+x\n" +
		"JobId:7\n" +
		"DependsOn:\n" +
		"Handles: a0 b1\n" +
		"+ c2\n" +
		"Modes: R R W\n" +
		"Sizes: 1 2\n" +
		"+ 3\n" +
		"Iteration: 4 5\n" +
		"Parameters:  M1x1x4 \n" +
		"EstimatedTime: 1 2\n" +
		"+ 3\n" +
		"%rec: Task\n" +
		"StartTime: 1.5\n" +
		"EndTime: 1.5\n" +
		" \t \n" +
		"Control: WontUse\n" +
		"JobId: 8"
	recs, err := ReadTasks(strings.NewReader(in), "x.rec")
	require.NoError(t, err)
	require.Len(t, recs, 2)
	r := recs[0]
	assert.Equal(t, 4, r.Line)
	assert.Equal(t, "K", r.Name)
	assert.Equal(t, "long\nsymbol\n\nx", r.Model)
	assert.Equal(t, int64(7), *r.JobID)
	assert.Equal(t, []int64{}, r.DependsOn)
	assert.Equal(t, []string{"a0", "b1", "c2"}, r.Handles)
	assert.Equal(t, []int64{1, 2, 3}, r.Sizes)
	assert.Equal(t, 4, *r.Iteration)
	assert.Equal(t, 5, *r.Subiteration)
	assert.Equal(t, []string{"", "M1x1x4", ""}, r.Parameters)
	assert.Equal(t, map[string]string{"EstimatedTime": "1 2\n3", "%rec": "Task"}, r.Extra)
	assert.Equal(t, 1.5, *r.StartTime)
	assert.Equal(t, 1.5, *r.EndTime)
	assert.Equal(t, 25, recs[1].Line)
	assert.Equal(t, "WontUse", recs[1].Control)
	assert.Equal(t, int64(8), *recs[1].JobID)

	// starpu_fxt_tool prints a ready time that never was as C prints a
	// NaN: unknown, not an error (other times stay errors when NaN).
	for _, nan := range []string{"-nan", "nan", "NaN", "-NAN"} {
		recs, err := ReadTasks(strings.NewReader("JobId: 3\nReadyTime: "+nan+"\nStartTime: 2\n"), "x.rec")
		require.NoError(t, err, nan)
		assert.Nil(t, recs[0].ReadyTime, nan)
		assert.Equal(t, 2.0, *recs[0].StartTime)
	}
	_, err = ReadTasks(strings.NewReader("ReadyTime: nanx\n"), "x.rec")
	assert.ErrorContains(t, err, "x.rec:1: ReadyTime")

	// Nothing but comments and blanks: no record.
	recs, err = ReadTasks(strings.NewReader("# only\n\n#\n"), "x.rec")
	require.NoError(t, err)
	assert.Empty(t, recs)

	data, err := ReadData(strings.NewReader("Handle: 1a\nCoordinates: 3 1\nMPITag: -5\nFoo: bar\n\n\nHandle: 2b\n"), "d.rec")
	require.NoError(t, err)
	require.Len(t, data, 2)
	assert.Equal(t, []int{3, 1}, data[0].Coordinates)
	assert.Equal(t, int64(-5), *data[0].MPITag)
	assert.Equal(t, map[string]string{"Foo": "bar"}, data[0].Extra)
	assert.Equal(t, 7, data[1].Line)
	assert.Equal(t, "2b", data[1].Handle)
}

// TestReadTasksRecErrors: each malformed input fails at its line.
func TestReadTasksRecErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"JobId: 1\nno colon here\n", "t.rec:2: expected \"Field: value\""},
		{"JobId: 1\n bad: indent\n", "t.rec:2: expected \"Field: value\""},
		{"Job Id: 1\n", "t.rec:1: expected \"Field: value\""},
		{": 1\n", "t.rec:1: expected \"Field: value\""},
		{"+ orphan\n", "t.rec:1: continuation line"},
		{"\n\n+ orphan\n", "t.rec:3: continuation line"},
		{"JobId: x\n", "t.rec:1: JobId: \"x\" is not an integer"},
		{"JobId: -1\n", "t.rec:1: JobId: -1 is negative"},
		{"JobId: 1\nJobId: 2\n", "t.rec:2: field JobId repeated (first on line 1)"},
		{"Priority: 1.5\n", "t.rec:1: Priority"},
		{"WorkerId: -1\n", "t.rec:1: WorkerId: -1 is negative"},
		{"\nStartTime: abc\n", "t.rec:2: StartTime: \"abc\" is not a finite number"},
		{"StartTime: NaN\n", "t.rec:1: StartTime"},
		{"EndTime: +Inf\n", "t.rec:1: EndTime"},
		{"SubmitTime: -0.5\n", "t.rec:1: SubmitTime: -0.5 is negative"},
		{"StartTime: 5\nEndTime: 4\n", "t.rec:2: EndTime 4 is before StartTime 5"},
		{"EndTime: 4\nStartTime: 5\n", "t.rec:2: EndTime 4 is before StartTime 5"},
		{"Footprint: xyz\n", "t.rec:1: Footprint"},
		{"Footprint: 1ffffffff\n", "t.rec:1: Footprint"},
		{"GFlop: -1\n", "t.rec:1: GFlop: -1 is negative"},
		{"Iteration:\n", "t.rec:1: Iteration: want 1 or 2 integers"},
		{"Iteration: 1 2 3\n", "t.rec:1: Iteration: want 1 or 2 integers"},
		{"DependsOn: 1 b\n", "t.rec:1: DependsOn: entry 2, \"b\", is not an integer"},
		{"Handles: 12 zz\n", "t.rec:1: Handles: \"zz\" is not a hexadecimal address"},
		{"Sizes: 1 -2\n", "t.rec:1: Sizes: entry 2, -2, is negative"},
		{"Handles: a b\nModes: R\n", "t.rec:2: Modes has 1 entries but Handles (line 1) has 2"},
		{"Handles: a b\nModes: R W\nSizes: 1\n+ 2 3\n", "t.rec:3: Sizes has 3 entries but Handles (line 1) has 2"},
		{"Modes: R\nNumaNodes: -1 -1\n", "t.rec:2: NumaNodes has 2 entries"},
		{"DependsOn: 1 2\nDepLabels: task\n", "t.rec:2: DepLabels has 1 entries but DependsOn has 2"},
		{"JobId: 1\n\nJobId: 2\nMemoryNode: x\n", "t.rec:4: MemoryNode"},
	} {
		_, err := ReadTasks(strings.NewReader(c.in), "t.rec")
		require.Error(t, err, "%q", c.in)
		assert.True(t, strings.HasPrefix(err.Error(), c.want), "%q: got %q, want prefix %q", c.in, err, c.want)
	}
}

// TestReadDataRecErrors: each malformed data.rec fails at its line.
func TestReadDataRecErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"Handle: 12\nSize 3\n", "d.rec:2: expected \"Field: value\""},
		{"Handle: xyz\n", "d.rec:1: Handle: \"xyz\" is not a hexadecimal address"},
		{"ParentHandle: -1\n", "d.rec:1: ParentHandle"},
		{"Size: -1\n", "d.rec:1: Size: -1 is negative"},
		{"\nMaxSize: big\n", "d.rec:2: MaxSize: \"big\" is not an integer"},
		{"HomeNode: 0.5\n", "d.rec:1: HomeNode"},
		{"Coordinates: 1 -1\n", "d.rec:1: Coordinates: entry 2, -1, is negative"},
		{"Name: a\nName: b\n", "d.rec:2: field Name repeated"},
	} {
		_, err := ReadData(strings.NewReader(c.in), "d.rec")
		require.Error(t, err, "%q", c.in)
		assert.True(t, strings.HasPrefix(err.Error(), c.want), "%q: got %q, want prefix %q", c.in, err, c.want)
	}
}

// errReader fails after its data.
type errReader struct{ s string }

func (e *errReader) Read(p []byte) (int, error) {
	if e.s == "" {
		return 0, os.ErrDeadlineExceeded
	}
	n := copy(p, e.s)
	e.s = e.s[n:]
	return n, nil
}

func TestReadRecReadError(t *testing.T) {
	_, err := ReadTasks(&errReader{"JobId: 1\nJobId"}, "t.rec")
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), "t.rec:2: read: "), err.Error())
}
