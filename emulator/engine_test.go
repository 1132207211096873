package emulator

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rec returns a call that appends its argument to *got.
func rec(got *[]int) func(int) { return func(a int) { *got = append(*got, a) } }

func TestEngineOrdersByTimeThenInsertion(t *testing.T) {
	e := NewEngine()
	var got []int
	r := rec(&got)
	e.Post(2, r, 21)
	e.Post(1, r, 11)
	e.Post(2, r, 22)
	e.Post(1, r, 12)
	e.Post(0, func(int) {
		got = append(got, 0)
		// Posted during the run at an already-queued time: runs after the
		// events queued earlier for that time.
		e.Post(1, r, 13)
		e.Post(0, r, 1)
	}, 0)
	e.Run()
	assert.Equal(t, []int{0, 1, 11, 12, 13, 21, 22}, got)
	assert.Equal(t, 2.0, e.NowS())
	assert.Equal(t, uint64(7), e.EventsRun())
}

func TestEngineSchedulingInThePastPanics(t *testing.T) {
	e := NewEngine()
	tm := e.NewTimer(func(int) {}, 0)
	e.Post(5, func(int) {
		assert.PanicsWithValue(t, "emulator: event scheduled in the past: at 4 s, now 5 s", func() { tm.Set(4) })
		assert.Panics(t, func() { e.Post(-1e-12, func(int) {}, 0) })
	}, 0)
	e.Run()
	assert.PanicsWithValue(t, "emulator: event scheduled at NaN time", func() { e.Post(math.NaN(), func(int) {}, 0) })
	assert.Panics(t, func() { tm.Set(math.NaN()) })
}

func TestTimerStopAndSet(t *testing.T) {
	e := NewEngine()
	var got []int
	r := rec(&got)
	a, b, c := e.NewTimer(r, 1), e.NewTimer(r, 2), e.NewTimer(r, 3)
	assert.False(t, a.Pending())
	a.Set(1)
	b.Set(2)
	c.Set(3)
	b.Stop()
	b.Stop() // no-op
	assert.False(t, b.Pending())
	a.Set(4) // now after c
	assert.Equal(t, 4.0, a.TimeS())
	e.Post(4, r, 4)
	e.Run()
	assert.Equal(t, []int{3, 1, 4}, got)
	assert.False(t, c.Pending())
	c.Stop() // already ran: no-op
	// Setting a timer that ran queues it again.
	a.Set(10)
	assert.True(t, a.Pending())
	e.Run()
	assert.Equal(t, []int{3, 1, 4, 1}, got)
	assert.Equal(t, 10.0, e.NowS())
}

func TestEngineHalt(t *testing.T) {
	e := NewEngine()
	n := 0
	for i := 1; i <= 5; i++ {
		e.Post(float64(i), func(int) { n++ }, 0)
	}
	e.Post(3, func(int) { e.Halt() }, 0)
	e.Run()
	assert.Equal(t, 3, n) // the t=3 event posted first ran, then the halting one
	assert.Equal(t, 2, e.Pending())
	e.Run()
	assert.Equal(t, 5, n)
	assert.Zero(t, e.Pending())
}

// TestEngineRandomOrder checks the queue against a sort on (time, seq),
// with timers stopped and set again at random.
func TestEngineRandomOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 50; trial++ {
		e := NewEngine()
		type key struct {
			t   float64
			seq int
		}
		var got []int
		r := rec(&got)
		keys := map[int]key{}
		timers := map[int]*Timer{}
		seq := 0
		for id := 0; id < 300; id++ {
			tm := float64(rng.IntN(40)) // many ties
			if id%2 == 0 {
				e.Post(tm, r, id)
			} else {
				timers[id] = e.NewTimer(r, id)
				timers[id].Set(tm)
			}
			keys[id] = key{tm, seq}
			seq++
		}
		// Stop some timers, set some again (a new sequence number).
		for id := 1; id < 300; id += 14 {
			timers[id].Stop()
			delete(keys, id)
		}
		for id := 3; id < 300; id += 22 {
			tm := float64(rng.IntN(40))
			timers[id].Set(tm)
			keys[id] = key{tm, seq}
			seq++
		}
		var want []int
		for id := range keys {
			want = append(want, id)
		}
		sort.Slice(want, func(i, j int) bool {
			a, b := keys[want[i]], keys[want[j]]
			if a.t != b.t {
				return a.t < b.t
			}
			return a.seq < b.seq
		})
		e.Run()
		require.Equal(t, want, got, "trial %d", trial)
	}
}

