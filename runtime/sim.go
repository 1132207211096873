package runtime

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"unsafe"

	"github.com/starsim/starsim/emulator"
	"github.com/starsim/starsim/runtime/cost"
	"github.com/starsim/starsim/runtime/graph"
	"github.com/starsim/starsim/runtime/machine"
	"github.com/starsim/starsim/runtime/memory"
	"github.com/starsim/starsim/runtime/sched"
)

// worker is one worker (machine.Worker) and what its thread and device do.
type worker struct {
	machine.Worker

	pipeline     int // tasks it may have submitted to its device at once
	fetching     int // popped tasks whose inputs are being fetched
	held         int
	idle         bool
	running      *TaskState   // kernel on the device
	ready        []*TaskState // inputs present, waiting for the device
	busyS        float64      // time executing kernels
	waitS        float64      // time holding tasks, none running: waiting for data
	stateAt      float64      // when waitS was last brought up to date
	perKernel    []int        // tasks run, by Simulator.kernelNames index
	intervals    [][2]float64 // kernel [start, end), with SampleIntervalS only
	state        string       // last state reported to the observer
	stateTask    *TaskState
	fetchingTask *TaskState // the task whose inputs are being fetched
	ntasks       int
	nsync        int // synchronous kernels (Task.SyncGPU) queued or running
	// blocked: the driver thread waits in a synchronous reclaim. Kernels
	// already submitted run on; those that end are completed (ended), and
	// tasks whose inputs arrive are submitted (heldBack), when it returns.
	blocked         bool
	ended, heldBack []*TaskState
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
	net   *emulator.Network
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
	bufs     []memory.Buf        // every task's buffers (TaskState.bufs, bufSlots)
	deps     graph.Deps          // every task's dg
	lastEndS float64             // the latest kernel end: the makespan once all ran
	routes   [][]*emulator.Route // [src][dst]; nil: no direct route
	cost     *cost.Model
	// pushFreeS is when the submitting (application) thread is free: it
	// pays each submit cost and the push of each task it releases (s).
	pushFreeS float64
	// allocFreeS is when the device allocation lock is free (simulated s).
	allocFreeS float64
	dirs       [][]*direction

	ndone       int
	obs         Observer
	xferID      uint64
	queuedBytes float64 // bytes of every copy ever queued
	uncal       map[[2]string]bool
	kcache      map[machine.KernelKey]*machine.KernelStats
	checkErr    error
	chk         *checker // with Options.Check
	writeBacks  int      // evictions of a sole valid copy, written home first
	seq         uint64
	freeReqs    []*request // finished requests, for newRequest to reuse

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
	arrivedCall, progressCall                                     func(int)
	sendCall                                                      func(any)
	sentCall                                                      func(*emulator.Flow)
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
	s.net = emulator.NewNetwork(s.eng, emulator.NetworkOptions{Check: opts.Check})
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
	// tail of the task states' slab (page faults were two thirds of
	// buildGraph's time), while buildGraph fills it from the head.
	s.tasks = make([]TaskState, len(g.Tasks))
	type derived struct {
		d   *graph.Deps
		err error
	}
	depc := make(chan derived, 1)
	go func() {
		d, err := graph.DeriveDeps(g)
		if tail := s.tasks[len(s.tasks)*prefaultFrom/100:]; len(tail) > 0 {
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
	s.attachDeps(d.d)
	if opts.Check {
		s.chk = newChecker(s)
	}
	s.submitCall = s.submit
	s.pushCall = s.push
	s.popCall = func(wid int) { s.workerPop(s.workers[wid]) }
	s.readyCall = func(id int) { t := &s.tasks[id]; s.inputsReady(t.worker, t) }
	s.queuedCall = func(id int) { t := &s.tasks[id]; s.deviceQueued(t.worker, t) }
	s.sendCall, s.sentCall, s.arrivedCall, s.progressCall = s.send, s.sent, s.arrived, s.progress
	s.endCall = func(id int) { t := &s.tasks[id]; s.endKernel(t.worker, t) }
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
		Weights: weights, Explain: opts.Explain, ExplainTask: opts.ExplainTask, Fail: s.fail, Nodes: nodes, Power: m.Power})
	s.sched.Init(s.view)
	s.obs = opts.Observer
	if s.obs == nil {
		s.obs = NopObserver{}
	}
	s.startHetsimPaths()
	return s, nil
}

