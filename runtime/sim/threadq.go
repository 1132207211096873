package sim

import "github.com/starsim/starsim/runtime/machine"

// With Options.StarPUDriverLoop a thread's pushes and wont_use callbacks
// run one after the other, in the order the thread was given them, and a
// data header lock a driver holds to issue a copy holds them back: a push
// that prefetches the data waits for the lock when it begins (StarPU's
// prefetch takes the handle's header_lock), a wont_use callback when it
// ends (it acquires the data). Each item is posted for when it would end
// if nothing held it back; when its event comes, threadDue decides whether
// it runs then or later, and the thread's later items follow it. A lock
// taken while an item waited for an earlier one holds it back again: in
// the peer's trace of attila Cholesky dmda N=19200, the GEMMs that POTRF's
// end releases wait for A[12][0]'s lock first while CUDA1's driver issues
// its copy, then again while CUDA2's does.

// threadQueue is a thread's items not done yet, in order, and when its
// last done item ended (simulated s).
type threadQueue struct {
	items    []threadItem
	lastEndS float64
}

// threadItem is a push (id: the task's) or a callback (id: -1 - its
// index in Simulator.callbacks): a wont_use's, or the rest of a push's
// prefetch (Options.StarPUPrefetchLockAtEnd).
type threadItem struct {
	id int32
	// fired: its first event came while an earlier item was not done;
	// reposted: it was posted again, so its first event is stale.
	fired, reposted bool
	// tries: the item's trylocks that found a header lock taken
	// (trylockTry); acquired: it has its data's locks, or waits for them
	// without trying again.
	tries    uint8
	acquired bool
	// clockWait: it waits for a header lock on the simulated clock's
	// moves (Options.StarPULockClock).
	clockWait bool
}

// repostedItem marks a re-posted item's event argument (above the thread).
const repostedItem = 1 << 62

// threadArg is the event argument of item id of thread p.
func threadArg(p int, id int32, reposted bool) int {
	a := int(uint32(id)) | p<<32
	if reposted {
		a |= repostedItem
	}
	return a
}

// splitThreadArg undoes threadArg.
func splitThreadArg(a int) (p int, id int32, reposted bool) {
	reposted = a&repostedItem != 0
	a &^= repostedItem
	return a >> 32, int32(uint32(a)), reposted
}

// threadAdd appends item id to thread p's queue; the caller posts its
// event for when it would end.
func (s *Simulator) threadAdd(p int, id int32) {
	s.threadQ[p].items = append(s.threadQ[p].items, threadItem{id: id})
}

// threadDue handles the event of item id of thread p (costS: the item's
// cost; its event comes when it would end). It reports whether the item
// runs now; if not, it is posted again when it may (or it waits for the
// items before it, which post it when they are done).
func (s *Simulator) threadDue(p int, id int32, reposted bool, costS float64) bool {
	if !s.threadRuns(p, id, reposted, costS) {
		s.eng.Silent() // (the thread does something else meanwhile)
		return false
	}
	return true
}

// threadRuns is threadDue's decision; threadDue also tells the engine
// that an item that does not run moves no clock (Engine.Silent).
func (s *Simulator) threadRuns(p int, id int32, reposted bool, costS float64) bool {
	q := &s.threadQ[p]
	now := s.eng.NowS()
	k := 0
	for k < len(q.items) && q.items[k].id != id {
		k++
	}
	if k == len(q.items) {
		return false // (an item's events come while it is queued; never else)
	}
	it := &q.items[k]
	if it.reposted != reposted {
		return false // the first event of an item posted again
	}
	if k > 0 {
		it.fired = true // after the items before it
		return false
	}
	began := now - costS
	lock, held, clock := 0.0, lockHold{}, false
	atEnd := id >= 0 && s.opts.StarPUPrefetchLockAtEnd && !s.trylocks(p, id) // (push takes its locks as it prefetches)
	if q.lastEndS <= began+lockEpsS && !it.acquired && !atEnd {
		lock, held, clock = s.itemLockFreeS(id, began, now, s.opts.StarPULockClock, it.clockWait)
	}
	if lock > 0 && s.trylocks(p, id) {
		s.trylockTry(p, it, began)
		return false
	}
	if clock {
		it.clockWait = true
		s.waitClock(p, id, held)
		return false
	}
	if at, later := itemEnd(now, costS, q.lastEndS, lock, id >= 0); later {
		s.threadRepost(p, it, at)
		return false
	}
	// Shift rather than reslice: the queue is short, and its array is
	// then reused instead of regrown at every append.
	n := copy(q.items, q.items[1:])
	q.items = q.items[:n]
	q.lastEndS = now
	if len(q.items) > 0 && q.items[0].fired {
		next := &q.items[0]
		s.threadRepost(p, next, now+s.itemCostS(next.id))
	}
	return true
}

