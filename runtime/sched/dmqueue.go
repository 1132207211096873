package sched

import (
	"fmt"
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
	// With View.PushRace: expStart and expLen as they were before the
	// first push queued here at instant snapUS (µs), and the thread that
	// pushed there then (snapBy: the pushing worker's ID, -1 the
	// application's, raceMany several).
	snapUS, snapStart, snapLen float64
	snapBy                     int
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

// push appends a zero entry to l and returns it, for the caller to fill
// in place (an entry built apart, then copied, would be read in 16-byte
// words right after its fields' stores, which stalls: no store
// forwarding).
func (st *dmWorker) push(l *dmLevel) *dmEntry {
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
	l.q = append(l.q, dmEntry{})
	return &l.q[len(l.q)-1]
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
// pops): its priority and its buffers' cells on the worker's node
// (memory.Cell: size and state of the copy) and which ones it reads,
// when there are at most len(c). The scans then walk one dense array and
// the node's dense cells instead of the scattered tasks, their buffer
// lists and handles, a cache miss or two each. key caches the task's
// NonReadyBytes there, computed when the cells' stamps were all below
// stamp (0: never): between two pops of a worker, about one queued
// task's changes (attila Cholesky N=76800 dmdar: 53 tasks scanned per
// pop, 0.44 of them changed since the previous scan), so a scan mostly
// compares stamps and keys.
type dmEntry struct {
	t     *Task
	c     [3]*memory.Cell
	key   [3]int64
	stamp uint64
	prio  int32
	nb    int8  // buffers in c; -1: too many (or no cells), read t.bufs
	reads uint8 // bit k: buffer k is read
}

// set makes e, zero, t's entry on node; with scans false (no ready-first
// scan will read it), without its cells.
func (e *dmEntry) set(t *Task, node int, scans bool) {
	e.t, e.prio, e.nb = t, t.prio, -1
	if !scans || len(t.bufs) > len(e.c) {
		return
	}
	e.c = [3]*memory.Cell{&noData, &noData, &noData}
	for k, b := range t.bufs {
		c := b.H.Cell(node)
		if c == nil {
			e.c = [3]*memory.Cell{}
			return
		}
		e.c[k] = c
		if b.Mode&graph.R != 0 {
			e.reads |= 1 << k
		}
	}
	e.nb = int8(len(t.bufs))
}

// noData fills an entry's unused buffer slots: a cell of size 0, it adds
// nothing to the bytes not ready, so the scans sum three slots without a
// loop. Its stamp stays 0.
var noData memory.Cell

// cellMasks[c&7 | read<<3] selects what a buffer of cell state c, read
// or not, adds to a task's NonReadyBytes (memory.Handle.NonReady): all
// bits set, its size; none, nothing. A table, not branches: the states
// do not follow a pattern the branch predictor would learn.
var cellMasks = func() (t [16]struct{ nonReady, nonLoading, nonAllocated int64 }) {
	for i := range t {
		ready, loading, allocated, read := i&memory.CellReady != 0, i&memory.CellLoading != 0, i&memory.CellAllocated != 0, i&8 != 0
		if read && !ready {
			t[i].nonReady = -1
			if !loading {
				t[i].nonLoading = -1
			}
		}
		if !allocated {
			t[i].nonAllocated = -1
		}
	}
	return t
}()

// checkKey fails the run when key, e's key as the scan read it, is not
// the task's NonReadyBytes from the handles themselves (View.Checking).
func (d *dmda) checkKey(e *dmEntry, w *machine.Worker, key [3]int64) {
	nr, nl, na := memory.NonReadyBytes(e.t.bufs, w.Node)
	if key != [3]int64{nr, nl, na} {
		d.v.Fail(fmt.Errorf("check: task %d on %s: ready-first key %v, its data give %v", e.t.ID(), w.Name, key, [3]int64{nr, nl, na}))
	}
}

// keyFromCells computes e.key, the view's NonReadyBytes of e's task on
// the worker's node (e.nb >= 0), from its cells, and its stamp. The key
// holds while the cells' stamps stay below it (readyIndex checks).
// Integer sums: their order does not matter.
func (e *dmEntry) keyFromCells() (nonReady, nonLoading, nonAllocated int64) {
	c0, c1, c2 := e.c[0], e.c[1], e.c[2]
	e.stamp = max(c0.Stamp, c1.Stamp, c2.Stamp) + 1
	s0, s1, s2 := c0.State, c1.State, c2.State
	r := uint64(e.reads) << 3
	m0, m1, m2 := &cellMasks[s0&7|r&8], &cellMasks[s1&7|r>>1&8], &cellMasks[s2&7|r>>2&8]
	z0, z1, z2 := int64(s0>>memory.CellSizeShift), int64(s1>>memory.CellSizeShift), int64(s2>>memory.CellSizeShift)
	nonReady = z0&m0.nonReady + z1&m1.nonReady + z2&m2.nonReady
	nonLoading = z0&m0.nonLoading + z1&m1.nonLoading + z2&m2.nonLoading
	nonAllocated = z0&m0.nonAllocated + z1&m1.nonAllocated + z2&m2.nonAllocated
	e.key = [3]int64{nonReady, nonLoading, nonAllocated}
	return
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
// state as the view's NonReadyBytes does, from the entries' cells. Most
// queued tasks keep their key and are not below the least so far:
// skipWorse passes over them in a loop with no call; with checks on,
// readyIndexChecked scans instead.
func (d *dmda) readyIndex(q []dmEntry, w *machine.Worker) int {
	if d.check {
		return d.readyIndexChecked(q, w)
	}
	p := q[0].prio
	b0, b1, b2 := q[0].nonReadyBytes(w.Node)
	if b0 == 0 && b2 == 0 {
		return 0
	}
	best := 0
	for i := 1; ; i++ {
		i = skipWorse(q, i, p, b0, b1, b2)
		if i == len(q) || q[i].prio < p {
			return best
		}
		nr, nl, na := q[i].nonReadyBytes(w.Node)
		if nr < b0 || (nr == b0 && (nl < b1 || (nl == b1 && na < b2))) {
			best, b0, b1, b2 = i, nr, nl, na
		}
		if nr == 0 && na == 0 {
			return best
		}
	}
}

// skipWorse returns the first index j >= i of q the scan must look at (or
// len(q)): a task of priority < p, or whose key changed or is not kept,
// or is below (b0, b1, b2), the least so far. The others are neither the
// least nor all ready: a kept key is all ready only as (0, 0, 0) (its
// parts, from the cells' unsigned sizes, are >= 0 and the bytes not being
// loaded are some of those not valid), which is below any other. A leaf loop
// of few values, kept in registers: the scan's own loop, around calls,
// would reload them at each step.
func skipWorse(q []dmEntry, i int, p int32, b0, b1, b2 int64) int {
	for ; i < len(q); i++ {
		e := &q[i]
		if e.prio < p {
			return i
		}
		if st := e.stamp; e.nb < 0 || e.c[0].Stamp >= st || e.c[1].Stamp >= st || e.c[2].Stamp >= st {
			return i
		}
		if nr := e.key[0]; nr < b0 || (nr == b0 && (e.key[1] < b1 || (e.key[1] == b1 && e.key[2] < b2))) {
			return i
		}
	}
	return i
}

// nonReadyBytes is e's task's NonReadyBytes on node, from e's key while
// its cells are unchanged.
func (e *dmEntry) nonReadyBytes(node int) (nonReady, nonLoading, nonAllocated int64) {
	if e.nb < 0 {
		return memory.NonReadyBytes(e.t.bufs, node)
	}
	if st := e.stamp; e.c[0].Stamp < st && e.c[1].Stamp < st && e.c[2].Stamp < st {
		return e.key[0], e.key[1], e.key[2]
	}
	return e.keyFromCells()
}

// readyIndexChecked is readyIndex's scan, checking each key it reads
// against the handles (View.Checking).
func (d *dmda) readyIndexChecked(q []dmEntry, w *machine.Worker) int {
	best := 0
	var b [3]int64
	for i := range q {
		e := &q[i]
		if e.prio < q[0].prio {
			break
		}
		nr, nl, na := e.nonReadyBytes(w.Node)
		if e.nb >= 0 {
			d.checkKey(e, w, [3]int64{nr, nl, na})
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