func (s *Simulator) buildNodes() error {
	specs := []memory.NodeSpec{{Name: "RAM", CapacityBytes: s.m.RAMBytes}}
	archs := []string{""}
	ncuda := s.opts.NCUDA
	for _, d := range s.m.Devices {
		if d.Kind != "cuda" && d.Kind != "hip" {
			continue // OpenCL views of the same GPUs are not used (STARPU_NOPENCL=0)
		}
		if ncuda >= 0 && s.ngpus >= ncuda {
			break
		}
		capacity := (d.MemoryBytes >> 20) * 9 / 10 << 20
		if l, ok := s.opts.GPUMemLimitByDevice[d.Name]; ok && l > 0 {
			capacity = l
		}
		if s.opts.GPUMemLimitBytes > 0 {
			capacity = s.opts.GPUMemLimitBytes
		} else if capacity <= 0 {
			// 0 means unlimited: a tiny memory must not become that.
			return fmt.Errorf("%s has %d bytes of memory: StarPU uses 90 %% of it in whole MiB, 0 here; a GPU needs at least %d bytes (2 MiB)", d.Name, d.MemoryBytes, MinGPUMemoryBytes)
		}
		specs = append(specs, memory.NodeSpec{Name: d.Name, CapacityBytes: capacity})
		archs = append(archs, d.Arch)
		s.ngpus++
	}
	if ncuda > s.ngpus {
		return fmt.Errorf("%d CUDA workers asked, the machine has %d GPUs", ncuda, s.ngpus)
	}
	if len(specs) > memory.MaxNodes {
		return fmt.Errorf("%d memory nodes (RAM and %d GPUs): at most %d are supported; use --ncuda to simulate fewer GPUs", len(specs), s.ngpus, memory.MaxNodes)
	}
	mem, err := memory.New(specs, s.opts.StarPUHiddenHoles)
	if err != nil {
		return err
	}
	s.mem = mem
	mem.CheckLRU = s.opts.Check
	mem.OverCapacity = plantedFault == faultOverCapacity
	mem.NoInvalidate = plantedFault == faultNoInvalidate
	for i, n := range mem.Nodes {
		s.nodeIdx[n.Name] = i
		s.nodes = append(s.nodes, &memNode{Node: n, arch: archs[i]})
	}
	return nil
}

func (s *Simulator) buildWorkers() error {
	ncpu := s.opts.NCPU
	if ncpu < 0 {
		ncpu = s.m.CPUCores - s.ngpus
	}
	if ncpu+s.ngpus > s.m.CPUCores {
		return fmt.Errorf("%d CPU workers + %d GPU drivers need %d cores, the machine has %d", ncpu, s.ngpus, ncpu+s.ngpus, s.m.CPUCores)
	}
	if ncpu < 0 {
		ncpu = 0
	}
	arch := s.m.CPUArch
	if arch == "" {
		arch = "cpu0"
	}
	// StarPU numbers CPU workers first, then CUDA workers.
	for i := 0; i < ncpu; i++ {
		s.workers = append(s.workers, &worker{Worker: machine.Worker{Name: fmt.Sprintf("CPU%d", i), Kind: machine.CPUWorker, Arch: arch, Node: 0}, pipeline: 1})
	}
	for _, n := range s.nodes[1:] {
		s.workers = append(s.workers, &worker{Worker: machine.Worker{Name: n.Name, Kind: machine.GPUWorker, Arch: n.arch, Node: n.ID}, pipeline: 2})
	}
	if len(s.workers) == 0 {
		return fmt.Errorf("no workers: --ncpu 0 and no GPU")
	}
	for i, w := range s.workers {
		w.ID = i
		w.idle = true
		s.mw = append(s.mw, &w.Worker)
	}
	return nil
}

func (s *Simulator) buildNetwork() error {
	ids := map[string]emulator.LinkID{}
	for _, l := range s.m.Links {
		sh := emulator.Shared
		if l.Fatpipe {
			sh = emulator.Fatpipe
		}
		id, err := s.net.AddLink(l.ID, l.BandwidthBps, l.LatencyS, sh)
		if err != nil {
			return err
		}
		ids[l.ID] = id
	}
	s.routes = make([][]*emulator.Route, len(s.nodes))
	s.dirs = make([][]*direction, len(s.nodes))
	names := make([]string, len(s.nodes))
	for i, a := range s.nodes {
		s.routes[i] = make([]*emulator.Route, len(s.nodes))
		s.dirs[i] = make([]*direction, len(s.nodes))
		names[i] = a.Name
	}
	s.cost = cost.New(s.m, names, s.ngpus, s.opts.StarPUTransferFactor)
	for i, a := range s.nodes {
		for j, b := range s.nodes {
			if i == j {
				continue
			}
			names, ok := s.m.Routes[machine.Dir{Src: a.Name, Dst: b.Name}]
			if !ok {
				if i != 0 && j != 0 {
					continue // device pair without peer route: through RAM
				}
				return fmt.Errorf("machine has no route %s->%s", a.Name, b.Name)
			}
			var links []emulator.LinkID
			for _, n := range names {
				links = append(links, ids[n])
			}
			r, err := s.net.NewRoute(links)
			if err != nil {
				return err
			}
			s.routes[i][j] = r
			s.dirs[i][j] = &direction{src: i, dst: j, handler: s.handlingNode(i, j)}
		}
	}
	for i := range s.nodes {
		for j := range s.nodes {
			if d := s.dirs[i][j]; d != nil {
				if h := s.nodes[d.handler]; d.dst == d.handler {
					h.handledIn = append(h.handledIn, d)
				} else {
					h.handledOut = append(h.handledOut, d)
				}
			}
		}
	}
	for _, p := range s.m.Serial {
		a, okA := s.nodePair(p[0])
		b, okB := s.nodePair(p[1])
		if okA && okB && s.dirs[a[0]][a[1]] != nil && s.dirs[b[0]][b[1]] != nil {
			da, db := s.dirs[a[0]][a[1]], s.dirs[b[0]][b[1]]
			da.serial = append(da.serial, db)
			db.serial = append(db.serial, da)
		}
	}
	return nil
}

