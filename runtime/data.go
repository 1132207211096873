package runtime

import (
	"fmt"
	"sort"

	"github.com/starsim/starsim/emulator"
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
	// issueFreeS is when the node's driver has finished issuing the copies
	// it handles (each costs it the transfer queue cost, one after the
	// other): simulated seconds.
	issueFreeS float64
}

// direction holds the copies from one node to another. Requests wait in
// queue until the handling driver issues them, at most maxIssued(level) at
// a time (StarPU's per-(node, peer) pending limits). An issued copy's flow
// starts once every copy issued before it on this direction or on a serial
// one has ended (StarPU's simulator: transfers_are_sequential against its
// pending list), so one flow runs per direction at a time and serial
// directions take turns in issue order.
type direction struct {
	src, dst int
	handler  int // node whose driver starts and completes the copies
	issued   int // requests issued and not yet completed
	queue    []*request
	pend     []*request // issued copies whose flow has not ended, in issue order
	bytes    float64
	count    int
	serial   []*direction // directions whose copies never overlap with these (issue order)
}

// maxIssued is how many requests of a level a direction may have issued
// and uncompleted before it issues one more (StarPU's data_request.h:
// MAX_PENDING_REQUESTS_PER_NODE 5, ..._PREFETCH_... 2, ..._IDLE_... 1,
// all compared with one pending count).
func maxIssued(l memory.Level) int {
	switch l {
	case memory.Fetch:
		return 5
	case memory.Idle:
		return 1
	}
	return 2
}

type request struct {
	h        *memory.Handle
	src, dst int
	level    memory.Level
	prio     int // the requesting task's priority: higher issues first
	seq      uint64
	waiters  []waiter
	started  bool
	wb       bool // eviction write-back
	// nwait counts the earlier copies this one's flow waits for; wake
	// lists the later copies waiting for this one's flow.
	nwait int
	wake  []*request
	// syncs are the device frees waiting for every copy in flight to end.
	syncs   []*gpuSync
	version uint64
	xferID  uint64  // trace id of the copy, once started
	payload float64 // bytes the flow carries (pitch models may enlarge them)
}

// waiter is what runs when a copy completes: a bound call with its
// argument (hot paths: no allocation), or a closure (rare paths).
type waiter struct {
	call func(int)
	arg  int
	fn   func()
}

func (w waiter) none() bool { return w.call == nil && w.fn == nil }

// run runs w now, within the current event.
func (w waiter) run() {
	if w.call != nil {
		w.call(w.arg)
	} else if w.fn != nil {
		w.fn()
	}
}

// notify runs w as an event now.
func (s *Simulator) notify(w waiter) {
	if w.call != nil {
		s.eng.PostCallAfter(0, w.call, w.arg)
	} else if w.fn != nil {
		s.eng.PostAfter(0, w.fn)
	}
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
			req.waiters = append(req.waiters, done)
		}
		if lvl < req.level && !req.started {
			s.upgrade(req, lvl)
		}
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
		s.fetch(h, 0, lvl, prio, waiter{fn: func() {
			req.src = 0
			s.enqueue(req)
		}})
		return
	}
	req := s.newRequest(h, src, n, lvl, prio, done)
	s.setIncoming(h, n, req)
	s.enqueue(req)
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
		req = new(request)
	}
	*req = request{h: h, src: src, dst: dst, level: lvl, prio: prio, seq: s.seq, version: h.Version(),
		waiters: req.waiters[:0], wake: req.wake[:0], syncs: req.syncs[:0]}
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
		s.eng.PostAfter(0, done)
		return
	}
	try := func() bool {
		costS, ok := s.reserve(h, n, lvl)
		if !ok {
			return false
		}
		s.eng.PostAfter(costS, done)
		return true
	}
	if !try() {
		s.nodes[n].waiting = append(s.nodes[n].waiting, try)
	}
}

// reserve allocates h on n now if there is room (evicting what it may),
// returning the allocation cost. It fails when memory is exhausted for now.
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
		s.obs.Memory(s.eng.NowS(), node.Name, "evict", a.Victim.Handle().Spec())
	case memory.NeedReclaim:
		s.startSyncReclaim(node, h, 2*h.Size(), lvl)
		return 0, false
	case memory.NoRoom:
		return 0, false
	}
	if s.opts.Check && node.Capacity > 0 && node.DevUsed() > node.Capacity {
		s.fail(fmt.Errorf("node %s over capacity: %d > %d bytes", node.Name, node.DevUsed(), node.Capacity))
	}
	s.obs.Memory(s.eng.NowS(), node.Name, "allocate", h.Spec())
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
	s.obs.Memory(s.eng.NowS(), s.nodes[r.Node()].Name, "evict", r.Handle().Spec())
	return gave
}

