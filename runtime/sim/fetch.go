package sim

import (
	"fmt"

	"github.com/starsim/starsim/runtime/graph"
	"github.com/starsim/starsim/runtime/memory"
)

// memNode is a memory node: its allocation state (memory.Node) and what
// its driver thread does with the copies it handles.
type memNode struct {
	*memory.Node
	arch    string
	waiting []func() bool // allocations waiting for memory
	stalled bool
	// driverStalled: the driver thread that handles the node's requests waits on
	// a synchronous kernel; the copies it handles neither start nor
	// complete (deferred holds those whose flow ended) until it returns.
	driverStalled bool
	deferred      []*request
	// reclaiming: the driver is in a synchronous reclaim (StarPU's
	// _starpu_memory_reclaim_generic): nothing may be allocated on the
	// node, and its worker neither completes, submits nor pops tasks, until
	// reclaimLeft bytes are freed or nothing more can be.
	reclaiming  bool
	reclaimLeft int64
	reclaimLvl  memory.Level
	reclaimFor  *memory.Handle // the copy the reclaim makes room for
	// handledIn and handledOut are the directions whose requests the node's
	// driver issues: into the node (by source), and out of it to RAM.
	handledIn, handledOut []*direction
	progressPosted        bool
	progressAtS           float64 // when the posted pass runs (simulated s)
	passes                int     // the passes run (Options.StarPUDriverLoop)
	lastPassS             float64 // when the last one ran (simulated s)
	// issueFreeS is when the node's driver has finished issuing the copies
	// it handles (each costs it the transfer queue cost, one after the
	// other): simulated seconds.
	issueFreeS float64
	// repassPosted: the pass posted is the loop's next iteration's, asked
	// for by a pass whose places ran out (Options.StarPUPassPlaces).
	repassPosted bool
	// iterPopped: a GPU worker of the node popped since its last pass,
	// before the repass (one pop per driver loop iteration).
	iterPopped bool
	// inflight: the copies the driver issued whose flow has not been
	// submitted, in issue order (Options.StarPUAllocOrder).
	inflight []*request
	// clockWait: the driver thread waits for a header lock on the
	// simulated clock's moves (Options.StarPULockClock), for as long as
	// no event tells; what it would do meanwhile (its pass, a job's
	// execution, a kernel's end) is put off (afterWait) until it has it.
	clockWait bool
	afterWait []deferredCall
	// noticeQ: what waits for the driver's next pass to notice the end
	// of a copy it handles (Options.StarPUHopNotice).
	noticeQ []waiter
}

// deferredCall is an event's call put off while a driver thread waits;
// pass: it is the driver's pass.
type deferredCall struct {
	call func(int)
	arg  int
	pass bool
}

// putOff defers call(arg) (pass: the driver's pass) if node n's driver
// thread waits on the clock (memNode.clockWait), reporting whether it did:
// the event running then moves no clock.
func (s *Simulator) putOff(n int, call func(int), arg int, pass bool) bool {
	node := s.nodes[n]
	if !node.clockWait {
		return false
	}
	node.afterWait = append(node.afterWait, deferredCall{call: call, arg: arg, pass: pass})
	s.eng.Silent()
	return true
}

// fetch makes h valid on node n, then calls done. A valid copy is a hit; a
// pending request to n is joined (and upgraded); otherwise the copy comes
// from the best source, through RAM when there is no direct route. prio is
// the requesting task's priority (0 for the runtime's own copies).
func (s *Simulator) fetch(h *memory.Handle, n int, lvl memory.Level, prio int, done waiter) {
	r := h.Rep(n)
	if r.State() != memory.Invalid && r.Allocated() {
		// A hit: StarPU runs the fetch's callback at once
		// (_starpu_create_request_to_fetch_data), not as a later event.
		// The copy becomes the most recently used (_starpu_memchunk_recently_used):
		// in StarPU only allocations and request hits move a copy in LRU
		// order, not the kernels that use it.
		s.mem.Touch(h, n)
		done.run()
		return
	}
	if req := s.incomingReq(h, n); req != nil {
		if !done.none() {
			if req.wb && req.version != h.Version() {
				// The write-back of a copy overwritten since leaves n's
				// copy invalid when it lands: the fetch asks again then
				// (a two-hop copy's first hop, say, that finds a device
				// copy evicted home after a task wrote the data
				// elsewhere).
				d := done
				done = after(func() { s.fetch(h, n, lvl, prio, d) })
			}
			req.waiters = append(req.waiters, done)
		}
		s.upgrade(req, lvl, prio)
		return
	}
	src, ok := s.bestSource(h, n)
	if !ok {
		s.fail(fmt.Errorf("no valid copy of %s anywhere", h.Spec().Name))
		return
	}
	if s.route(src, n) == nil {
		// Two hops: bring the data to RAM first.
		req := s.newRequest(h, 0, n, lvl, prio, done) // placeholder, started after the first hop
		s.setIncoming(h, n, req)
		s.fetch(h, 0, lvl, prio, waiter{call: s.hopCall, arg: req.idx, noticed: true})
		return
	}
	req := s.newRequest(h, src, n, lvl, prio, done)
	s.setIncoming(h, n, req)
	s.enqueue(req)
}

