package runtime

import (
	"math/rand/v2"
	"sort"
	"sync"

	"github.com/starsim/starsim/runtime/graph"
)

// Scheduler decides which worker runs which task. The runtime calls Push
// when a task's dependencies are done, Pop when a worker has room for a
// task, and PreExec/PostExec around each kernel. A scheduler keeps its own
// queues; it sees the system through the View given to Init. All calls come
// from one goroutine, in simulated-time order.
type Scheduler interface {
	Init(v View)
	Push(t *TaskState)
	Pop(w *Worker) *TaskState
	PreExec(w *Worker, t *TaskState)
	PostExec(w *Worker, t *TaskState)
}

// View is what a scheduler may observe and ask of the runtime.
type View interface {
	// NowUS is the current simulated time in µs.
	NowUS() float64
	Workers() []*Worker
	// CanExecute reports whether w's arch has a calibrated model for t.
	CanExecute(t *TaskState, w *Worker) bool
	// ExpectedLengthUS is the model's mean duration of t on w.
	ExpectedLengthUS(t *TaskState, w *Worker) float64
	// ExpectedTransferUS is the predicted time to bring t's inputs to w's
	// node (0 for data valid there or already requested).
	ExpectedTransferUS(t *TaskState, w *Worker) float64
	// Prefetch requests t's inputs on w's node at task-prefetch level.
	Prefetch(t *TaskState, w *Worker)
	// NonReadyBytes sizes t's inputs on w's node: not valid, not valid and
	// not being loaded, not allocated (dmdar's ready-first pop).
	NonReadyBytes(t *TaskState, w *Worker) (nonReady, nonLoading, nonAllocated int64)
	// Rand is the run's seeded generator.
	Rand() *rand.Rand
	// Explaining reports whether decisions about t should be logged, and
	// Explain logs one (a Decision, or any JSON-encodable record).
	Explaining(t *TaskState) bool
	Explain(rec any)
}

// SchedulerCloser is a scheduler that holds resources or can fail (an
// external agent's process): Run calls Close once the simulation has
// stopped, with the makespan so far (s), and returns its error, if any,
// instead of the run's result. A scheduler that failed mid-run stops
// placing tasks, so that the run stops, and says why here.
type SchedulerCloser interface {
	Scheduler
	Close(makespanS float64) error
}

// NopHooks can be embedded by schedulers without PreExec/PostExec work.
type NopHooks struct{}

// PreExec does nothing.
func (NopHooks) PreExec(*Worker, *TaskState) {}

// PostExec does nothing.
func (NopHooks) PostExec(*Worker, *TaskState) {}

// Spec is the task as the application submitted it.
func (t *TaskState) Spec() *graph.Task { return t.spec }

// ID is the task's submission index.
func (t *TaskState) ID() int { return int(t.id) }

// Priority is the task's priority (higher first).
func (t *TaskState) Priority() int { return int(t.prio) }

// preds are the ids of t's dependencies, finished or not.
func (t *TaskState) preds() []int32 { return t.dg.Preds(int(t.id)) }

var (
	schedMu    sync.Mutex
	schedulers = map[string]func() Scheduler{}
)

// RegisterScheduler makes a scheduler available under name (e.g. for
// --sched). Registering a name twice replaces the first.
func RegisterScheduler(name string, factory func() Scheduler) {
	schedMu.Lock()
	defer schedMu.Unlock()
	schedulers[name] = factory
}

func lookupScheduler(name string) (func() Scheduler, bool) {
	schedMu.Lock()
	defer schedMu.Unlock()
	if len(name) > 4 && name[:4] == "heft" {
		name = "dmda" // StarPU maps heft* to dmda
	}
	f, ok := schedulers[name]
	return f, ok
}

