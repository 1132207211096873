package emulator

import (
	"fmt"
	"math"
)

// event is a scheduled call: call(arg) at timeS. Posted events are
// recycled once run; a Timer's event is its own.
type event struct {
	timeS  float64
	seq    uint64
	index  int // position in the heap; -1 when not queued
	call   func(int)
	arg    int
	pooled bool // posted: nobody holds it, recycled after it runs
}

// Engine is a discrete-event simulator in simulated time (seconds, float64).
// It is not safe for concurrent use: one goroutine runs one simulation.
type Engine struct {
	nowS  float64
	seq   uint64
	queue []*event // binary min-heap on (timeS, seq)
	// fifo[head:] are posted events due now, in sequence order: they need
	// no place in the heap (a posted event is never moved or cancelled).
	// The clock does not move on before they have run, since they are due
	// at it, so they keep the queue's order with the heap's events.
	fifo []*event
	head int
	// next, when not nil, is earlier than every event of the heap: most
	// events are the soonest when scheduled, and wait there instead of
	// being sifted to the heap's top and back.
	next   *event
	nrun   uint64
	halted bool
	free   []*event // recycled posted events
	// adv are the hooks waiting for the clock to move past their time
	// (OnAdvance), in order of registration; advMinS is the least of
	// their times.
	adv, advDue []advanceHook // (advDue: advance's scratch)
	advMinS     float64
	silent      bool // the event running moves no clock its hooks watch (Silent)
}

// advanceHook is call(arg), due when the clock moves past afterS.
type advanceHook struct {
	afterS float64
	call   func(int)
	arg    int
}

// fifoIndex and nextIndex are the indices of an event queued in the
// engine's fifo and next.
const (
	fifoIndex = -2
	nextIndex = -3
)

// NewEngine returns an engine with its clock at 0 s.
func NewEngine() *Engine { return &Engine{} }

// NowS is the current simulated time in seconds.
func (e *Engine) NowS() float64 { return e.nowS }

// EventsRun is the number of events executed so far.
func (e *Engine) EventsRun() uint64 { return e.nrun }

// RunInline counts one event run inside the current one: a caller that
// coalesces events posted back to back for one time (consecutive sequence
// numbers, so nothing could run between them) into one runs the others
// inline and counts them, so EventsRun is the same as without coalescing.
func (e *Engine) RunInline() { e.nrun++ }

// RunInlineN counts n events run inline at once (RunInline); n <= 0
// counts none.
func (e *Engine) RunInlineN(n int) {
	if n > 0 {
		e.nrun += uint64(n)
	}
}

// Halted reports whether Halt was called during the current Run.
func (e *Engine) Halted() bool { return e.halted }

// Pending is the number of queued events.
func (e *Engine) Pending() int {
	n := len(e.queue) + len(e.fifo) - e.head
	if e.next != nil {
		n++
	}
	return n
}

// Post runs call(arg) delayS seconds from now (simulated). It panics if
// delayS is negative or NaN: that is a caller bug. Hot paths bind call
// once (a method value kept in a field) and pass what varies as arg, so
// posting allocates nothing, where a closure per event would; the events
// themselves are recycled.
func (e *Engine) Post(delayS float64, call func(int), arg int) {
	atS := e.nowS + delayS
	ev := e.recycled(atS)
	if ev == nil {
		ev = e.pooled(atS)
	}
	ev.call, ev.arg = call, arg
	if ev.timeS == e.nowS {
		ev.index = fifoIndex
		e.fifo = append(e.fifo, ev)
		return
	}
	e.push(ev)
}

// recycled is Post's common case, small enough to inline: a recycled
// event for time atS with the next sequence number, or nil when the free
// list is empty or atS is invalid (pooled then handles it).
func (e *Engine) recycled(atS float64) *event {
	n := len(e.free) - 1
	if n < 0 || !(atS >= e.nowS) {
		return nil
	}
	ev := e.free[n]
	e.free = e.free[:n]
	ev.timeS, ev.seq = atS, e.seq
	e.seq++
	return ev
}