// secondHop queues the second hop of a two-hop copy, request idx, once
// the first has brought the data to RAM.
func (s *Simulator) secondHop(idx int) {
	req := s.reqs[idx]
	req.src = 0
	// Posted now: behind what was asked for meanwhile.
	s.seq++
	req.seq = s.seq
	s.enqueue(req)
	s.queueJoins(req)
}

// incomingReq is the copy under way into h's copy on node n (nil: none).
func (s *Simulator) incomingReq(h *memory.Handle, n int) *request {
	if h.Loading()&(1<<uint(n)) == 0 {
		return nil
	}
	return s.incoming[h.ID()*len(s.nodes)+n]
}

// setIncoming records req as the copy under way into h's copy on node n
// (nil: none).
func (s *Simulator) setIncoming(h *memory.Handle, n int, req *request) {
	s.incoming[h.ID()*len(s.nodes)+n] = req
	s.mem.SetLoading(h, n, req != nil)
}

func (s *Simulator) newRequest(h *memory.Handle, src, dst int, lvl memory.Level, prio int, done waiter) *request {
	s.seq++
	var req *request
	if n := len(s.freeReqs); n > 0 {
		req = s.freeReqs[n-1]
		s.freeReqs[n-1] = nil
		s.freeReqs = s.freeReqs[:n-1]
	} else {
		req = &request{idx: len(s.reqs)}
		s.reqs = append(s.reqs, req)
	}
	// Field by field, as a fresh request would be (keeping the lists'
	// arrays): assigning a whole struct literal builds it on the stack,
	// then copies it (TestNewRequestResets checks every field).
	req.h, req.src, req.dst, req.level, req.prio, req.seq = h, src, dst, lvl, prio, s.seq
	req.waiters, req.wake, req.syncs, req.joins = req.waiters[:0], req.wake[:0], req.syncs[:0], req.joins[:0]
	req.started, req.wb, req.join, req.own, req.tried, req.queued = false, false, false, false, false, false
	req.task, req.nwait, req.version, req.xferID, req.payload = 0, 0, h.Version(), 0, 0
	req.sendAtS, req.lockFromS, req.allocWantS, req.allocS, req.allocDeferred = 0, 0, 0, 0, false
	if !done.none() {
		req.waiters = append(req.waiters, done)
	}
	return req
}

// bestSource picks the valid copy with the smallest predicted transfer time
// over a direct route; RAM otherwise (cost.Model.BestSource).
func (s *Simulator) bestSource(h *memory.Handle, dst int) (int, bool) {
	return s.cost.BestSource(h.Ready(), dst, h.Size())
}

// allocate reserves room for h on n (no transfer: W-only access).
func (s *Simulator) allocate(h *memory.Handle, n int, lvl memory.Level, done func()) {
	r := h.Rep(n)
	if r.Allocated() {
		s.eng.Post(0, func(int) { done() }, 0)
		return
	}
	try := func() bool {
		costS, ok := s.reserve(h, n, lvl)
		if !ok {
			return false
		}
		s.eng.Post(costS, func(int) { done() }, 0)
		return true
	}
	if !try() {
		s.nodes[n].waiting = append(s.nodes[n].waiting, try)
	}
}

