package emulator

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEngineOrdersByTimeThenInsertion(t *testing.T) {
	e := NewEngine()
	var got []string
	rec := func(s string) func() { return func() { got = append(got, s) } }
	e.Schedule(2, rec("t2-first"))
	e.Schedule(1, rec("t1-first"))
	e.Schedule(2, rec("t2-second"))
	e.Schedule(1, rec("t1-second"))
	e.Schedule(0, func() {
		got = append(got, "t0")
		// Scheduled during the run at an already-queued time: runs after the
		// events queued earlier for that time.
		e.Schedule(1, rec("t1-third"))
		e.Schedule(0, rec("t0-later"))
	})
	e.Run()
	assert.Equal(t, []string{"t0", "t0-later", "t1-first", "t1-second", "t1-third", "t2-first", "t2-second"}, got)
	assert.Equal(t, 2.0, e.NowS())
	assert.Equal(t, uint64(7), e.EventsRun())
}

func TestEngineSchedulingInThePastPanics(t *testing.T) {
	e := NewEngine()
	e.Schedule(5, func() {
		assert.PanicsWithValue(t, "emulator: event scheduled in the past: at 4 s, now 5 s", func() { e.Schedule(4, func() {}) })
	})
	e.Run()
	assert.Panics(t, func() { e.Schedule(math.NaN(), func() {}) })
	assert.Panics(t, func() { e.After(-1e-12, func() {}) })
}

func TestEngineCancelAndReschedule(t *testing.T) {
	e := NewEngine()
	var got []string
	a := e.Schedule(1, func() { got = append(got, "a") })
	b := e.Schedule(2, func() { got = append(got, "b") })
	c := e.Schedule(3, func() { got = append(got, "c") })
	e.Cancel(b)
	e.Cancel(b) // no-op
	assert.False(t, b.Pending())
	e.Reschedule(a, 4) // now after c
	e.Schedule(4, func() { got = append(got, "d") })
	e.Run()
	assert.Equal(t, []string{"c", "a", "d"}, got)
	assert.False(t, c.Pending())
	e.Cancel(c) // already ran: no-op
	// Rescheduling an event that ran queues it again.
	e.Reschedule(a, 10)
	e.Run()
	assert.Equal(t, []string{"c", "a", "d", "a"}, got)
	assert.Equal(t, 10.0, e.NowS())
}

func TestEngineRunUntilAndHalt(t *testing.T) {
	e := NewEngine()
	n := 0
	for i := 1; i <= 5; i++ {
		e.Schedule(float64(i), func() { n++ })
	}
	e.RunUntil(2.5)
	assert.Equal(t, 2, n)
	assert.Equal(t, 2.5, e.NowS())
	e.Schedule(3, func() { e.Halt() })
	e.Run()
	assert.Equal(t, 3, n) // the t=3 event queued first ran, then the halting one
	assert.Equal(t, 2, e.Pending())
}

type countHook struct{ before, after int }

func (h *countHook) BeforeEvent(float64, *Event) { h.before++ }
func (h *countHook) AfterEvent(float64, *Event)  { h.after++ }

func TestEngineHooks(t *testing.T) {
	e := NewEngine()
	h := &countHook{}
	e.AddHook(h)
	e.Schedule(1, func() {})
	e.Schedule(1, func() {})
	e.Run()
	assert.Equal(t, 2, h.before)
	assert.Equal(t, 2, h.after)
}

// TestEngineRandomOrder checks the heap against a sort on (time, seq), with
// random cancellations and reschedules.
func TestEngineRandomOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 50; trial++ {
		e := NewEngine()
		type rec struct {
			t   float64
			seq int
		}
		var want []rec
		var got []int
		seq := 0
		evs := map[int]*Event{}
		times := map[int]float64{}
		for i := 0; i < 300; i++ {
			id := seq
			seq++
			tm := float64(rng.IntN(40)) // many ties
			times[id] = tm
			evs[id] = e.Schedule(tm, func() { got = append(got, id) })
		}
		// Cancel some, reschedule some (a reschedule takes a new sequence).
		order := map[int]int{}
		for id := 0; id < 300; id++ {
			order[id] = id
		}
		for id := 0; id < 300; id += 7 {
			e.Cancel(evs[id])
			delete(times, id)
		}
		next := 300
		for id := 3; id < 300; id += 11 {
			if _, ok := times[id]; !ok {
				continue
			}
			tm := float64(rng.IntN(40))
			times[id] = tm
			e.Reschedule(evs[id], tm)
			order[id] = next
			next++
		}
		for id, tm := range times {
			want = append(want, rec{tm, order[id]})
		}
		sort.Slice(want, func(i, j int) bool {
			if want[i].t != want[j].t {
				return want[i].t < want[j].t
			}
			return want[i].seq < want[j].seq
		})
		e.Run()
		require.Len(t, got, len(want))
		inv := map[int]int{}
		for id, o := range order {
			inv[o] = id
		}
		for i, w := range want {
			require.Equal(t, inv[w.seq], got[i], "trial %d position %d", trial, i)
		}
	}
}