// writeBack copies an owned replica home, frees it unless a task took it
// meanwhile, then calls then with whether it was freed, and whether device
// memory went back (see free).
func (s *Simulator) writeBack(r *memory.Replica, then func(freed, gaveBack bool)) {
	s.mem.StartWriteBack(r)
	s.writeBacks++
	h := r.Handle()
	done := waiter{fn: func() {
		freed, gave := false, false
		if s.mem.EndWriteBack(r) {
			gave = s.free(r)
			freed = true
		}
		then(freed, gave)
	}}
	if req := s.incomingReq(h, 0); req != nil {
		// A copy home is already pending (an idle write-back from tidy or
		// wont_use): the eviction waits for it, raised to fetch level, as
		// StarPU's request creation finds and upgrades the existing request
		// rather than issuing a second copy of the same data.
		req.waiters = append(req.waiters, done)
		if req.level > memory.Fetch && !req.started {
			s.upgrade(req, memory.Fetch)
		}
		return
	}
	req := s.newRequest(h, r.Node(), 0, memory.Fetch, 0, done)
	req.wb = true
	s.setIncoming(h, 0, req)
	s.enqueue(req)
}

// enqueue queues a request on its direction and starts what can start.
func (s *Simulator) enqueue(req *request) {
	s.queuedBytes += float64(req.h.Size())
	d := s.dir(req.src, req.dst)
	d.insert(req)
	s.kick(d)
}

// kind names the request for traces.
func (req *request) kind() string {
	if req.wb {
		return KindWriteBack
	}
	return [...]string{KindFetch, KindTaskPrefetch, KindPrefetch, KindIdleFetch}[req.level]
}

// before orders a direction's queue: most urgent level, then highest
// priority, then oldest (StarPU's per-level request lists are priority
// lists, popped highest first: _starpu_data_request_prio_list).
func before(a, b *request) bool {
	if a.level != b.level {
		return a.level < b.level
	}
	if a.prio != b.prio {
		return a.prio > b.prio
	}
	return a.seq < b.seq
}

// insert keeps d.queue sorted by before.
func (d *direction) insert(req *request) {
	i := sort.Search(len(d.queue), func(i int) bool { return before(req, d.queue[i]) })
	d.queue = append(d.queue, nil)
	copy(d.queue[i+1:], d.queue[i:])
	d.queue[i] = req
}

// upgrade raises a queued request's level (a fetch joining a prefetch),
// moving it to its new place in its direction's queue.
func (s *Simulator) upgrade(req *request, lvl memory.Level) {
	d := s.dir(req.src, req.dst)
	for i, q := range d.queue {
		if q == req {
			d.queue = append(d.queue[:i], d.queue[i+1:]...)
			req.level = lvl
			d.insert(req)
			s.kick(d)
			return
		}
	}
	req.level = lvl // not queued yet (first hop of a two-hop copy pending)
}

// kick wakes the driver that handles d's requests: it issues them in its
// next progress pass.
func (s *Simulator) kick(d *direction) { s.wakeDriver(d.handler) }

// wakeDriver posts one progress pass of node n's driver, progressDelayS
// from now (passes asked for meanwhile are the same pass).
func (s *Simulator) wakeDriver(n int) {
	node := s.nodes[n]
	if node.progressPosted || node.driverStalled {
		return
	}
	node.progressPosted = true
	node.progressAtS = s.eng.NowS() + progressDelayS
	s.eng.PostCallAfter(progressDelayS, s.progressCall, n)
}

// progress is a pass of node n's driver over the requests it handles
// (StarPU's ___starpu_datawizard_progress): the incoming ones, peer by
// peer in node order, fetches first, then prefetches, then idle requests
// if none of the group's issued requests is pending; then the outgoing
// ones, per peer, the same way. Running out of memory ends a group's pass.
func (s *Simulator) progress(n int) {
	node := s.nodes[n]
	node.progressPosted = false
	if node.driverStalled {
		return
	}
	s.issueGroup(node.handledIn)
	for _, d := range node.handledOut {
		s.issueGroup([]*direction{d})
	}
}

