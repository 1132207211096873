package traces

import (
	"fmt"
	"math"
	"sort"
	"strconv"
)

// Worker types: WorkerInfo.Type, and the kernel rows of traces/compare.
const (
	WorkerCPU  = "cpu"
	WorkerCUDA = "cuda"
)

// Trace is the comparable content of a trace: the executed tasks, the
// workers and, when the trace says, the data transfers.
type Trace struct {
	// Name labels the trace (the path given to formats.Load).
	Name string
	// Format is "tasks.rec", "chrome" or "paje".
	Format string
	// Tasks are the executed tasks only (records with a WorkerId and both
	// StartTime and EndTime; Control records and StarPU-internal tasks are
	// dropped), sorted by StartTime, then WorkerId, then line. Times in ms,
	// StartTime and EndTime rounded to whole ns.
	// From a Chrome trace they are rebuilt from the kernel slices: Name,
	// Model, JobId (task + 1), Priority, WorkerId, MemoryNode, SubmitTime,
	// ReadyTime, StartTime, EndTime, Footprint; no GFlop.
	Tasks []TaskRecord
	// Workers are sorted by ID: for tasks.rec, the workers that ran a task
	// (the file names no others); for Chrome, every named worker thread.
	Workers []WorkerInfo
	// TransferSource says where Transfers come from: "chrome" or "paje"
	// (the trace's copies, exact), "data.rec" (inferred, see rec.Read) or
	// "" (unknown: Transfers is empty).
	TransferSource string
	// Transfers are per direction, sorted by source then destination.
	Transfers []Transfer

	// Panel holds what Timeline draws besides the tasks (nil: nothing).
	Panel *Panel
}

// WorkerInfo is one worker of a trace.
type WorkerInfo struct {
	ID int `json:"id"`
	// Name: for Chrome traces, the thread name ("CPU0", "CUDA1"); for
	// tasks.rec, which does not name workers, "CPU" for a worker on memory
	// node 0 and "CUDA<node-1>" for one on a device node.
	Name string `json:"name"`
	Type string `json:"type"` // WorkerCPU or WorkerCUDA
	Node int    `json:"node"` // memory node (0 = RAM); -1 when unknown
}

// Label is the worker's name and ID ("CPU0 (w0)").
func (w WorkerInfo) Label() string { return fmt.Sprintf("%s (w%d)", w.Name, w.ID) }

// Transfer is the data copied in one direction.
type Transfer struct {
	Src   string `json:"src"`
	Dst   string `json:"dst"`
	Count int    `json:"count"`
	Bytes int64  `json:"bytes"`
}

// RoundNs rounds a time in ms to whole ns, the resolution of StarPU's traces
// (FxT ns) and of starsim's Chrome traces: the same run read from its
// tasks.rec (15 significant digits) and from its Chrome JSON (whole ns)
// then gives bit-identical times and durations.
func RoundNs(ms float64) *float64 {
	v := math.Round(ms*1e6) / 1e6
	return &v
}

// TaskLabel names a record in errors: its name or model, and its job.
func TaskLabel(r TaskRecord) string {
	s := r.Name
	if s == "" {
		s = r.Model
	}
	if r.JobID != nil {
		s += " (job " + strconv.FormatInt(*r.JobID, 10) + ")"
	}
	if s == "" {
		return "record"
	}
	return s
}

// SortedWorkers returns the workers of m by ID.
func SortedWorkers(m map[int]WorkerInfo) []WorkerInfo {
	out := make([]WorkerInfo, 0, len(m))
	for _, w := range m {
		out = append(out, w)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// SortTasks sorts executed tasks by StartTime, then WorkerID, then line
// (Trace.Tasks' order).
func SortTasks(ts []TaskRecord) {
	sort.SliceStable(ts, func(i, j int) bool {
		a, b := &ts[i], &ts[j]
		if *a.StartTime != *b.StartTime {
			return *a.StartTime < *b.StartTime
		}
		if *a.WorkerID != *b.WorkerID {
			return *a.WorkerID < *b.WorkerID
		}
		return a.Line < b.Line
	})
}

// NodeName names memory node n as starsim does ("RAM", "CUDA0", ...).
func NodeName(n int) string {
	if n == 0 {
		return "RAM"
	}
	return "CUDA" + strconv.Itoa(n-1)
}

// NodeLess orders node names: RAM first, then by name with numbers in
// numeric order (CUDA2 before CUDA10).
func NodeLess(a, b string) bool {
	if (a == "RAM") != (b == "RAM") {
		return a == "RAM"
	}
	pa, na := splitNum(a)
	pb, nb := splitNum(b)
	if pa != pb {
		return pa < pb
	}
	if na != nb {
		return na < nb
	}
	return a < b
}

func splitNum(s string) (string, int) {
	i := len(s)
	for i > 0 && s[i-1] >= '0' && s[i-1] <= '9' {
		i--
	}
	n, err := strconv.Atoi(s[i:])
	if err != nil {
		return s, -1
	}
	return s[:i], n
}

// WorkerType is the worker type of an executed task: "cpu" on memory node
// 0 (RAM) or with no MemoryNode, "cuda" on a device node.
func WorkerType(t *TaskRecord) string {
	if t.MemoryNode == nil || *t.MemoryNode == 0 {
		return WorkerCPU
	}
	return WorkerCUDA
}

// Start is the first StartTime and Makespan the time from it to the last
// EndTime, in ms (0 for no task): how the README measures the native
// trace's makespan.
func (t *Trace) Start() float64 {
	if len(t.Tasks) == 0 {
		return 0
	}
	return *t.Tasks[0].StartTime // sorted by StartTime
}

// Makespan: see Start.
func (t *Trace) Makespan() float64 {
	if len(t.Tasks) == 0 {
		return 0
	}
	end := math.Inf(-1)
	for i := range t.Tasks {
		end = math.Max(end, *t.Tasks[i].EndTime)
	}
	return end - t.Start()
}

// GFlop sums the tasks' GFlop fields; ok is false when no task has one.
func (t *Trace) GFlop() (sum float64, ok bool) {
	for i := range t.Tasks {
		if g := t.Tasks[i].GFlop; g != nil {
			sum += *g
			ok = true
		}
	}
	return sum, ok
}
