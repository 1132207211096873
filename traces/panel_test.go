package traces

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/starsim/starsim/calibrate"
	"github.com/starsim/starsim/internal/timeline"
	"github.com/starsim/starsim/models"
	"github.com/starsim/starsim/runtime/graph"
	"github.com/starsim/starsim/runtime/machine"
	"github.com/starsim/starsim/runtime/sim"
)

// TestPanelRecorder runs a small Cholesky with the recorder: each worker's
// kernel time in the timeline is its tasks' time, the counters are the
// groups a panel draws, and nothing is recorded past the makespan.
func TestPanelRecorder(t *testing.T) {
	g, err := models.New("cholesky", models.Options{N: 960 * 6, Block: 960})
	require.NoError(t, err)
	rec := NewPanelRecorder()
	kernelS := map[string]float64{}
	opts := sim.DefaultOptions()
	opts.Sched, opts.NCPU = "dmda", 2
	opts.Observer = Multi(rec, taskTimes(kernelS))
	sim, err := sim.New(calibrate.Default().RuntimeMachine(), g, opts)
	require.NoError(t, err)
	res, err := sim.Run()
	require.NoError(t, err)

	tl := rec.Timeline()
	require.Len(t, tl.Rows(), len(res.Workers))
	// Copies (write-backs) may end after the last kernel.
	assert.GreaterOrEqual(t, tl.EndS(), res.MakespanS)
	for i, w := range res.Workers {
		assert.Equal(t, w.Name, tl.Rows()[i].Name)
		busy := 0.0
		for id, s := range tl.States() {
			switch s {
			case timeline.StateIdle, timeline.StateFetch, timeline.StateRuntime:
			default:
				busy += tl.Total(i, id)
			}
		}
		assert.InDelta(t, kernelS[w.Name], busy, 1e-9, w.Name)
		assert.InDelta(t, w.BusyPct/100*res.MakespanS, busy, 1e-6, w.Name)
	}
	groups := map[string][]string{}
	for _, s := range tl.Series() {
		groups[s.Group] = append(groups[s.Group], s.Name)
	}
	assert.Equal(t, []string{"ready tasks"}, groups[timeline.GroupReady])
	assert.Equal(t, []string{"CUDA0", "CUDA1", "CUDA2", "CUDA3"}, groups[timeline.GroupMemory], "GPUs only")
	assert.Contains(t, groups[timeline.GroupInFlight], "RAM->CUDA0")
	// The last bin's ready tasks are none.
	mean, ok := tl.Mean(0)
	assert.True(t, ok[len(ok)-1])
	assert.Zero(t, mean[len(mean)-1])
}

// taskTimes sums each worker's kernel time from TaskDone.
type taskTimes map[string]float64

func (m taskTimes) Start([]*machine.Worker, []string)                                           {}
func (m taskTimes) WorkerState(float64, *machine.Worker, string, *sim.TaskState)                {}
func (m taskTimes) TransferStart(float64, uint64, string, string, int64, string, *graph.Handle) {}
func (m taskTimes) TransferEnd(float64, uint64)                                                 {}
func (m taskTimes) Memory(float64, string, string, *graph.Handle)                               {}
func (m taskTimes) Push(float64, *sim.TaskState)                                                {}
func (m taskTimes) Pop(float64, *machine.Worker, *sim.TaskState)                                {}
func (m taskTimes) End(float64)                                                                 {}
func (m taskTimes) TaskDone(t *sim.TaskState) {
	m[t.Worker().Name] += t.EndS() - t.StartS()
}