// issueGroup is one group's part of a pass: fetches of every direction in
// ds, then prefetches, then, when none of them has a request pending, idle
// requests (_starpu_check_that_no_data_request_is_pending).
func (s *Simulator) issueGroup(ds []*direction) {
	for _, lvl := range [...]memory.Level{memory.Fetch, memory.Prefetch} {
		for _, d := range ds {
			if !s.issue(d, lvl) {
				return
			}
		}
	}
	for _, d := range ds {
		if d.issued > 0 {
			return
		}
	}
	for _, d := range ds {
		if !s.issue(d, memory.Idle) {
			return
		}
	}
}

// issue issues d's queued requests of level lvl or more urgent while its
// pending limits allow: the queue is sorted by level, and a more urgent
// level has the higher limit, so the first request that cannot go stops the
// rest. It reports false when memory ran out.
func (s *Simulator) issue(d *direction, lvl memory.Level) bool {
	for len(d.queue) > 0 {
		req := d.queue[0]
		if req.level > lvl || d.issued >= maxIssued(req.level) {
			return true
		}
		costS, ok := s.reserve(req.h, req.dst, req.level)
		if !ok {
			// Later requests are no more urgent: wait for memory.
			s.nodes[req.dst].stalled = true
			return false
		}
		d.queue = d.queue[1:]
		s.start(d, req, costS)
	}
	return true
}

// start issues a copy. The handling driver allocates the destination
// buffer (device allocations hold one lock shared by every device, as
// StarPU's cuda_alloc_mutex), then spends the transfer queue cost; it
// issues its copies one after the other.
func (s *Simulator) start(d *direction, req *request, allocS float64) {
	d.issued++
	req.started = true
	bytes := float64(req.h.Size())
	payload := s.cost.Payload(req.src, req.dst, req.h.Spec(), bytes)
	s.xferID++
	req.xferID, req.payload = s.xferID, payload
	if s.chk != nil {
		s.checkCopyIssued(req)
	}
	now := s.eng.NowS()
	drv := s.nodes[d.handler]
	t := max(now, drv.issueFreeS)
	if allocS > 0 {
		t = max(t, s.allocFreeS) + allocS
		s.allocFreeS = t
	}
	t += s.m.Costs.TransferQueueS
	drv.issueFreeS = t
	s.eng.PostObjAfter(t-now, s.sendCall, req)
}

// send submits an issued copy to the network: its flow waits for the
// copies issued before it on its direction and on the serial ones.
func (s *Simulator) send(o any) {
	req := o.(*request)
	d := s.dir(req.src, req.dst)
	s.waitFor(req, d)
	for _, o := range d.serial {
		s.waitFor(req, o)
	}
	d.pend = append(d.pend, req)
	if req.nwait == 0 {
		s.flow(req)
	}
}

// waitFor makes req's flow wait for the pending copies of o.
func (s *Simulator) waitFor(req *request, o *direction) {
	for _, p := range o.pend {
		p.wake = append(p.wake, req)
		req.nwait++
	}
}

// flow starts a copy's bytes on the network.
func (s *Simulator) flow(req *request) {
	s.obs.TransferStart(s.eng.NowS(), req.xferID, s.nodes[req.src].Name, s.nodes[req.dst].Name, req.h.Size(), req.kind(), req.h.Spec())
	s.net.SendRecycled(s.route(req.src, req.dst), req.payload, s.sentCall, req)
}

// sent: a copy's flow completed. The copies waiting for it may flow; the
// request itself completes when its driver notices.
func (s *Simulator) sent(f *emulator.Flow) {
	req := f.Tag().(*request)
	s.obs.TransferEnd(s.eng.NowS(), req.xferID)
	d := s.dir(req.src, req.dst)
	for i, p := range d.pend {
		if p == req {
			d.pend = append(d.pend[:i], d.pend[i+1:]...)
			break
		}
	}
	for _, w := range req.wake {
		if w.nwait--; w.nwait == 0 {
			s.flow(w)
		}
	}
	clear(req.wake)
	req.wake = req.wake[:0]
	for _, g := range req.syncs {
		if g.n--; g.n == 0 {
			s.eng.PostAfter(0, g.then)
		}
	}
	clear(req.syncs)
	req.syncs = req.syncs[:0]
	if h := s.nodes[d.handler]; h.driverStalled {
		h.deferred = append(h.deferred, req) // noticed when the driver returns
		return
	}
	s.finish(req)
}

// handlingNode is the node whose driver thread handles copies from src to
// dst, as StarPU's link_supports_direct_transfers picks it: the
// destination when it is a GPU (from RAM, or from a peer GPU), the source
// GPU for a copy to RAM (a CUDA node is not directly accessible from RAM's
// workers: _starpu_cuda_is_direct_access_supported).
func (s *Simulator) handlingNode(src, dst int) int {
	if dst != 0 {
		return dst
	}
	return src
}

