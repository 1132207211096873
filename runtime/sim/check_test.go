package sim_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/starsim/starsim/calibrate"
	"github.com/starsim/starsim/models"
	"github.com/starsim/starsim/runtime/graph"
	"github.com/starsim/starsim/runtime/sim"
)

// TestCheckCatchesPlantedFaults plants each bug in the runtime and runs a
// memory-limited GPU-only Cholesky with Check: it fails, naming the
// invariant.
func TestCheckCatchesPlantedFaults(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault func() func()
		want  string
	}{
		{"GPU starts a kernel while one runs", func() func() { return sim.PlantFault(sim.FaultOverlapKernels) },
			"while 1 other kernel(s) run on it: one kernel at a time per worker"},
		{"kernel before its data", func() func() { return sim.PlantFault(sim.FaultKernelBeforeData) },
			"starts on CUDA"},
		{"memory over capacity", func() func() { return sim.PlantFault(sim.FaultOverCapacity) },
			"over capacity"},
		{"write leaves stale copies valid", func() func() { return sim.PlantFault(sim.FaultNoInvalidate) },
			"the last written is"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			restore := tc.fault()
			defer restore()
			run := func(check bool) (*sim.Result, error) {
				g, err := models.New("cholesky", models.Options{N: 9600, Block: 960, Prio: graph.UnboundedPrio})
				require.NoError(t, err)
				o := opts("dmdas")
				o.NCPU, o.NCUDA, o.Check = 0, 2, check
				o.GPUMemLimitBytes = 64 << 20 // two chunks: evictions
				s, err := sim.New(calibrate.Default().RuntimeMachine(), g, o)
				require.NoError(t, err)
				return s.Run()
			}
			if _, err := run(true); assert.Error(t, err, "Check must catch the fault") {
				assert.Contains(t, err.Error(), tc.want)
			}
		})
	}
	// Without a planted fault the same run passes every check.
	g, err := models.New("cholesky", models.Options{N: 9600, Block: 960, Prio: graph.UnboundedPrio})
	require.NoError(t, err)
	o := opts("dmdas")
	o.NCPU, o.NCUDA, o.Check, o.GPUMemLimitBytes = 0, 2, true, 64<<20
	s, err := sim.New(calibrate.Default().RuntimeMachine(), g, o)
	require.NoError(t, err)
	_, err = s.Run()
	require.NoError(t, err)
}

// TestOverlapFaultUnseenWithoutCheck: the overlapping-kernels fault gives
// a GPU busier than the makespan, which only Check reports (the symptom
// the per-worker invariants were added for).
func TestOverlapFaultUnseenWithoutCheck(t *testing.T) {
	defer sim.PlantFault(sim.FaultOverlapKernels)()
	g, err := models.New("cholesky", models.Options{N: 9600, Block: 960})
	require.NoError(t, err)
	o := opts("dmda")
	o.NCPU, o.NCUDA, o.Check = 0, 1, false
	s, err := sim.New(calibrate.Default().RuntimeMachine(), g, o)
	require.NoError(t, err)
	res, err := s.Run()
	require.NoError(t, err, "nothing else notices")
	assert.Greater(t, res.Workers[0].BusyPct, 100.0)
}
