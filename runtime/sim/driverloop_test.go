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

// TestStarPUDriverLoop: with Options.StarPUDriverLoop a hybrid run keeps
// every invariant --check verifies, is deterministic, and times the
// drivers' work differently from the default.
func TestStarPUDriverLoop(t *testing.T) {
	cal := calibrate.Default()
	g, err := models.New("cholesky", models.Options{N: 5760, Block: 960, Prio: graph.UnboundedPrio})
	require.NoError(t, err)
	checkOption(t, cal, g, func(o *sim.Options, on bool) { o.Sched, o.StarPUDriverLoop = "dmdas", on })
}

// TestTrylockProgress: with Options.StarPUTrylockProgress a run keeps
// every invariant --check verifies (the passes a waiting driver makes
// allocate nothing and issue copies only into allocated buffers), is
// deterministic, and times the drivers' copies differently: on the
// built-in machine LU dmda N=19200 meets taken header locks.
func TestTrylockProgress(t *testing.T) {
	cal := calibrate.Default()
	g, err := models.New("lu", models.Options{N: 19200, Block: 960})
	require.NoError(t, err)
	checkOption(t, cal, g, func(o *sim.Options, on bool) { o.Sched, o.StarPUTrylockProgress = "dmda", on })
}

// TestJoinTakeover: with Options.StarPUJoinTakeover a run keeps every
// invariant --check verifies (a copy taken over comes from a valid source
// and lands once), is deterministic, and differs from the run without:
// on the built-in machine LU dmda N=19200 has tasks' requests from RAM
// reached before the first request of their copy, from a GPU.
func TestJoinTakeover(t *testing.T) {
	cal := calibrate.Default()
	g, err := models.New("lu", models.Options{N: 19200, Block: 960})
	require.NoError(t, err)
	checkOption(t, cal, g, func(o *sim.Options, on bool) { o.Sched, o.StarPUJoinTakeover = "dmda", on })
}

// TestPassPlaces: with Options.StarPUPassPlaces a run keeps every
// invariant --check verifies (a cancelled request that takes a place
// issues nothing; a pass whose places ran out is followed by another, so
// nothing is left queued), is deterministic, and differs from the run
// without: on the built-in machine LU dmda N=19200 has passes that reach
// cancelled requests.
func TestPassPlaces(t *testing.T) {
	cal := calibrate.Default()
	g, err := models.New("lu", models.Options{N: 19200, Block: 960})
	require.NoError(t, err)
	checkOption(t, cal, g, func(o *sim.Options, on bool) { o.Sched, o.StarPUPassPlaces = "dmda", on })
}

// TestFetchCostAtPost: with Options.StarPUFetchCostAtPost a run keeps
// every invariant, is deterministic, and differs from the run without
// (Cholesky dmda N=19200 on the built-in machine has tasks whose data
// lands after their fetch's per-buffer cost has run).
func TestFetchCostAtPost(t *testing.T) {
	cal := calibrate.Default()
	g, err := models.New("cholesky", models.Options{N: 19200, Block: 960})
	require.NoError(t, err)
	checkOption(t, cal, g, func(o *sim.Options, on bool) { o.Sched, o.StarPUFetchCostAtPost = "dmda", on })
}

// checkOption runs g on cal's machine with --check, the option set sets on
// and off: on, the run keeps every invariant and is deterministic; off, it
// gives another makespan.
func checkOption(t *testing.T, cal *calibrate.File, g *graph.Graph, set func(o *sim.Options, on bool)) {
	t.Helper()
	run := func(on bool) float64 {
		o := sim.DefaultOptions()
		o.Check = true
		set(&o, on)
		s, err := sim.New(cal.RuntimeMachine(), g, o)
		require.NoError(t, err)
		res, err := s.Run()
		require.NoError(t, err)
		return res.MakespanS
	}
	on := run(true)
	assert.Equal(t, on, run(true), "deterministic")
	assert.NotEqual(t, run(false), on)
}
