package sched

import (
	"math"

	"github.com/starsim/starsim/runtime/machine"
)

// The dm/dmda family (StarPU's deque_modeling_policy_data_aware.c): each
// task is pushed to the worker that minimises
//
//	fitness = α(end - end_min) + β·penalty + γ·energy (+ idle-power term)
//
// with end = max(start + queued work, now + penalty) + length, then queued
// there; workers pop from their own queue. The variants of StarPU's
// deque_modeling_policy_data_aware.c: dm ignores data (no penalty, no
// prefetch), dmda adds them, dmdap keeps priority-sorted queues, dmdar pops
// ready-first, dmdas both, dmdasd also counts, when sorting, only the work
// queued before the task (_starpu_fifo_push_sorted_decision_task).
type dmda struct {
	v                              *View
	dataAware                      bool
	sorted                         bool // priority-sorted queues
	readyFirst                     bool // pop the queued task whose data is most ready
	sortedDec                      bool // dmdasd: length before the insertion point only
	alpha, beta, gamma, idlePowerW float64
	w                              []dmWorker // by worker ID
	cands                          []dmCand   // scratch of Push
	// grouped: Push chooses among groups of workers (chooseGrouped),
	// when workers share nodes and the fitness is monotone in the
	// expected end; groups is its scratch.
	grouped bool
	groups  []dmGroup
	// wild records that some worker's expected start or queued length was
	// ever beyond ±maxBounded (or NaN): chooseGrouped then scans every
	// group, as it may skip one only while all are bounded.
	wild bool
	// deferFails counts chooseGrouped's deferrals in a row that found a
	// deferred group it could not skip: where the CPU cores often win
	// (hybrid Cholesky), deferring only costs, so it is tried again only
	// every deferRetry pushes. Whether a group is deferred changes no
	// choice.
	deferFails int
	// ranges are the groups' workers for the model entries rangeStats
	// (groupRanges): tasks of one kernel and footprint share their
	// entries, and mostly come in runs.
	rangeStats *[]*machine.KernelStats
	ranges     []dmRange
	// penUS[n] is the transfer penalty of the task being pushed on memory
	// node n, valid when penPush[n] == npush: workers sharing a node (the
	// CPU cores on RAM) share it, computed once per push. Only when some
	// do (sharedNodes): else the cache costs more than it saves.
	sharedNodes bool
	penUS       []float64
	penPush     []uint64
	npush       uint64
	// queued[w] counts the tasks in worker w's queue (QueuedCounts);
	// nonEmpty has worker w's bit set while it is not 0 (NonEmptyQueues).
	queued   []int32
	nonEmpty []uint64
	// race: View.PushRace; instUS is the instant of the last push queued
	// and instBy its thread (raceMany: several), so that a push of another
	// thread at that instant reads the workers' snapshots (dmWorker.snap*).
	race   bool
	instUS float64
	instBy int
	check  bool // View.Checking
}

// QueuedCounts is, by worker ID, how many tasks each worker's queue holds:
// Pop(w) returns nil exactly when w's is 0 (sched.QueueCounter).
func (d *dmda) QueuedCounts() []int32 { return d.queued }

// NonEmptyQueues is the set of workers whose queues hold tasks
// (sched.QueueCounter).
func (d *dmda) NonEmptyQueues() []uint64 { return d.nonEmpty }

// dmTask is what a dm scheduler keeps of a task it queued: its expected
// length and the part of its transfer penalty not covered by the work
// queued before it (µs).
type dmTask struct{ predictedUS, penPrimeUS float64 }

// dmCand is one worker's terms for the task being pushed (µs): when its
// queue starts, the work queued before the task, the task's length and
// transfer penalty there, and the expected end and fitness they give.
type dmCand struct {
	w                     *machine.Worker
	end, pen, prev, start float64
	length, fitness       float64
}

