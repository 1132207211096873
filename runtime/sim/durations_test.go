package sim_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/starsim/starsim/calibrate"
	"github.com/starsim/starsim/runtime/graph"
	"github.com/starsim/starsim/runtime/machine"
	"github.com/starsim/starsim/runtime/sim"
)

// A task's durations from its graph (Task.DurationsUS) stand in where the
// calibration has no entry of its model, per arch or arch kind; where the
// calibration has one, it wins; a task neither gives a duration on any
// worker is refused by New, naming it.
func TestGraphDurations(t *testing.T) {
	m := calibrate.Default().RuntimeMachine()
	base := synthetic(1, 3)
	one := func(model string, d map[string]float64) *graph.Graph {
		g := synthetic(0, 3)
		tk := base.Tasks[0]
		tk.Model, tk.DurationsUS = model, d
		g.Tasks = append(g.Tasks, tk)
		return g
	}
	length := func(g *graph.Graph, ncpu, ncuda int) float64 {
		o := opts("eager")
		o.NCPU, o.NCUDA = ncpu, ncuda
		obs := &taskTimes{start: map[int]float64{}, end: map[int]float64{}}
		o.Observer = obs
		s, err := sim.New(m, g, o)
		require.NoError(t, err)
		_, err = s.Run()
		require.NoError(t, err)
		return (obs.end[0] - obs.start[0]) * 1e6
	}
	// Uncalibrated model: the file's duration, by kind or by arch.
	assert.InDelta(t, 1234, length(one("my_kernel", map[string]float64{"cpu": 1234}), 1, 0), 1e-6)
	assert.InDelta(t, 77, length(one("my_kernel", map[string]float64{"cuda": 5, "cuda0": 77}), 0, 1), 1e-6)
	// Calibrated model: the calibration's mean, whatever the file says.
	calib := m.Kernels[keyOf(base.Tasks[0], "cuda0")].MeanUS
	require.Greater(t, calib, 0.0)
	assert.InDelta(t, calib, length(one(base.Tasks[0].Model, map[string]float64{"cuda": 1}), 0, 1), 1e-6)
	// Neither: refused, naming the task.
	o := opts("eager")
	o.NCPU, o.NCUDA = 1, 0
	_, err := sim.New(m, one("my_kernel", map[string]float64{"cuda": 5}), o)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "task 0 (GEMM): kernel my_kernel")
	assert.Contains(t, err.Error(), "its durations name none of them")
}

func keyOf(tk graph.Task, arch string) machine.KernelKey {
	return machine.KernelKey{Model: tk.Model, Arch: arch, Footprint: tk.Footprint}
}
