package sim

import (
	"fmt"
	"math/bits"
	"unsafe"

	"github.com/starsim/starsim/runtime/cost"
	"github.com/starsim/starsim/runtime/graph"
	"github.com/starsim/starsim/runtime/machine"
	"github.com/starsim/starsim/runtime/memory"
	"github.com/starsim/starsim/runtime/sched"
)

// submit submits task i, then schedules the next submission after the
// submit cost. Its dependencies were derived before the run (deps):
// those still running hold it back.
func (s *Simulator) submit(i int) {
	if i >= len(s.tasks) {
		return
	}
	t := &s.tasks[i]
	t.submitS = s.eng.NowS()
	// (t.wontUse: without reading spec, a cache miss per task.)
	loop := s.opts.StarPUDriverLoop
	if t.wontUse && !loop {
		s.submitWontUse(t)
	}
	// The submitting thread pays the submit cost, then, for a task with
	// nothing to wait for, the push cost, then (with StarPUDriverLoop) the
	// wont_use calls the application makes after it, before it submits
	// the next (_starpu_submit_job, then _starpu_push_task).
	s.pushFreeS = max(s.pushFreeS, s.eng.NowS()) + s.m.Costs.TaskSubmitS
	s.npending[i]--
	if s.npending[i] == 0 {
		s.release(i, &s.pushFreeS, nil)
	}
	if t.wontUse && loop {
		s.submitWontUse(t)
	}
	if i+1 < len(s.tasks) {
		s.eng.Post(s.pushFreeS-s.eng.NowS(), s.submitCall, i+1)
	}
}

// submitWontUse makes the wont_use calls the application makes right
// after submitting t.
func (s *Simulator) submitWontUse(t *TaskState) {
	for _, hid := range t.Spec().WontUse {
		s.wontUse(s.mem.Handle(hid), s.wontUseAfter[s.wuNext], &s.pushFreeS)
		s.wuNext++
	}
}

// release makes t ready: the releasing thread, whose clock is *freeS,
// pushes it to the scheduler after the push cost (_starpu_push_task sleeps
// 1 µs in simulation). Tasks released together are pushed one after the
// other; the thread does nothing else meanwhile (a worker pops after).
// It takes the task's id: reading it from the task, which is mostly not
// in the cache yet, would wait for the memory (a store does not). by is
// the releasing worker (nil: the application thread), whose thread pushes
// (sched.View.Pusher).
func (s *Simulator) release(id int, freeS *float64, by *worker) {
	now := s.eng.NowS()
	t := &s.tasks[id]
	t.readyS = now
	// The push's prefetch reads prefetched, on the state's second cache
	// line: it is false until the push, and storing it here brings that
	// line in too, without stalling, before the push needs it.
	t.prefetched = false
	// The push reads the task's buffers first thing (the scheduler's
	// transfer penalties): their slab line, a miss, comes in meanwhile.
	// (A task with more buffers than bufSlots has them elsewhere: the
	// hint is then lost, harmlessly.)
	prefetch(unsafe.Pointer(&s.bufs[bufSlots*id]))
	*freeS = max(*freeS, now) + s.m.Costs.TaskPushS
	p := 0 // the pusher rides in the bits above the id (< 2^31)
	if by != nil {
		p = by.ID + 1
	}
	if s.threadQ != nil {
		s.threadAdd(p, int32(id))
	}
	s.eng.Post(*freeS-now, s.pushCall, threadArg(p, int32(id), false))
}

// markWoken records which sleeping GPU drivers a push wakes
// (Options.StarPUDriverLoop): the worker the scheduler queued the task
// for (a dm scheduler wakes only it), else every one.
func (s *Simulator) markWoken(to *machine.Worker) {
	if to != nil {
		s.workers[to.ID].woken = true
		return
	}
	for _, w := range s.workers {
		w.woken = w.asleep
	}
}