// TestPostRecyclesEvents: posted events are reused once run, and a warm
// engine posts without allocating.
func TestPostRecyclesEvents(t *testing.T) {
	e := NewEngine()
	var got []int
	r := rec(&got)
	e.Post(2, r, 2)
	e.Post(1, func(int) {
		got = append(got, 10)
		e.Post(0, r, 11)
	}, 0)
	e.Run()
	assert.Equal(t, []int{10, 11, 2}, got)
	assert.Len(t, e.free, 3)
	e.Post(5, r, 5)
	assert.Len(t, e.free, 2, "a recycled event was taken")
	e.Run()
	assert.Equal(t, 5, got[len(got)-1])
	sum := 0
	add := func(arg int) { sum += arg }
	allocs := testing.AllocsPerRun(100, func() {
		e.Post(1, add, 1)
		e.Run()
	})
	assert.Zero(t, allocs, "a warm engine posts without allocating")
	assert.Equal(t, 101, sum, "AllocsPerRun runs once more to warm up")
}

// TestPostedNowKeepsOrder: events posted for the current instant (which
// skip the heap) run in sequence order with the heap's events and timers
// of that instant, and count as pending.
func TestPostedNowKeepsOrder(t *testing.T) {
	e := NewEngine()
	var got []int
	r := rec(&got)
	a, c := e.NewTimer(r, 1), e.NewTimer(r, 3)
	e.Post(1, func(int) {
		a.Set(1)
		e.Post(0, r, 2)
		c.Set(1)
		e.Post(0, func(int) {
			got = append(got, 4)
			e.Post(0, r, 6)
		}, 0)
		e.Post(0, r, 5)
		assert.Equal(t, 5, e.Pending())
		e.Halt()
	}, 0)
	e.Run()
	assert.Equal(t, 5, e.Pending(), "halted after the t=1 event")
	assert.Empty(t, got)
	e.Run()
	assert.Equal(t, []int{1, 2, 3, 4, 5, 6}, got)
	assert.Zero(t, e.Pending())
}

// TestEngineRandomDuringRun checks the run order against (time, sequence)
// while events post others and set or stop timers as they run, so that
// every queue of the engine (fifo, next, heap) takes part.
func TestEngineRandomDuringRun(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 30; trial++ {
		e := NewEngine()
		type key struct {
			t   float64
			seq int
		}
		keys := map[int]key{} // pending events by id
		var timers []*Timer
		ids := map[*Timer]int{}
		seq, next := 0, 0
		var got []int
		lastT, lastSeq := -1.0, -1
		var spawn func(int)
		run := func(id int) {
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
		spawn = func(n int) {
			for i := 0; i < n; i++ {
				id := next
				next++
				d := float64(rng.IntN(4))
				at := e.NowS() + d
				switch rng.IntN(4) {
				case 0, 1:
					e.Post(d, run, id)
				default:
					tm := e.NewTimer(run, id)
					tm.Set(at)
					timers = append(timers, tm)
					ids[tm] = id
				}
				keys[id] = key{at, seq}
				seq++
			}
			if len(timers) > 0 && rng.IntN(3) == 0 {
				tm := timers[rng.IntN(len(timers))]
				if id := ids[tm]; tm.Pending() {
					if rng.IntN(2) == 0 {
						tm.Stop()
						delete(keys, id)
					} else {
						at := e.NowS() + float64(rng.IntN(4))
						tm.Set(at)
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

// TestOnAdvance: a hook runs once, after the first event later than its
// time that is not Silent, at that event's time; hooks due together run in
// the order registered; with no event left, they run at the current time.
func TestOnAdvance(t *testing.T) {
	e := NewEngine()
	var got []int
	var at []float64
	hook := func(a int) { got = append(got, a); at = append(at, e.NowS()) }
	e.Post(1, func(int) {
		got = append(got, 1)
		e.OnAdvance(1, hook, 100) // not at 1: the clock has not moved
		e.OnAdvance(1, hook, 101)
		e.OnAdvance(2.5, hook, 102)
	}, 0)
	e.Post(1, func(int) { got = append(got, 2) }, 0)                            // same instant: no move
	e.Post(2, func(int) { got = append(got, 3); e.Silent() }, 0)                // silent: no move
	e.Post(3, func(int) { got = append(got, 4) }, 0)                            // the move: 100, 101, then 102 (3 > 2.5)
	e.Post(4, func(int) { got = append(got, 5); e.OnAdvance(9, hook, 103) }, 0) // nothing left: at 4
	e.Run()
	assert.Equal(t, []int{1, 2, 3, 4, 100, 101, 102, 5, 103}, got)
	assert.Equal(t, []float64{3, 3, 3, 4}, at)
	assert.Equal(t, uint64(9), e.EventsRun())
}
