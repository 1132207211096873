package sched

import (
	"math/bits"
	"sort"

	"github.com/starsim/starsim/runtime/graph"
	"github.com/starsim/starsim/runtime/machine"
	"github.com/starsim/starsim/runtime/memory"
)

// The dm family's per-worker queues and their scans.

type dmWorker struct {
	// levels is the queue: one level per priority, by decreasing
	// priority, none empty (sorted variants); else one level, in arrival
	// order. A push then appends to its level, where one sorted array
	// would shift the lower-priority tasks of thousands queued.
	levels []dmLevel
	// spare[k] holds level arrays of capacity minLevelCap<<k that levels
	// emptied or outgrew: levels come and go by thousands, their arrays
	// are reused.
	spare                     [][][]dmEntry
	expStart, expLen, pipeLen float64 // µs
	pipeNtasks                int
}

// minLevelCap is the capacity of a new level's array.
const minLevelCap = 8

// dmLevel is a FIFO of queued tasks: q[head:].
type dmLevel struct {
	prio int
	q    []dmEntry
	head int
}

// tasks is the level's queued tasks, oldest first.
func (l *dmLevel) tasks() []dmEntry { return l.q[l.head:] }

// array returns a spare array of capacity minLevelCap<<k, or a new one.
func (st *dmWorker) array(k int) []dmEntry {
	for len(st.spare) <= k {
		st.spare = append(st.spare, nil)
	}
	if n := len(st.spare[k]); n > 0 {
		q := st.spare[k][n-1]
		st.spare[k][n-1] = nil
		st.spare[k] = st.spare[k][:n-1]
		return q
	}
	return make([]dmEntry, 0, minLevelCap<<k)
}

// release keeps q, whose entries are cleared, for reuse.
func (st *dmWorker) release(q []dmEntry) {
	k := bits.Len(uint(cap(q)/minLevelCap)) - 1
	st.spare[k] = append(st.spare[k], q[:0])
}

// push appends e to l.
func (st *dmWorker) push(l *dmLevel, e dmEntry) {
	if len(l.q) == cap(l.q) {
		live := l.q[l.head:]
		if 2*l.head >= len(l.q) {
			// Half of it or more popped: reuse that room.
			n := copy(l.q, live)
			clear(l.q[n:])
			l.q = l.q[:n]
		} else {
			q := append(st.array(bits.Len(uint(2*cap(l.q)/minLevelCap))-1), live...)
			clear(l.q)
			st.release(l.q)
			l.q = q
		}
		l.head = 0
	}
	l.q = append(l.q, e)
}

// remove takes the i-th queued task out. The gap is closed from the front:
// i is small (the head, or the end of a short ready-first scan) while the
// level may hold thousands of tasks.
func (l *dmLevel) remove(i int) *Task {
	q := l.q[l.head:]
	t := q[i].t
	copy(q[1:i+1], q[:i])
	q[0] = dmEntry{}
	l.head++
	if l.head == len(l.q) {
		l.q, l.head = l.q[:0], 0 // empty: start over at the front
	}
	return t
}

// dmEntry is a queued task with what the queue scans read (ready-first
// pops): its priority and its buffers (data, and which ones it reads),
// copied when there are at most len(h). The scans then walk one dense
// array instead of the scattered tasks and their buffer lists, a cache
// miss or two each.
type dmEntry struct {
	t     *Task
	prio  int
	h     [3]*memory.Handle
	nb    int8  // buffers in h; -1: too many, read t.bufs
	reads uint8 // bit k: buffer k is read
}

func newDMEntry(t *Task) dmEntry {
	e := dmEntry{t: t, prio: int(t.prio), nb: -1}
	if len(t.bufs) <= len(e.h) {
		e.nb = int8(len(t.bufs))
		e.h = [3]*memory.Handle{&noData, &noData, &noData}
		for k, b := range t.bufs {
			e.h[k] = b.H
			if b.Mode&graph.R != 0 {
				e.reads |= 1 << k
			}
		}
	}
	return e
}

// noData fills an entry's unused buffer slots: of size 0, it adds nothing
// to the bytes not ready, so the scans sum three slots without a loop.
var noData memory.Handle

// nonReadyBytes is the view's NonReadyBytes of e's task on the node of
// bit (1<<node), from the entry's copies (e.nb >= 0). Integer sums: their
// order does not matter.
func (e *dmEntry) nonReadyBytes(bit uint64) (nonReady, nonLoading, nonAllocated int64) {
	r0, l0, a0 := e.h[0].NonReady(e.reads&1 != 0, bit)
	r1, l1, a1 := e.h[1].NonReady(e.reads&2 != 0, bit)
	r2, l2, a2 := e.h[2].NonReady(e.reads&4 != 0, bit)
	return r0 + r1 + r2, l0 + l1 + l2, a0 + a1 + a2
}

// level returns the index of the level t goes to, creating it if needed:
// the only one when unsorted, else the level of t's priority (after every
// task of priority >= t's).
func (d *dmda) level(st *dmWorker, t *Task) int {
	if !d.sorted {
		if len(st.levels) == 0 {
			st.levels = append(st.levels, dmLevel{q: st.array(0)})
		}
		return 0
	}
	p := t.Priority()
	i := sort.Search(len(st.levels), func(i int) bool { return st.levels[i].prio <= p })
	if i == len(st.levels) || st.levels[i].prio != p {
		st.levels = append(st.levels, dmLevel{})
		copy(st.levels[i+1:], st.levels[i:])
		st.levels[i] = dmLevel{prio: p, q: st.array(0)}
	}
	return i
}

// queuedBefore is the predicted work of the tasks queued before t would be
// (those of priority >= t's), and whether any task would be after it.
func (d *dmda) queuedBefore(st *dmWorker, t *Task) (us float64, after bool) {
	for _, l := range st.levels {
		if l.prio < t.Priority() {
			return us, true
		}
		for _, o := range l.tasks() {
			us += o.t.dm.predictedUS + o.t.dm.penPrimeUS
		}
	}
	return us, false
}

// readyIndex is StarPU's ready-first pop: among queued tasks with priority
// >= the head's, the lexicographic minimum of (bytes not valid, of those not
// being loaded, bytes not allocated); ties to the earlier task; the scan
// stops at a task with everything valid and allocated. It reads the data's
// state as the view's NonReadyBytes does, from the queue's copies of the
// buffers.
func (d *dmda) readyIndex(q []dmEntry, w *machine.Worker) int {
	best := 0
	var b [3]int64
	bit := uint64(1) << uint(w.Node)
	for i := range q {
		e := &q[i]
		if e.prio < q[0].prio {
			break
		}
		var nr, nl, na int64
		if e.nb >= 0 {
			nr, nl, na = e.nonReadyBytes(bit)
		} else {
			nr, nl, na = memory.NonReadyBytes(e.t.bufs, w.Node)
		}
		if i == 0 || nr < b[0] || (nr == b[0] && (nl < b[1] || (nl == b[1] && na < b[2]))) {
			best, b = i, [3]int64{nr, nl, na}
		}
		if nr == 0 && na == 0 {
			break
		}
	}
	return best
}
