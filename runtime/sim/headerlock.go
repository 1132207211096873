package sim

// The data header locks (StarPU's handle->header_lock) as the driver loop
// times them (Options.StarPUDriverLoop): a driver holds a handle's lock
// while it issues a copy of it (starpu_handle_data_request: from its
// allocation's end to its transfer's submission), and a pushing thread or a
// wont_use callback takes it to post its requests. The holds are computed
// ahead, when a pass issues its copies; every one is kept, in order of
// start, so that a thread waits for each hold it meets in turn, as the
// lock passes from one driver to the next (in the peer's mirage with 5
// GPUs, Cholesky dmdar N=9600, four drivers copy a POTRF's tile one after
// the other and a pushing thread posts its prefetch of it after all four).

// lockHold is an interval a header lock is held (simulated s), and the
// node whose driver holds it.
type lockHold struct {
	fromS, toS float64
	node       int
}

// lockTakenAt is when a thread that wants a lock at wantS takes it, given
// the lock's holds in order of start: it waits for the end of each hold it
// meets in turn. With spin (Options.StarPULockSpin), as StarPU's simulated
// spin lock (common/thread.h): a taker that finds the lock held sleeps
// 1 µs and tries again; held still, it waits for the simulated clock to
// move on after the release, which the releasing driver's next progress
// sleep (1 µs) does. Without, it takes the lock as it frees.
func lockTakenAt(holds []lockHold, wantS float64, spin bool) float64 {
	at, _, _ := lockRetryAt(holds, wantS, spin, false, false)
	return at
}

// lockRetryAt is lockTakenAt for a taker that can wait for the clock's
// next move (advance: Engine.OnAdvance) rather than assume it 1 µs after
// the release: when, held past its first sleep, the taker waits for the
// clock, it reports the hold's release, the hold and true; the taker then
// tries again at the clock's next move. waiting: the taker is in that
// wait already (it sleeps no more, and tries at each move of the clock).
func lockRetryAt(holds []lockHold, wantS float64, spin, advance, waiting bool) (atS float64, held lockHold, clock bool) {
	at, waited := wantS, waiting
	for _, h := range holds {
		if h.toS <= at+lockEpsS {
			continue
		}
		if h.fromS > at+lockEpsS {
			break
		}
		switch {
		case !spin:
			at = h.toS
		case !waited && h.toS <= wantS+spinWaitS+lockEpsS:
			at = wantS + spinWaitS // free again after its first sleep
		case advance:
			return h.toS, h, true
		default:
			at = h.toS + spinWaitS
		}
		waited = true
	}
	return at, lockHold{}, false
}

// lockWaitS is when a thread that wants handle hid's header lock at wantS
// takes it.
func (s *Simulator) lockWaitS(hid int, wantS float64) float64 {
	if s.lockFreeMaxS <= wantS+lockEpsS {
		return wantS
	}
	return lockTakenAt(s.lockHolds[hid], wantS, s.opts.StarPULockSpin)
}

// lockRetryS is lockRetryAt for handle hid's header lock.
func (s *Simulator) lockRetryS(hid int, wantS float64, advance, waiting bool) (float64, lockHold, bool) {
	if s.lockFreeMaxS <= wantS+lockEpsS {
		return wantS, lockHold{}, false
	}
	return lockRetryAt(s.lockHolds[hid], wantS, s.opts.StarPULockSpin, advance, waiting)
}

// lockPruneS is how long a hold is kept after its end: the threads that
// want a lock want it now or at most a push's cost before (simulated s).
const lockPruneS = 1e-4

// holdHeaderLock records that node n's driver holds handle hid's lock
// from fromS to toS, dropping the holds over long before nowS.
func (s *Simulator) holdHeaderLock(hid int, fromS, toS, nowS float64, n int) {
	hs := s.lockHolds[hid]
	k := 0
	for _, h := range hs {
		if h.toS >= nowS-lockPruneS {
			hs[k] = h
			k++
		}
	}
	hs = hs[:k]
	i := len(hs)
	for i > 0 && hs[i-1].fromS > fromS {
		i--
	}
	hs = append(hs, lockHold{})
	copy(hs[i+1:], hs[i:])
	hs[i] = lockHold{fromS, toS, n}
	s.lockHolds[hid] = hs
	s.lockFreeMaxS = max(s.lockFreeMaxS, toS)
}
