package sched

import (
	"github.com/starsim/starsim/runtime/machine"
	"github.com/starsim/starsim/runtime/memory"
)

// Scheduler decides which worker runs which task. The runtime calls Push
// when a task's dependencies are done, Pop when a worker has room for a
// task, and PreExec/PostExec around each kernel. A scheduler keeps its own
// queues and sees the run through the View given to Init; it acts only
// through what Push returns. All calls come from one goroutine, in
// simulated-time order.
type Scheduler interface {
	Init(v *View)
	// Push takes a ready task and says where it went.
	Push(t *Task) Decision
	// Pop gives w its next task (nil: none for now).
	Pop(w *machine.Worker) *Task
	PreExec(w *machine.Worker, t *Task)
	PostExec(w *machine.Worker, t *Task)
}

// Closer is a scheduler that holds resources or can fail (an external
// agent's process): the runtime calls Close once the simulation has
// stopped, with the makespan so far (s), and returns its error, if any,
// instead of the run's result.
type Closer interface {
	Scheduler
	Close(makespanS float64) error
}

// QueueCounter is a scheduler that queues each task for one worker, whose
// pops alone take it. QueuedCounts is, by worker ID, how many tasks each
// worker's queue holds, kept up to date by the scheduler (the runtime only
// reads it); Pop(w) returns nil, and changes nothing, exactly when w's
// count is 0. The runtime then tells a pop that finds nothing without
// calling Pop: on a machine of tens of cores, most wake-ups of idle
// workers are such. NonEmptyQueues has bit w%64 of word w/64 set exactly
// when w's count is not 0, so that the runtime tests tens of workers at
// once.
type QueueCounter interface {
	Scheduler
	QueuedCounts() []int32
	NonEmptyQueues() []uint64
}

// Decision is what a push decided: the worker whose queue took the task
// (nil for a queue all workers share) and whether the runtime should
// prefetch the task's inputs on that worker's memory node now (StarPU's
// push-time prefetch, unless STARPU_PREFETCH=0), at task-prefetch level.
type Decision struct {
	Worker   *machine.Worker
	Prefetch bool
}

// NopHooks can be embedded by schedulers without PreExec/PostExec work.
type NopHooks struct{}

// PreExec does nothing.
func (NopHooks) PreExec(*machine.Worker, *Task) {}

// PostExec does nothing.
func (NopHooks) PostExec(*machine.Worker, *Task) {}

// Task is a task as schedulers see it: its identity, priority, buffers
// and per-worker model entries. The runtime makes one per task (Set) and
// keeps it in its own task state, which schedulers do not see.
type Task struct {
	bufs  []memory.Buf
	stats *[]*machine.KernelStats // by Worker.ID; nil entries: cannot run there
	id    int32
	prio  int32
	// dm is the dm family's bookkeeping of the task: kept here, beside
	// what a push reads, rather than in an array of its own (a cache miss
	// more per push and pop, and 16 bytes per task more). Other schedulers
	// keep theirs by task ID.
	dm dmTask
}

// Set fills t: the runtime does, when it builds its tasks. stats holds the
// task's model entry per worker (nil where it cannot run); tasks of one
// kernel and footprint share it.
func (t *Task) Set(id int, prio int32, bufs []memory.Buf, stats *[]*machine.KernelStats) {
	t.id, t.prio, t.bufs, t.stats = int32(id), prio, bufs, stats
}

// ID is the task's submission index.
func (t *Task) ID() int { return int(t.id) }

// Priority is the task's priority (higher first).
func (t *Task) Priority() int { return int(t.prio) }

// Buffers are the task's data and access modes (do not modify).
func (t *Task) Buffers() []memory.Buf { return t.bufs }

// Stats is the task's model entry on worker w (nil: it cannot run there).
func (t *Task) Stats(w int) *machine.KernelStats { return (*t.stats)[w] }

// Entries is the task's model entries by worker ID (Stats), shared by the
// tasks of one kernel and footprint: callers may tell shared entries by
// the pointer.
func (t *Task) Entries() *[]*machine.KernelStats { return t.stats }

// NumWorkers is the number of workers the task's entries cover.
func (t *Task) NumWorkers() int { return len(*t.stats) }