// pooled is Post's fallback when recycled finds nothing: it rejects a bad
// time (checkTime panics) or makes a new pooled event for atS with the
// next sequence number.
func (e *Engine) pooled(atS float64) *event {
	e.checkTime(atS)
	ev := &event{pooled: true, timeS: atS, seq: e.seq}
	e.seq++
	return ev
}

// Timer is an event that can be set, moved and stopped: call(arg) runs
// at the time it is set to, unless stopped or set again before.
type Timer struct {
	e  *Engine
	ev event
}

// NewTimer returns a timer of e that runs call(arg); it is not set.
func (e *Engine) NewTimer(call func(int), arg int) *Timer {
	return &Timer{e: e, ev: event{index: -1, call: call, arg: arg}}
}

// Set makes t run at absolute simulated time atS, as if stopped and set
// anew (it takes a fresh sequence number, so it runs after events already
// queued for the same time). It panics if atS is NaN or earlier than now.
func (t *Timer) Set(atS float64) {
	e, ev := t.e, &t.ev
	e.checkTime(atS)
	inHeap := ev.index >= 0
	if ev.index == nextIndex { // Stop's only work on an event out of the heap
		e.next, ev.index = nil, -1
	}
	ev.timeS = atS
	ev.seq = e.seq
	e.seq++
	switch {
	case !inHeap:
		e.push(ev)
	case e.next == nil || less(e.next, ev):
		e.fix(ev.index) // still after next: stays in the heap
	default:
		e.remove(ev.index)
		e.push(ev)
	}
}

// Stop unsets t; stopping a timer that ran or was stopped does nothing.
func (t *Timer) Stop() {
	e, ev := t.e, &t.ev
	if ev.index == nextIndex {
		e.next, ev.index = nil, -1
		return
	}
	if ev.index < 0 {
		return
	}
	e.remove(ev.index)
}

// Pending reports whether t is set and has not run.
func (t *Timer) Pending() bool { return t.ev.index >= 0 || t.ev.index == nextIndex }

// TimeS is the time t was last set to.
func (t *Timer) TimeS() float64 { return t.ev.timeS }

// Halt makes Run return after the current event.
func (e *Engine) Halt() { e.halted = true }

// OnAdvance runs call(arg) once, when the clock first moves to a time
// later than afterS (simulated s): after the first event then that is not
// Silent. It is SimGrid's time-advance signal, which a thread waiting for
// something that no event announces (StarPU's simulated spin lock) waits
// on. Hooks due together run in the order they were registered; if no
// event is left to move the clock, they run at the current time.
func (e *Engine) OnAdvance(afterS float64, call func(int), arg int) {
	if len(e.adv) == 0 || afterS < e.advMinS {
		e.advMinS = afterS
	}
	e.adv = append(e.adv, advanceHook{afterS, call, arg})
}

// Silent marks the event running as no move of the clock for the
// OnAdvance hooks: an event that only finds it is due later and posts
// itself again, where the simulated program has no event at all.
func (e *Engine) Silent() { e.silent = true }

// advance runs the hooks due when the clock moves to atS (or all of them
// when all is set), keeping the others.
func (e *Engine) advance(atS float64, all bool) {
	due, keep, minS := e.advDue[:0], e.adv[:0], math.Inf(1)
	for _, h := range e.adv {
		if all || atS > h.afterS {
			due = append(due, h)
			continue
		}
		keep = append(keep, h)
		minS = min(minS, h.afterS)
	}
	clear(e.adv[len(keep):])
	e.adv, e.advMinS = keep, minS
	for _, h := range due {
		e.nrun++
		h.call(h.arg) // (it may register hooks: they go to e.adv)
	}
	clear(due)
	e.advDue = due[:0]
}

