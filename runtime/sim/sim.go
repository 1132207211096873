package sim

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"unsafe"

	"github.com/starsim/starsim/emulator"
	"github.com/starsim/starsim/emulator/network"
	"github.com/starsim/starsim/runtime/cost"
	"github.com/starsim/starsim/runtime/graph"
	"github.com/starsim/starsim/runtime/machine"
	"github.com/starsim/starsim/runtime/memory"
	"github.com/starsim/starsim/runtime/sched"
)

// worker is one worker (machine.Worker) and what its thread and device do.
type worker struct {
	machine.Worker

	pipeline int // tasks it may have submitted to its device at once
	// preExec is, with Options.StarPUDriverLoop, the task whose
	// scheduler pre-exec hook the driver thread runs apart from its
	// kernel's start (preExecEarly, preExecLater); nil: none pending.
	preExec      *TaskState
	preExecEarly bool // the hook ran already (at inputsReady)
	fetching     int  // popped tasks whose inputs are being fetched
	held         int
	running      *TaskState   // kernel on the device
	ready        []*TaskState // inputs present, waiting for the device
	busyS        float64      // time executing kernels
	waitS        float64      // time holding tasks, none running: waiting for data
	stateAt      float64      // when waitS was last brought up to date
	perKernel    []int        // tasks run, by Simulator.kernelNames index
	intervals    [][2]float64 // kernel [start, end), with SampleIntervalS only
	state        workerState  // last state reported to the observer
	stateTask    *TaskState
	fetchingTask *TaskState // the task whose inputs are being fetched
	ntasks       int
	nsync        int // synchronous kernels (Task.SyncGPU) queued or running
	// blocked: the driver thread waits in a synchronous reclaim. Kernels
	// already submitted run on; those that end are completed (ended), and
	// tasks whose inputs arrive are submitted (heldBack), when it returns.
	blocked         bool
	ended, heldBack []*TaskState
	// asleep: a GPU worker's driver popped nothing and sleeps until a
	// push wakes it (woken; Options.StarPUDriverLoop): it then passes over
	// its node's requests before it pops.
	asleep, woken bool
	// execAfter is, for the task whose data is in (Options.StarPUDriverLoop),
	// the count of its node's passes after which its driver executes it;
	// inS when its last input arrived; fetchPostS when its fetch was
	// posted and fetchCostS the fetch's per-buffer cost (simulated s).
	execAfter  int
	fetchHit   bool // every input of the task it fetches was there (fetchHit; Options.StarPUHitExec)
	inS        float64
	fetchPostS float64
	fetchCostS float64
	// unnoticed counts the kernels that ended on the device while the
	// driver thread was busy (Options.StarPUDriverLoop): the driver
	// notices them when it is free (noticeEnd).
	unnoticed int
	// syncStartPosted: the start of the synchronous kernel at the head of
	// ready waits for the driver thread (startKernel).
	syncStartPosted bool
	// clockWait: a CPU worker's thread waits for a header lock on the
	// simulated clock's moves (Options.StarPULockClock); popAfterWait: it
	// pops when it has it (a GPU driver's wait is its node's).
	clockWait, popAfterWait bool
	// threadFreeS is when a CPU worker's thread has pushed the tasks its
	// last kernel released (simulated s); a GPU worker's driver thread uses
	// its node's issueFreeS.
	threadFreeS float64
}

// TaskState is a task's life in the run: what schedulers see of it
// (sched.Task) and the runtime's own state.
type TaskState struct {
	// The struct is 128 bytes, two cache lines of its slab (which starts
	// on a page): tasks are reached in no particular order, each a cache
	// miss or two, and there are as many as the graph's tasks. The first
	// line holds what a push reads and writes (the sched.Task: buffers,
	// model entries, priority, the dm family's bookkeeping) and readyS,
	// which the release writes just before: that store brings the line in
	// without stalling, for the push to find it.
	sched.Task
	readyS float64

	prefetchNode int32
	// syncGPU copies the spec's SyncGPU, read often: the spec is elsewhere.
	syncGPU    bool
	done       bool
	prefetched bool
	wontUse    bool // spec.WontUse is not empty
	worker     *worker
	spec       *graph.Task
	// dg holds the dependency lists (Preds), shared by every task.
	dg        *graph.Deps
	kernel    int32 // index of spec.Name in Simulator.kernelNames
	nfetching int32

	submitS, startS, endS float64
}