// itemEnd decides when a thread's item due to end at endS (it costs
// costS) ends, and whether that is later: after the thread's previous
// item if that ended after this one was to begin (lastEndS); else, when a
// header lock holds it back (lockFreeS: when the item takes it, 0: none),
// a push that began before then pushes once it has it, a callback that
// would end before then ends as it takes it.
func itemEnd(endS, costS, lastEndS, lockFreeS float64, push bool) (float64, bool) {
	switch {
	case lastEndS > endS-costS+lockEpsS:
		return lastEndS + costS, true
	case push && lockFreeS > endS-costS+lockEpsS:
		return lockFreeS + costS, true
	case !push && lockFreeS > endS+lockEpsS:
		return lockFreeS, true
	}
	return endS, false
}

// itemLockFreeS is, for item id that began at beganS and would end at
// nowS, when it takes the header locks holding it back (0: none;
// lockRetryS): a push waits for any lock held on its task's data when it
// began, a callback for its data's lock held when it ends. With advance
// (Options.StarPULockClock), clock reports that the item waits for the
// clock's next move after that instant; waiting, that it waits so
// already.
func (s *Simulator) itemLockFreeS(id int32, beganS, nowS float64, advance, waiting bool) (free float64, held lockHold, clock bool) {
	if s.lockFreeMaxS <= min(beganS, nowS)+lockEpsS {
		return 0, held, false // every lock was free by then
	}
	if id < 0 {
		if at, h, c := s.lockRetryS(int(s.callbacks[-1-int(id)].h), nowS, advance, waiting); at > nowS+lockEpsS {
			return at, h, c
		}
		return 0, held, false
	}
	for _, b := range s.tasks[id].Buffers() {
		if at, h, c := s.lockRetryS(b.H.ID(), beganS, advance, waiting); at > beganS+lockEpsS && at > free {
			free, held, clock = at, h, c
		}
	}
	return free, held, clock
}

// waitClock makes thread p's item id, held back by the header lock hold
// held past its first sleep, try again when the simulated clock next
// moves after the release (Options.StarPULockClock): StarPU's simulated
// spin lock waits on SimGrid's time-advance signal. A driver that lets
// the lock go and has no copy to issue next sleeps 1 µs in its progress
// loop, which moves the clock then (the tick); one that issues another
// copy sleeps for that copy, whose events are the simulation's. In the
// peer's attila with a 4th GPU, LU dmdas N=9600, CUDA1's wont_use
// callback of A[2][3] takes its lock 10 µs after CUDA0's driver lets it
// go, when that driver has submitted its next copy.
//
// Its thread is blocked meanwhile: a GPU driver's puts off what it would
// do (memNode.clockWait) until it has the lock.
func (s *Simulator) waitClock(p int, id int32, held lockHold) {
	now := s.eng.NowS()
	drv := s.nodes[held.node]
	if drv.issueFreeS <= held.toS+lockEpsS {
		s.eng.Post(held.toS+spinWaitS-now, s.tickCall, 0)
	} else {
		// Its next copy's allocation is a sleep too, whose end moves the
		// clock (in the peer's mirage with 5 GPUs, Cholesky dmda
		// N=19200, a push waiting for A[3][0]'s lock from 28.097 ms takes
		// it when CUDA2's driver has allocated A[7][0], 175 µs later).
		for _, r := range drv.inflight {
			if r.lockFromS > held.toS+lockEpsS {
				s.eng.Post(r.lockFromS-now, s.tickCall, 0)
				break
			}
		}
	}
	s.threadBusy(p, held.toS)
	if p > 0 {
		if w := s.workers[p-1]; w.Kind == machine.GPUWorker {
			s.nodes[w.Node].clockWait = true
		} else {
			w.clockWait = true
		}
	}
	s.eng.OnAdvance(held.toS, s.lockClockCall, threadArg(p, id, false))
}

// lockHeld says whether a header lock item id waits for is held at nowS.
func (s *Simulator) lockHeld(id int32, nowS float64) bool {
	free, _, _ := s.itemLockFreeS(id, nowS, nowS, false, false)
	return free > 0
}

