package sim

import (
	"github.com/starsim/starsim/runtime/graph"
	"github.com/starsim/starsim/runtime/machine"
)

// Observer receives the runtime's events as they happen, in simulated-time
// order (times in seconds), so traces and statistics are written while the
// run goes: nothing is kept in memory for them. Methods must not change the
// simulation. Embed NopObserver to implement only some.
type Observer interface {
	// Start is called once before the first event, with the workers and
	// memory nodes ("RAM", "CUDA0", ...).
	Start(workers []*machine.Worker, nodes []string)
	// WorkerState: w enters state at tS ("Idle", "FetchingInput",
	// "Executing", "Overhead"); task is the task concerned (nil when Idle).
	WorkerState(tS float64, w *machine.Worker, state string, task *TaskState)
	// TransferStart and TransferEnd bracket one copy; id pairs them.
	TransferStart(tS float64, id uint64, src, dst string, bytes int64, kind string, handle *graph.Handle)
	TransferEnd(tS float64, id uint64)
	// Memory: "allocate", "free" or "evict" of handle's copy on node.
	Memory(tS float64, node string, event string, handle *graph.Handle)
	// Push and Pop are the scheduler's decisions (Pop: w took task).
	Push(tS float64, task *TaskState)
	Pop(tS float64, w *machine.Worker, task *TaskState)
	// TaskDone gives a finished task's whole record.
	TaskDone(task *TaskState)
	// End is called once after the last event, with the makespan.
	End(makespanS float64)
}

// NopObserver implements Observer with methods that do nothing.
type NopObserver struct{}

func (NopObserver) Start([]*machine.Worker, []string)                                           {}
func (NopObserver) WorkerState(float64, *machine.Worker, string, *TaskState)                    {}
func (NopObserver) TransferStart(float64, uint64, string, string, int64, string, *graph.Handle) {}
func (NopObserver) TransferEnd(float64, uint64)                                                 {}
func (NopObserver) Memory(float64, string, string, *graph.Handle)                               {}
func (NopObserver) Push(float64, *TaskState)                                                    {}
func (NopObserver) Pop(float64, *machine.Worker, *TaskState)                                    {}
func (NopObserver) TaskDone(*TaskState)                                                         {}
func (NopObserver) End(float64)                                                                 {}

// Task timing and placement, for observers (times in seconds).

// SubmitS is when the task was submitted.
func (t *TaskState) SubmitS() float64 { return t.submitS }

// ReadyS is when its dependencies were done.
func (t *TaskState) ReadyS() float64 { return t.readyS }

// StartS and EndS bracket its kernel.
func (t *TaskState) StartS() float64 { return t.startS }

// EndS is when its kernel ended.
func (t *TaskState) EndS() float64 { return t.endS }

// Worker is the worker that ran it (nil before it was popped).
func (t *TaskState) Worker() *machine.Worker {
	if t.worker == nil {
		return nil
	}
	return &t.worker.Worker
}

// preds are the ids of t's dependencies, finished or not.
func (t *TaskState) preds() []int32 { return t.dg.Preds(t.ID()) }

// Preds are the tasks it depended on (explicit and implicit).
func (t *TaskState) Preds() []int {
	preds := t.preds()
	ids := make([]int, len(preds))
	for i, p := range preds {
		ids[i] = int(p)
	}
	return ids
}

// Transfer kinds, StarPU's names for request levels (Paje links F, TF, PF,
// IF) plus eviction write-backs.
const (
	KindFetch        = "fetch"
	KindTaskPrefetch = "task-prefetch"
	KindPrefetch     = "prefetch"
	KindIdleFetch    = "idle-fetch"
	KindWriteBack    = "write-back"
)
