package sim

import (
	"fmt"
	"math"
	"slices"
	"unsafe"

	"github.com/starsim/starsim/emulator/network"
	"github.com/starsim/starsim/runtime/cost"
	"github.com/starsim/starsim/runtime/graph"
	"github.com/starsim/starsim/runtime/machine"
	"github.com/starsim/starsim/runtime/memory"
	"github.com/starsim/starsim/runtime/sched"
)

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
	s.idleSet = make([]uint64, (len(s.workers)+63)/64)
	s.cpuSet = make([]uint64, len(s.idleSet))
	for i, w := range s.workers {
		w.ID = i
		s.setIdle(w, true)
		if w.Kind == machine.CPUWorker {
			s.cpuSet[i/64] |= 1 << (i % 64)
		}
		s.mw = append(s.mw, &w.Worker)
	}
	return nil
}

func (s *Simulator) buildNetwork() error {
	ids := map[string]network.LinkID{}
	for _, l := range s.m.Links {
		sh := network.Shared
		if l.Fatpipe {
			sh = network.Fatpipe
		}
		id, err := s.net.AddLink(l.ID, l.BandwidthBps, l.LatencyS, sh)
		if err != nil {
			return err
		}
		ids[l.ID] = id
	}
	s.routes = make([][]*network.Route, len(s.nodes))
	s.dirs = make([][]*direction, len(s.nodes))
	names := make([]string, len(s.nodes))
	for i, a := range s.nodes {
		s.routes[i] = make([]*network.Route, len(s.nodes))
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
			var links []network.LinkID
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

func (s *Simulator) route(src, dst int) *network.Route { return s.routes[src][dst] }

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
	if sp := s.spare; sp != nil && cap(sp.bufs) >= nbuf {
		s.bufs, sp.bufs = sp.bufs[:bufSlots*len(s.g.Tasks)], nil // zero (Spare)
	} else {
		s.bufs = make([]memory.Buf, bufSlots*len(s.g.Tasks), nbuf)
		if nbuf > 0 {
			hugePages(unsafe.Pointer(unsafe.SliceData(s.bufs)), uintptr(nbuf)*unsafe.Sizeof(s.bufs[0]))
		}
	}
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
	// StarPU clamps priorities at submission into the scheduler's range.
	plo, phi := int32(math.MinInt32), int32(math.MaxInt32)
	if s.opts.StarPUPrioClamp && s.opts.NewScheduler == nil {
		if r, ok := sched.PriorityRange(s.opts.Sched); ok {
			plo, phi = int32(r.Min), int32(r.Max)
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
		prio := min(max(int32(t.Priority), plo), phi)
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
		starpuBufferOrder(bufs)
		ts.spec = t
		ts.Set(i, prio, bufs, nil)
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
		ts.Set(i, prio, bufs, stats)
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
// tasks' dg points to s.deps). Shared dependencies (Options.Deps) get a
// copy of the counts, which the run decrements.
func (s *Simulator) attachDeps(d *graph.Deps, shared bool) {
	s.deps = *d
	if shared {
		if sp := s.spare; sp != nil && cap(sp.npending) >= len(d.NPending) {
			s.deps.NPending, sp.npending = append(sp.npending[:0], d.NPending...), nil
		} else {
			s.deps.NPending = slices.Clone(d.NPending)
		}
	}
	d = &s.deps
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

// starpuBufferOrder sorts a task's buffers in StarPU's order
// (_starpu_sort_task_handles, src/datawizard/sort_data_handles.c), the order
// in which the runtime prefetches, fetches and releases a task's data
// (_STARPU_JOB_GET_ORDERED_BUFFERS): see graph.Handle's Tile and Order.
// The kernel still sees the codelet's order (traces keep it).
func starpuBufferOrder(bufs []memory.Buf) {
	for i := 1; i < len(bufs); i++ {
		for j := i; j > 0 && bufBefore(bufs[j], bufs[j-1]); j-- {
			bufs[j], bufs[j-1] = bufs[j-1], bufs[j]
		}
	}
}

func bufBefore(a, b memory.Buf) bool {
	sa, sb := a.H.Spec(), b.H.Spec()
	if sa.Tile != sb.Tile {
		return sa.Tile
	}
	if sa.Tile {
		if aw, bw := a.Mode&graph.W != 0, b.Mode&graph.W != 0; aw != bw {
			return aw
		}
		if ar, br := a.Mode&graph.R != 0, b.Mode&graph.R != 0; ar != br {
			return ar
		}
		if sa.Order != sb.Order {
			return sa.Order < sb.Order
		}
	}
	return sa.ID < sb.ID
}