func (s *Simulator) route(src, dst int) *emulator.Route { return s.routes[src][dst] }

func (s *Simulator) dir(src, dst int) *direction { return s.dirs[src][dst] }

// checkFits fails when a task's data cannot be on a GPU at once: such a
// run could only end in a deadlock. minCap is the smallest limited GPU
// memory (math.MaxInt64: none).
func (s *Simulator) checkFits(t *TaskState, minCap int64) error {
	need := memory.NeedBytes(t.Buffers(), minCap)
	if need <= minCap {
		return nil
	}
	for _, n := range s.nodes[1:] {
		if n.Capacity > 0 && need > n.Capacity {
			return &FitError{Node: n.Name, CapacityBytes: n.Capacity, Task: t.ID(), Name: t.Spec().Name, NeedBytes: need}
		}
	}
	return nil
}

// MinGPUMemoryBytes is the least memory a GPU can have: StarPU uses 90 %
// of it, in whole MiB, which is 0 below 2 MiB.
const MinGPUMemoryBytes = 2 << 20

// FitError says that a task's data cannot be on a GPU at once (New fails
// with it before any simulation: such a run could only deadlock).
type FitError struct {
	Node          string
	CapacityBytes int64
	Task          int
	Name          string
	NeedBytes     int64 // whole suballocator chunks, and large buffers
}

func (e *FitError) Error() string {
	return fmt.Sprintf("memory of %s (%d bytes) cannot hold the data of task %d (%s), %d bytes at once: raise the GPU memory limit",
		e.Node, e.CapacityBytes, e.Task, e.Name, e.NeedBytes)
}

// nodePair is d's memory nodes; ok is false when one is not in use.
func (s *Simulator) nodePair(d machine.Dir) ([2]int, bool) {
	i, ok1 := s.nodeIdx[d.Src]
	j, ok2 := s.nodeIdx[d.Dst]
	return [2]int{i, j}, ok1 && ok2
}

// prefaultFrom is where (percent of the slab) New's other core starts
// prefaulting the task states: about where buildGraph, which started
// earlier, will be by then.
const prefaultFrom = 40