// reserve allocates h on n now if there is room (evicting what it may),
// returning the allocation cost. It fails when memory is exhausted for now.
func (s *Simulator) reserve(h *memory.Handle, n int, lvl memory.Level) (float64, bool) {
	if h.Rep(n).Allocated() {
		return 0, true
	}
	node := s.nodes[n]
	if node.reclaiming {
		return 0, false
	}
	a := s.mem.Allocate(h, n, lvl)
	if err := s.mem.Err(); err != nil {
		s.fail(err)
	}
	cost := 0.0
	switch a.Kind {
	case memory.NewBuffer:
		cost = s.m.Costs.DeviceAllocS
	case memory.Reuse:
		s.explainEviction(a.Victim, "drop", h, lvl)
		s.mem.Reuse(h, a.Victim)
		if s.observed {
			s.obs.Memory(s.eng.NowS(), node.Name, "evict", a.Victim.Handle().Spec())
		}
	case memory.NeedReclaim:
		s.startSyncReclaim(node, h, 2*h.Size(), lvl)
		return 0, false
	case memory.NoRoom:
		return 0, false
	}
	if s.opts.Check && node.Capacity > 0 && node.DevUsed() > node.Capacity {
		s.fail(fmt.Errorf("node %s over capacity: %d > %d bytes", node.Name, node.DevUsed(), node.Capacity))
	}
	if s.observed {
		s.obs.Memory(s.eng.NowS(), node.Name, "allocate", h.Spec())
	}
	return cost, true
}

// startSyncReclaim starts StarPU's generic reclaim of amount bytes on node
// for a request of level lvl: copies are taken in LRU order, a droppable
// one freed at once, a sole owner written back home first while the driver
// waits (transfer_subtree_to_node), one after the other. The room comes
// when the reclaim ends.
func (s *Simulator) startSyncReclaim(node *memNode, forH *memory.Handle, amount int64, lvl memory.Level) {
	if node.driverStalled {
		return // the driver thread is in a kernel: retried when it returns
	}
	if !s.mem.CanReclaim(node.ID, lvl) {
		return
	}
	node.reclaiming = true
	node.reclaimLeft = amount
	node.reclaimLvl = lvl
	node.reclaimFor = forH
	s.blockWorker(node.ID, true)
	s.syncReclaimStep(node)
}

// syncReclaimStep frees the next victims of node's reclaim, or ends it.
func (s *Simulator) syncReclaimStep(node *memNode) {
	lvl := node.reclaimLvl
	for node.reclaimLeft > 0 {
		r, action := s.mem.NextVictim(node.ID, lvl)
		if r == nil {
			break
		}
		s.explainEviction(r, action.String(), node.reclaimFor, lvl)
		if action == memory.Drop {
			node.reclaimLeft -= r.Handle().Size()
			if s.free(r) {
				s.deviceFree(func() { s.syncReclaimStep(node) })
				return
			}
			continue
		}
		s.writeBack(r, func(freed, gaveBack bool) {
			if freed {
				node.reclaimLeft -= r.Handle().Size()
			}
			if gaveBack {
				s.deviceFree(func() { s.syncReclaimStep(node) })
				return
			}
			s.syncReclaimStep(node)
		})
		return
	}
	node.reclaiming = false
	node.reclaimFor = nil
	s.blockWorker(node.ID, false)
	node.memoryFreed(s)
}

// free evicts r and gives its buffer back. It reports whether device
// memory went back to a GPU (a direct buffer, or an emptied chunk): a
// cudaFree.
func (s *Simulator) free(r *memory.Replica) bool {
	gave := s.mem.Evict(r, true)
	if s.observed {
		s.obs.Memory(s.eng.NowS(), s.nodes[r.Node()].Name, "evict", r.Handle().Spec())
	}
	return gave
}

