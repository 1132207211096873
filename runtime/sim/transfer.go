package sim

import (
	"sort"

	"github.com/starsim/starsim/runtime/graph"
	"github.com/starsim/starsim/runtime/memory"
)

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
	// qarr is queue's whole array: issue takes requests off queue's
	// front, which insert reuses once the array's end is reached.
	qarr   []*request
	pend   []*request // issued copies whose flow has not ended, in issue order
	bytes  float64
	count  int
	serial []*direction // directions whose copies never overlap with these (issue order)
	// running: the direction's transfer runner exists (StarPU's simulator
	// starts one actor per (source, destination) pair at its first copy).
	running bool
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
	idx      int // in Simulator.reqs
	h        *memory.Handle
	src, dst int
	level    memory.Level
	prio     int // the requesting task's priority: higher issues first
	seq      uint64
	waiters  []waiter
	started  bool
	wb       bool // eviction write-back
	// join: not a copy but task's prefetch of a copy another request
	// brings (Options.StarPUPrefetchJoinLoss): when the driver reaches
	// it, it protects the copy if the copy has landed, else nothing
	// (joinProtect), or it loads the copy itself (joinTakesOver). task
	// -1: the request a takeover replaced, which only takes a place in a
	// pass (Options.StarPUPassPlaces).
	join bool
	task int32
	// own: a task that will write the data asked for it: the copy takes
	// ownership when it lands (StarPU's request carries the task's access
	// mode: data_request.c updates the data state with it).
	own bool
	// tried: the driver reached it and found no memory (StarPU's
	// load_request is set: a prefetch joining it is lost).
	tried bool
	// queued: in its direction's queue once (not the second hop of a
	// two-hop copy whose first is under way).
	queued bool
	// joins are the tasks whose prefetch found this copy's second hop
	// waiting for its first: their requests are queued behind it when
	// the first hop lands (queueJoins).
	joins []int32
	// nwait counts the earlier copies this one's flow waits for; wake
	// lists the later copies waiting for this one's flow.
	nwait int
	wake  []*request
	// syncs are the device frees waiting for every copy in flight to end.
	syncs   []*gpuSync
	version uint64
	xferID  uint64  // trace id of the copy, once started
	payload float64 // bytes the flow carries (pitch models may enlarge them)
	// Once issued: sendAtS when the copy reaches the network, lockFromS
	// when its allocation ends (its header lock hold's start); with
	// allocDeferred its driver takes the device allocation lock at
	// allocWantS, for allocS (Options.StarPUAllocOrder). Simulated s.
	sendAtS, lockFromS, allocWantS, allocS float64
	allocDeferred                          bool
}

// waiter is what runs when a copy completes: a bound call with its
// argument (hot paths: no allocation), or a closure (rare paths).
// noticed: it runs when the copy's driver notices the end, in its next
// pass (Options.StarPUHopNotice; memNode.noticeQ).
type waiter struct {
	call    func(int)
	arg     int
	noticed bool
}

// after is the waiter that runs fn (rare paths: a closure each).
func after(fn func()) waiter { return waiter{call: func(int) { fn() }} }

func (w waiter) none() bool { return w.call == nil }

// run runs w now, within the current event.
func (w waiter) run() {
	if w.call != nil {
		w.call(w.arg)
	}
}

// notify runs w as an event now.
func (s *Simulator) notify(w waiter) {
	if w.call != nil {
		s.eng.Post(0, w.call, w.arg)
	}
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
	req.queued = true
	i := sort.Search(len(d.queue), func(i int) bool { return before(req, d.queue[i]) })
	if n := len(d.queue); n == cap(d.queue) {
		// Full up to the array's end: move to its front when half of it
		// or more was taken off there, else to an array twice as large.
		// (append alone would allocate anew each time the end is reached.)
		if n > 0 && 2*n <= len(d.qarr) {
			copy(d.qarr, d.queue)
			clear(d.qarr[n:])
			d.queue = d.qarr[:n]
		} else {
			q := make([]*request, n, 2*n+8)
			copy(q, d.queue)
			clear(d.queue)
			d.queue, d.qarr = q, q[:cap(q)]
		}
	}
	d.queue = append(d.queue, nil)
	copy(d.queue[i+1:], d.queue[i:])
	d.queue[i] = req
}

