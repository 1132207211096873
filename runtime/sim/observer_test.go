package sim_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/starsim/starsim/calibrate"
	"github.com/starsim/starsim/models"
	"github.com/starsim/starsim/runtime/graph"
	"github.com/starsim/starsim/runtime/machine"
	"github.com/starsim/starsim/runtime/sim"
)

// countObs checks the event stream's shape as it comes.
type countObs struct {
	sim.NopObserver
	t            *testing.T
	last         float64
	open         map[uint64]bool
	starts, ends int
	done, pushes int
	pops, allocs int
	executing    map[string]int
	ended        bool
}

func (o *countObs) tick(tS float64) {
	assert.GreaterOrEqual(o.t, tS, o.last, "events in time order")
	o.last = tS
}
func (o *countObs) WorkerState(tS float64, w *machine.Worker, state string, task *sim.TaskState) {
	o.tick(tS)
	if state == "Executing" {
		o.executing[w.Name]++
		require.NotNil(o.t, task)
	}
}
func (o *countObs) TransferStart(tS float64, id uint64, src, dst string, bytes int64, kind string, h *graph.Handle) {
	o.tick(tS)
	o.open[id] = true
	o.starts++
	assert.Equal(o.t, h.SizeBytes, bytes)
}
func (o *countObs) TransferEnd(tS float64, id uint64) {
	o.tick(tS)
	assert.True(o.t, o.open[id], "end of a started transfer")
	delete(o.open, id)
	o.ends++
}
func (o *countObs) Memory(tS float64, node, event string, h *graph.Handle) {
	o.tick(tS)
	if event == "allocate" {
		o.allocs++
	}
}
func (o *countObs) Push(tS float64, _ *sim.TaskState)                   { o.tick(tS); o.pushes++ }
func (o *countObs) Pop(tS float64, _ *machine.Worker, _ *sim.TaskState) { o.tick(tS); o.pops++ }
func (o *countObs) TaskDone(t *sim.TaskState) {
	o.done++
	assert.LessOrEqual(o.t, t.StartS(), t.EndS())
	assert.LessOrEqual(o.t, t.SubmitS(), t.ReadyS())
}
func (o *countObs) End(float64) { o.ended = true }

func TestObserverStream(t *testing.T) {
	o := &countObs{t: t, open: map[uint64]bool{}, executing: map[string]int{}}
	opts := sim.DefaultOptions()
	opts.Sched, opts.Check, opts.Observer = "dmdas", true, o
	g, err := models.New("cholesky", models.Options{N: 960 * 10, Block: 960, Prio: graph.UnboundedPrio})
	require.NoError(t, err)
	s, err := sim.New(calibrate.Default().RuntimeMachine(), g, opts)
	require.NoError(t, err)
	res, err := s.Run()
	require.NoError(t, err)
	assert.True(t, o.ended)
	assert.Equal(t, res.NTasks, o.done)
	assert.Equal(t, res.NTasks, o.pushes)
	assert.Equal(t, res.NTasks, o.pops)
	assert.Equal(t, o.starts, o.ends)
	assert.Empty(t, o.open)
	copies := 0
	for _, d := range res.Transfers {
		copies += d.Transfers
	}
	assert.Equal(t, copies, o.ends)
	for _, w := range res.Workers {
		assert.Equal(t, w.NTasks, o.executing[w.Name], w.Name)
	}
}
