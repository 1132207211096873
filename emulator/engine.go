package emulator

import (
	"fmt"
	"math"
)

// Event is a scheduled action. The engine owns it from Schedule until it runs
// or is cancelled.
type Event struct {
	timeS  float64
	seq    uint64
	index  int // position in the heap; -1 when not queued
	action func()
	call   func(int) // typed form: call(arg) when action is nil
	arg    int
	callO  func(any) // object form: callO(obj) when action and call are nil
	obj    any
	pooled bool // posted: nobody holds it, recycled after it runs
}

// TimeS is the simulated time, in seconds, at which the event runs.
func (ev *Event) TimeS() float64 { return ev.timeS }

// Pending reports whether the event is still queued.
func (ev *Event) Pending() bool {
	return ev.index >= 0 || ev.index == fifoIndex || ev.index == nextIndex
}

// Hook observes the engine; it is called around every event. Hooks must not
// change the simulation's outcome (tracing and statistics attach here).
type Hook interface {
	BeforeEvent(nowS float64, ev *Event)
	AfterEvent(nowS float64, ev *Event)
}

// Engine is a discrete-event simulator in simulated time (seconds, float64).
// It is not safe for concurrent use: one goroutine runs one simulation.
type Engine struct {
	nowS  float64
	seq   uint64
	queue []*Event // binary min-heap on (timeS, seq)
	// fifo[head:] are posted events due now, in sequence order: they need
	// no place in the heap (a posted event is never moved or cancelled).
	// The clock does not move on before they have run, since they are due
	// at it, so they keep the queue's order with the heap's events.
	fifo []*Event
	head int
	// next, when not nil, is earlier than every event of the heap: most
	// events are the soonest when scheduled, and wait there instead of
	// being sifted to the heap's top and back.
	next   *Event
	hooks  []Hook
	nrun   uint64
	halted bool
	free   []*Event // recycled posted events
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

// Pending is the number of queued events.
func (e *Engine) Pending() int {
	n := len(e.queue) + len(e.fifo) - e.head
	if e.next != nil {
		n++
	}
	return n
}

// AddHook attaches an observer called before and after every event.
func (e *Engine) AddHook(h Hook) { e.hooks = append(e.hooks, h) }

// Schedule queues action to run at absolute simulated time atS (seconds).
// It panics if atS is NaN or earlier than now: that is a caller bug.
func (e *Engine) Schedule(atS float64, action func()) *Event {
	e.checkTime(atS)
	ev := &Event{timeS: atS, seq: e.seq, action: action}
	e.seq++
	e.push(ev)
	return ev
}

// Post queues action at atS like Schedule, for callers that never cancel or
// reschedule it: its event is recycled once run, sparing an allocation.
func (e *Engine) Post(atS float64, action func()) {
	ev := e.recycled(atS)
	if ev == nil {
		ev = e.pooled(atS)
	}
	ev.action = action
	e.post(ev)
}

// PostCall queues call(arg) at atS like Post. Hot paths bind call once (a
// method value kept in a field) and pass what varies as arg, so posting an
// event allocates nothing, where a closure per event would.
func (e *Engine) PostCall(atS float64, call func(int), arg int) {
	ev := e.recycled(atS)
	if ev == nil {
		ev = e.pooled(atS)
	}
	ev.call, ev.arg = call, arg
	e.post(ev)
}

// PostObj queues callO(obj) at atS like PostCall, for actions keyed by a
// pointer: a pointer held in an interface costs no allocation either.
func (e *Engine) PostObj(atS float64, callO func(any), obj any) {
	ev := e.recycled(atS)
	if ev == nil {
		ev = e.pooled(atS)
	}
	ev.callO, ev.obj = callO, obj
	e.post(ev)
}

// PostObjAfter is PostObj delayS seconds from now.
func (e *Engine) PostObjAfter(delayS float64, callO func(any), obj any) {
	e.PostObj(e.nowS+delayS, callO, obj)
}

// recycled is pooled's common case, small enough to inline: a recycled
// event for time atS with the next sequence number, or nil when the free
// list is empty or atS is invalid (pooled then handles it).
func (e *Engine) recycled(atS float64) *Event {
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

// pooled is the posts' fallback when recycled finds nothing: it rejects a
// bad time (checkTime panics) or makes a new pooled event for atS with the
// next sequence number. The caller sets its action and pushes it.
func (e *Engine) pooled(atS float64) *Event {
	e.checkTime(atS)
	ev := &Event{pooled: true, timeS: atS, seq: e.seq}
	e.seq++
	return ev
}

// post queues a pooled event: in the fifo when it is due now, else in the
// heap.
func (e *Engine) post(ev *Event) {
	if ev.timeS == e.nowS {
		ev.index = fifoIndex
		e.fifo = append(e.fifo, ev)
		return
	}
	e.push(ev)
}

// PostCallAfter is PostCall delayS seconds from now.
func (e *Engine) PostCallAfter(delayS float64, call func(int), arg int) {
	e.PostCall(e.nowS+delayS, call, arg)
}

// PostAfter is Post delayS seconds from now.
func (e *Engine) PostAfter(delayS float64, action func()) { e.Post(e.nowS+delayS, action) }

// After queues action to run delayS seconds from now.
func (e *Engine) After(delayS float64, action func()) *Event {
	return e.Schedule(e.nowS+delayS, action)
}

// Reschedule moves a queued event to time atS, as if it had been cancelled and
// scheduled anew (it takes a fresh sequence number, so it runs after events
// already queued for the same time). An event that is not queued is queued.
func (e *Engine) Reschedule(ev *Event, atS float64) {
	e.checkTime(atS)
	inHeap := ev.index >= 0
	if ev.index == nextIndex { // Cancel's only work on an event out of the heap
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

// Cancel removes a queued event; cancelling an event that already ran or was
// cancelled is a no-op.
func (e *Engine) Cancel(ev *Event) {
	if ev == nil {
		return
	}
	if ev.index == nextIndex {
		e.next, ev.index = nil, -1
		return
	}
	if ev.index < 0 {
		return
	}
	e.remove(ev.index)
}

// Halt makes Run return after the current event.
func (e *Engine) Halt() { e.halted = true }

// Run executes events in (time, sequence) order until the queue is empty or
// Halt is called.
func (e *Engine) Run() {
	e.RunUntil(math.Inf(1))
}

// RunUntil executes every event whose time is <= endS, then sets the clock to
// endS if endS is finite and later than the last event.
func (e *Engine) RunUntil(endS float64) {
	e.halted = false
	for !e.halted {
		var ev *Event
		first := e.next // the earliest of the heap and next
		if first == nil && len(e.queue) > 0 {
			first = e.queue[0]
		}
		if e.head < len(e.fifo) && (first == nil || less(e.fifo[e.head], first)) {
			if e.fifo[e.head].timeS > endS {
				break
			}
			ev = e.fifo[e.head]
			e.fifo[e.head] = nil
			if e.head++; e.head == len(e.fifo) {
				e.fifo, e.head = e.fifo[:0], 0
			}
			ev.index = -1
		} else if first != nil {
			if first.timeS > endS {
				break
			}
			if first == e.next {
				e.next, ev = nil, first
				ev.index = -1
			} else {
				ev = e.pop()
			}
		} else {
			break
		}
		e.nowS = ev.timeS
		if len(e.hooks) != 0 {
			e.before(ev)
		}
		e.nrun++
		switch {
		case ev.action != nil:
			ev.action()
		case ev.call != nil:
			ev.call(ev.arg)
		default:
			ev.callO(ev.obj)
		}
		if len(e.hooks) != 0 {
			e.after(ev)
		}
		if ev.pooled {
			ev.action, ev.call, ev.callO, ev.obj = nil, nil, nil, nil
			e.free = append(e.free, ev)
		}
	}
	if !e.halted && !math.IsInf(endS, 1) && endS > e.nowS {
		e.nowS = endS
	}
}

// before and after call the hooks around ev, out of RunUntil's loop: most
// runs have none.
func (e *Engine) before(ev *Event) {
	for _, h := range e.hooks {
		h.BeforeEvent(e.nowS, ev)
	}
}

func (e *Engine) after(ev *Event) {
	for _, h := range e.hooks {
		h.AfterEvent(e.nowS, ev)
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

func less(a, b *Event) bool {
	if a.timeS != b.timeS {
		return a.timeS < b.timeS
	}
	return a.seq < b.seq
}

// push queues ev in next when it is the earliest, else in the heap.
func (e *Engine) push(ev *Event) {
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
func (e *Engine) pop() *Event {
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