// upgrade raises a request not started yet to level lvl when a fetch
// joins it with a more urgent level, moving it to its new place in its
// direction's queue. With Options.StarPUDriverLoop it also takes the
// joining fetch's priority prio, and a higher priority at the same level,
// and the first hop of a two-hop copy is raised with the second: StarPU
// keeps one request per task and hop (_starpu_search_existing_data_request
// does not collapse requests of different tasks), each at its task's
// priority, and promotes the ones of the task that fetches, so the copy
// goes at the most urgent level and, at that level, the highest priority
// asked for, behind the requests already at that level and priority. (In
// the peer's hannibal GPU-only Cholesky dmdas N=9600, six
// tasks ask for A[7][1] from CUDA2 to RAM; SYRK(7, 1)'s request, priority
// 11, promoted to a fetch when CUDA0 pops it, goes before A[7][2]'s at
// priority 9.)
func (s *Simulator) upgrade(req *request, lvl memory.Level, prio int) {
	loop := s.opts.StarPUDriverLoop
	if req.started || lvl > req.level || (lvl == req.level && (!loop || prio <= req.prio)) {
		return
	}
	if !loop {
		prio = req.prio
	} else {
		// The promoted request joins its new list last among its
		// priority (_starpu_update_prefetch_status moves it there).
		s.seq++
		req.seq = s.seq
	}
	d := s.dir(req.src, req.dst)
	if req.queued {
		for i, q := range d.queue {
			if q == req {
				d.queue = append(d.queue[:i], d.queue[i+1:]...)
				req.level, req.prio = lvl, prio
				d.insert(req)
				s.kick(d)
				return
			}
		}
	}
	req.level, req.prio = lvl, prio // not queued yet (first hop of a two-hop copy pending)
	if first := s.incomingReq(req.h, 0); first != nil && loop {
		s.upgrade(first, lvl, prio)
	}
}

// kick wakes the driver that handles d's requests: it issues them in its
// next progress pass.
func (s *Simulator) kick(d *direction) { s.wakeDriver(d.handler) }

// wakeDriver posts one progress pass of node n's driver, progressDelayS
// from now (passes asked for meanwhile are the same pass).
//
// With Options.StarPUDriverLoop the pass is the driver thread's, as in
// StarPU's CUDA driver loop: it comes progressDelayS after the thread is
// free (after it has pushed the tasks its kernel's end released and run
// their callbacks, or issued its copies: issueFreeS), so that a request
// posted meanwhile waits for it while another node's idle driver may
// issue first; and a pass due at the instant a push completes runs
// before that push: the pass takes its request lists when it starts
// (__starpu_handle_node_data_requests), and the request the push posts
// at the end of its 1 µs waits for the next pass.
func (s *Simulator) wakeDriver(n int) {
	node := s.nodes[n]
	if node.progressPosted || node.driverStalled {
		return
	}
	node.progressPosted = true
	now := s.eng.NowS()
	delayS := progressDelayS
	if s.opts.StarPUDriverLoop {
		delayS = max(now, node.issueFreeS) + progressDelayS - passLeadS - now
	}
	node.progressAtS = now + delayS
	s.eng.Post(delayS, s.progressCall, n)
}

// passLeadS orders a pass before the pushes due the same instant
// (simulated s; far below any cost, far above rounding).
const passLeadS = 1e-10

// progress is a pass of node n's driver over the requests it handles
// (StarPU's ___starpu_datawizard_progress): the incoming ones, peer by
// peer in node order, fetches first, then prefetches, then idle requests
// if none of the group's issued requests is pending; then the outgoing
// ones, per peer, the same way. Running out of memory ends a group's pass.
//
// With Options.StarPUDriverLoop the pass first tidies the node
// (starpu_memchunk_tidy, which ____starpu_datawizard_progress calls
// before it pushes requests), rather than the kernel's end: the idle
// copies home it queues are not yet requested while the driver pushes the
// tasks that end released, and the pass issues them itself.
func (s *Simulator) progress(n int) {
	if s.putOff(n, s.progressCall, n, true) {
		return
	}
	node := s.nodes[n]
	if s.opts.StarPUDriverLoop && !node.driverStalled {
		if now := s.eng.NowS(); node.issueFreeS+progressDelayS-passLeadS > now+lockEpsS {
			// The thread got busy after the pass was posted (a push or
			// a callback held by a header lock): the pass follows it.
			delayS := node.issueFreeS + progressDelayS - passLeadS - now
			node.progressAtS = now + delayS
			s.eng.Post(delayS, s.progressCall, n)
			s.eng.Silent()
			return
		}
		s.tidy(n) // (the pass is still posted: its requests wake no other)
		node.passes++
		node.lastPassS = s.eng.NowS()
	}
	node.progressPosted = false
	node.repassPosted = false
	node.iterPopped = false
	if node.driverStalled {
		return
	}
	s.issueGroup(node.handledIn)
	if len(node.noticeQ) > 0 {
		s.noticeEnds(node)
	}
	for _, d := range node.handledOut {
		s.issueGroup([]*direction{d})
	}
}