// buildGraph makes the per-handle and per-task state. Each kind lives in
// one slab (handles, replicas, tasks, buffer lists, per-worker stats): a
// few large allocations instead of several per task, and tasks laid out in
// submission order.
func (s *Simulator) buildGraph() error {
	nn, nw := len(s.nodes), len(s.workers)
	if err := s.mem.SetHandles(s.g.Handles); err != nil {
		return err
	}
	s.incoming = make([]*request, len(s.g.Handles)*nn)
	s.hwont = make([]handleWontUse, len(s.g.Handles))
	nbuf := bufSlots * len(s.g.Tasks)
	for i := range s.g.Tasks {
		if n := len(s.g.Tasks[i].Buffers); n > bufSlots {
			nbuf += n
		}
	}
	s.bufs = make([]memory.Buf, bufSlots*len(s.g.Tasks), nbuf)
	var kslab []*machine.KernelStats // per-task entries (pinned or fixed-length tasks)
	var krows []workerStats          // and their slices
	type statsKey struct {
		model string
		fp    uint32
	}
	type statsEntry struct {
		key   statsKey
		stats *workerStats
	}
	shared := map[statsKey]*workerStats{}
	var last []statsEntry // by kernel name index
	minCap := int64(math.MaxInt64)
	for _, n := range s.nodes[1:] {
		if n.Capacity > 0 {
			minCap = min(minCap, n.Capacity)
		}
	}
	var kernelIdx map[string]int // once there are many names
	prevK := 0                   // the previous task's kernel
	for i := range s.g.Tasks {
		t := &s.g.Tasks[i]
		if t.ID != i {
			return fmt.Errorf("task %d has ID %d", i, t.ID)
		}
		ts := &s.tasks[i]
		// Tasks mostly come in runs of one kernel, whose names share one
		// string (compared by pointer here); a few names are found faster
		// by comparing than by hashing.
		k := -1
		if prevK < len(s.kernelNames) && sameString(s.kernelNames[prevK], t.Name) {
			k = prevK
		} else if kernelIdx == nil {
			for j, name := range s.kernelNames {
				if name == t.Name {
					k = j
					break
				}
			}
		} else if j, ok := kernelIdx[t.Name]; ok {
			k = j
		}
		if k < 0 {
			k = len(s.kernelNames)
			s.kernelNames = append(s.kernelNames, t.Name)
			if kernelIdx != nil {
				kernelIdx[t.Name] = k
			} else if len(s.kernelNames) > 8 {
				kernelIdx = make(map[string]int, 2*len(s.kernelNames))
				for j, name := range s.kernelNames {
					kernelIdx[name] = j
				}
			}
		}
		prevK = k
		if t.Priority != int(int32(t.Priority)) {
			return fmt.Errorf("task %d (%s): priority %d is out of range (a 32-bit integer)", i, t.Name, t.Priority)
		}
		ts.kernel, ts.syncGPU, ts.dg = int32(k), t.SyncGPU, &s.deps
		ts.wontUse = len(t.WontUse) > 0
		b0, n := bufSlots*i, len(t.Buffers)
		if n > bufSlots {
			b0 = len(s.bufs)
			s.bufs = s.bufs[:b0+n]
		}
		bufs := s.bufs[b0 : b0+n : b0+n]
		for j, a := range t.Buffers {
			if a.Handle < 0 || a.Handle >= s.mem.NumHandles() {
				return fmt.Errorf("task %d (%s): unknown handle %d", i, t.Name, a.Handle)
			}
			bufs[j] = memory.Buf{H: s.mem.Handle(a.Handle), Mode: a.Mode}
		}
		ts.spec = t
		ts.Set(i, int32(t.Priority), bufs, nil)
		if err := s.checkFits(ts, minCap); err != nil {
			return err
		}
		if t.Pinned && (t.Worker < 0 || t.Worker >= len(s.workers)) {
			return fmt.Errorf("task %d (%s) is pinned to worker %d; there are %d workers", i, t.Name, t.Worker, len(s.workers))
		}
		fresh := true // stats not yet checked runnable
		var stats *workerStats
		if t.Pinned || t.FixedUS > 0 || t.DurationsUS != nil {
			if cap(kslab)-len(kslab) < nw {
				kslab = make([]*machine.KernelStats, 0, nw*1024)
			}
			kslab = kslab[:len(kslab)+nw]
			if len(krows) == cap(krows) {
				krows = make([]workerStats, 0, 1024)
			}
			krows = append(krows, kslab[len(kslab)-nw:len(kslab):len(kslab)])
			stats = &krows[len(krows)-1]
			s.fillStats(*stats, t)
		} else {
			// Tasks of one kernel, model and footprint share their
			// per-worker entries. The last entries used per kernel name
			// are checked first: a kernel's tasks mostly share them.
			key := statsKey{t.Model, t.Footprint}
			for len(last) <= k {
				last = append(last, statsEntry{})
			}
			// Shared entries found were checked when made: an entry that
			// runs nowhere stops the build at its first task.
			if c := last[k]; c.stats != nil && c.key == key {
				stats, fresh = c.stats, false
			} else {
				st, ok := shared[key]
				if !ok {
					row := make(workerStats, nw)
					st = &row
					s.fillStats(row, t)
					shared[key] = st
				}
				stats, fresh = st, !ok
				last[k] = statsEntry{key, st}
			}
		}
		ts.Set(i, int32(t.Priority), bufs, stats)
		runnable := !fresh
		for j := 0; !runnable && j < len(*stats); j++ {
			runnable = (*stats)[j] != nil
		}
		if !runnable {
			if t.DurationsUS != nil {
				return fmt.Errorf("task %d (%s): kernel %s footprint %08x is calibrated on none of the workers' archs, and its durations name none of them", i, t.Name, t.Model, t.Footprint)
			}
			return fmt.Errorf("task %d (%s): kernel %s footprint %08x is calibrated on none of the workers' archs", i, t.Name, t.Model, t.Footprint)
		}
	}
	for _, w := range s.workers {
		w.perKernel = make([]int, len(s.kernelNames))
	}
	return nil
}