// stallDriver marks node n's driver as waiting on a synchronous kernel.
func (s *Simulator) stallDriver(n int) {
	if !s.opts.NoDriverStall {
		s.nodes[n].driverStalled = true
	}
}

// resumeDriver: node n's driver returned from a synchronous kernel. It
// completes the copies whose flows ended meanwhile, then starts what its
// directions have queued.
func (s *Simulator) resumeDriver(n int) {
	node := s.nodes[n]
	if !node.driverStalled {
		return
	}
	node.driverStalled = false
	done := node.deferred
	node.deferred = nil
	for _, req := range done {
		s.finish(req)
	}
	for i := range s.dirs {
		for _, d := range s.dirs[i] {
			if d != nil && d.handler == n {
				s.kick(d)
			}
		}
	}
}

// finish ends a copy: states, waiters, and the next copies it lets start.
// finish ends a copy: states, waiters, and the next copies it lets start.
func (s *Simulator) finish(req *request) {
	d := s.dir(req.src, req.dst)
	d.issued--
	d.bytes += float64(req.h.Size())
	d.count++
	h := req.h
	if req.wb {
		// The device copy is freed by the write-back's waiter unless a
		// task took it.
		s.mem.WriteBackDone(h, req.src, req.dst, req.version)
	} else {
		s.mem.CopyDone(h, req.src, req.dst)
	}
	if s.chk != nil {
		s.checkCopyDone(req)
	}
	s.setIncoming(h, req.dst, nil)
	s.nodes[req.dst].Changed()
	for _, w := range req.waiters {
		s.notify(w)
	}
	s.kick(d)
	// The new copy is no longer incoming, hence evictable, and the source's
	// may have become droppable: retry what waits for memory on either
	// node (a stalled direction is not necessarily d or its serial ones).
	for _, n := range [2]int{req.src, req.dst} {
		if node := s.nodes[n]; node.stalled || len(node.waiting) > 0 {
			node.memoryFreed(s)
		}
	}
	// Nothing refers to req any more (its waiters were posted by value):
	// newRequest reuses it, with its lists' room.
	clear(req.waiters)
	req.waiters = req.waiters[:0]
	s.freeReqs = append(s.freeReqs, req)
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

// wontUse records starpu_data_wont_use: once after (the last task
// submitted before it that writes h) has ended, h's copies are evicted
// first.
// wontUse records starpu_data_wont_use: once after (the last task
// submitted before it that writes h; -1: none) has ended, h's copies are
// evicted first.
func (s *Simulator) wontUse(h *memory.Handle, after int32) {
	w := &s.hwont[h.ID()]
	w.after, w.armed = after, true
	if after < 0 || s.tasks[after].done {
		s.applyWontUse(h)
	}
}

func (s *Simulator) wontUseDone(h *memory.Handle, t *TaskState) {
	if w := &s.hwont[h.ID()]; w.armed && int(w.after) == t.ID() {
		s.applyWontUse(h)
	}
}

// applyWontUse marks h's device copies evict-first and, as StarPU does,
// queues an idle-level copy home so that a later eviction is clean.
func (s *Simulator) applyWontUse(h *memory.Handle) {
	s.hwont[h.ID()].armed = false
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
		s.incomingReq(h, 0).waiters = append(s.incomingReq(h, 0).waiters, waiter{fn: func() { s.mem.TidyDone(n) }})
	}
}

// progressDelayS is how long a woken driver takes to reach its node's
// requests: StarPU's datawizard progress sleeps 1 µs per call in simulation,
// and a CUDA driver's loop makes progress on RAM before its own node.
const progressDelayS = 2e-6

// gpuSync is a device free waiting for the copies in flight to end.
type gpuSync struct {
	n    int
	then func()
}

// deviceFree charges a cudaFree to the thread that frees, then calls then:
// StarPU's simulated free sleeps DeviceFreeS under the allocation lock all
// GPUs share, then waits until every copy in flight has ended, "as CUDA
// synchronizes roughly everything on cudaFree" (_starpu_simgrid_sync_gpus).
func (s *Simulator) deviceFree(then func()) {
	now := s.eng.NowS()
	t := max(now, s.allocFreeS) + s.m.Costs.DeviceFreeS
	s.allocFreeS = t
	s.eng.PostAfter(t-now, func() {
		g := &gpuSync{then: then}
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
	})
}