// writeBack copies an owned replica home, frees it unless a task took it
// meanwhile, then calls then with whether it was freed, and whether device
// memory went back (see free).
func (s *Simulator) writeBack(r *memory.Replica, then func(freed, gaveBack bool)) {
	s.mem.StartWriteBack(r)
	s.writeBacks++
	h := r.Handle()
	done := after(func() {
		freed, gave := false, false
		if s.mem.EndWriteBack(r) {
			gave = s.free(r)
			freed = true
		}
		then(freed, gave)
	})
	if req := s.incomingReq(h, 0); req != nil {
		// A copy home is already pending (an idle write-back from tidy or
		// wont_use): the eviction waits for it, raised to fetch level, as
		// StarPU's request creation finds and upgrades the existing request
		// rather than issuing a second copy of the same data.
		req.waiters = append(req.waiters, done)
		s.upgrade(req, memory.Fetch, req.prio) // (a fetch already stays as it is)
		return
	}
	req := s.newRequest(h, r.Node(), 0, memory.Fetch, 0, done)
	req.wb = true
	s.setIncoming(h, 0, req)
	s.enqueue(req)
}

// memoryFreed retries allocations and stalled transfers into n after some of
// its copies may have become evictable or were freed.
func (n *memNode) memoryFreed(s *Simulator) {
	n.Changed()
	if len(n.waiting) > 0 {
		w := n.waiting
		n.waiting = nil
		for i, try := range w {
			if !try() {
				n.waiting = append(n.waiting, w[i])
			}
		}
	}
	if n.stalled {
		n.stalled = false
		for j := range s.nodes {
			if d := s.dir(j, n.ID); d != nil {
				s.kick(d)
			}
		}
	}
}

// wontUse records starpu_data_wont_use, called by the application thread
// (its clock *freeS) right after it submitted a task: once after (the last
// task submitted before it that writes h; -1: none) has ended, h's copies
// are evicted first. With Options.StarPUDriverLoop the call costs what it
// costs StarPU: an acquisition of h by a callback
// (starpu_data_acquire_on_node_cb_sequential_consistency: a pre-sync task
// without codelet, depending on the last writer), whose submission costs
// the thread the submit cost, and whose callback runs on the thread that
// ends the last writer (runWontUse).
func (s *Simulator) wontUse(h *memory.Handle, after int32, freeS *float64) {
	w := &s.hwont[h.ID()]
	w.after, w.armed = after, true
	if s.opts.StarPUDriverLoop {
		*freeS = max(*freeS, s.eng.NowS()) + s.m.Costs.TaskSubmitS
	}
	if after < 0 || s.tasks[after].done {
		s.runWontUse(h, freeS, 0)
	}
}

// wontUseDone: t has ended on by's thread; if it is the writer a wont_use
// of h waits for, that thread runs the wont_use.
func (s *Simulator) wontUseDone(h *memory.Handle, t *TaskState, by *worker) {
	if w := &s.hwont[h.ID()]; w.armed && int(w.after) == t.ID() {
		s.runWontUse(h, s.threadClock(by), by.ID+1)
	}
}

// runWontUse applies a wont_use of h on the thread whose clock is *freeS
// (pusher: the thread as push numbers it, 0 the application's).
// With Options.StarPUDriverLoop, as StarPU does once h's last writer has
// ended (after the tasks that writer released), the thread pushes the
// pre-sync task (the push cost; without codelet, it ends at once) and runs
// its callback, _starpu_data_wont_use (src/datawizard/user_interactions.c),
// which releases the acquisition, submitting and pushing the post-sync
// task (the submit and push costs), then queues the idle copy home: the
// peer's paje.trace shows these 3 µs on the driver thread before its pass.
func (s *Simulator) runWontUse(h *memory.Handle, freeS *float64, pusher int) {
	s.hwont[h.ID()].armed = false
	if !s.opts.StarPUDriverLoop {
		s.applyWontUse(h)
		return
	}
	now := s.eng.NowS()
	id := int32(-1 - len(s.callbacks))
	s.callbacks = append(s.callbacks, threadCallback{h: int32(h.ID()), rest: -1})
	s.threadAdd(pusher, id)
	*freeS = max(*freeS, now) + s.itemCostS(id)
	s.eng.Post(*freeS-now, s.wontUseCall, threadArg(pusher, id, false))
}

// wontUseCallback is the event of a wont_use's callback (arg: threadArg)
// with Options.StarPUDriverLoop: an item of its thread's queue
// (threadDue), which acquires the data, so waits for its header lock.
func (s *Simulator) wontUseCallback(arg int) {
	p, id, reposted := splitThreadArg(arg)
	if s.threadDue(p, id, reposted, s.itemCostS(id)) {
		if cb := s.callbacks[-1-int(id)]; cb.rest >= 0 {
			s.prefetchRestDue(p, cb.rest)
		} else {
			s.applyWontUse(s.mem.Handle(int(cb.h)))
		}
	}
}

