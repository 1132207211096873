package sched

import (
	"math"
	"testing"

	"github.com/starsim/starsim/emulator"
	"github.com/starsim/starsim/runtime/machine"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The dm fitness, term by term (StarPU's _dmda_push_task): α weighs the
// delay over the earliest end, β the transfer penalty, γ × idle power the
// energy of the idle time a late end adds; only the first for dm.
func TestFitness(t *testing.T) {
	std := dmWeights{alpha: 1, beta: 1, gamma: 1000, idlePowerW: 0, dataAware: true}
	for _, tc := range []struct {
		name         string
		c            dmCand
		endMin, eMax float64
		w            dmWeights
		want         float64
	}{
		{"the earliest end, no penalty", dmCand{end: 100}, 100, 200, std, 0},
		{"later end", dmCand{end: 130}, 100, 200, std, 30},
		{"penalty", dmCand{end: 130, pen: 20}, 100, 200, std, 50},
		{"β", dmCand{end: 130, pen: 20}, 100, 200, dmWeights{alpha: 1, beta: 0.5, dataAware: true}, 40},
		{"α", dmCand{end: 130, pen: 20}, 100, 200, dmWeights{alpha: 2, beta: 1, dataAware: true}, 80},
		{"idle power past the latest queue end", dmCand{end: 300}, 100, 200, dmWeights{alpha: 1, gamma: 1000, idlePowerW: 2, dataAware: true}, 200 + 1000*2*100/1e6},
		{"dm ignores the penalty", dmCand{end: 130, pen: 20}, 100, 200, dmWeights{alpha: 1, beta: 1}, 30},
	} {
		assert.InDelta(t, tc.want, fitness(&tc.c, tc.endMin, tc.eMax, tc.w), 1e-12, tc.name)
	}
}

func TestExpectedEnd(t *testing.T) {
	// Queue free at 50, 30 µs queued, task 10 µs long, now 40.
	assert.Equal(t, 90.0, expectedEnd(50, 30, 10, 40, 0, true))
	assert.Equal(t, 90.0, expectedEnd(50, 30, 10, 40, 35, true), "data in before the queue frees")
	assert.Equal(t, 150.0, expectedEnd(50, 30, 10, 40, 100, true), "the data arrives last")
	assert.Equal(t, 90.0, expectedEnd(50, 30, 10, 40, 100, false), "dm: no penalty")
}

// choose picks the lowest fitness, the first worker on a tie, and sets
// every candidate's.
func TestChoose(t *testing.T) {
	w := dmWeights{alpha: 1, beta: 1, gamma: 1000, dataAware: true}
	for _, tc := range []struct {
		name  string
		cands []dmCand
		want  int
	}{
		{"fastest end", []dmCand{{end: 120}, {end: 100}, {end: 110}}, 1},
		{"tie: first", []dmCand{{end: 100}, {end: 100}}, 0},
		{"a penalty outweighs an earlier end", []dmCand{{end: 100, pen: 30}, {end: 120}}, 1},
		{"GPU fast despite its transfer", []dmCand{{end: 2000}, {end: 200, pen: 100}}, 1},
	} {
		endMin, eMax := math.Inf(1), math.Inf(-1)
		for _, c := range tc.cands {
			endMin = min(endMin, c.end)
			eMax = max(eMax, c.end)
		}
		got := choose(tc.cands, endMin, eMax, w)
		assert.Equal(t, tc.want, got, tc.name)
		for i := range tc.cands {
			assert.Equal(t, fitness(&tc.cands[i], endMin, eMax, w), tc.cands[i].fitness, tc.name)
		}
	}
}

// TestDMPushRace: with View.PushRace, a push at the instant another
// thread pushed reads the workers as they were before that push (in
// StarPU over SimGrid both threads compute their predictions before
// either queues); a push of the same thread, or of a later instant, sees
// it. dm with equal lengths: the first least expected end wins.
func TestDMPushRace(t *testing.T) {
	cases := []struct {
		name     string
		race     bool
		pushers  []int // pushing worker per push at t=1 µs (-1: the application thread)
		want     []string
		thenWant string // a push at t=2 µs
	}{
		{"no race", false, []int{0, 1}, []string{"CPU0", "CPU1"}, "CUDA0"},
		{"two threads race", true, []int{0, 1}, []string{"CPU0", "CPU0"}, "CPU1"},
		{"one thread sees its own", true, []int{1, 1}, []string{"CPU0", "CPU1"}, "CUDA0"},
		{"the application thread and a worker race", true, []int{-1, 2}, []string{"CPU0", "CPU0"}, "CPU1"},
		{"three threads", true, []int{0, 1, 2}, []string{"CPU0", "CPU0", "CPU0"}, "CPU1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ws := testWorkers()
			e := emulator.NewEngine()
			v := NewView(ViewConfig{Engine: e, Workers: ws, Weights: DefaultDMWeights, PushRace: c.race})
			s, ok := New("dm")
			require.True(t, ok)
			s.Init(v)
			var got []string
			e.Post(1e-6, func(int) {
				for i, p := range c.pushers {
					var by *machine.Worker
					if p >= 0 {
						by = ws[p]
					}
					v.SetPusher(by)
					got = append(got, s.Push(testTask(i, 0)).Worker.Name)
				}
			}, 0)
			var then string
			e.Post(2e-6, func(int) {
				v.SetPusher(ws[0])
				then = s.Push(testTask(9, 0)).Worker.Name
			}, 0)
			e.Run()
			assert.Equal(t, c.want, got)
			assert.Equal(t, c.thenWant, then, "a later instant sees every push")
		})
	}
}