// SchedulerNames lists the registered schedulers, sorted.
func SchedulerNames() []string {
	schedMu.Lock()
	defer schedMu.Unlock()
	var names []string
	for n := range schedulers {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func init() {
	RegisterScheduler("eager", func() Scheduler { return &central{} })
	RegisterScheduler("prio", func() Scheduler { return &central{prio: true} })
	RegisterScheduler("random", func() Scheduler { return &randomSched{} })
	RegisterScheduler("ws", func() Scheduler { return &wsSched{} })
	RegisterScheduler("lws", func() Scheduler { return &wsSched{} })
}

// central is eager (one FIFO) or prio (one priority list, FIFO within a
// level): a pop takes the first task the worker can execute.
type central struct {
	NopHooks
	v    View
	prio bool
	q    []*TaskState
}

func (c *central) Init(v View) { c.v = v }

func (c *central) Push(t *TaskState) {
	if !c.prio {
		c.q = append(c.q, t)
		return
	}
	i := sort.Search(len(c.q), func(i int) bool { return c.q[i].Priority() < t.Priority() })
	c.q = append(c.q, nil)
	copy(c.q[i+1:], c.q[i:])
	c.q[i] = t
}

func (c *central) Pop(w *Worker) *TaskState {
	for i, t := range c.q {
		if c.v.CanExecute(t, w) {
			c.q = append(c.q[:i], c.q[i+1:]...)
			return t
		}
	}
	return nil
}

// randomSched pushes each task to a worker drawn with probability
// proportional to its relative speed (StarPU: CPU 0.5, CUDA 13.33), among
// those that can run it; each worker keeps a priority list. Unlike StarPU's
// (seeded by time(NULL)), it draws from the run's seed.
type randomSched struct {
	NopHooks
	v View
	q map[*Worker][]*TaskState
}

func (r *randomSched) Init(v View) { r.v = v; r.q = map[*Worker][]*TaskState{} }

func relativeSpeedup(w *Worker) float64 {
	if w.Kind == GPUWorker {
		return 13.33
	}
	return 0.5
}

func (r *randomSched) Push(t *TaskState) {
	var cands []*Worker
	total := 0.0
	for _, w := range r.v.Workers() {
		if r.v.CanExecute(t, w) {
			cands = append(cands, w)
			total += relativeSpeedup(w)
		}
	}
	x := r.v.Rand().Float64() * total
	pick := cands[len(cands)-1]
	for _, w := range cands {
		x -= relativeSpeedup(w)
		if x < 0 {
			pick = w
			break
		}
	}
	r.q[pick] = insertByPriority(r.q[pick], t)
}

func (r *randomSched) Pop(w *Worker) *TaskState {
	q := r.q[w]
	if len(q) == 0 {
		return nil
	}
	r.q[w] = q[1:]
	return q[0]
}

// insertByPriority keeps q sorted by decreasing priority, FIFO within one.
func insertByPriority(q []*TaskState, t *TaskState) []*TaskState {
	i := sort.Search(len(q), func(i int) bool { return q[i].Priority() < t.Priority() })
	q = append(q, nil)
	copy(q[i+1:], q[i:])
	q[i] = t
	return q
}

// wsSched is work stealing: a ready task goes to the queue of the worker
// that released it when that worker can run it, else round-robin; a worker
// pops its highest-priority task, else steals the lowest-priority task of
// the next busy worker with work (round-robin victims).
type wsSched struct {
	NopHooks
	v      View
	q      [][]*TaskState
	rr     int
	victim int
	last   *Worker
}

func (s *wsSched) Init(v View) { s.v = v; s.q = make([][]*TaskState, len(v.Workers())) }

func (s *wsSched) PostExec(w *Worker, t *TaskState) { s.last = w }

func (s *wsSched) Push(t *TaskState) {
	ws := s.v.Workers()
	var w *Worker
	if s.last != nil && s.v.CanExecute(t, s.last) {
		w = s.last
	} else {
		for i := 0; i < len(ws); i++ {
			c := ws[(s.rr+i)%len(ws)]
			if s.v.CanExecute(t, c) {
				w = c
				s.rr = (s.rr + i + 1) % len(ws)
				break
			}
		}
	}
	s.q[w.ID] = insertByPriority(s.q[w.ID], t)
}

func (s *wsSched) Pop(w *Worker) *TaskState {
	if q := s.q[w.ID]; len(q) > 0 {
		s.q[w.ID] = q[1:]
		return q[0]
	}
	ws := s.v.Workers()
	for i := 0; i < len(ws); i++ {
		v := ws[(s.victim+i)%len(ws)]
		q := s.q[v.ID]
		if v == w || len(q) == 0 {
			continue
		}
		for j := len(q) - 1; j >= 0; j-- {
			if s.v.CanExecute(q[j], w) {
				t := q[j]
				s.q[v.ID] = append(q[:j:j], q[j+1:]...)
				s.victim = (s.victim + i + 1) % len(ws)
				return t
			}
		}
	}
	return nil
}