// Spec is the task as the application submitted it.
func (t *TaskState) Spec() *graph.Task { return t.spec }

// workerStats holds a task's model entry per worker (index: Worker.ID).
type workerStats = []*machine.KernelStats

// bufSlots is the buffers' slab's room per task: task i's buffers are at
// bufs[bufSlots*i:] (a task with more goes at the slab's end).
const bufSlots = 3

// Simulator runs one graph on one machine. Create with New, then Run.
type Simulator struct {
	m    *machine.Machine
	opts Options
	g    *graph.Graph

	eng   *emulator.Engine
	net   *network.Network
	rng   *rand.Rand
	sched sched.Scheduler
	view  *sched.View

	nodes   []*memNode
	nodeIdx map[string]int
	workers []*worker
	mw      []*machine.Worker // the workers as schedulers and observers see them
	ngpus   int

	mem *memory.Memory
	// incoming[h*len(nodes)+n] is the copy under way into handle h's copy
	// on node n (nil: none; the handle's loading bit says which are set).
	incoming []*request
	hwont    []handleWontUse // per handle
	tasks    []TaskState     // the slab: &tasks[id] costs no load
	// npending[i] counts task i's unfinished dependencies (+1 until
	// submitted). Kept apart from the tasks, densely, because a kernel's
	// end decrements it for each successor, scattered over the graph.
	npending []int32
	bufs     []memory.Buf       // every task's buffers (TaskState.bufs, bufSlots)
	deps     graph.Deps         // every task's dg
	lastEndS float64            // the latest kernel end: the makespan once all ran
	routes   [][]*network.Route // [src][dst]; nil: no direct route
	cost     *cost.Model
	// pushFreeS is when the submitting (application) thread is free: it
	// pays each submit cost and the push of each task it releases (s).
	pushFreeS float64
	// allocFreeS is when the device allocation lock is free (simulated s).
	allocFreeS float64
	dirs       [][]*direction

	// With Options.StarPUDriverLoop: lockHolds are, per handle ID, the
	// intervals drivers hold the handle's header lock to issue copies, in
	// order of start (headerlock.go); threadQ is, per
	// pushing thread (0: the application's, 1+ID: a worker's), its pushes
	// and wont_use callbacks not done yet; callbacks the handle of each
	// callback item (a wont_use's, or the rest of a push's prefetch
	// waiting for that handle's lock: Options.StarPUPrefetchLockAtEnd),
	// by index.
	lockHolds [][]lockHold
	// With Options.StarPUPushRace too: per handle ID, the last prefetch
	// that posted a request for it.
	prefMarks []prefetchMark
	// lockFreeMaxS bounds every hold's end from above: no lock is held
	// after it, so most pushes need not look at their data's locks.
	lockFreeMaxS float64
	threadQ      []threadQueue
	callbacks    []threadCallback
	prefRests    []prefetchRest

	ndone       int
	obs         Observer
	observed    bool // obs is not a NopObserver (else hot paths skip its calls and their arguments)
	xferID      uint64
	queuedBytes float64 // bytes of every copy ever queued
	uncal       map[[2]string]bool
	kcache      map[machine.KernelKey]*machine.KernelStats
	checkErr    error
	chk         *checker // with Options.Check
	writeBacks  int      // evictions of a sole valid copy, written home first
	seq         uint64
	// idleSet has bit i set when worker i is idle (setIdle); cpuSet the
	// CPU workers' bits. wakeSets[wakeHead:] are the sets of workers
	// (len(idleSet) words each) whose pops wake events will run, in order
	// (wakeIdle).
	idleSet, cpuSet []uint64
	wakeSets        []uint64
	wakeHead        int
	spare           *Spare // Options.Spare, while New takes its buffers
	// queued is the scheduler's count of tasks queued per worker, when
	// it keeps one (sched.QueueCounter): nil otherwise.
	queued   []int32
	nonEmpty []uint64   // and the workers whose counts are not 0 (by bit)
	reqs     []*request // every request made, by idx
	freeReqs []*request // finished requests, for newRequest to reuse

	// The dependency graph, fixed before the run (sequential consistency
	// depends only on submission order): task i's successors are
	// succ[succOff[i]:succOff[i+1]], in submission order.
	succOff []int32
	succ    []int32
	// wontUseAfter holds, for each wont_use hint in submission order, the
	// task that last wrote the data before it (-1: none); wuNext is the
	// next hint's index.
	wontUseAfter []int32
	wuNext       int
	kernelNames  []string // distinct task names, for per-worker counts
	hetsim       func() hetsimPaths

	// Event actions bound once, so posting them allocates nothing.
	submitCall, pushCall, popCall, readyCall, queuedCall, endCall func(int)
	preExecCall, noticeCall, execCall, syncStartCall              func(int)
	arrivedCall, progressCall, wakeCall, wontUseCall              func(int)
	sendCall, sentCall, hopCall, flowCall, allocCall              func(int)
	trylockPassCall, trylockRetryCall, lockClockCall, tickCall    func(int)
	// noAlloc: the pass under way allocates nothing (trylockPass).
	noAlloc bool
}