// lockClock is the clock's move that thread p's item waits for on a
// header lock (Options.StarPULockClock; arg: threadArg): the item tries
// the lock again now, a callback ending as it takes it, a push going on.
func (s *Simulator) lockClock(arg int) {
	p, id, _ := splitThreadArg(arg)
	now := s.eng.NowS()
	if q := &s.threadQ[p]; len(q.items) > 0 && q.items[0].id == id { // (it waits first in line)
		at := now
		if id >= 0 {
			at += s.itemCostS(id)
		}
		s.threadRepost(p, &q.items[0], at)
	}
	if p > 0 && s.workers[p-1].Kind == machine.CPUWorker {
		if w := s.workers[p-1]; w.clockWait {
			w.clockWait = false
			if w.popAfterWait {
				w.popAfterWait = false
				s.eng.Post(0, s.popCall, w.ID)
			}
		}
	}
	if p > 0 && s.workers[p-1].Kind == machine.GPUWorker {
		// What the driver put off comes now, each when its thread is
		// free (they look at its clock again).
		n := s.workers[p-1].Node
		node := s.nodes[n]
		node.clockWait = false
		for _, c := range node.afterWait {
			if c.pass {
				// (when the pops that wait for it look)
				node.progressAtS = max(now, node.issueFreeS) + progressDelayS - passLeadS
				s.eng.Post(node.progressAtS-now, c.call, c.arg)
				continue
			}
			s.eng.Post(0, c.call, c.arg)
		}
		node.afterWait = node.afterWait[:0]
	}
}

// itemCostS is what item id costs its thread.
func (s *Simulator) itemCostS(id int32) float64 {
	c := s.m.Costs
	if id < 0 {
		if s.callbacks[-1-int(id)].rest >= 0 {
			return 0 // (the push's cost is spent)
		}
		return c.TaskPushS + c.TaskSubmitS + c.TaskPushS
	}
	return c.TaskPushS
}

// threadCallback is a callback item: the handle whose header lock it
// takes as it ends, and rest >= 0 for the rest of a push's prefetch
// (Simulator.prefRests), -1 for a wont_use's.
type threadCallback struct{ h, rest int32 }

// prefetchRest is the rest of a push's prefetch of t's data on w's node,
// from buffer from on, waiting for that buffer's header lock
// (Options.StarPUPrefetchLockAtEnd).
type prefetchRest struct {
	t    *TaskState
	w    *worker
	from int
}

// heldBuffer is the first of t's buffers from from on whose header lock
// a prefetch at nowS finds held (-1: none).
func (s *Simulator) heldBuffer(t *TaskState, from int, nowS float64) int {
	if s.lockFreeMaxS <= nowS+lockEpsS {
		return -1
	}
	for i, b := range t.Buffers()[from:] {
		if at, _, _ := s.lockRetryS(b.H.ID(), nowS, false, false); at > nowS+lockEpsS {
			return from + i
		}
	}
	return -1
}

// prefetchLockAtEnd prefetches t's data on w's node as thread p's push
// ends (Options.StarPUPrefetchLockAtEnd): the buffers before the first
// whose header lock is held now, then the rest as an item at the head of
// p's queue, which takes that lock as it ends (threadDue) and goes on
// (prefetchRestDue). In the peer's attila Cholesky dmdas N=19200 at
// 62.422 ms CUDA1's thread decides, prefetches A[6][4], and prefetches
// A[4][0] 11 µs later: CUDA2's pass took that lock the same instant to
// issue its copy.
func (s *Simulator) prefetchLockAtEnd(t *TaskState, w *worker, p int) {
	k := s.heldBuffer(t, 0, s.eng.NowS())
	if k < 0 {
		s.pushPrefetch(t, w, p, 0, len(t.Buffers()))
		return
	}
	s.pushPrefetch(t, w, p, 0, k)
	s.waitPrefetchRest(t, w, p, k)
}

// waitPrefetchRest queues the rest of t's prefetch, from buffer from on,
// at the head of thread p's queue.
func (s *Simulator) waitPrefetchRest(t *TaskState, w *worker, p, from int) {
	id := int32(-1 - len(s.callbacks))
	s.callbacks = append(s.callbacks, threadCallback{h: int32(t.Buffers()[from].H.ID()), rest: int32(len(s.prefRests))})
	s.prefRests = append(s.prefRests, prefetchRest{t: t, w: w, from: from})
	q := &s.threadQ[p]
	q.items = append(q.items, threadItem{})
	copy(q.items[1:], q.items)
	q.items[0] = threadItem{id: id}
	s.eng.Post(0, s.wontUseCall, threadArg(p, id, false))
}

