package runtime

import (
	"math"
	"math/bits"
	"sort"

	"github.com/starsim/starsim/runtime/graph"
)

// The dm/dmda family (StarPU's deque_modeling_policy_data_aware.c): each
// task is pushed to the worker that minimises
//
//	fitness = α(end - end_min) + β·penalty + γ·energy (+ idle-power term)
//
// with end = max(start + queued work, now + penalty) + length, then queued
// there; workers pop from their own queue. Variants differ by data awareness,
// queue order and pop rule (see the table in ../shared/docs/starpu-reference.md §1.1).
type dmda struct {
	// v is the simulator itself, not its View interface: dmda's queries,
	// several per worker at every push, then compile to direct (often
	// inlined) calls. Built-in schedulers are only made by New.
	v                              *Simulator
	dataAware                      bool
	sorted                         bool // priority-sorted queues
	readyFirst                     bool // pop the queued task whose data is most ready
	sortedDec                      bool // dmdasd: length before the insertion point only
	alpha, beta, gamma, idlePowerW float64
	w                              []*dmWorker
	cands                          []dmCand // scratch of Push
	// penUS[n] is the transfer penalty of the task being pushed on memory
	// node n, valid when penPush[n] == npush: workers sharing a node (the
	// CPU cores on RAM) share it, computed once per push. Only when some
	// do (sharedNodes): else the cache costs more than it saves.
	sharedNodes bool
	penUS       []float64
	penPush     []uint64
	npush       uint64
}

type dmCand struct {
	w                     *Worker
	end, pen, prev, start float64
	length, fitness       float64
}

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
func (l *dmLevel) remove(i int) *TaskState {
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
	t     *TaskState
	prio  int
	h     [3]*handleState
	nb    int8  // buffers in h; -1: too many, read t.bufs
	reads uint8 // bit k: buffer k is read
}

func newDMEntry(t *TaskState) dmEntry {
	e := dmEntry{t: t, prio: int(t.prio), nb: -1}
	if len(t.bufs) <= len(e.h) {
		e.nb = int8(len(t.bufs))
		for k, b := range t.bufs {
			e.h[k] = b.h
			if b.mode&graph.R != 0 {
				e.reads |= 1 << k
			}
		}
	}
	return e
}

// nonReadyBytes is the view's NonReadyBytes of e's task on node (bit set
// 1<<node), from the entry's copies.
func (e *dmEntry) nonReadyBytes(node int) (nonReady, nonLoading, nonAllocated int64) {
	if e.nb < 0 {
		return nonReadyBytes(e.t.bufs, node)
	}
	bit := uint64(1) << uint(node)
	for k, h := range e.h[:e.nb] {
		r, l, a := h.nonReady(e.reads>>k&1 != 0, bit)
		nonReady, nonLoading, nonAllocated = nonReady+r, nonLoading+l, nonAllocated+a
	}
	return
}

func init() {
	RegisterScheduler("dm", func() Scheduler { return &dmda{} })
	RegisterScheduler("dmda", func() Scheduler { return &dmda{dataAware: true} })
	RegisterScheduler("dmdap", func() Scheduler { return &dmda{dataAware: true, sorted: true} })
	RegisterScheduler("dmdar", func() Scheduler { return &dmda{dataAware: true, readyFirst: true} })
	RegisterScheduler("dmdas", func() Scheduler { return &dmda{dataAware: true, sorted: true, readyFirst: true} })
	RegisterScheduler("dmdasd", func() Scheduler { return &dmda{dataAware: true, sorted: true, readyFirst: true, sortedDec: true} })
}

func (d *dmda) Init(v View) {
	d.v = v.(*Simulator)
	// StarPU's defaults: STARPU_SCHED_ALPHA=1, BETA=1, GAMMA=1000 (µs per
	// joule), IDLE_POWER=0; Options.DMWeights replaces the first three.
	w := DefaultDMWeights
	if o := d.v.opts.DMWeights; o != nil {
		w = *o
	}
	d.alpha, d.beta, d.gamma = w.Alpha, w.Beta, w.Gamma
	nodes := 0
	for _, w := range v.Workers() {
		d.w = append(d.w, &dmWorker{expStart: v.NowUS()})
		nodes = max(nodes, w.Node+1)
	}
	d.sharedNodes = nodes < len(d.w)
	d.penUS, d.penPush = make([]float64, nodes), make([]uint64, nodes)
}

