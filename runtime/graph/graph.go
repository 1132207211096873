package graph

import (
	"fmt"
	"math"
	"strings"
)

// Mode is a buffer access mode.
type Mode uint8

// Access modes, as StarPU's STARPU_R, STARPU_W, STARPU_RW.
const (
	R  Mode = 1
	W  Mode = 2
	RW Mode = R | W
)

// String returns StarPU's spelling (tasks.rec's Modes field).
func (m Mode) String() string {
	switch m {
	case R:
		return "R"
	case W:
		return "W"
	case RW:
		return "RW"
	}
	return fmt.Sprintf("Mode(%d)", uint8(m))
}

// Handle is a piece of data registered with the runtime: a matrix tile,
// homed in RAM. A tile of an N×N matrix is a 2D block: Rows rows of
// RowBytes contiguous bytes, successive rows PitchBytes apart (N × element
// size); SizeBytes = Rows × RowBytes is what a transfer moves.
type Handle struct {
	ID         int
	Name       string // e.g. "A[3][1]"
	SizeBytes  int64
	RowBytes   int64
	Rows       int64
	PitchBytes int64
	// Footprint is StarPU's handle footprint (matrix: crc(nx, ny) hashed
	// with the interface id); task footprints fold these.
	Footprint uint32
	// Tile and Order place the handle in StarPU's order of a task's data
	// (_starpu_compar_handles, src/datawizard/sort_data_handles.c), the
	// order in which the runtime fetches and prefetches it. Tile marks a
	// piece of the application's partitioned matrix: among pieces, written
	// ones come first, then read ones, then the lower Order, their path in
	// the partition tree (the indices given to starpu_data_get_sub_data).
	// Handles registered on their own compare by ID (registration order),
	// after the pieces.
	Tile  bool
	Order int
	// NoSeqConsistency turns StarPU's sequential consistency off for this
	// data (starpu_data_set_sequential_consistency_flag(h, 0)): its
	// accesses add no implicit dependency, only explicit ones order tasks.
	NoSeqConsistency bool
}

// Access is one buffer of a task.
type Access struct {
	Handle int // index into Graph.Handles
	Mode   Mode
}

// Task is one task of an application, in submission order.
type Task struct {
	ID       int
	Name     string // kernel name: "POTRF", "GEMM"
	Model    string // perf-model symbol: "chol_model_gemm"
	Flops    float64
	Priority int
	Buffers  []Access
	// Deps are explicit dependencies (task IDs submitted earlier), on top
	// of the implicit data dependencies (sequential consistency).
	Deps []int
	// WontUse lists handles the application declares, right after
	// submitting this task, it will not use soon (starpu_data_wont_use).
	WontUse []int
	// Worker pins the task to one worker (its index, CPU workers first)
	// when Pinned (starpu_replay --static-workerid).
	Worker int
	// FixedUS > 0 gives the task this duration (µs) instead of a model
	// lookup, on whichever workers may run it (a replayed task without a
	// model runs for its recorded length).
	FixedUS float64
	// DurationsUS, when set, gives the task's duration (µs) on the
	// workers whose arch the calibration has no entry of its model and
	// footprint for: keyed by arch ("cuda1"), else by arch kind, the arch
	// without its trailing digits ("cuda", "cpu"). Task graphs read from
	// files carry them; a worker neither gives a duration cannot run it.
	DurationsUS map[string]float64
	// Footprint indexes the perf model (StarPU's task footprint).
	Footprint uint32
	Pinned    bool // run only on Worker
	// SyncGPU says the kernel's GPU implementation is synchronous (its
	// codelet lacks STARPU_CUDA_ASYNC): a GPU driver waits for the device's
	// earlier tasks, runs it, and pops nothing meanwhile.
	SyncGPU bool
	// The small fields come last, together: a graph holds one Task per
	// task, and padding between them would add 16 bytes to each.
}

// Graph is a whole application: its data and its tasks in submission order.
type Graph struct {
	Name    string // "cholesky N=9600 block=960"
	Handles []Handle
	Tasks   []Task
	// TotalFlops is the flop count the application's GFlop/s is computed
	// from (StarPU's examples use a closed formula, not the task sum).
	TotalFlops float64
}

// ArchKind is an arch without its trailing digits: "cuda1" gives "cuda",
// "cpu0" gives "cpu".
func ArchKind(arch string) string {
	return strings.TrimRight(arch, "0123456789")
}

// DurationOn is t's duration (µs) from DurationsUS on a worker of arch:
// the arch's own entry, else its kind's; ok is false when neither is
// given.
func (t *Task) DurationOn(arch string) (us float64, ok bool) {
	if t.DurationsUS == nil {
		return 0, false
	}
	if us, ok = t.DurationsUS[arch]; ok {
		return us, true
	}
	us, ok = t.DurationsUS[ArchKind(arch)]
	return us, ok
}

// PrioRange is the priority range a scheduler sets for its context:
// StarPU's STARPU_MIN_PRIO..STARPU_MAX_PRIO, which applications read to
// choose their priorities (cholesky_implicit.c does).
type PrioRange struct{ Min, Max int }

// UnboundedPrio is the range of the schedulers with priority-sorted
// queues: C's INT_MIN..INT_MAX ("the application may use any integer").
var UnboundedPrio = PrioRange{Min: math.MinInt32, Max: math.MaxInt32}

// Unbounded reports whether r is UnboundedPrio.
func (r PrioRange) Unbounded() bool { return r == UnboundedPrio }
