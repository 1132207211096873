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

// TestParityOptions runs each option on the built-in machine with
// --check (checkOption): on, the run keeps every invariant and is
// deterministic; off, it gives another makespan, on a configuration where
// the option acts.
func TestParityOptions(t *testing.T) {
	for _, c := range []struct {
		name, app, sched string
		n                int
		prio             graph.PrioRange
		set              func(o *sim.Options, on bool)
	}{
		// The driver loop times the drivers' work differently (hybrid).
		{"StarPUDriverLoop", "cholesky", "dmdas", 5760, graph.UnboundedPrio, func(o *sim.Options, on bool) { o.StarPUDriverLoop = on }},
		// LU meets taken header locks; the passes a waiting driver makes
		// allocate nothing and issue copies only into allocated buffers.
		{"StarPUTrylockProgress", "lu", "dmda", 19200, graph.PrioRange{}, func(o *sim.Options, on bool) { o.StarPUTrylockProgress = on }},
		// LU has tasks' requests from RAM reached before the first request
		// of their copy, from a GPU: a copy taken over comes from a valid
		// source and lands once.
		{"StarPUJoinTakeover", "lu", "dmda", 19200, graph.PrioRange{}, func(o *sim.Options, on bool) { o.StarPUJoinTakeover = on }},
		// LU has passes that reach cancelled requests: one that takes a
		// place issues nothing, and a pass whose places ran out is followed
		// by another, so nothing is left queued.
		{"StarPUPassPlaces", "lu", "dmda", 19200, graph.PrioRange{}, func(o *sim.Options, on bool) { o.StarPUPassPlaces = on }},
		// Cholesky has tasks whose data lands after their fetch's
		// per-buffer cost has run.
		{"StarPUFetchCostAtPost", "cholesky", "dmda", 19200, graph.PrioRange{}, func(o *sim.Options, on bool) { o.StarPUFetchCostAtPost = on }},
		// LU's GETRF is synchronous on a GPU: it waits for the tasks the
		// kernel before it released to be pushed.
		{"StarPUSyncStart", "lu", "dmdas", 19200, graph.UnboundedPrio, func(o *sim.Options, on bool) { o.NCPU, o.StarPUSyncStart = 0, on }},
		// Cholesky has jobs whose data is all on their GPU when popped.
		{"StarPUHitExec", "cholesky", "dmda", 19200, graph.PrioRange{}, func(o *sim.Options, on bool) { o.StarPUHitExec = on }},
	} {
		t.Run(c.name, func(t *testing.T) {
			g, err := models.New(c.app, models.Options{N: c.n, Block: 960, Prio: c.prio})
			require.NoError(t, err)
			checkOption(t, calibrate.Default(), g, func(o *sim.Options, on bool) { o.Sched = c.sched; c.set(o, on) })
		})
	}
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

// TestSharedCalibrationOptions runs options on real calibrations,
// GPU-only (checkOption: invariants and determinism with the option on,
// another makespan off), each where it acts:
//   - attila LU dmdar N=19200: a driver asks for the device allocation
//     lock while another's copy computed before, which reaches its
//     allocation later, would hold it (Options.StarPUAllocOrder);
//   - attila LU dmda N=19200: pushes and wont_use callbacks wait for a
//     header lock past their first sleep, the waiting drivers putting off
//     their passes (Options.StarPULockClock);
//   - mirage Cholesky dmda N=19200: a driver finds a lock of its job's
//     data held as it executes it (Options.StarPUFetchTail);
//   - attila Cholesky dmdas N=19200: pushes whose prefetch finds a header
//     lock a driver took that instant wait for it after their decision
//     (Options.StarPUPrefetchLockAtEnd).
func TestSharedCalibrationOptions(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	for _, c := range []struct {
		name, host, app, sched string
		set                    func(o *sim.Options, on bool)
	}{
		{"StarPUAllocOrder", "attila", "lu", "dmdar", func(o *sim.Options, on bool) { o.StarPUAllocOrder = on }},
		{"StarPULockClock", "attila", "lu", "dmda", func(o *sim.Options, on bool) { o.StarPULockClock = on }},
		{"StarPUFetchTail", "mirage", "cholesky", "dmda", func(o *sim.Options, on bool) { o.StarPUFetchTail = on }},
		{"StarPUPrefetchLockAtEnd", "attila", "cholesky", "dmdas", func(o *sim.Options, on bool) { o.StarPUPrefetchLockAtEnd = on }},
	} {
		t.Run(c.name, func(t *testing.T) {
			cal, g := sharedGraph(t, c.host, c.app, 19200, c.sched)
			checkOption(t, cal, g, func(o *sim.Options, on bool) { o.Sched, o.NCPU = c.sched, 0; c.set(o, on) })
		})
	}
}