// threadClock is when w's thread is free: a GPU worker's is its node's
// driver, which also issues the node's copies.
func (s *Simulator) threadClock(w *worker) *float64 {
	if w.Kind == machine.GPUWorker {
		return &s.nodes[w.Node].issueFreeS
	}
	return &w.threadFreeS
}

// push hands a task to the scheduler and wakes the idle workers. arg is
// the task's id, and above 32 bits the pushing worker's ID + 1 (0: the
// application thread); with Options.StarPUDriverLoop the push is an item
// of that thread's queue (threadDue).
func (s *Simulator) push(arg int) {
	p := -1
	if s.threadQ != nil {
		var id int32
		var reposted bool
		p, id, reposted = splitThreadArg(arg)
		if !s.threadDue(p, id, reposted, s.m.Costs.TaskPushS) {
			return
		}
		arg = threadArg(p, id, false)
	}
	t := &s.tasks[arg&(1<<32-1)]
	if s.observed {
		s.obs.Push(s.eng.NowS(), t)
	}
	var by *machine.Worker
	if w := arg >> 32; w > 0 {
		by = s.mw[w-1]
	}
	s.view.SetPusher(by)
	d := s.sched.Push(&t.Task)
	if d.Prefetch && d.Worker != nil {
		w := s.workers[d.Worker.ID]
		switch {
		case p >= 0 && s.opts.StarPUPrefetchLockAtEnd && !s.trylocks(p, int32(t.ID())):
			s.prefetchLockAtEnd(t, w, p)
		case s.prefMarks == nil:
			s.prefetch(t, w)
		default:
			s.racingPrefetch(t, w, p)
		}
	}
	if s.threadQ != nil {
		s.markWoken(d.Worker)
	}
	s.wakeIdle()
}

// racingPrefetch is prefetch with Options.StarPUPushRace: a prefetch
// that posts a request holds the data's header lock while it waits on the
// request list's mutex (_starpu_post_data_request), so another thread's
// prefetch of that data at the same instant finds it taken, and StarPU's
// simulated spin lock sleeps spinWaitS before it retries
// (common/thread.h): thread p's next item waits for it.
func (s *Simulator) racingPrefetch(t *TaskState, w *worker, p int) {
	spin := s.prefetchMeets(t, w, p, 0, len(t.Buffers()))
	s.prefetch(t, w)
	s.spinAfter(p, spin)
}

// spinAfter delays thread p's next item by StarPU's spin-lock sleep when
// its prefetch met another thread's on a header lock (spin).
func (s *Simulator) spinAfter(p int, spin bool) {
	if spin {
		q := &s.threadQ[p]
		q.lastEndS = max(q.lastEndS, s.eng.NowS()+spinWaitS)
	}
}

// prefetchMeets says whether thread p's prefetch of t's buffers from to
// to (excluded) on w's node meets another thread's prefetch of that
// instant on a header lock (prefetchMark.meet).
func (s *Simulator) prefetchMeets(t *TaskState, w *worker, p, from, to int) bool {
	now := s.eng.NowS()
	spin := false
	for _, b := range t.Buffers()[from:to] {
		if b.Mode&graph.R == 0 {
			continue
		}
		// Not valid there: this prefetch posts a request, holding the lock.
		r := b.H.Rep(w.Node)
		if s.prefMarks[b.H.ID()].meet(now, int32(p), r.State() == memory.Invalid || !r.Allocated()) {
			spin = true
		}
	}
	return spin
}

// pushPrefetch is thread p's prefetch of t's buffers from to to
// (excluded) on w's node, from == 0 being the push's own, a later part the
// rest it waited for (Options.StarPUPrefetchLockAtEnd): nothing if the
// task was popped meanwhile (its fetch brings the data).
func (s *Simulator) pushPrefetch(t *TaskState, w *worker, p, from, to int) {
	if s.opts.NoPrefetch {
		return
	}
	if from == 0 {
		if t.prefetched {
			return
		}
		t.prefetched = true
		t.prefetchNode = int32(w.Node)
	} else if !t.prefetched || t.worker != nil {
		return
	}
	spin := s.prefMarks != nil && s.prefetchMeets(t, w, p, from, to)
	s.prefetchBufs(t, w, from, to)
	s.spinAfter(p, spin)
}