// dmWeights are the fitness' weights (α, β, γ in µs per joule) and the
// idle power (W); dataAware counts the penalty and the energy terms.
type dmWeights struct {
	alpha, beta, gamma, idlePowerW float64
	dataAware                      bool
}

// expectedEnd is a candidate's expected end (µs): its queue's start plus
// the work queued before the task plus the task's length, the start of the
// task pushed back, for the data-aware variants, to when its data
// arrives (now + penalty) if that is later.
func expectedEnd(start, queued, length, nowUS, penalty float64, dataAware bool) float64 {
	if dataAware {
		return max(start+queued, nowUS+penalty) + length
	}
	return start + queued + length
}

// fitness is StarPU's dm fitness of a candidate (lower wins):
//
//	α(end - endMin) + β·penalty + γ·idle power·(end - eMax) (end > eMax)
//
// endMin being the earliest expected end over the candidates, eMax the
// latest queue end (start + queued); the terms after the first only for
// the data-aware variants (compute_all_performance_predictions,
// _dmda_push_task).
func fitness(c *dmCand, endMin, eMax float64, w dmWeights) float64 {
	f := w.alpha * (c.end - endMin)
	if w.dataAware {
		f += w.beta * c.pen
		if c.end > eMax {
			f += w.gamma * w.idlePowerW * (c.end - eMax) / 1e6
		}
	}
	return f
}

// choose sets every candidate's fitness and returns the index of the
// fittest (ties: the first, as StarPU's loop over workers keeps the first
// minimum).
func choose(cands []dmCand, endMin, eMax float64, w dmWeights) int {
	best, bestF := -1, math.Inf(1)
	for i := range cands {
		c := &cands[i] // (a copy of each candidate costs more than the loop)
		f := fitness(c, endMin, eMax, w)
		c.fitness = f
		if f < bestF {
			best, bestF = i, f
		}
	}
	return best
}

func (d *dmda) Init(v *View) {
	d.v = v
	// StarPU's defaults: STARPU_SCHED_ALPHA=1, BETA=1, GAMMA=1000 (µs per
	// joule), IDLE_POWER=0; the run's weights replace the first three.
	w := v.DMWeights()
	d.alpha, d.beta, d.gamma = w.Alpha, w.Beta, w.Gamma
	nodes := 0
	for _, w := range v.Workers() {
		d.w = append(d.w, dmWorker{expStart: v.NowUS()})
		d.note(&d.w[len(d.w)-1])
		nodes = max(nodes, w.Node+1)
	}
	d.sharedNodes = nodes < len(d.w)
	inOrder := true // chooseGrouped's ranges index d.w by position
	for i, w := range v.Workers() {
		inOrder = inOrder && w.ID == i
	}
	d.grouped = inOrder && d.sharedNodes && !d.sortedDec && d.alpha >= 0 && d.gamma*d.idlePowerW >= 0 &&
		!math.IsInf(d.alpha, 0) && !math.IsInf(d.beta, 0) && !math.IsNaN(d.beta) && !math.IsInf(d.gamma*d.idlePowerW, 0)
	d.penUS, d.penPush = make([]float64, nodes), make([]uint64, nodes)
	d.queued = make([]int32, len(d.w))
	d.nonEmpty = make([]uint64, (len(d.w)+63)/64)
	d.check = v.Checking()
	d.race, d.instUS = v.PushRace(), math.Inf(-1)
	for i := range d.w {
		d.w[i].snapUS = math.Inf(-1)
	}
	if d.readyFirst {
		v.UseCells() // the ready-first scans read them
	}
}

