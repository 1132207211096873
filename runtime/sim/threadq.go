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

// threadItem is a push (id: the task's) or a wont_use callback (id: -1 -
// its index in Simulator.callbacks).
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
	lock := 0.0
	if q.lastEndS <= began+lockEpsS && !it.acquired {
		lock = s.itemLockFreeS(id, began, now)
	}
	if lock > 0 && s.trylocks(p, id) {
		s.trylockTry(p, it, began)
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
// lockWaitS): a push waits for any lock held on its task's data when it
// began, a callback for its data's lock held when it ends.
func (s *Simulator) itemLockFreeS(id int32, beganS, nowS float64) float64 {
	free := 0.0
	if s.lockFreeMaxS <= min(beganS, nowS)+lockEpsS {
		return free // every lock was free by then
	}
	if id < 0 {
		if at := s.lockWaitS(int(s.callbacks[-1-int(id)]), nowS); at > nowS+lockEpsS {
			free = at
		}
		return free
	}
	for _, b := range s.tasks[id].Buffers() {
		if at := s.lockWaitS(b.H.ID(), beganS); at > beganS+lockEpsS {
			free = max(free, at)
		}
	}
	return free
}

// itemCostS is what item id costs its thread.
func (s *Simulator) itemCostS(id int32) float64 {
	c := s.m.Costs
	if id < 0 {
		return c.TaskPushS + c.TaskSubmitS + c.TaskPushS
	}
	return c.TaskPushS
}

// threadRepost posts item it of thread p again, to end at atS, and moves
// the thread's clock with it.
func (s *Simulator) threadRepost(p int, it *threadItem, atS float64) {
	it.reposted, it.fired = true, false
	clock := &s.pushFreeS
	if p > 0 {
		clock = s.threadClock(s.workers[p-1])
	}
	*clock = max(*clock, atS)
	call := s.pushCall
	if it.id < 0 {
		call = s.wontUseCall
	}
	s.eng.Post(atS-s.eng.NowS(), call, threadArg(p, it.id, true))
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
		at = max(now, s.itemLockFreeS(it.id, now, now))
	case s.itemLockFreeS(it.id, now, now) > 0: // (a lock held now)
		s.trylockTry(p, it, now)
		return
	}
	it.acquired = true
	s.threadRepost(p, it, at+s.itemCostS(it.id))
}