// noticeEnds handles the ends of copies out of node's GPU that its pass
// notices (Options.StarPUHopNotice): StarPU's progress checks the pending
// requests of each group before issuing the group's new ones
// (____starpu_datawizard_progress), the incoming group first, then the
// outgoing ones, so the end of a copy out to RAM is noticed once the
// pass has issued its incoming copies. In the peer's hannibal Cholesky
// dmdas N=19200 the second hop of a CUDA1 -> RAM -> CUDA0 copy is posted
// 2 µs after the first lands (the pass it wakes), or, at 613.377 ms, when
// CUDA1's pass has allocated and issued the incoming copy it began with,
// 185.8 µs after; in hannibal-pitch LU dmdas N=19200 at 225.915 ms,
// before CUDA0's pass issues an outgoing copy.
func (s *Simulator) noticeEnds(node *memNode) {
	now := s.eng.NowS()
	for _, w := range node.noticeQ {
		s.eng.Post(max(node.issueFreeS, now)-now, w.call, w.arg)
	}
	clear(node.noticeQ)
	node.noticeQ = node.noticeQ[:0]
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
// rest. With Options.StarPUPassPlaces the pass takes, per level, as many
// requests as the limit leaves when it reaches that level, cancelled ones
// included, and asks for the loop's next pass if some are left. It
// reports false when memory ran out.
func (s *Simulator) issue(d *direction, lvl memory.Level) bool {
	places := passPlaces{}
	for len(d.queue) > 0 {
		req := d.queue[0]
		if req.level > lvl || d.issued >= maxIssued(req.level) {
			return true
		}
		if s.passPlacesOn() && !places.take(req.level, d.issued) {
			s.repass(d.handler)
			return true
		}
		if req.join && !s.joinReloads(req) {
			l := s.joinTakesOver(req)
			s.joinProtect(req)
			if l == nil {
				d.queue = d.queue[1:]
				continue
			}
			// Issued now, as the request reached, in its place.
			d.queue[0] = l
			req = l
		}
		if s.noAlloc && !req.h.Rep(req.dst).Allocated() {
			return false // (StarPU's DO_NOT_ALLOC: -ENOMEM)
		}
		costS, ok := s.reserve(req.h, req.dst, req.level)
		if !ok {
			req.tried = true
			// Later requests are no more urgent: wait for memory.
			s.nodes[req.dst].stalled = true
			return false
		}
		d.queue = d.queue[1:]
		s.start(d, req, costS)
	}
	return true
}

// passPlaces counts the places a pass has left in one direction's list
// of one level (Options.StarPUPassPlaces).
type passPlaces struct {
	level memory.Level
	left  int
	set   bool
}

// take takes a place for a request of level lvl, the direction having
// issued copies pending; false: the pass has none left for it.
func (p *passPlaces) take(lvl memory.Level, issued int) bool {
	if !p.set || p.level != lvl {
		p.level, p.left, p.set = lvl, maxIssued(lvl)-issued, true
	}
	if p.left <= 0 {
		return false
	}
	p.left--
	return true
}

// passPlacesOn: passes count their places (Options.StarPUPassPlaces,
// which needs the driver loop).
func (s *Simulator) passPlacesOn() bool { return s.opts.StarPUPassPlaces && s.opts.StarPUDriverLoop }

// popBeforeRepass: the pass posted is a repass, and no GPU worker of the
// node has popped since the last pass. The driver pops in the iteration
// of the pass whose places ran out, before the next iteration's pass: in
// the peer's attila LU dmdar N=19200 at 196.45 ms CUDA1's driver pops,
// posts its job's fetches (3 µs) and starts the job between its two
// passes. One pop per iteration: the next waits for the repass.
func (n *memNode) popBeforeRepass() bool { return n.repassPosted && !n.iterPopped }

// repass asks for node n's driver's next pass, its loop's next iteration,
// when none is posted yet.
func (s *Simulator) repass(n int) {
	if node := s.nodes[n]; !node.progressPosted {
		s.wakeDriver(n)
		node.repassPosted = node.progressPosted
	}
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
	hid := req.h.ID()
	if s.lockHolds != nil {
		// StarPU issues a copy holding the handle's header lock
		// (starpu_handle_data_request): another driver's copy of the
		// same data waits for it.
		t = s.lockWaitS(hid, t)
	}
	deferred := false
	if allocS > 0 {
		if s.opts.StarPUAllocOrder && t > now+lockEpsS {
			// The driver reaches the allocation at t, busy until then:
			// it takes the lock then (allocTurn), after any driver that
			// asks before. Meanwhile its times assume the lock's
			// holders known now.
			deferred = true
			req.allocWantS, req.allocS = t, allocS
			t = max(t, s.allocFreeS) + allocS
		} else {
			t = max(t, s.allocFreeS) + allocS
			s.allocFreeS = t
		}
	}
	lockFrom := t // (the allocation lets the lock go: _starpu_allocate_interface)
	t += s.m.Costs.TransferQueueS
	drv.issueFreeS = t
	if s.lockHolds != nil {
		s.holdHeaderLock(hid, lockFrom, t, now, d.handler)
	}
	req.sendAtS, req.lockFromS, req.allocDeferred = t, lockFrom, deferred
	if s.opts.StarPUAllocOrder {
		drv.inflight = append(drv.inflight, req)
	}
	if deferred {
		s.eng.Post(req.allocWantS-now, s.allocCall, req.idx)
	}
	s.eng.Post(t-now, s.sendCall, req.idx)
}

// allocTurn is a driver reaching a copy's deferred allocation
// (Options.StarPUAllocOrder): it takes the device allocation lock, shared
// by every GPU (StarPU's cuda_alloc_mutex), when it frees. Held longer
// than foreseen, the copy and the ones its driver issued after it are
// late by as much.
func (s *Simulator) allocTurn(idx int) {
	req := s.reqs[idx]
	now := s.eng.NowS()
	if !req.allocDeferred {
		return
	}
	if req.allocWantS > now+lockEpsS { // put back by an earlier copy's wait
		s.eng.Post(req.allocWantS-now, s.allocCall, idx)
		s.eng.Silent()
		return
	}
	req.allocDeferred = false
	end := max(now, s.allocFreeS) + req.allocS
	s.allocFreeS = end
	if late := end - req.lockFromS; late > lockEpsS {
		s.delayIssues(req, late)
	}
}

// delayIssues makes req and the copies its driver issued after it late
// by lateS: their submission to the network, their deferred allocations
// and header lock holds, and the driver's thread.
func (s *Simulator) delayIssues(req *request, lateS float64) {
	n := s.dir(req.src, req.dst).handler
	drv := s.nodes[n]
	now := s.eng.NowS()
	from := -1
	for i, r := range drv.inflight {
		if r == req {
			from = i
			break
		}
	}
	if from < 0 {
		return
	}
	for _, r := range drv.inflight[from:] {
		r.sendAtS += lateS
		r.lockFromS += lateS
		if r != req && r.allocDeferred {
			r.allocWantS += lateS
		}
		if s.lockHolds != nil {
			s.holdHeaderLock(r.h.ID(), r.lockFromS, r.sendAtS, now, n)
		}
	}
	drv.issueFreeS += lateS
}

// send submits an issued copy to the network: its flow waits for the
// copies issued before it on its direction and on the serial ones.
func (s *Simulator) send(idx int) {
	req := s.reqs[idx]
	if now := s.eng.NowS(); req.sendAtS > now+lockEpsS { // delayed (delayIssues)
		s.eng.Post(req.sendAtS-now, s.sendCall, idx)
		s.eng.Silent()
		return
	}
	d := s.dir(req.src, req.dst)
	if s.opts.StarPUAllocOrder {
		drv := s.nodes[d.handler]
		for i, r := range drv.inflight {
			if r == req {
				drv.inflight = append(drv.inflight[:i], drv.inflight[i+1:]...)
				break
			}
		}
	}
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

// runnerStartS is how long StarPU's simulator takes to start a
// direction's transfer runner: _starpu_simgrid_thread_start sleeps 1 µs
// before the actor's function runs (simulated s).
const runnerStartS = 1e-6

// flow starts a copy's bytes on the network. The first copy of a
// direction starts once its transfer runner has (runnerStartS).
func (s *Simulator) flow(req *request) {
	if d := s.dir(req.src, req.dst); !d.running {
		d.running = true
		if s.opts.StarPURunnerStart {
			s.eng.Post(runnerStartS, s.flowCall, req.idx)
			return
		}
	}
	s.flowNow(req)
}

// flowNow starts a copy's bytes on the network at once.
func (s *Simulator) flowNow(req *request) {
	if s.observed {
		s.obs.TransferStart(s.eng.NowS(), req.xferID, s.nodes[req.src].Name, s.nodes[req.dst].Name, req.h.Size(), req.kind(), req.h.Spec())
	}
	s.net.Send(s.route(req.src, req.dst), req.payload, s.sentCall, req.idx)
}

// sent: a copy's flow completed. The copies waiting for it may flow; the
// request itself completes when its driver notices.
func (s *Simulator) sent(idx int) {
	req := s.reqs[idx]
	if s.observed {
		s.obs.TransferEnd(s.eng.NowS(), req.xferID)
	}
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
			s.eng.Post(0, g.then, 0)
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
func (s *Simulator) finish(req *request) {
	d := s.dir(req.src, req.dst)
	d.issued--
	d.bytes += float64(req.h.Size())
	d.count++
	h := req.h
	// A task wrote the data since the copy was asked for: it carries a
	// stale version and leaves its destination invalid.
	stale := req.version != h.Version()
	if req.wb {
		// The device copy is freed by the write-back's waiter unless a
		// task took it.
		s.mem.WriteBackDone(h, req.src, req.dst, req.version)
	} else if !stale {
		s.mem.CopyDone(h, req.src, req.dst)
		if req.own {
			s.mem.Own(h, req.dst)
		}
	}
	if s.chk != nil {
		s.checkCopyDone(req)
	}
	s.setIncoming(h, req.dst, nil)
	s.nodes[req.dst].Changed()
	for _, w := range req.waiters {
		if stale && !req.wb && req.level != memory.Idle {
			// A task waiting for the data: fetch the version now valid.
			s.fetch(h, req.dst, req.level, req.prio, w)
			continue
		}
		if w.noticed && w.call != nil && s.opts.StarPUHopNotice && s.opts.StarPUDriverLoop {
			// Its driver notices the end in its next pass.
			drv := s.nodes[d.handler]
			drv.noticeQ = append(drv.noticeQ, w)
			s.wakeDriver(d.handler)
			continue
		}
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

// queueJoin queues, behind loader on its direction, the request of a
// task prefetch that finds the copy loader brings already under way.
// StarPU does not merge prefetch requests of different tasks
// (coherency.c, _starpu_search_existing_data_request): each waits its
// turn in the request lists.
func (s *Simulator) queueJoin(loader *request, t *TaskState) {
	if !loader.queued {
		// The second hop of a two-hop copy: StarPU posts each task's
		// second hop when its first completes, all at once, so they
		// reach the driver together behind the copy's own.
		loader.joins = append(loader.joins, int32(t.ID()))
		return
	}
	// StarPU posts the task's own request from the source it would pick
	// now (_starpu_select_src_node): a copy already valid in RAM too puts
	// it in RAM's queue, not behind the copy under way from a GPU.
	src := loader.src
	if b, ok := s.bestSource(loader.h, loader.dst); ok && s.route(b, loader.dst) != nil {
		src = b
	}
	j := s.newRequest(loader.h, src, loader.dst, memory.TaskPrefetch, t.Priority(), waiter{})
	j.join, j.task = true, int32(t.ID())
	d := s.dir(j.src, j.dst)
	d.insert(j)
	s.kick(d)
}

// queueJoins queues the join requests held by req, the second hop of a
// two-hop copy just queued. StarPU's first hops that found the first
// one loading wait on it with callbacks run latest first
// (data_request.c, _starpu_data_request_append_callback prepends), so the
// latest request's second hop is posted first.
func (s *Simulator) queueJoins(req *request) {
	for i := len(req.joins) - 1; i >= 0; i-- {
		s.queueJoin(req, &s.tasks[req.joins[i]])
	}
	req.joins = req.joins[:0]
}

// joinProtect is the driver reaching a joined prefetch request: StarPU
// (data_request.c, starpu_handle_data_request) finds the copy valid and
// adds the task to its nb_tasks_prefetch, or finds another request
// loading it and cancels this one, the task's protection lost with it.
// It is lost too once the task has fetched its inputs (the fetch cancels
// or takes over its prefetch requests: coherency.c).
func (s *Simulator) joinProtect(j *request) {
	h, n := j.h, j.dst
	landed := func() bool {
		r := h.Rep(n)
		return r.State() != memory.Invalid && r.Allocated() && s.incomingReq(h, n) == nil
	}
	// Reached before the copy's own request (a higher priority): StarPU
	// loads the copy for this one, which counts when the copy lands.
	first := func() bool { l := s.incomingReq(h, n); return l != nil && l.queued && !l.started && !l.tried }
	if j.task >= 0 && s.tasks[j.task].prefetched && (landed() || first()) {
		s.mem.Protect(h, n)
		s.mem.Relist(h, n)
	}
	s.freeReqs = append(s.freeReqs, j)
}

// joinTakesOver is the driver reaching a joined prefetch request j while
// the request l that brings its copy waits in its queue, not reached yet
// (Options.StarPUJoinTakeover): l takes j's source and place, at j's
// priority and at the more urgent of the two levels, and is returned to
// be issued now; j's task still counts on the copy (joinProtect). nil: j
// stays a join (l under way or already reached, or j's source no longer
// holds the data).
func (s *Simulator) joinTakesOver(j *request) *request {
	if !s.opts.StarPUJoinTakeover || j.task < 0 {
		return nil
	}
	h, n := j.h, j.dst
	l := s.incomingReq(h, n)
	if l == nil || !l.queued || l.started || l.tried {
		return nil
	}
	if r := h.Rep(j.src); r.State() == memory.Invalid || !r.Allocated() {
		return nil
	}
	od := s.dir(l.src, l.dst)
	for i, q := range od.queue {
		if q == l {
			if s.passPlacesOn() {
				// StarPU's earlier request stays in its list until its
				// driver reaches it, cancelled then: a request of no
				// task that takes a place.
				g := s.newRequest(h, l.src, l.dst, l.level, l.prio, waiter{})
				g.join, g.task, g.seq, g.queued = true, -1, l.seq, true
				od.queue[i] = g
				break
			}
			od.queue = append(od.queue[:i], od.queue[i+1:]...)
			break
		}
	}
	l.src = j.src
	l.level = min(l.level, j.level)
	l.prio = j.prio
	return l
}

// joinReloads is the driver reaching a joined prefetch request whose copy
// was evicted since it landed, none under way: StarPU's request is a copy
// request of its own (data_request.c, starpu_handle_data_request), and
// loads the data again for its task. j becomes that copy, protected for
// its task, and reports true; false leaves it a join.
func (s *Simulator) joinReloads(j *request) bool {
	h, n := j.h, j.dst
	if j.task < 0 || !s.tasks[j.task].prefetched || s.incomingReq(h, n) != nil {
		return false
	}
	if r := h.Rep(n); r.State() != memory.Invalid && r.Allocated() {
		return false
	}
	if h.Rep(j.src).State() == memory.Invalid {
		return false
	}
	j.join = false
	j.version = h.Version()
	if s.opts.StarPUOwnAtFetch {
		for _, b := range s.tasks[j.task].Buffers() {
			j.own = j.own || (b.H == h && b.Mode&graph.W != 0)
		}
	}
	s.queuedBytes += float64(h.Size())
	s.setIncoming(h, n, j)
	s.mem.Protect(h, n)
	return true
}

// progressDelayS is how long a woken driver takes to reach its node's
// requests: StarPU's datawizard progress sleeps 1 µs per call in simulation,
// and a CUDA driver's loop makes progress on RAM before its own node.
const progressDelayS = 2e-6