func (d *dmda) Push(t *Task) Decision {
	d.npush++
	by := pusherThread(d.v.Pusher())
	racing := d.race && d.instUS == d.v.NowUS() && d.instBy != by
	if d.grouped && !d.v.Explaining(t) && !racing {
		if w, pen, ok := d.chooseGrouped(t); ok {
			return d.queue(t, w, pen)
		}
	}
	now := d.v.NowUS()
	ws := d.v.Workers()
	cands := d.cands[:0]
	endMin, eMax := math.Inf(1), math.Inf(-1)
	for _, w := range ws {
		if !d.v.CanExecute(t, w) {
			continue
		}
		st := &d.w[w.ID]
		start := max(st.expStart, now)
		prev := st.expLen
		if racing && st.snapUS == now && st.snapBy != by {
			// Queued here this instant by another thread: not seen yet
			// (dmdasd, below, reads its queue itself: not modelled there).
			start, prev = max(st.snapStart, now), st.snapLen
		}
		if d.sortedDec {
			if us, after := d.queuedBefore(st, t); after {
				prev = st.pipeLen + us
			}
		}
		length := d.v.ExpectedLengthUS(t, w)
		pen := d.penalty(t, w)
		end := expectedEnd(start, prev, length, now, pen, d.dataAware)
		cands = append(cands, dmCand{w: w, end: end, pen: pen, prev: prev, start: start, length: length})
		endMin = min(endMin, end)
		eMax = max(eMax, start+prev)
	}
	best := choose(cands, endMin, eMax, dmWeights{d.alpha, d.beta, d.gamma, d.idlePowerW, d.dataAware})
	c := &cands[best]
	d.cands = cands
	if d.v.Explaining(t) {
		rec := ScheduleRecord{TimeUS: now, Task: t.ID(), Kernel: d.v.Spec(t).Name, Priority: t.Priority(), Chosen: c.w.Name}
		for _, k := range cands {
			rec.Candidates = append(rec.Candidates, Candidate{Worker: k.w.Name, StartUS: k.start, QueuedUS: k.prev,
				LengthUS: k.length, PenaltyUS: k.pen, EndUS: k.end, Fitness: k.fitness})
		}
		d.v.Explain(rec)
	}
	return d.queue(t, c.w, c.pen)
}

// queue queues t on w, chosen with the transfer penalty pen (µs).
func (d *dmda) queue(t *Task, w *machine.Worker, pen float64) Decision {
	now := d.v.NowUS()
	st := &d.w[w.ID]
	if d.race {
		d.noteRace(st, now, pusherThread(d.v.Pusher()))
	}
	st.pipeNtasks++
	st.expStart = max(st.expStart, now)
	penPrime := 0.0
	if expEnd := st.expStart + st.expLen; now+pen >= expEnd {
		penPrime = now + pen - expEnd
	}
	length := d.v.ExpectedLengthUS(t, w)
	st.expLen += penPrime + length
	d.note(st)
	t.dm = dmTask{length, penPrime}
	l := d.level(st, t)
	st.push(&st.levels[l]).set(t, w.Node, d.readyFirst)
	if d.queued[w.ID]++; d.queued[w.ID] == 1 {
		d.nonEmpty[w.ID/64] |= 1 << (w.ID % 64)
	}
	return Decision{Worker: w, Prefetch: d.dataAware}
}

// raceMany marks an instant or a snapshot several threads pushed at.
const raceMany = -2

// pusherThread names the thread pushing: the pushing worker's ID, -1 for
// the application thread.
func pusherThread(w *machine.Worker) int {
	if w == nil {
		return -1
	}
	return w.ID
}

// noteRace records, before a push by thread by at instant now changes
// st, st's state for the other threads' pushes of that instant, and the
// instant's pushers.
func (d *dmda) noteRace(st *dmWorker, now float64, by int) {
	if st.snapUS != now {
		st.snapUS, st.snapStart, st.snapLen, st.snapBy = now, st.expStart, st.expLen, by
	} else if st.snapBy != by {
		st.snapBy = raceMany
	}
	if d.instUS != now {
		d.instUS, d.instBy = now, by
	} else if d.instBy != by {
		d.instBy = raceMany
	}
}