// applyWontUse marks h's device copies evict-first and, as StarPU does,
// queues an idle-level copy home so that a later eviction is clean.
func (s *Simulator) applyWontUse(h *memory.Handle) {
	s.mem.WontUse(h)
	if h.Rep(0).State() == memory.Invalid && !s.opts.NoWontUseWriteBack {
		s.fetch(h, 0, memory.Idle, 0, waiter{})
	}
}

// tidy keeps some device copies clean, as StarPU's starpu_memchunk_tidy:
// idle-level write-backs of the dirty copies memory.Tidy chooses.
func (s *Simulator) tidy(n int) {
	if n == 0 || s.opts.NoTidy {
		return
	}
	for _, h := range s.mem.Tidy(n) {
		s.fetch(h, 0, memory.Idle, 0, waiter{})
		s.incomingReq(h, 0).waiters = append(s.incomingReq(h, 0).waiters, after(func() { s.mem.TidyDone(n) }))
	}
}

// gpuSync is a device free waiting for the copies in flight to end.
type gpuSync struct {
	n    int
	then func(int)
}

// deviceFree charges a cudaFree to the thread that frees, then calls then:
// StarPU's simulated free sleeps DeviceFreeS under the allocation lock all
// GPUs share, then waits until every copy in flight has ended, "as CUDA
// synchronizes roughly everything on cudaFree" (_starpu_simgrid_sync_gpus).
func (s *Simulator) deviceFree(then func()) {
	now := s.eng.NowS()
	t := max(now, s.allocFreeS) + s.m.Costs.DeviceFreeS
	s.allocFreeS = t
	s.eng.Post(t-now, func(int) {
		g := &gpuSync{then: func(int) { then() }}
		for _, row := range s.dirs {
			for _, d := range row {
				if d == nil {
					continue
				}
				for _, req := range d.pend {
					req.syncs = append(req.syncs, g)
					g.n++
				}
			}
		}
		if g.n == 0 {
			then()
		}
	}, 0)
}

// prefetch issues task-prefetch requests of t's read inputs on w's node; the
// copies are protected from eviction by other prefetches until t fetches.
func (s *Simulator) prefetch(t *TaskState, w *worker) {
	if s.opts.NoPrefetch || t.prefetched {
		return
	}
	t.prefetched = true
	t.prefetchNode = int32(w.Node)
	s.prefetchBufs(t, w, 0, len(t.Buffers()))
}

// prefetchBufs prefetches t's buffers from to to (excluded) on w's node.
func (s *Simulator) prefetchBufs(t *TaskState, w *worker, from, to int) {
	for _, b := range t.Buffers()[from:to] {
		h := b.H
		if req := s.incomingReq(h, w.Node); req != nil && b.Mode&graph.R != 0 && s.opts.StarPUPrefetchJoinLoss {
			// A copy already on its way here for another task: t's own
			// request queues behind, and counts only if the copy has
			// landed when the driver reaches it (joinProtect).
			s.queueJoin(req, t)
		} else {
			s.mem.Protect(h, w.Node) // (evictable reads it: the list move may wait)
		}
		if b.Mode&graph.R != 0 {
			s.fetch(h, w.Node, memory.TaskPrefetch, t.Priority(), waiter{})
			if b.Mode&graph.W != 0 {
				s.ownFor(h, w.Node)
			}
		}
		s.mem.Relist(h, w.Node) // a hit moved it already
	}
}

// ownFor gives node n's copy of h ownership for a task that will write it,
// once fetched: now if it is valid, else when its copy lands
// (Options.StarPUOwnAtFetch).
func (s *Simulator) ownFor(h *memory.Handle, n int) {
	if !s.opts.StarPUOwnAtFetch {
		return
	}
	if req := s.incomingReq(h, n); req != nil {
		req.own = true
		return
	}
	if r := h.Rep(n); r.State() != memory.Invalid && r.Allocated() {
		s.mem.Own(h, n)
	}
}
