package runtime

import (
	"math"
	"sort"
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
	v                              View
	dataAware                      bool
	sorted                         bool // priority-sorted queues
	readyFirst                     bool // pop the queued task whose data is most ready
	sortedDec                      bool // dmdasd: length before the insertion point only
	alpha, beta, gamma, idlePowerW float64
	w                              []*dmWorker
	cands                          []dmCand // scratch of Push
}

type dmCand struct {
	w                     *Worker
	end, pen, prev, start float64
	length, fitness       float64
}

type dmWorker struct {
	q                         []*TaskState
	expStart, expLen, pipeLen float64 // µs
	pipeNtasks                int
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
	d.v = v
	// StarPU's defaults: STARPU_SCHED_ALPHA=1, BETA=1, GAMMA=1000 (µs per
	// joule), IDLE_POWER=0.
	d.alpha, d.beta, d.gamma = 1, 1, 1000
	for range v.Workers() {
		d.w = append(d.w, &dmWorker{expStart: v.NowUS()})
	}
}

// insertPos is where t goes in q: FIFO, or after every task of priority >= t's.
func (d *dmda) insertPos(q []*TaskState, t *TaskState) int {
	if !d.sorted {
		return len(q)
	}
	// q is sorted by decreasing priority: the first task of lower priority.
	p := t.Priority()
	return sort.Search(len(q), func(i int) bool { return q[i].Priority() < p })
}

func (d *dmda) Push(t *TaskState) {
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
			if pos := d.insertPos(st.q, t); pos < len(st.q) {
				prev = st.pipeLen
				for _, o := range st.q[:pos] {
					prev += o.predictedUS + o.penPrimeUS
				}
			}
		}
		length := d.v.ExpectedLengthUS(t, w)
		pen := 0.0
		end := start + prev + length
		if d.dataAware {
			pen = d.v.ExpectedTransferUS(t, w)
			end = max(start+prev, now+pen) + length
		}
		cands = append(cands, dmCand{w: w, end: end, pen: pen, prev: prev, start: start, length: length})
		endMin = min(endMin, end)
		eMax = max(eMax, start+prev)
	}
	best, bestF := -1, math.Inf(1)
	for i, c := range cands {
		f := d.alpha * (c.end - endMin)
		if d.dataAware {
			f += d.beta * c.pen
			if c.end > eMax {
				f += d.gamma * d.idlePowerW * (c.end - eMax) / 1e6
			}
		}
		cands[i].fitness = f
		if f < bestF { // ties: first worker
			best, bestF = i, f
		}
	}
	c := cands[best]
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
	t.predictedUS, t.predictedTransferUS, t.penPrimeUS = length, c.pen, penPrime
	if d.dataAware {
		d.v.Prefetch(t, c.w)
	}
	pos := d.insertPos(st.q, t)
	st.q = append(st.q, nil)
	copy(st.q[pos+1:], st.q[pos:])
	st.q[pos] = t
}

func (d *dmda) Pop(w *Worker) *TaskState {
	st := d.w[w.ID]
	if len(st.q) == 0 {
		return nil
	}
	i := 0
	if d.readyFirst {
		i = d.readyIndex(st.q, w)
	}
	t := st.q[i]
	// Close the gap from the front: i is small (the head, or the end of a
	// short ready-first scan) while the queue may hold thousands of tasks.
	copy(st.q[1:i+1], st.q[:i])
	st.q[0] = nil
	st.q = st.q[1:]
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
// stops at a task with everything valid and allocated.
func (d *dmda) readyIndex(q []*TaskState, w *Worker) int {
	best := 0
	var b [3]int64
	for i, t := range q {
		if t.Priority() < q[0].Priority() {
			break
		}
		nr, nl, na := d.v.NonReadyBytes(t, w)
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