// sameString reports whether a and b are one string (same bytes in memory):
// a quick test of equality that may miss equal copies.
func sameString(a, b string) bool {
	return len(a) == len(b) && unsafe.StringData(a) == unsafe.StringData(b)
}

// attachDeps gives the tasks built by buildGraph their dependencies (the
// tasks' dg points to s.deps).
func (s *Simulator) attachDeps(d *graph.Deps) {
	s.deps = *d
	s.npending, s.succOff, s.succ = d.NPending, d.SuccOff, d.Succ
	s.wontUseAfter = d.WontUseAfter
}

// handleWontUse is a handle's pending starpu_data_wont_use: armed until
// the task after ends (-1: none).
type handleWontUse struct {
	after int32
	armed bool
}

// fillStats sets st[w] to t's model entry on worker w, else to its
// duration from the graph (Task.DurationsUS): nil where t cannot run (an
// uncalibrated arch the graph gives no duration for, or not the worker it
// is pinned to).
func (s *Simulator) fillStats(st []*machine.KernelStats, t *graph.Task) {
	for wi, w := range s.workers {
		if t.Pinned && wi != t.Worker {
			continue
		}
		if t.FixedUS > 0 {
			st[wi] = &machine.KernelStats{MeanUS: t.FixedUS}
			continue
		}
		if k, ok := s.lookupKernel(t, w); ok {
			st[wi] = k
		} else if us, ok := t.DurationOn(w.Arch); ok && us > 0 {
			st[wi] = &machine.KernelStats{MeanUS: us} // the file's, where the calibration has none
		} else {
			s.uncal[[2]string{t.Model, w.Arch}] = true
		}
	}
}

// lookupKernel returns the model entry of t on w's arch, if calibrated.
func (s *Simulator) lookupKernel(t *graph.Task, w *worker) (*machine.KernelStats, bool) {
	key := machine.KernelKey{Model: t.Model, Arch: w.Arch, Footprint: t.Footprint}
	if k, ok := s.kcache[key]; ok {
		return k, k != nil
	}
	k, ok := s.m.Kernels[key]
	var kp *machine.KernelStats
	if ok && k.MeanUS > 0 {
		kp = &k
	}
	s.kcache[key] = kp
	return kp, kp != nil
}