// penalty is t's transfer penalty on w's node (µs), computed once per
// push and node when workers share nodes.
func (d *dmda) penalty(t *Task, w *machine.Worker) float64 {
	if !d.dataAware {
		return 0
	}
	if !d.sharedNodes {
		return d.v.ExpectedTransferUS(t, w)
	}
	n := w.Node
	if d.penPush[n] == d.npush {
		return d.penUS[n] // ExpectedTransferUS depends on w's node only
	}
	pen := d.v.ExpectedTransferUS(t, w)
	d.penUS[n], d.penPush[n] = pen, d.npush
	return pen
}

// chooseGrouped makes Push's choice with one candidate per group of
// workers: a run of consecutive workers on one node with one model entry
// for t (the CPU cores on RAM) shares t's length and penalty, so the
// fitness, monotone in the expected end (α, γ·idle power >= 0), is least
// at the group's least end. It chooses the worker Push's scan of every
// candidate chooses: the first of least fitness, checking, in the group
// of the least, the workers before its least end, whose fitness may round
// to the same. ok is false (Push then scans every candidate) when an
// expected end or bound is not finite.
func (d *dmda) chooseGrouped(t *Task) (w *machine.Worker, pen float64, ok bool) {
	now := d.v.NowUS()
	ws := d.v.Workers()
	groups := d.groups[:0]
	endMin, eMax := math.Inf(1), math.Inf(-1)
	// The loop takes minima and maxima by comparisons, where Go's min and
	// max, which propagate NaNs and order zeros by sign, cost several
	// instructions each: nan records a NaN (a NaN the builtins would have
	// carried to endMin or eMax), and a zero's sign changes no choice.
	nan := now != now
	// A large group (the CPU cores) may be skipped when its least end
	// cannot win (skipDeferred): its scan waits for the others'.
	deferOK := d.dataAware && d.gamma*d.idlePowerW == 0 && !d.wild &&
		(d.deferFails < deferMaxFails || d.npush%deferRetry == 0)
	ndeferred := 0
	ranges := d.groupRanges(t.stats, ws) // one group each, in order
	for _, r := range ranges {
		pen := d.penalty(t, ws[r.first])
		// Filled in place, field by field: a group built apart, then
		// appended, is copied in 16-byte words right after its fields'
		// 8-byte stores, a load that waits for them (no store forwarding).
		groups = append(groups, dmGroup{})
		g := &groups[len(groups)-1]
		g.first, g.best, g.end, g.pen, g.length = r.first, r.first, math.Inf(1), pen, r.k.MeanUS
		nowPen := math.Inf(-1) // expectedEnd: the data's arrival, for the data-aware variants
		if d.dataAware {
			nowPen = now + pen
			nan = nan || nowPen != nowPen
		}
		if deferOK && r.end-r.first >= deferMin {
			g.deferred, g.end = true, nowPen
			ndeferred++
			continue
		}
		d.scanGroup(g, r, now, nowPen, &endMin, &eMax, &nan)
	}
	if ndeferred > 0 {
		wt := dmWeights{d.alpha, d.beta, d.gamma, d.idlePowerW, d.dataAware}
		if d.skipDeferred(groups, now, endMin, eMax, nan, wt) {
			d.deferFails = 0
		} else {
			d.deferFails++
			for i := range groups {
				if g := &groups[i]; g.deferred {
					nowPen := g.end
					g.deferred, g.end = false, math.Inf(1)
					d.scanGroup(g, ranges[i], now, nowPen, &endMin, &eMax, &nan)
				}
			}
		}
	}
	d.groups = groups
	if len(groups) == 0 || nan || math.IsInf(endMin, 0) || math.IsInf(eMax, 0) {
		return nil, 0, false
	}
	return d.chooseAmong(groups, now, endMin, eMax)
}