// prefetchMark is a handle's last prefetch that posted a request
// (Options.StarPUPushRace): when (simulated s), and by which thread.
type prefetchMark struct {
	atS float64
	by  int32
}

// meet is thread p's prefetch of the handle at nowS, which posts a request
// (posts) or finds the data there: it reports whether it meets, on the
// handle's header lock, another thread's prefetch of that instant that
// posted one, and records its own when it posts.
func (m *prefetchMark) meet(nowS float64, p int32, posts bool) bool {
	met := m.atS == nowS && m.by != p
	if posts {
		m.atS, m.by = nowS, p
	}
	return met
}

// spinWaitS is what StarPU's simulated spin lock sleeps when it finds the
// lock taken (starpu_sleep(0.000001) in common/thread.h; simulated s).
const spinWaitS = 1e-6

// lockEpsS absorbs rounding in comparing instants computed along
// different paths (simulated s; far below any cost).
const lockEpsS = 1e-10

// wakeIdle posts a pop, now, for each idle worker that may pop. The pops
// are posted back to back, so they would run one after the other, with
// nothing between them: they are one event (wake) that runs them in order,
// counted as one event each. An idle worker's pop mostly finds nothing (on
// a machine of 40 cores, most pops are such): the idle workers are a bit
// set, so that neither this nor wake reads the state of a worker whose
// pop is bound to find nothing.
func (s *Simulator) wakeIdle() {
	n := 0
	nw := len(s.idleSet)
	for k := 0; k < nw; k++ {
		// An idle CPU worker holds no task, so it may pop (canPop); a GPU
		// worker's room depends on its device.
		set := s.idleSet[k] & s.cpuSet[k]
		for gpus := s.idleSet[k] &^ s.cpuSet[k]; gpus != 0; gpus &= gpus - 1 {
			b := bits.TrailingZeros64(gpus)
			if s.workers[k*64+b].canPop() {
				set |= 1 << b
			}
		}
		s.idleSet[k] &^= set
		s.wakeSets = append(s.wakeSets, set)
		n += bits.OnesCount64(set)
	}
	switch n {
	case 0:
		s.wakeSets = s.wakeSets[:len(s.wakeSets)-nw]
	case 1:
		id := 0
		for k, set := range s.wakeSets[len(s.wakeSets)-nw:] {
			if set != 0 {
				id = k*64 + bits.TrailingZeros64(set)
			}
		}
		s.wakeSets = s.wakeSets[:len(s.wakeSets)-nw]
		s.eng.Post(0, s.popCall, id)
	default:
		s.eng.Post(0, s.wakeCall, n)
	}
}