// TestPostRecyclesEvents: posted events run in (time, seq) order with
// scheduled ones and their structs are reused.
func TestPostRecyclesEvents(t *testing.T) {
	e := NewEngine()
	var got []int
	e.Post(2, func() { got = append(got, 2) })
	e.Schedule(1, func() { got = append(got, 1) })
	e.Post(1, func() {
		got = append(got, 10)
		e.PostAfter(0, func() { got = append(got, 11) })
	})
	e.Run()
	assert.Equal(t, []int{1, 10, 11, 2}, got)
	assert.Len(t, e.free, 3)
	e.Post(5, func() { got = append(got, 5) })
	assert.Len(t, e.free, 2, "a recycled event was taken")
	e.Run()
	assert.Equal(t, 5, got[len(got)-1])
}

// TestPostCallInterleaves: typed and object events run in (time, seq) order with
// closure events, receive their argument, and are recycled without
// allocating once the pool is warm.
func TestPostCallInterleaves(t *testing.T) {
	e := NewEngine()
	var got []int
	fourteen := 14
	rec := func(arg int) { got = append(got, arg) }
	e.PostCall(2, rec, 20)
	e.Post(1, func() { got = append(got, 10) })
	e.PostCall(1, rec, 11)
	e.Schedule(1, func() {
		got = append(got, 12)
		e.PostCallAfter(0, rec, 13)
		e.PostObjAfter(0, func(o any) { got = append(got, *o.(*int)) }, &fourteen)
	})
	e.Run()
	assert.Equal(t, []int{10, 11, 12, 13, 14, 20}, got)
	sum := 0
	add := func(arg int) { sum += arg }
	allocs := testing.AllocsPerRun(100, func() {
		e.PostCallAfter(1, add, 1)
		e.Run()
	})
	assert.Zero(t, allocs, "a warm pool posts typed events without allocating")
	assert.Equal(t, 101, sum, "AllocsPerRun runs once more to warm up")
}

// TestPostedNowKeepsOrder: events posted for the current instant (which
// skip the heap) run in sequence order with the heap's events of that
// instant, and count as pending.
func TestPostedNowKeepsOrder(t *testing.T) {
	e := NewEngine()
	var got []string
	rec := func(s string) func() { return func() { got = append(got, s) } }
	e.Schedule(1, func() {
		e.Schedule(1, rec("A"))
		e.PostAfter(0, rec("B"))
		e.Schedule(1, rec("C"))
		e.PostAfter(0, func() {
			got = append(got, "D")
			e.PostAfter(0, rec("F"))
		})
		e.Post(1, rec("E"))
		assert.Equal(t, 5, e.Pending())
		e.Halt()
	})
	e.RunUntil(0.5)
	assert.Equal(t, 1, e.Pending())
	e.Run()
	assert.Equal(t, 5, e.Pending(), "halted after the t=1 event")
	e.RunUntil(0.5) // before now: nothing runs
	assert.Empty(t, got)
	e.Run()
	assert.Equal(t, []string{"A", "B", "C", "D", "E", "F"}, got)
	assert.Zero(t, e.Pending())
}

// TestEngineRandomDuringRun checks the run order against (time, sequence)
// while events post, schedule, cancel and reschedule others as they run,
// so that every queue of the engine (fifo, next, heap) takes part.
func TestEngineRandomDuringRun(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 30; trial++ {
		e := NewEngine()
		type key struct {
			t   float64
			seq int
		}
		keys := map[int]key{} // pending events by id
		var live []*Event     // cancellable ones
		ids := map[*Event]int{}
		seq, next := 0, 0
		var got []int
		lastT, lastSeq := -1.0, -1
		var spawn func(int)
		run := func(id int) func() {
			return func() {
				k := keys[id]
				if k.t < lastT || (k.t == lastT && k.seq < lastSeq) {
					t.Fatalf("trial %d: event %d at (%v, %d) ran after (%v, %d)", trial, id, k.t, k.seq, lastT, lastSeq)
				}
				lastT, lastSeq = k.t, k.seq
				delete(keys, id)
				got = append(got, id)
				if len(got) < 400 {
					spawn(1 + rng.IntN(3))
				}
			}
		}
		spawn = func(n int) {
			for i := 0; i < n; i++ {
				id := next
				next++
				at := e.NowS() + float64(rng.IntN(4))
				switch rng.IntN(4) {
				case 0, 1:
					e.Post(at, run(id))
				default:
					ev := e.Schedule(at, run(id))
					live = append(live, ev)
					ids[ev] = id
				}
				keys[id] = key{at, seq}
				seq++
			}
			if len(live) > 0 && rng.IntN(3) == 0 {
				j := rng.IntN(len(live))
				ev := live[j]
				if id := ids[ev]; ev.Pending() {
					if rng.IntN(2) == 0 {
						e.Cancel(ev)
						delete(keys, id)
					} else {
						at := e.NowS() + float64(rng.IntN(4))
						e.Reschedule(ev, at)
						keys[id] = key{at, seq}
						seq++
					}
				}
			}
		}
		spawn(5)
		e.Run()
		require.Empty(t, keys, "trial %d: every pending event ran", trial)
		require.Zero(t, e.Pending())
	}
}