// New prepares a simulation of g on m.
func New(m *machine.Machine, g *graph.Graph, opts Options) (*Simulator, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	if opts.Sched == "" {
		opts.Sched = "dmda"
	}
	if opts.Durations == "" {
		opts.Durations = cost.Mean
	}
	var sc sched.Scheduler
	ok := true
	if opts.NewScheduler != nil {
		sc = opts.NewScheduler()
	} else {
		sc, ok = sched.New(opts.Sched)
	}
	if !ok {
		return nil, fmt.Errorf("unknown scheduler %q (known: %s)", opts.Sched, strings.Join(sched.Names(), ", "))
	}
	s := &Simulator{m: m, opts: opts, g: g, eng: emulator.NewEngine(), rng: rand.New(rand.NewPCG(opts.Seed, 0x5eed5eed)),
		nodeIdx: map[string]int{},
		uncal:   map[[2]string]bool{}, kcache: map[machine.KernelKey]*machine.KernelStats{}}
	s.net = network.New(s.eng, network.Options{Check: opts.Check})
	if opts.GPUMemLimitBytes < 0 {
		return nil, fmt.Errorf("GPU memory limit %d bytes is negative (0: StarPU's default)", opts.GPUMemLimitBytes)
	}
	for _, dev := range slices.Sorted(maps.Keys(opts.GPUMemLimitByDevice)) {
		if l := opts.GPUMemLimitByDevice[dev]; l < 0 {
			return nil, fmt.Errorf("GPU memory limit of %s, %d bytes, is negative (0: StarPU's default)", dev, l)
		}
	}
	if iv := opts.SampleIntervalS; iv < 0 || math.IsNaN(iv) || math.IsInf(iv, 0) {
		return nil, fmt.Errorf("sample interval %v s: want a finite interval >= 0 (0: no sampling)", iv)
	}
	if len(g.Tasks) > math.MaxInt32 {
		return nil, fmt.Errorf("%d tasks: at most %d (task ids are 32-bit)", len(g.Tasks), math.MaxInt32)
	}
	// The dependencies depend on the graph alone: they are derived on
	// another core while the rest is built. That core then prefaults the
	// tail of the task states' slab, while buildGraph fills it from the
	// head: page faults are most of filling a fresh slab (a CPU profile of
	// New on a large graph, as BenchmarkAttilaCholesky76800's, shows them).
	s.spare, s.opts.Spare = opts.Spare, nil
	reused := false
	if sp := s.spare; sp != nil && cap(sp.tasks) >= len(g.Tasks) {
		s.tasks, sp.tasks = sp.tasks[:len(g.Tasks)], nil // zero (Spare)
		reused = true
	} else {
		s.tasks = make([]TaskState, len(g.Tasks))
		if len(s.tasks) > 0 {
			hugePages(unsafe.Pointer(&s.tasks[0]), uintptr(len(s.tasks))*unsafe.Sizeof(s.tasks[0]))
		}
	}
	type derived struct {
		d   *graph.Deps
		err error
	}
	depc := make(chan derived, 1)
	go func() {
		d, err := opts.Deps, error(nil)
		if d == nil {
			d, err = graph.DeriveDeps(g)
		}
		if tail := s.tasks[len(s.tasks)*prefaultFrom/100:]; len(tail) > 0 && !reused {
			prefault(unsafe.Pointer(&tail[0]), uintptr(len(tail))*unsafe.Sizeof(tail[0]))
		}
		depc <- derived{d, err}
	}()
	if err := s.buildNodes(); err != nil {
		return nil, err
	}
	if err := s.buildWorkers(); err != nil {
		return nil, err
	}
	if err := s.buildNetwork(); err != nil {
		return nil, err
	}
	if err := s.buildGraph(); err != nil {
		return nil, err
	}
	// buildGraph's errors come first: they name a task's fault at its
	// first occurrence, where the dependencies' may come later.
	d := <-depc
	if d.err != nil {
		return nil, d.err
	}
	s.attachDeps(d.d, opts.Deps != nil)
	s.spare = nil
	if opts.Check {
		s.chk = newChecker(s)
	}
	s.submitCall = s.submit
	s.pushCall = s.push
	s.popCall = func(wid int) {
		if w := s.workers[wid]; s.popPutOff(w) {
			s.eng.Silent()
		} else {
			s.workerPop(w)
		}
	}
	s.wakeCall = s.wake
	s.readyCall = func(id int) { t := &s.tasks[id]; s.inputsReady(t.worker, t) }
	s.queuedCall = func(id int) { t := &s.tasks[id]; s.deviceQueued(t.worker, t) }
	s.sendCall, s.sentCall, s.arrivedCall, s.progressCall = s.send, s.sent, s.arrived, s.progress
	s.hopCall = s.secondHop
	s.allocCall = s.allocTurn
	s.flowCall = func(idx int) { s.flowNow(s.reqs[idx]) }
	s.endCall = func(id int) { t := &s.tasks[id]; s.endKernel(t.worker, t) }
	s.preExecCall = func(id int) {
		if t := &s.tasks[id]; !s.putOff(t.worker.Node, s.preExecCall, id, false) {
			s.preExecDue(t.worker, t)
		}
	}
	s.noticeCall = func(id int) {
		if t := &s.tasks[id]; !s.putOff(t.worker.Node, s.noticeCall, id, false) {
			s.noticeEnd(t.worker, t)
		}
	}
	// (An event that only posts itself again is no move of the clock for
	// the threads that wait on it: Engine.Silent.)
	s.execCall = func(id int) {
		if t := &s.tasks[id]; !s.putOff(t.worker.Node, s.execCall, id, false) && !s.execDue(t.worker, t) {
			s.eng.Silent()
		}
	}
	s.syncStartCall = func(id int) {
		w := s.workers[id]
		if s.putOff(w.Node, s.syncStartCall, id, false) {
			return
		}
		w.syncStartPosted = false
		if s.startKernel(w); w.syncStartPosted {
			s.eng.Silent()
		}
	}
	s.wontUseCall = s.wontUseCallback
	s.trylockPassCall, s.trylockRetryCall, s.lockClockCall = s.trylockPass, s.trylockRetry, s.lockClock
	s.tickCall = func(int) {} // a thread's sleep that ends: the clock moves
	s.sched = sc
	weights := sched.DefaultDMWeights
	if opts.DMWeights != nil {
		weights = *opts.DMWeights
	}
	nodes := make([]sched.MemoryNode, len(s.nodes))
	for i, n := range s.nodes {
		nodes[i] = sched.MemoryNode{Name: n.Name, CapacityBytes: n.Capacity}
	}
	s.view = sched.NewView(sched.ViewConfig{Engine: s.eng, Workers: s.mw, Cost: s.cost, Rand: s.rng, Graph: s.g,
		Weights: weights, Explain: opts.Explain, ExplainTask: opts.ExplainTask, Fail: s.fail, Nodes: nodes, Power: m.Power,
		EnableCells: s.mem.EnableCells, Check: opts.Check, PushRace: opts.StarPUPushRace})
	s.sched.Init(s.view)
	if qc, ok := s.sched.(sched.QueueCounter); ok {
		s.queued, s.nonEmpty = qc.QueuedCounts(), qc.NonEmptyQueues()
	}
	s.obs = opts.Observer
	if s.obs == nil {
		s.obs = NopObserver{}
	}
	_, nop := s.obs.(NopObserver)
	s.observed = !nop
	s.startHetsimPaths()
	if opts.StarPUDriverLoop {
		s.lockHolds = make([][]lockHold, len(g.Handles))
		s.threadQ = make([]threadQueue, len(s.workers)+1)
		if opts.StarPUPushRace {
			s.prefMarks = make([]prefetchMark, len(g.Handles))
			for i := range s.prefMarks {
				s.prefMarks[i].atS = math.Inf(-1)
			}
		}
	}
	return s, nil
}