// prefetchRestDue goes on with the rest r of a push's prefetch on thread
// p, whose first buffer's lock it has taken.
func (s *Simulator) prefetchRestDue(p int, r int32) {
	pr := s.prefRests[r]
	n := len(pr.t.Buffers())
	k := s.heldBuffer(pr.t, pr.from+1, s.eng.NowS())
	if k < 0 {
		k = n
	}
	s.pushPrefetch(pr.t, pr.w, p, pr.from, k)
	if k < n {
		s.waitPrefetchRest(pr.t, pr.w, p, k)
	}
}

// threadRepost posts item it of thread p again, to end at atS, and moves
// the thread's clock with it.
func (s *Simulator) threadRepost(p int, it *threadItem, atS float64) {
	it.reposted, it.fired = true, false
	s.threadBusy(p, atS)
	call := s.pushCall
	if it.id < 0 {
		call = s.wontUseCall
	}
	s.eng.Post(atS-s.eng.NowS(), call, threadArg(p, it.id, true))
}

// threadBusy moves thread p's clock to atS if it is earlier.
func (s *Simulator) threadBusy(p int, atS float64) {
	clock := &s.pushFreeS
	if p > 0 {
		clock = s.threadClock(s.workers[p-1])
	}
	*clock = max(*clock, atS)
}

// trylocks reports whether thread p's push id acquires its data as StarPU
// acquires a released task's data (data_concurrency.c,
// _starpu_attempt_to_submit_data_request from a job): a trylock of each
// header lock, and while it is taken a progress pass of the thread's
// memory nodes (DO_NOT_ALLOC), up to STARPU_SPIN_MAXTRY times, before it
// waits for the lock. Only a GPU driver's passes issue copies (a CPU
// worker's or the application's pass only sleeps 1 µs on RAM), so only
// its pushes are timed this way (Options.StarPUTrylockProgress).
func (s *Simulator) trylocks(p int, id int32) bool {
	return s.opts.StarPUTrylockProgress && id >= 0 && p > 0 && s.workers[p-1].Kind == machine.GPUWorker
}

// trylockMax is StarPU's STARPU_SPIN_MAXTRY: failed trylocks before a
// thread waits for the lock.
const trylockMax = 10

// trylockTry is item it (thread p's first) finding a header lock of its
// data taken at atS: it makes a progress pass of its driver's node.
func (s *Simulator) trylockTry(p int, it *threadItem, atS float64) {
	it.tries++
	w := s.workers[p-1]
	passS := atS + progressDelayS
	clock := s.threadClock(w)
	*clock = max(*clock, passS)
	s.eng.Post(passS-passLeadS-s.eng.NowS(), s.trylockPassCall, p)
}

// trylockPass is the progress pass thread p makes while a header lock it
// wants is taken: it tidies and issues its node's requests without
// allocating (a request whose buffer is not allocated there waits for the
// driver's own pass); then the thread tries the lock again once it has
// issued its copies.
func (s *Simulator) trylockPass(p int) {
	w := s.workers[p-1]
	n := w.Node
	node := s.nodes[n]
	now := s.eng.NowS()
	// The thread is in this item: its copies go now, whatever its clock
	// holds for the items queued after it. (The pass was posted passLeadS
	// early to come before the pushes due then; its time is the nominal
	// one, so that the tries do not drift.)
	passS := now + passLeadS
	clock := node.issueFreeS
	node.issueFreeS = passS
	if !node.driverStalled {
		s.tidy(n)
		s.noAlloc = true
		s.issueGroup(node.handledIn)
		for _, d := range node.handledOut {
			s.issueGroup([]*direction{d})
		}
		s.noAlloc = false
	}
	at := node.issueFreeS
	node.issueFreeS = max(clock, at)
	s.eng.Post(at-now, s.trylockRetryCall, p)
}

// trylockRetry is thread p's trylock after a pass: its first item takes
// its data's locks if they are all free now, else tries again; after
// trylockMax passes it waits for them.
func (s *Simulator) trylockRetry(p int) {
	q := &s.threadQ[p]
	if len(q.items) == 0 {
		return // (a retry comes only while its item is first)
	}
	it := &q.items[0]
	now := s.eng.NowS()
	at := now
	switch {
	case it.tries >= trylockMax:
		free, _, _ := s.itemLockFreeS(it.id, now, now, false, false)
		at = max(now, free)
	case s.lockHeld(it.id, now):
		s.trylockTry(p, it, now)
		return
	}
	it.acquired = true
	s.threadRepost(p, it, at+s.itemCostS(it.id))
}