// level returns the index of the level t goes to, creating it if needed:
// the only one when unsorted, else the level of t's priority (after every
// task of priority >= t's).
func (d *dmda) level(st *dmWorker, t *TaskState) int {
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
func (d *dmda) queuedBefore(st *dmWorker, t *TaskState) (us float64, after bool) {
	for _, l := range st.levels {
		if l.prio < t.Priority() {
			return us, true
		}
		for _, o := range l.tasks() {
			us += o.t.predictedUS + o.t.penPrimeUS
		}
	}
	return us, false
}

func (d *dmda) Push(t *TaskState) {
	d.npush++
	now := d.v.NowUS()
	ws := d.v.Workers()
	cands := d.cands[:0]
	endMin, eMax := math.Inf(1), math.Inf(-1)
	for _, w := range ws {
		if !d.v.CanExecute(t, w) {
			continue
		}
		st := d.w[w.ID]
		start := max(st.expStart, now)
		prev := st.expLen
		if d.sortedDec {
			if us, after := d.queuedBefore(st, t); after {
				prev = st.pipeLen + us
			}
		}
		length := d.v.ExpectedLengthUS(t, w)
		pen := 0.0
		end := start + prev + length
		if d.dataAware {
			if !d.sharedNodes {
				pen = d.v.ExpectedTransferUS(t, w)
			} else if n := w.Node; d.penPush[n] == d.npush {
				pen = d.penUS[n] // ExpectedTransferUS depends on w's node only
			} else {
				pen = d.v.ExpectedTransferUS(t, w)
				d.penUS[n], d.penPush[n] = pen, d.npush
			}
			end = max(start+prev, now+pen) + length
		}
		cands = append(cands, dmCand{w: w, end: end, pen: pen, prev: prev, start: start, length: length})
		endMin = min(endMin, end)
		eMax = max(eMax, start+prev)
	}
	best, bestF := -1, math.Inf(1)
	for i := range cands {
		c := &cands[i] // (a copy of each candidate costs more than the loop)
		f := d.alpha * (c.end - endMin)
		if d.dataAware {
			f += d.beta * c.pen
			if c.end > eMax {
				f += d.gamma * d.idlePowerW * (c.end - eMax) / 1e6
			}
		}
		c.fitness = f
		if f < bestF { // ties: first worker
			best, bestF = i, f
		}
	}
	c := &cands[best]
	d.cands = cands
	if d.v.Explaining(t) {
		rec := Decision{TimeUS: now, Task: t.ID(), Kernel: t.Spec().Name, Priority: t.Priority(), Chosen: c.w.Name}
		for _, k := range cands {
			rec.Candidates = append(rec.Candidates, Candidate{Worker: k.w.Name, StartUS: k.start, QueuedUS: k.prev,
				LengthUS: k.length, PenaltyUS: k.pen, EndUS: k.end, Fitness: k.fitness})
		}
		d.v.Explain(rec)
	}
	st := d.w[c.w.ID]
	st.pipeNtasks++
	st.expStart = max(st.expStart, now)
	penPrime := 0.0
	if expEnd := st.expStart + st.expLen; now+c.pen >= expEnd {
		penPrime = now + c.pen - expEnd
	}
	length := d.v.ExpectedLengthUS(t, c.w)
	st.expLen += penPrime + length
	t.predictedUS, t.penPrimeUS = length, penPrime
	if d.dataAware {
		d.v.Prefetch(t, c.w)
	}
	l := d.level(st, t)
	st.push(&st.levels[l], newDMEntry(t))
}

func (d *dmda) Pop(w *Worker) *TaskState {
	st := d.w[w.ID]
	if len(st.levels) == 0 || len(st.levels[0].tasks()) == 0 {
		return nil
	}
	l := &st.levels[0]
	i := 0
	if d.readyFirst {
		// The tasks of priority >= the head's are in the first level.
		i = d.readyIndex(l.tasks(), w)
	}
	t := l.remove(i)
	if len(l.tasks()) == 0 && d.sorted {
		st.release(l.q)
		st.levels[0] = dmLevel{}
		st.levels = st.levels[1:]
	}
	now := d.v.NowUS()
	st.expStart = max(now, st.expStart)
	st.expLen -= t.penPrimeUS
	st.pipeLen += t.penPrimeUS
	st.expStart = now + st.pipeLen
	return t
}

// readyIndex is StarPU's ready-first pop: among queued tasks with priority
// >= the head's, the lexicographic minimum of (bytes not valid, of those not
// being loaded, bytes not allocated); ties to the earlier task; the scan
// stops at a task with everything valid and allocated. It reads the data's
// state as the view's NonReadyBytes does, from the queue's copies of the
// buffers.
func (d *dmda) readyIndex(q []dmEntry, w *Worker) int {
	best := 0
	var b [3]int64
	for i := range q {
		e := &q[i]
		if e.prio < q[0].prio {
			break
		}
		nr, nl, na := e.nonReadyBytes(w.Node)
		if i == 0 || nr < b[0] || (nr == b[0] && (nl < b[1] || (nl == b[1] && na < b[2]))) {
			best, b = i, [3]int64{nr, nl, na}
		}
		if nr == 0 && na == 0 {
			break
		}
	}
	return best
}

func (d *dmda) PreExec(w *Worker, t *TaskState) {
	st := d.w[w.ID]
	now := d.v.NowUS()
	st.pipeLen -= t.penPrimeUS
	st.expLen -= t.predictedUS
	st.pipeLen += t.predictedUS
	// _starpu_fifo_task_started sets exp_start = now + pipeline_len outright
	// (the hook's max with it then changes nothing): a worker that got
	// ahead of its predictions has its expected start pulled back.
	st.expStart = now + st.pipeLen
}

func (d *dmda) PostExec(w *Worker, t *TaskState) {
	st := d.w[w.ID]
	now := d.v.NowUS()
	st.pipeLen -= t.predictedUS
	st.pipeNtasks--
	st.expStart = max(now+st.pipeLen, st.expStart)
}