// Spare is what a finished simulation lends the next (Options.Spare): its
// largest buffers, the task states' and their buffers' slabs and the
// dependency counts, which New reuses instead of allocating them again
// (and the collector freeing them). The slabs are cleared, up to their
// capacity: New takes them as make would give them, and they hold no
// pointer into the simulation that lent them, which the collector then
// frees.
type Spare struct {
	tasks    []TaskState
	bufs     []memory.Buf
	npending []int32
}

// Spare returns s's buffers for another simulation to reuse
// (Options.Spare); s, finished, must not be used after. Its Result stays
// valid: it holds none of them.
func (s *Simulator) Spare() *Spare {
	s.hetsim() // its goroutine reads the task states
	// Beyond their lengths (the extent used), the slabs are zero: they
	// came from make, or from a Spare.
	clear(s.tasks)
	clear(s.bufs)
	sp := &Spare{tasks: s.tasks[:0], bufs: s.bufs[:0], npending: s.npending[:0]}
	s.tasks, s.bufs, s.npending = nil, nil, nil
	return sp
}

// Run simulates the whole graph and returns the result.
func (s *Simulator) Run() (*Result, error) {
	names := make([]string, len(s.nodes))
	for i, n := range s.nodes {
		names[i] = n.Name
	}
	s.obs.Start(s.mw, names)
	for _, w := range s.mw {
		s.obs.WorkerState(0, w, "Idle", nil)
	}
	// The application thread submits tasks one after the other.
	s.eng.Post(0, s.submitCall, 0)
	s.eng.Run()
	if c, ok := s.sched.(sched.Closer); ok {
		// Its failure (an external agent's) explains the run's end first.
		if err := c.Close(s.lastEndS); err != nil {
			return nil, err
		}
	}
	if s.checkErr != nil {
		return nil, s.checkErr
	}
	if s.ndone != len(s.tasks) {
		var waiting []string
		for _, n := range s.nodes {
			if len(n.waiting) > 0 || n.stalled {
				waiting = append(waiting, fmt.Sprintf("%s (%d of %d bytes in use)", n.Name, n.Used(), n.Capacity))
			}
		}
		hint := ""
		if len(waiting) > 0 {
			hint = "; copies or allocations wait for memory on " + strings.Join(waiting, ", ") + ": the limit is too small for the tasks a GPU holds at once"
		}
		return nil, fmt.Errorf("deadlock: %d of %d tasks done at t=%.6f s%s", s.ndone, len(s.tasks), s.eng.NowS(), hint)
	}
	if s.opts.Check {
		if err := s.finalCheck(); err != nil {
			return nil, err
		}
	}
	if err := s.checkSamples(); err != nil {
		return nil, err
	}
	res := s.result()
	s.obs.End(res.MakespanS)
	return res, nil
}

func (s *Simulator) fail(err error) {
	if s.checkErr == nil {
		s.checkErr = err
	}
	s.eng.Halt()
}