// wake runs the pops of the next set of workers of wakeSets, woken
// together by wakeIdle, in the order of their IDs. Events posted for now
// run in posting order, so the wakes run in the order wakeIdle posted
// them, each taking its set from the head of wakeSets.
//
// A CPU worker's pop finds nothing when its queue is empty
// (sched.QueueCounter): an idle CPU worker whose thread is free (it gets
// busy only pushing the tasks its own kernels release) would only be made
// idle again by workerPop, its state unchanged (updateState reports
// nothing).
// No pop changes another worker's queue, nor reads whether it is idle, so
// such workers are made idle again at once, with their pops counted, and
// the others pop in order. The pops stop, as the engine would between
// events, when one halts the run.
func (s *Simulator) wake(int) {
	nw := len(s.idleSet)
	sets := s.wakeSets[s.wakeHead : s.wakeHead+nw]
	s.wakeHead += nw
	first := true
pops:
	for k, set := range sets {
		if s.queued != nil {
			empty := set & s.cpuSet[k] &^ s.nonEmpty[k]
			for e := empty; e != 0; e &= e - 1 {
				// (a thread still busy, its push waiting for a header
				// lock, pops later: workerPop posts that pop)
				if i := bits.TrailingZeros64(e); s.workers[k*64+i].threadFreeS > s.eng.NowS() || s.workers[k*64+i].clockWait {
					empty &^= 1 << i
				}
			}
			if empty != 0 {
				// Counted as the pops they are: the first is this event.
				c := bits.OnesCount64(empty)
				if first {
					first, c = false, c-1
				}
				s.eng.RunInlineN(c)
				s.idleSet[k] |= empty
				set &^= empty
			}
		}
		for ; set != 0; set &= set - 1 {
			if !first {
				if s.eng.Halted() {
					break pops // as the engine would before the next event
				}
				s.eng.RunInline()
			}
			first = false
			s.workerPop(s.workers[k*64+bits.TrailingZeros64(set)])
		}
	}
	if s.wakeHead == len(s.wakeSets) {
		s.wakeSets, s.wakeHead = s.wakeSets[:0], 0
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
	if s.popPutOff(w) {
		return
	}
	if w.Kind == machine.GPUWorker {
		if w.asleep && w.woken {
			// StarPU's CUDA driver woken from its sleep passes over
			// its node's requests before it pops (Options.StarPUDriverLoop).
			w.asleep, w.woken = false, false
			s.wakeDriver(w.Node)
		}
		if node := s.nodes[w.Node]; node.progressPosted && !node.popBeforeRepass() {
			// Pop right after the pending pass (posted before this).
			// With Options.StarPUDriverLoop the pass runs just before
			// the pushes that complete at its instant, the pop after
			// them: in the peer's hannibal-pitch Cholesky dmdar
			// N=19200 CUDA0's driver, woken by a push, pops 2 µs later
			// the task pushed at that very instant (3481.066 ms).
			at := node.progressAtS
			if s.threadQ != nil {
				at += 2 * passLeadS
			}
			s.eng.Post(max(at-s.eng.NowS(), 0), s.popCall, w.ID)
			return
		}
	}
	if free := *s.threadClock(w); free > s.eng.NowS() {
		s.eng.Post(free-s.eng.NowS(), s.popCall, w.ID)
		return
	}
	for w.canPop() {
		var tk *sched.Task
		// An empty queue (sched.QueueCounter) pops nothing: no need to
		// ask the scheduler, on a machine of many cores most wakes' case.
		if s.queued == nil || s.queued[w.ID] != 0 {
			tk = s.sched.Pop(&w.Worker)
		}
		if tk == nil {
			s.setIdle(w, true)
			w.asleep = s.opts.StarPUDriverLoop && w.Kind == machine.GPUWorker
			s.updateState(w)
			return
		}
		t := &s.tasks[tk.ID()]
		if s.observed {
			s.obs.Pop(s.eng.NowS(), &w.Worker, t)
		}
		if w.Kind == machine.GPUWorker {
			s.nodes[w.Node].iterPopped = true
		}
		s.accountWait(w)
		w.held++
		w.fetching++
		t.worker = w
		w.fetchingTask = t
		s.updateState(w)
		s.fetchInputs(w, t)
	}
}

// popPutOff defers w's pop while its thread waits for a header lock on
// the clock's moves (Options.StarPULockClock), reporting whether it did.
func (s *Simulator) popPutOff(w *worker) bool {
	if w.Kind == machine.GPUWorker {
		if node := s.nodes[w.Node]; node.clockWait {
			node.afterWait = append(node.afterWait, deferredCall{call: s.popCall, arg: w.ID})
			return true
		}
		return false
	}
	if w.clockWait {
		w.popAfterWait = true
		return true
	}
	return false
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
	w.fetchPostS, w.fetchCostS = s.eng.NowS(), s.m.Costs.FetchInputPerBufS*float64(distinctBufs(t.Buffers()))
	if s.opts.StarPUDriverLoop && s.opts.StarPUFetchCostAtPost && w.Kind == machine.GPUWorker {
		// The driver thread posts the fetches, sleeping the per-buffer
		// cost: its loop's next pass comes after.
		node := s.nodes[w.Node]
		node.issueFreeS = max(w.fetchPostS, node.issueFreeS) + w.fetchCostS
	}
	done := waiter{call: s.arrivedCall, arg: t.ID()}
	// (only Options.StarPUHitExec reads it)
	w.fetchHit = s.opts.StarPUHitExec && s.opts.StarPUDriverLoop && w.Kind == machine.GPUWorker
	for _, b := range t.Buffers() {
		h := b.H
		w.fetchHit = w.fetchHit && fetchHit(h, w.Node, b.Mode)
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
		if b.Mode&graph.W != 0 {
			s.ownFor(h, w.Node)
		}
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

// fetchHit says whether a task's fetch of h on node n in mode finds it
// there, its callback run at once (_starpu_create_request_to_fetch_data):
// a valid copy, and, for a write, no request of h under way (else StarPU
// queues a request that waits for them).
func fetchHit(h *memory.Handle, n int, mode graph.Mode) bool {
	r := h.Rep(n)
	return r.State() != memory.Invalid && r.Allocated() && (mode&graph.W == 0 || h.Loading() == 0)
}

// arrived counts one of task id's inputs in; the last one makes the task
// ready after the per-buffer fetch cost: once it has run from the fetch's
// posting (Options.StarPUFetchCostAtPost), else after the arrival.
func (s *Simulator) arrived(id int) {
	t := &s.tasks[id]
	t.nfetching--
	if t.nfetching == 0 {
		w, now := t.worker, s.eng.NowS()
		w.inS = now
		delayS := w.fetchCostS
		if s.opts.StarPUFetchCostAtPost {
			delayS = max(0, w.fetchPostS+w.fetchCostS-now)
		}
		s.eng.Post(delayS, s.readyCall, t.ID())
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
	if s.opts.StarPUDriverLoop && w.Kind == machine.GPUWorker {
		// StarPU's CUDA driver learns that the task's data is in when
		// its loop's pass completes the requests, and executes the job
		// in the loop's next iteration, once the pass has issued its
		// copies (_starpu_cuda_driver_run_once tests the transfers of
		// the task it fetches for before its pass).
		// The pass that completed the last copy may have run already;
		// data found in at the pop waits for the next pass.
		node := s.nodes[w.Node]
		w.execAfter = node.passes
		if w.fetchHit {
			// Every buffer was there at the fetch: the job is the next
			// iteration's first step, before its pass (in the peer's
			// attila with a 4th GPU, LU dmdas N=9600, CUDA1's driver
			// pops at 132.644 ms, posts its fetches, and executes the job
			// as they end).
			s.execDue(w, t)
			return
		}
		if !node.progressPosted && node.lastPassS <= w.inS {
			s.wakeDriver(w.Node)
		}
		if node.progressPosted && !(node.repassPosted && (s.eng.NowS()-node.lastPassS <= 2*passLeadS || node.lastPassS <= w.fetchPostS)) {
			// (A pass asked for by the one that has just run, or by the
			// one before the task's pop, is the loop's next iteration's:
			// the job starts before it.)
			w.execAfter++
		}
		s.execDue(w, t)
		return
	}
	if w.Kind == machine.GPUWorker && s.m.Costs.DeviceTaskQueueS > 0 {
		s.eng.Post(s.m.Costs.DeviceTaskQueueS, s.queuedCall, t.ID())
		return
	}
	s.deviceQueued(w, t)
}

// fetchTailS is when a driver that executes t's job at nowS has taken
// each of its data's header locks in turn (StarPU's
// _starpu_fetch_task_input_tail, before execute_job_on_cuda, updates
// every buffer's reference under its lock). In the peer's attila with a
// 4th GPU, LU dmdas N=9600, CUDA1's driver executes GEMM A[1][2] 1 µs
// after its pass, as CUDA3's driver lets A[1][0]'s lock go.
func (s *Simulator) fetchTailS(t *TaskState, nowS float64) float64 {
	if !s.opts.StarPUFetchTail || !s.opts.StarPULockSpin || s.lockFreeMaxS <= nowS+lockEpsS {
		return nowS
	}
	at := nowS
	for _, b := range t.Buffers() {
		at = s.lockWaitS(b.H.ID(), at)
	}
	return at
}

// execDue executes the job of t, whose data is in, on w's GPU once its
// driver has passed over its requests and its thread is free
// (Options.StarPUDriverLoop): the driver starts the job (the scheduler's
// pre-exec hook) when its device is free, then sleeps the queue cost
// submitting the kernel, its thread busy meanwhile. A synchronous kernel
// runs at once: StarPU's simulation sleeps the queue cost only for kernels
// it queues on the device (_starpu_simgrid_submit_job).
// It reports false when it only posted itself again for a later instant
// (the thread is not there yet).
func (s *Simulator) execDue(w *worker, t *TaskState) bool {
	node := s.nodes[w.Node]
	now := s.eng.NowS()
	if !node.driverStalled {
		if node.progressPosted && node.passes < w.execAfter {
			s.eng.Post(max(node.progressAtS, now)-now, s.execCall, t.ID())
			return false
		}
		if node.issueFreeS > now+lockEpsS {
			s.eng.Post(node.issueFreeS-now, s.execCall, t.ID())
			return false
		}
		if at := s.fetchTailS(t, now); at > now+lockEpsS {
			node.issueFreeS = at
			s.eng.Post(at-now, s.execCall, t.ID())
			return true // (the thread is there, and sleeps)
		}
	}
	queueS := s.m.Costs.DeviceTaskQueueS
	if t.syncGPU {
		queueS = 0
	}
	if w.running == nil && len(w.ready) == 0 && w.preExec == nil {
		s.sched.PreExec(&w.Worker, &t.Task)
		w.preExec, w.preExecEarly = t, true
	}
	node.issueFreeS = max(now, node.issueFreeS) + queueS
	if queueS > 0 {
		s.eng.Post(queueS, s.queuedCall, t.ID())
		return true
	}
	s.deviceQueued(w, t)
	return true
}

// deviceQueued: t's inputs are in; its driver submits it to w's device.
func (s *Simulator) deviceQueued(w *worker, t *TaskState) {
	// Its kernel's start reads its successors' offsets: bring them in
	// (mostly, the kernel starts when the one before ends).
	prefetch(unsafe.Pointer(&s.succOff[t.ID()]))
	w.fetching--
	if s.opts.StarPUDriverLoop && w.Kind == machine.GPUWorker {
		s.wakeDriver(w.Node) // its loop passes over the requests before it pops
	}
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
		s.setIdle(w, false)
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
	onDevice += w.unnoticed // (in StarPU's pipeline until noticed)
	return w.fetching == 0 && onDevice < w.pipeline
}

// startKernel starts the next ready task on w's device if it is free.
func (s *Simulator) startKernel(w *worker) {
	if (w.running != nil && (plantedFault != faultOverlapKernels || w.Kind != machine.GPUWorker)) || len(w.ready) == 0 {
		return
	}
	t := w.ready[0]
	if t.syncGPU && s.opts.StarPUSyncStart && s.opts.StarPUDriverLoop && w.Kind == machine.GPUWorker {
		// StarPU's CUDA driver runs a synchronous kernel on its thread once
		// it has handled the end of the one before (pushed the tasks that
		// end released, run their callbacks): not while the thread is busy.
		if free, now := s.nodes[w.Node].issueFreeS, s.eng.NowS(); free > now+lockEpsS {
			if !w.syncStartPosted {
				w.syncStartPosted = true
				s.eng.Post(free-now, s.syncStartCall, w.ID)
			}
			return
		}
	}
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
	switch {
	case !s.opts.StarPUDriverLoop || w.Kind != machine.GPUWorker:
		s.sched.PreExec(&w.Worker, &t.Task)
	case w.preExec == t && w.preExecEarly:
		w.preExec, w.preExecEarly = nil, false
	default:
		s.preExecLater(w, t)
	}
	durS := s.durationS(t, w)
	t.startS = now
	// Its end walks its successors (completeKernel), scattered over the
	// graph: the kernel's run is time enough to bring their list in.
	if lo := s.succOff[t.ID()]; lo < s.succOff[t.ID()+1] {
		prefetch(unsafe.Pointer(&s.succ[lo]))
	}
	s.eng.Post(durS, s.endCall, t.ID())
}

// preExecLater runs the pre-exec hook of t, whose kernel starts now on
// w's device behind the previous one, when w's driver thread is free
// (Options.StarPUDriverLoop): StarPU's CUDA driver starts the job of a
// queued kernel once it has handled the previous one's end, pushed the
// tasks that end released and run their callbacks.
func (s *Simulator) preExecLater(w *worker, t *TaskState) {
	if w.preExec != nil {
		s.preExecNow(w, w.preExec)
	}
	now := s.eng.NowS()
	free := *s.threadClock(w)
	if free <= now {
		s.sched.PreExec(&w.Worker, &t.Task)
		return
	}
	w.preExec, w.preExecEarly = t, false
	s.eng.Post(free-now, s.preExecCall, t.ID())
}

// preExecDue runs t's pending pre-exec hook, if it still is, once w's
// driver thread is free: a push held back meanwhile (threadDue) moves it.
func (s *Simulator) preExecDue(w *worker, t *TaskState) {
	if w.preExec != t || w.preExecEarly {
		return
	}
	if now, free := s.eng.NowS(), *s.threadClock(w); free > now+lockEpsS {
		s.eng.Post(free-now, s.preExecCall, t.ID())
		s.eng.Silent()
		return
	}
	s.preExecNow(w, t)
}

// preExecNow runs t's pending pre-exec hook now.
func (s *Simulator) preExecNow(w *worker, t *TaskState) {
	if w.preExec != t || w.preExecEarly {
		return
	}
	w.preExec = nil
	s.sched.PreExec(&w.Worker, &t.Task)
}

func (s *Simulator) durationS(t *TaskState, w *worker) float64 {
	return cost.SampleUS(s.kernelStats(t, w), s.opts.Durations, s.rng) * 1e-6
}

// updateState reports w's state to the observer when it changed: executing
// a kernel, else fetching the inputs of a popped task, else idle.
// The change is told by a state code: an idle worker's pops, most of a run
// on many cores, each find it unchanged, where comparing the names costs a
// call.
func (s *Simulator) updateState(w *worker) {
	code, task := stateIdle, (*TaskState)(nil)
	switch {
	case w.running != nil:
		code, task = stateExecuting, w.running
	case w.held > 0:
		code, task = stateFetching, w.fetchingTask
	}
	if code == w.state && task == w.stateTask {
		return
	}
	w.state, w.stateTask = code, task
	if s.observed {
		s.obs.WorkerState(s.eng.NowS(), &w.Worker, stateNames[code], task)
	}
}

// workerState is a worker's state as updateState reports it (0: none
// reported yet).
type workerState uint8

const (
	stateIdle workerState = 1 + iota
	stateExecuting
	stateFetching
)

// stateNames are the states' names, as observers get them.
var stateNames = [...]string{stateIdle: "Idle", stateExecuting: "Executing", stateFetching: "FetchingInput"}

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
	if s.opts.StarPUDriverLoop && w.Kind == machine.GPUWorker {
		if at, later := endNoticedAt(now, s.nodes[w.Node].issueFreeS, w.unnoticed); later || s.nodes[w.Node].clockWait {
			// The device goes on with the next submitted kernel meanwhile.
			s.accountWait(w)
			w.running = nil
			w.unnoticed++
			// (posted before the next kernel's pre-exec hook, due at the
			// same instant: the driver handles this end first)
			s.eng.Post(at-now, s.noticeCall, t.ID())
			if len(w.ready) > 0 && !w.ready[0].syncGPU {
				s.startKernel(w)
			}
			s.updateState(w)
			return
		}
	}
	s.completeKernel(w, t)
}

// endNoticedAt decides when the driver of a GPU whose kernel ends at nowS
// handles that end (Options.StarPUDriverLoop), and whether that is later.
// StarPU's CUDA driver notices a kernel's end when its loop next polls the
// device (_starpu_cuda_driver_run_once): after the copies its progress
// pass is issuing and the pushes and callbacks it is running, so once its
// thread is free (threadFreeS), and after the ends it has not noticed yet
// (unnoticed), in their order. In the peer's trace of hannibal-pitch
// Cholesky dmda N=19200 a TRSM ends on CUDA2's device 2 µs after its
// driver began issuing a copy (10 µs), and dmda's post-exec hook, then
// the pushes of the tasks it released, come when the copy is issued.
func endNoticedAt(nowS, threadFreeS float64, unnoticed int) (float64, bool) {
	if threadFreeS > nowS+lockEpsS || unnoticed > 0 {
		return max(threadFreeS, nowS), true
	}
	return nowS, false
}

// noticeEnd completes t, whose kernel ended on w's device while the driver
// thread was busy, once the thread is free (it may have got busier).
func (s *Simulator) noticeEnd(w *worker, t *TaskState) {
	now := s.eng.NowS()
	if free := s.nodes[w.Node].issueFreeS; free > now+lockEpsS {
		s.eng.Post(free-now, s.noticeCall, t.ID())
		s.eng.Silent()
		return
	}
	w.unnoticed--
	s.completeKernel(w, t)
}

// completeKernel is the driver's part of t's end on w: data states,
// successors, and what w does next.
func (s *Simulator) completeKernel(w *worker, t *TaskState) {
	if w.preExec == t {
		s.preExecNow(w, t) // (a kernel shorter than the pushes before its hook)
	}
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
	if s.observed {
		s.obs.TaskDone(t)
	}
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
			s.release(int(q), s.threadClock(w), w)
		}
	}
	for _, b := range t.Buffers() {
		s.wontUseDone(b.H, t, w)
	}
	s.startKernel(w)
	s.updateState(w)
	loopGPU := s.opts.StarPUDriverLoop && w.Kind == machine.GPUWorker
	if loopGPU {
		// Something done: the driver's loop makes progress (and tidies),
		// then pops.
		s.wakeDriver(w.Node)
	}
	if w.canPop() {
		s.setIdle(w, false)
		s.workerPop(w)
	}
	s.nodes[w.Node].memoryFreed(s)
	if !s.opts.StarPUDriverLoop {
		s.tidy(w.Node)
	}
	if w.Kind == machine.GPUWorker && t.syncGPU {
		s.resumeDriver(w.Node)
	}
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
			s.setIdle(w, false)
			s.workerPop(w)
		}
	}
}

// setIdle records whether w is idle: popped nothing, and waits for a push
// to wake it (wakeIdle).
func (s *Simulator) setIdle(w *worker, on bool) {
	if on {
		s.idleSet[w.ID/64] |= 1 << (w.ID % 64)
	} else {
		s.idleSet[w.ID/64] &^= 1 << (w.ID % 64)
	}
}
