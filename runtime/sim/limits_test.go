package sim_test

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/starsim/starsim/calibrate"
	"github.com/starsim/starsim/models"
	"github.com/starsim/starsim/runtime/machine"
	"github.com/starsim/starsim/runtime/sim"
)

// TestOptionsRefused: options that could only give a wrong or unbounded
// run are refused by New, before any simulation.
func TestOptionsRefused(t *testing.T) {
	g, err := models.New("cholesky", models.Options{N: 2880, Block: 960})
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		edit func(o *sim.Options, m *machine.Machine)
		want string
	}{
		{"negative GPU memory limit", func(o *sim.Options, _ *machine.Machine) { o.GPUMemLimitBytes = -1 }, "GPU memory limit -1 bytes is negative"},
		{"NaN sample interval", func(o *sim.Options, _ *machine.Machine) { o.SampleIntervalS = math.NaN() }, "sample interval NaN s"},
		{"negative sample interval", func(o *sim.Options, _ *machine.Machine) { o.SampleIntervalS = -1 }, "sample interval -1 s"},
		// 90 % of 1 000 000 bytes in whole MiB is 0, which would mean unlimited.
		{"GPU memory below 2 MiB", func(_ *sim.Options, m *machine.Machine) { m.Devices[0].MemoryBytes = 1000000 },
			"CUDA0 has 1000000 bytes of memory: StarPU uses 90 % of it in whole MiB, 0 here; a GPU needs at least 2097152 bytes"},
		{"negative per-GPU limit", func(o *sim.Options, _ *machine.Machine) { o.GPUMemLimitByDevice = map[string]int64{"CUDA2": -5} },
			"GPU memory limit of CUDA2, -5 bytes, is negative"},
		// A per-GPU limit on another GPU leaves this one's 90 %, 0 here.
		{"GPU memory below 2 MiB, another GPU limited", func(o *sim.Options, m *machine.Machine) {
			m.Devices[1].MemoryBytes = 1000000
			o.GPUMemLimitByDevice = map[string]int64{"CUDA0": 64 << 20}
		}, "CUDA1 has 1000000 bytes of memory: StarPU uses 90 % of it in whole MiB, 0 here"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := calibrate.Default().RuntimeMachine()
			o := opts("dmda")
			tc.edit(&o, m)
			_, err := sim.New(m, g, o)
			assert.ErrorContains(t, err, tc.want)
		})
	}
	// 2 MiB gives 1 MiB of usable memory: a limit, too small for a tile.
	m := calibrate.Default().RuntimeMachine()
	m.Devices[0].MemoryBytes = sim.MinGPUMemoryBytes
	_, err = sim.New(m, g, opts("dmda"))
	var fe *sim.FitError
	require.True(t, errors.As(err, &fe), "%v", err)
	assert.Equal(t, sim.FitError{Node: "CUDA0", CapacityBytes: 1 << 20, Task: 0, Name: "POTRF", NeedBytes: 32 << 20}, *fe)
	// A limit on that GPU replaces its 90 %, as STARPU_LIMIT_CUDA_<id>_MEM.
	o := opts("dmda")
	m.Devices[0].MemoryBytes = 1000000
	o.GPUMemLimitByDevice = map[string]int64{"CUDA0": 64 << 20}
	s, err := sim.New(m, g, o)
	require.NoError(t, err)
	res, err := s.Run()
	require.NoError(t, err)
	assert.Equal(t, int64(64<<20), res.Memory[1].CapacityBytes)
}

// TestSampleBudget: a sample interval that would make a series of more
// than MaxSamples values fails after the run, before the series is
// allocated; one within the budget gives the series.
func TestSampleBudget(t *testing.T) {
	g, err := models.New("cholesky", models.Options{N: 9600, Block: 960})
	require.NoError(t, err)
	m := calibrate.Default().RuntimeMachine()
	o := opts("dmda")
	o.SampleIntervalS = 1e-12
	s, err := sim.New(m, g, o)
	require.NoError(t, err)
	_, err = s.Run()
	require.ErrorContains(t, err, "sample interval 1e-12 s:")
	assert.ErrorContains(t, err, "at most 8388608 (2^23)")
	o.SampleIntervalS = 1e-3
	s, err = sim.New(m, g, o)
	require.NoError(t, err)
	res, err := s.Run()
	require.NoError(t, err)
	require.NotNil(t, res.Utilization)
	assert.Len(t, res.Utilization.Busy[0], int(math.Ceil(res.MakespanS/1e-3)))
}