// scanGroup sets g's least expected end and its first worker of that end
// (g.end, g.best) from its workers r, and takes their ends and queue ends
// into endMin and eMax; nan records a NaN met.
func (d *dmda) scanGroup(g *dmGroup, r dmRange, now, nowPen float64, endMin, eMax *float64, nan *bool) {
	length := g.length
	em, n := *eMax, false
	for i := r.first; i < r.end; i++ {
		st := &d.w[i]
		start := st.expStart // max(st.expStart, now), a NaN kept
		if now > start {
			start = now
		}
		queueEnd := start + st.expLen
		end := queueEnd // expectedEnd
		if nowPen > end {
			end = nowPen
		}
		end += length
		if end != end || queueEnd != queueEnd {
			n = true
		}
		if end < g.end {
			g.best, g.end = i, end
		}
		if queueEnd > em {
			em = queueEnd
		}
	}
	*eMax = em
	if n {
		*nan = true
	}
	if g.end < *endMin { // the group's least end is its first least
		*endMin = g.end
	}
}

// chooseAmong is chooseGrouped's choice among its groups, of least end
// endMin and bound eMax, all finite, but those still deferred (skipped).
func (d *dmda) chooseAmong(groups []dmGroup, now, endMin, eMax float64) (w *machine.Worker, pen float64, ok bool) {
	ws := d.v.Workers()
	wt := dmWeights{d.alpha, d.beta, d.gamma, d.idlePowerW, d.dataAware}
	best, bestF := -1, math.Inf(1)
	for i := range groups {
		g := &groups[i]
		if g.deferred {
			continue
		}
		if math.IsInf(g.end, 0) {
			return nil, 0, false
		}
		g.fitness = fitness(&dmCand{end: g.end, pen: g.pen}, endMin, eMax, wt)
		if g.fitness < bestF {
			best, bestF = i, g.fitness
		}
	}
	if best < 0 {
		return nil, 0, false
	}
	g := &groups[best]
	for i := g.first; i < g.best; i++ {
		st := &d.w[ws[i].ID]
		start := max(st.expStart, now)
		c := dmCand{end: expectedEnd(start, st.expLen, g.length, now, g.pen, d.dataAware), pen: g.pen}
		if fitness(&c, endMin, eMax, wt) == bestF {
			return ws[i], g.pen, true
		}
	}
	return ws[g.best], g.pen, true
}

// dmRange is a group of workers for chooseGrouped: workers first to
// end-1 (by ID and position), on one node, with one model entry k.
type dmRange struct {
	first, end int
	k          *machine.KernelStats
}

// groupRanges returns the groups of workers for a task of model entries
// stats (by worker ID; nil: cannot run there): the runs of consecutive
// workers on one node with one entry. They depend on the entries alone:
// the last ones are kept.
func (d *dmda) groupRanges(stats *[]*machine.KernelStats, ws []*machine.Worker) []dmRange {
	if stats == d.rangeStats {
		return d.ranges
	}
	st := *stats
	rs := d.ranges[:0]
	for i := 0; i < len(ws); {
		k := st[i]
		if k == nil {
			i++
			continue
		}
		first, node := i, ws[i].Node
		for ; i < len(ws) && ws[i].Node == node && st[i] == k; i++ {
		}
		rs = append(rs, dmRange{first: first, end: i, k: k})
	}
	d.rangeStats, d.ranges = stats, rs
	return rs
}

// dmGroup is chooseGrouped's candidate for the workers ws[first:] it
// groups: best is the first of least expected end (µs), the others' terms
// are shared.
type dmGroup struct {
	first, best               int
	end, pen, length, fitness float64
	// deferred: its workers were not scanned (see skipDeferred); end
	// holds the data's arrival (now + pen); chooseAmong passes over it.
	deferred bool
}

// maxBounded bounds the values chooseGrouped may skip a group over: sums
// of three of them, or of their sums with a simulated time, stay finite.
const maxBounded = 1e300

func bounded(x float64) bool { return x >= -maxBounded && x <= maxBounded }