// Run executes events in (time, sequence) order until the queue is empty or
// Halt is called.
func (e *Engine) Run() {
	e.halted = false
	for !e.halted {
		var ev *event
		first := e.next // the earliest of the heap and next
		if first == nil && len(e.queue) > 0 {
			first = e.queue[0]
		}
		if e.head < len(e.fifo) && (first == nil || less(e.fifo[e.head], first)) {
			ev = e.fifo[e.head]
			e.fifo[e.head] = nil
			if e.head++; e.head == len(e.fifo) {
				e.fifo, e.head = e.fifo[:0], 0
			}
			ev.index = -1
		} else if first != nil {
			if first == e.next {
				e.next, ev = nil, first
				ev.index = -1
			} else {
				ev = e.pop()
			}
		} else {
			if len(e.adv) > 0 {
				e.advance(e.nowS, true) // nothing else will move the clock
				continue
			}
			break
		}
		e.nowS = ev.timeS
		e.nrun++
		due := len(e.adv) > 0 && ev.timeS > e.advMinS
		e.silent = false
		ev.call(ev.arg)
		if ev.pooled {
			ev.call = nil
			e.free = append(e.free, ev)
		}
		if due && !e.silent {
			e.advance(ev.timeS, false)
		}
	}
}

func (e *Engine) checkTime(atS float64) {
	if !(atS >= e.nowS) { // NaN fails too
		e.badTime(atS)
	}
}

//go:noinline (keeps checkTime small enough to inline)
func (e *Engine) badTime(atS float64) {
	if math.IsNaN(atS) {
		panic("emulator: event scheduled at NaN time")
	}
	panic(fmt.Sprintf("emulator: event scheduled in the past: at %.17g s, now %.17g s", atS, e.nowS))
}

// The queue is a binary min-heap on (timeS, seq) with back-indices, so events
// can be rescheduled and cancelled in O(log n) without leaving garbage behind.
// Sequence numbers are unique: any heap pops events in the same order.

func less(a, b *event) bool {
	if a.timeS != b.timeS {
		return a.timeS < b.timeS
	}
	return a.seq < b.seq
}

// push queues ev in next when it is the earliest, else in the heap.
func (e *Engine) push(ev *event) {
	switch {
	case e.next == nil && (len(e.queue) == 0 || less(ev, e.queue[0])):
		e.next, ev.index = ev, nextIndex
		return
	case e.next != nil && less(ev, e.next):
		ev, e.next = e.next, ev
		e.next.index = nextIndex
	}
	e.queue = append(e.queue, ev)
	e.up(len(e.queue) - 1)
}

// pop removes and returns the heap's first event.
func (e *Engine) pop() *event {
	q := e.queue
	ev := q[0]
	last := len(q) - 1
	q[0] = q[last]
	q[last] = nil
	e.queue = q[:last]
	if last > 0 {
		e.down(0)
	}
	ev.index = -1
	return ev
}

func (e *Engine) remove(i int) {
	q := e.queue
	last := len(q) - 1
	ev := q[i]
	if i != last {
		q[i] = q[last]
	}
	q[last] = nil
	e.queue = q[:last]
	ev.index = -1
	if i != last {
		e.fix(i)
	}
}

// fix restores the heap after the key of queue[i] changed.
func (e *Engine) fix(i int) {
	if !e.down(i) {
		e.up(i)
	}
}

// up moves queue[i] up to its place, shifting parents down into the hole,
// and sets the back-indices of what moved.
func (e *Engine) up(i int) {
	q := e.queue
	ev := q[i]
	for i > 0 {
		p := (i - 1) / 2
		if !less(ev, q[p]) {
			break
		}
		q[i] = q[p]
		q[i].index = i
		i = p
	}
	q[i] = ev
	ev.index = i
}

// down moves queue[i0] down to its place, as up does; it reports whether it
// moved.
func (e *Engine) down(i0 int) bool {
	q := e.queue
	n := len(q)
	ev := q[i0]
	i := i0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		j := l
		if r := l + 1; r < n && less(q[r], q[l]) {
			j = r
		}
		if !less(q[j], ev) {
			break
		}
		q[i] = q[j]
		q[i].index = i
		i = j
	}
	q[i] = ev
	ev.index = i
	return i > i0
}