// kernelStats returns t's model entry on w (nil: uncalibrated).
func (s *Simulator) kernelStats(t *TaskState, w *worker) *machine.KernelStats {
	return t.Stats(w.ID)
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
	s.eng.PostCall(0, s.submitCall, 0)
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

// submit submits task i, then schedules the next submission after the
// submit cost. Its dependencies were derived before the run (deps):
// those still running hold it back.
func (s *Simulator) submit(i int) {
	if i >= len(s.tasks) {
		return
	}
	t := &s.tasks[i]
	t.submitS = s.eng.NowS()
	if t.wontUse { // (without reading spec, a cache miss per task)
		for _, hid := range t.Spec().WontUse {
			s.wontUse(s.mem.Handle(hid), s.wontUseAfter[s.wuNext])
			s.wuNext++
		}
	}
	// The submitting thread pays the submit cost, then, for a task with
	// nothing to wait for, the push cost, before it submits the next
	// (_starpu_submit_job, then _starpu_push_task).
	s.pushFreeS = max(s.pushFreeS, s.eng.NowS()) + s.m.Costs.TaskSubmitS
	s.npending[i]--
	if s.npending[i] == 0 {
		s.release(i, &s.pushFreeS)
	}
	if i+1 < len(s.tasks) {
		s.eng.PostCallAfter(s.pushFreeS-s.eng.NowS(), s.submitCall, i+1)
	}
}

// release makes t ready: the releasing thread, whose clock is *freeS,
// pushes it to the scheduler after the push cost (_starpu_push_task sleeps
// 1 µs in simulation). Tasks released together are pushed one after the
// other; the thread does nothing else meanwhile (a worker pops after).
// It takes the task's id: reading it from the task, which is mostly not
// in the cache yet, would wait for the memory (a store does not).
func (s *Simulator) release(id int, freeS *float64) {
	now := s.eng.NowS()
	s.tasks[id].readyS = now
	*freeS = max(*freeS, now) + s.m.Costs.TaskPushS
	s.eng.PostCallAfter(*freeS-now, s.pushCall, id)
}

// threadClock is when w's thread is free: a GPU worker's is its node's
// driver, which also issues the node's copies.
func (s *Simulator) threadClock(w *worker) *float64 {
	if w.Kind == machine.GPUWorker {
		return &s.nodes[w.Node].issueFreeS
	}
	return &w.threadFreeS
}

// push hands task id to the scheduler and wakes the idle workers.
func (s *Simulator) push(id int) {
	t := &s.tasks[id]
	s.obs.Push(s.eng.NowS(), t)
	if d := s.sched.Push(&t.Task); d.Prefetch && d.Worker != nil {
		s.prefetch(t, s.workers[d.Worker.ID])
	}
	s.wakeIdle()
}

func (s *Simulator) wakeIdle() {
	for _, w := range s.workers {
		if w.idle && w.canPop() {
			w.idle = false
			s.eng.PostCallAfter(0, s.popCall, w.ID)
		}
	}
}

// workerPop lets w take tasks from the scheduler while its pipeline has room.
// A GPU worker's driver thread also issues its node's copies: it makes
// them progress before it pops (StarPU's driver loop), and while it is busy
// issuing them, the pop waits.
func (s *Simulator) workerPop(w *worker) {
	if w.blocked {
		return // popped again when the driver returns
	}
	if w.Kind == machine.GPUWorker {
		if node := s.nodes[w.Node]; node.progressPosted {
			// Pop right after the pending pass (posted before this).
			s.eng.PostCallAfter(node.progressAtS-s.eng.NowS(), s.popCall, w.ID)
			return
		}
	}
	if free := *s.threadClock(w); free > s.eng.NowS() {
		s.eng.PostCallAfter(free-s.eng.NowS(), s.popCall, w.ID)
		return
	}
	for w.canPop() {
		tk := s.sched.Pop(&w.Worker)
		if tk == nil {
			w.idle = true
			s.updateState(w)
			return
		}
		t := &s.tasks[tk.ID()]
		s.obs.Pop(s.eng.NowS(), &w.Worker, t)
		s.accountWait(w)
		w.held++
		w.fetching++
		t.worker = w
		w.fetchingTask = t
		s.updateState(w)
		s.fetchInputs(w, t)
	}
}

// fetchInputs requests every buffer of t on w's node; the task is ready for
// the device once all have arrived.
func (s *Simulator) fetchInputs(w *worker, t *TaskState) {
	prefetched := t.prefetched
	pn := int(t.prefetchNode)
	if prefetched {
		for _, b := range t.Buffers() {
			s.mem.Unprotect(b.H, pn)
		}
		t.prefetched = false
		s.nodes[pn].Changed()
	}
	t.nfetching = 1
	done := waiter{call: s.arrivedCall, arg: t.ID()}
	for _, b := range t.Buffers() {
		h := b.H
		s.mem.Pin(h, w.Node)
		if plantedFault == faultKernelBeforeData && b.Mode&graph.R != 0 {
			continue
		}
		t.nfetching++
		if b.Mode&graph.R == 0 {
			s.allocate(h, w.Node, memory.Fetch, func() { s.arrived(t.ID()) })
			continue
		}
		s.fetch(h, w.Node, memory.Fetch, t.Priority(), done)
	}
	if prefetched {
		// After the fetches: a hit has already moved its copy (touch).
		// A fetch's reclaim reads protection, not lists.
		for _, b := range t.Buffers() {
			s.mem.Relist(b.H, pn)
		}
	}
	s.arrived(t.ID())
}

// arrived counts one of task id's inputs in; the last one makes the task
// ready after the per-buffer fetch cost.
func (s *Simulator) arrived(id int) {
	t := &s.tasks[id]
	t.nfetching--
	if t.nfetching == 0 {
		s.eng.PostCallAfter(s.m.Costs.FetchInputPerBufS*float64(distinctBufs(t.Buffers())), s.readyCall, t.ID())
	}
}

// distinctBufs counts the different data among bufs: StarPU's fetch takes
// a data a task lists twice once (_starpu_fetch_task_input skips the
// duplicate), and pays the per-buffer cost once.
func distinctBufs(bufs []memory.Buf) int {
	n := 0
	for k, b := range bufs {
		dup := false
		for _, c := range bufs[:k] {
			dup = dup || c.H == b.H
		}
		if !dup {
			n++
		}
	}
	return n
}

// inputsReady: t's inputs are on w's node. A GPU driver then spends the
// device-queue cost submitting the kernel to its device (StarPU's
// STARPU_SIMGRID_CUDA_QUEUE_COST sleep on the driver thread), so that cost
// overlaps the kernel already running there rather than delaying the
// device; until then the driver pops nothing.
func (s *Simulator) inputsReady(w *worker, t *TaskState) {
	if w.Kind == machine.GPUWorker && s.m.Costs.DeviceTaskQueueS > 0 {
		s.eng.PostCallAfter(s.m.Costs.DeviceTaskQueueS, s.queuedCall, t.ID())
		return
	}
	s.deviceQueued(w, t)
}

// deviceQueued: t's inputs are in; its driver submits it to w's device.
func (s *Simulator) deviceQueued(w *worker, t *TaskState) {
	w.fetching--
	if w.blocked {
		w.heldBack = append(w.heldBack, t)
		return
	}
	s.submitKernel(w, t)
}

// submitKernel: t waits on w's device for its turn.
func (s *Simulator) submitKernel(w *worker, t *TaskState) {
	w.ready = append(w.ready, t)
	if t.syncGPU {
		w.nsync++
	}
	s.startKernel(w)
	if w.canPop() {
		w.idle = false
		s.workerPop(w)
	}
}

// canPop says whether w may take another task. A CPU worker holds one task
// at a time. A GPU worker, like StarPU's CUDA driver, fetches the inputs of
// one task at a time and pops only while fewer than STARPU_CUDA_PIPELINE (2)
// tasks are submitted to the device (running or queued there), and not at
// all while a synchronous kernel (Task.SyncGPU) is queued or running: the
// driver thread waits on it.
func (w *worker) canPop() bool {
	if w.Kind == machine.CPUWorker {
		return w.held == 0
	}
	if w.nsync > 0 {
		return false // the driver thread is blocked on it
	}
	onDevice := len(w.ready)
	if w.running != nil {
		onDevice++
	}
	return w.fetching == 0 && onDevice < w.pipeline
}

// startKernel starts the next ready task on w's device if it is free.
func (s *Simulator) startKernel(w *worker) {
	if (w.running != nil && (plantedFault != faultOverlapKernels || w.Kind != machine.GPUWorker)) || len(w.ready) == 0 {
		return
	}
	t := w.ready[0]
	// Shift rather than reslice, so appends reuse the slice's array.
	n := copy(w.ready, w.ready[1:])
	w.ready[n] = nil
	w.ready = w.ready[:n]
	s.accountWait(w)
	w.running = t
	s.updateState(w)
	now := s.eng.NowS()
	if s.opts.Check {
		s.checkKernelStart(w, t)
		for _, id := range t.preds() {
			if p := &s.tasks[id]; !p.done {
				s.fail(fmt.Errorf("task %d (%s) starts before its dependency %d (%s) ended", t.ID(), t.Spec().Name, p.ID(), p.Spec().Name))
			}
		}
		for _, b := range t.Buffers() {
			if !b.H.Rep(w.Node).Allocated() {
				s.fail(fmt.Errorf("task %d (%s) starts on %s without %s allocated", t.ID(), t.Spec().Name, w.Name, b.H.Spec().Name))
			}
		}
		for _, b := range t.Buffers() {
			h := b.H
			if b.Mode&graph.R != 0 && h.Rep(w.Node).State() == memory.Invalid {
				s.fail(fmt.Errorf("task %d (%s) starts on %s without a valid %s", t.ID(), t.Spec().Name, w.Name, h.Spec().Name))
			}
			if err := s.mem.CheckHandle(h); err != nil {
				s.fail(err)
			}
		}
	}
	if w.Kind == machine.GPUWorker && t.syncGPU {
		s.stallDriver(w.Node)
	}
	s.sched.PreExec(&w.Worker, &t.Task)
	durS := s.durationS(t, w)
	t.startS = now
	s.eng.PostCallAfter(durS, s.endCall, t.ID())
}

func (s *Simulator) durationS(t *TaskState, w *worker) float64 {
	return cost.SampleUS(s.kernelStats(t, w), s.opts.Durations, s.rng) * 1e-6
}

// updateState reports w's state to the observer when it changed: executing
// a kernel, else fetching the inputs of a popped task, else idle.
func (s *Simulator) updateState(w *worker) {
	state, task := "Idle", (*TaskState)(nil)
	switch {
	case w.running != nil:
		state, task = "Executing", w.running
	case w.held > 0:
		state, task = "FetchingInput", w.fetchingTask
	}
	if state == w.state && task == w.stateTask {
		return
	}
	w.state, w.stateTask = state, task
	s.obs.WorkerState(s.eng.NowS(), &w.Worker, state, task)
}

// accountWait adds the time since the last state change to w's waiting time
// if w was holding tasks with none running.
func (s *Simulator) accountWait(w *worker) {
	now := s.eng.NowS()
	if w.running == nil && w.held > 0 {
		w.waitS += now - w.stateAt
	}
	w.stateAt = now
}

func (s *Simulator) endKernel(w *worker, t *TaskState) {
	now := s.eng.NowS()
	if s.chk != nil {
		s.checkKernelEnd(w, t)
	}
	t.endS = now
	s.lastEndS = max(s.lastEndS, now)
	w.busyS += now - t.startS
	if s.opts.SampleIntervalS > 0 {
		w.intervals = append(w.intervals, [2]float64{t.startS, now})
	}
	if w.blocked {
		// The device goes on with the next submitted kernel; the driver
		// notices this one's end when it returns.
		s.accountWait(w)
		w.running = nil
		w.ended = append(w.ended, t)
		if len(w.ready) > 0 && !w.ready[0].syncGPU {
			s.startKernel(w) // a synchronous kernel needs the driver thread
		}
		s.updateState(w)
		return
	}
	s.completeKernel(w, t)
}

// completeKernel is the driver's part of t's end on w: data states,
// successors, and what w does next.
func (s *Simulator) completeKernel(w *worker, t *TaskState) {
	w.perKernel[t.kernel]++
	w.ntasks++
	// MSI: a write makes w's node the owner and invalidates every other copy.
	for _, b := range t.Buffers() {
		h := b.H
		if b.Mode&graph.W != 0 {
			s.mem.Write(h, w.Node)
			if s.chk != nil {
				s.checkWrite(h, w.Node)
			}
		}
		s.mem.Unpin(h, w.Node)
	}
	s.sched.PostExec(&w.Worker, &t.Task)
	s.obs.TaskDone(t)
	s.accountWait(w)
	if w.running == t {
		w.running = nil
	}
	if t.syncGPU {
		w.nsync--
	}
	w.held--
	t.done = true
	s.ndone++
	for _, q := range s.succ[s.succOff[t.ID()]:s.succOff[t.ID()+1]] {
		s.npending[q]--
		if s.npending[q] == 0 {
			s.release(int(q), s.threadClock(w))
		}
	}
	for _, b := range t.Buffers() {
		s.wontUseDone(b.H, t)
	}
	s.startKernel(w)
	s.updateState(w)
	if w.canPop() {
		w.idle = false
		s.workerPop(w)
	}
	s.nodes[w.Node].memoryFreed(s)
	s.tidy(w.Node)
	if w.Kind == machine.GPUWorker && t.syncGPU {
		s.resumeDriver(w.Node)
	}
}

// finalCheck verifies the end state: no copy queued, pinned or protected;
// each node's used memory is the sum of its allocated copies; every handle
// has a valid copy; every byte queued for a copy was copied exactly once.
func (s *Simulator) finalCheck() error {
	if err := s.checkEnd(); err != nil {
		return err
	}
	for i := range s.dirs {
		for _, d := range s.dirs[i] {
			if d != nil && (len(d.queue) > 0 || d.issued > 0 || len(d.pend) > 0) {
				return fmt.Errorf("check: %d copies %s->%s left queued at the end", len(d.queue), s.nodes[d.src].Name, s.nodes[d.dst].Name)
			}
		}
	}
	if err := s.mem.CheckEnd(); err != nil {
		return err
	}
	for i := 0; i < s.mem.NumHandles(); i++ {
		h := s.mem.Handle(i)
		for n := range s.nodes {
			if (h.Loading()&(1<<uint(n)) != 0) != (s.incoming[i*len(s.nodes)+n] != nil) {
				return fmt.Errorf("check: %s on %s: loading bit and incoming copy disagree", h.Spec().Name, s.nodes[n].Name)
			}
		}
	}
	var counted float64
	for i := range s.dirs {
		for _, d := range s.dirs[i] {
			if d != nil {
				counted += d.bytes
			}
		}
	}
	if counted != s.queuedBytes {
		return fmt.Errorf("check: %v bytes queued for copies, %v copied", s.queuedBytes, counted)
	}
	return nil
}

func (s *Simulator) fail(err error) {
	if s.checkErr == nil {
		s.checkErr = err
	}
	s.eng.Halt()
}

// Stats are counters of a run.
type Stats struct {
	Allocations, Evictions, WriteBacks int
	BytesByDir                         map[string]float64
	TransfersByDir                     map[string]int
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// blockWorker blocks or unblocks the GPU worker of node n (a synchronous
// reclaim on its driver thread). Unblocking completes the kernels that ended
// meanwhile, submits the tasks whose inputs arrived, and pops.
func (s *Simulator) blockWorker(n int, on bool) {
	for _, w := range s.workers {
		if w.Kind != machine.GPUWorker || w.Node != n {
			continue
		}
		if on {
			w.blocked = true
			continue
		}
		w.blocked = false
		ended, back := w.ended, w.heldBack
		w.ended, w.heldBack = nil, nil
		for _, t := range ended {
			s.completeKernel(w, t)
		}
		for _, t := range back {
			s.submitKernel(w, t)
		}
		if w.canPop() {
			w.idle = false
			s.workerPop(w)
		}
	}
}