// note records in d.wild a worker state that is no longer bounded.
func (d *dmda) note(st *dmWorker) {
	if !bounded(st.expStart) || !bounded(st.expLen) {
		d.wild = true
	}
}

// deferMin is the size from which chooseGrouped defers a group's scan:
// the CPU cores of a node, whose least expected end often cannot win.
const deferMin = 4

// deferMaxFails and deferRetry: chooseGrouped stops deferring after
// deferMaxFails deferrals in a row that skipped nothing, then defers once
// every deferRetry pushes (a power of 2) until one skips again.
const (
	deferMaxFails = 8
	deferRetry    = 256
)

// skipDeferred reports whether chooseGrouped may drop its deferred groups
// unscanned, the scanned ones giving the least end endMin and the bound
// eMax: when each deferred group's least end is certainly above endMin
// (so endMin stays) and its fitness certainly above the scanned groups'
// least (so it is not chosen, ties included). Its expected ends are at
// least the data's arrival plus the task's length (expectedEnd), and the
// fitness is monotone in the end (alpha >= 0). It holds only when the
// energy term is 0 (eMax then changes no fitness), and when every value
// the scan would read is bounded: the scan would then find no NaN or
// infinity either, so the run's fallbacks are taken exactly as before.
func (d *dmda) skipDeferred(groups []dmGroup, now, endMin, eMax float64, nan bool, wt dmWeights) bool {
	if nan || d.wild || !bounded(now) || math.IsInf(endMin, 0) || math.IsInf(eMax, 0) {
		return false
	}
	bestF := math.Inf(1)
	for i := range groups {
		g := &groups[i]
		if g.deferred {
			continue
		}
		if math.IsInf(g.end, 0) {
			return false
		}
		bestF = min(bestF, fitness(&dmCand{end: g.end, pen: g.pen}, endMin, eMax, wt))
	}
	for i := range groups {
		g := &groups[i]
		if !g.deferred {
			continue
		}
		if !bounded(g.end) || !bounded(g.length) {
			return false
		}
		lb := g.end + g.length
		if !(lb > endMin) || !(fitness(&dmCand{end: lb, pen: g.pen}, endMin, eMax, wt) > bestF) {
			return false
		}
	}
	return true
}

func (d *dmda) Pop(w *machine.Worker) *Task {
	st := &d.w[w.ID]
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
	if d.queued[w.ID]--; d.queued[w.ID] == 0 {
		d.nonEmpty[w.ID/64] &^= 1 << (w.ID % 64)
	}
	if len(l.tasks()) == 0 && d.sorted {
		st.release(l.q)
		st.levels[0] = dmLevel{}
		st.levels = st.levels[1:]
	}
	now := d.v.NowUS()
	st.expStart = max(now, st.expStart)
	st.expLen -= t.dm.penPrimeUS
	st.pipeLen += t.dm.penPrimeUS
	st.expStart = now + st.pipeLen
	st.snapUS = math.Inf(-1) // (a push of this instant then sees the pop)
	d.note(st)
	return t
}

func (d *dmda) PreExec(w *machine.Worker, t *Task) {
	st := &d.w[w.ID]
	now := d.v.NowUS()
	dt := t.dm
	st.pipeLen -= dt.penPrimeUS
	st.expLen -= dt.predictedUS
	st.pipeLen += dt.predictedUS
	// _starpu_fifo_task_started sets exp_start = now + pipeline_len outright
	// (the hook's max with it then changes nothing): a worker that got
	// ahead of its predictions has its expected start pulled back.
	st.expStart = now + st.pipeLen
	st.snapUS = math.Inf(-1)
	d.note(st)
}

func (d *dmda) PostExec(w *machine.Worker, t *Task) {
	st := &d.w[w.ID]
	now := d.v.NowUS()
	st.pipeLen -= t.dm.predictedUS
	st.pipeNtasks--
	st.expStart = max(now+st.pipeLen, st.expStart)
	st.snapUS = math.Inf(-1)
	d.note(st)
}
