package traces

// TaskRecord is one tasks.rec record. Every field is optional: a numeric
// field the record lacks is a nil pointer, a list it lacks is nil and a
// string it lacks is "". Times are in ms, as StarPU writes them (FxT ns/1e6).
//
// Three kinds of record appear in a real trace: executed tasks (Name, Model,
// WorkerId, MemoryNode and the four times), Control records ("Control:
// WontUse" with JobId, SubmitOrder, SubmitTime and Handles: a
// starpu_data_wont_use call) and StarPU-internal tasks (data acquisitions)
// with no WorkerId and no StartTime/EndTime.
type TaskRecord struct {
	Line    int    // line of the record's first field
	Control string // "WontUse" for control records, "" for tasks

	Name  string // codelet name ("POTRF")
	Model string // perf-model symbol ("chol_model_potrf")
	// File and SrcLine are the submission site (fields File and Line).
	File    string
	SrcLine *int

	JobID       *int64 // JobId
	SubmitOrder *int64
	Priority    *int
	DependsOn   []int64  // job ids, space-separated
	DepLabels   []string // one label per DependsOn entry ("task", "ghost")
	Tag         string   // hex, as written

	WorkerID   *int // WorkerId
	MemoryNode *int

	SubmitTime, ReadyTime, StartTime, EndTime *float64 // ms

	Footprint *uint32  // hex in the file
	GFlop     *float64 // flops / 1e9
	// Iteration and Subiteration: "Iteration: it [subit]".
	Iteration, Subiteration *int

	// Parameters is the "Parameters" value split on single spaces, empty
	// entries kept: StarPU joins the buffers' describe() strings with one
	// space, and the native trace's first entry is empty ("Parameters: " for
	// one buffer, "Parameters:  M960x960x4" for two), so the entry count is
	// the buffer count there. Not checked against Modes.
	Parameters []string
	Handles    []string // hex handle addresses
	Modes      []string // "R", "W", "RW", with S, X, C flags
	Sizes      []int64  // bytes
	NumaNodes  []int
	MPIRank    *int

	// Extra keeps every other field (e.g. EstimatedTime) by name.
	Extra map[string]string
}

// Kernel is the task's kernel: its Name, else its Model.
func (t *TaskRecord) Kernel() string {
	switch {
	case t.Name != "":
		return t.Name
	case t.Model != "":
		return t.Model
	}
	return "(unnamed)"
}

// DataRecord is one data.rec record (one data handle). Every field is
// optional, as in TaskRecord.
type DataRecord struct {
	Line         int    // line of the record's first field
	Handle       string // hex address
	HomeNode     *int
	Name         string
	Size         *int64 // bytes
	MaxSize      *int64
	Description  string // describe(): "M960x960x4"
	ParentHandle string // hex, "0" for a root handle
	Coordinates  []int  // set by filters / starpu_data_set_coordinates
	MPIRank      *int
	MPIOwner     *int
	MPITag       *int64
	// Extra keeps every other field by name.
	Extra map[string]string
}

// Bounds of a trace's numbers: times to about 31.7 years (ms), so that
// durations and whole-ns rounding stay exact in float64; a task's GFlop
// and a buffer's size to a peta (GFlop, bytes).
const (
	MaxTimeMs   = 1e12
	MaxGFlop    = 1e15
	MaxSizeByte = 1 << 50
)
