package sim_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/starsim/starsim/runtime/graph"
	"github.com/starsim/starsim/runtime/machine"
	"github.com/starsim/starsim/runtime/sched"
	"github.com/starsim/starsim/runtime/sim"
)

// TestHetSimMetrics: two independent 1 ms tasks then one that reads both,
// on 2 CPU workers with zero runtime costs. By hand: t0 and t1 run in
// [0, 1 ms) on both workers, t2 in [1, 2 ms): makespan 2 ms; critical path
// 2 ms so SLR 1; one worker alone needs 3 ms so speedup 1.5, efficiency
// 0.75.
func TestHetSimMetrics(t *testing.T) {
	m := &machine.Machine{CPUCores: 2, CPUArch: "cpu0",
		Kernels: map[machine.KernelKey]machine.KernelStats{{Model: "k", Arch: "cpu0", Footprint: 0}: {MeanUS: 1000}}}
	g := &graph.Graph{Name: "diamond", TotalFlops: 3e9,
		Handles: []graph.Handle{{ID: 0, Name: "A", SizeBytes: 8}, {ID: 1, Name: "B", SizeBytes: 8}},
		Tasks: []graph.Task{
			{ID: 0, Name: "K", Model: "k", Buffers: []graph.Access{{Handle: 0, Mode: graph.RW}}},
			{ID: 1, Name: "K", Model: "k", Buffers: []graph.Access{{Handle: 1, Mode: graph.RW}}},
			{ID: 2, Name: "K", Model: "k", Buffers: []graph.Access{{Handle: 0, Mode: graph.R}, {Handle: 1, Mode: graph.RW}}},
		}}
	for _, sched := range []string{"eager", "dmda"} {
		o := sim.DefaultOptions()
		o.Sched, o.Check = sched, true
		s, err := sim.New(m, g, o)
		require.NoError(t, err)
		res, err := s.Run()
		require.NoError(t, err)
		assert.InDelta(t, 2e-3, res.MakespanS, 1e-15, sched)
		assert.InDelta(t, 1.0, res.SLR, 1e-12, sched)
		assert.InDelta(t, 1.5, res.Speedup, 1e-12, sched)
		assert.InDelta(t, 0.75, res.Efficiency, 1e-12, sched)
		assert.InDelta(t, 1500, res.GFlops, 1e-9, sched) // 3e9 flop in 2 ms: 1.5e12 flop/s
	}
}

// TestEnergyUtilizationExplain on the same diamond: workers draw 10 W busy
// and 1 W idle. Busy time 3 ms in all, idle 2×2 - 3 = 1 ms: 0.031 J. With
// 1 ms samples: both workers busy in [0, 1 ms), one in [1, 2 ms). The
// decision log has one line per task (dmda decides each once), each with
// both candidates, and --explain-task keeps only that task's line.
func TestEnergyUtilizationExplain(t *testing.T) {
	m := &machine.Machine{CPUCores: 2, CPUArch: "cpu0",
		Kernels: map[machine.KernelKey]machine.KernelStats{{Model: "k", Arch: "cpu0", Footprint: 0}: {MeanUS: 1000}},
		Power:   map[string]machine.Power{"cpu0": {IdleW: 1, LoadW: 10}}}
	g := &graph.Graph{Name: "diamond", TotalFlops: 3e9,
		Handles: []graph.Handle{{ID: 0, Name: "A", SizeBytes: 8}, {ID: 1, Name: "B", SizeBytes: 8}},
		Tasks: []graph.Task{
			{ID: 0, Name: "K", Model: "k", Buffers: []graph.Access{{Handle: 0, Mode: graph.RW}}},
			{ID: 1, Name: "K", Model: "k", Buffers: []graph.Access{{Handle: 1, Mode: graph.RW}}},
			{ID: 2, Name: "K", Model: "k", Buffers: []graph.Access{{Handle: 0, Mode: graph.R}, {Handle: 1, Mode: graph.RW}}},
		}}
	var log bytes.Buffer
	o := sim.DefaultOptions()
	o.Sched, o.Check, o.SampleIntervalS, o.Explain = "dmda", true, 1e-3, &log
	s, err := sim.New(m, g, o)
	require.NoError(t, err)
	res, err := s.Run()
	require.NoError(t, err)
	assert.InDelta(t, 0.031, res.EnergyJ, 1e-15)
	require.NotNil(t, res.Utilization)
	assert.Equal(t, []string{"CPU0", "CPU1"}, res.Utilization.Workers)
	sum := func(i int) float64 { return res.Utilization.Busy[0][i] + res.Utilization.Busy[1][i] }
	assert.InDelta(t, 2.0, sum(0), 1e-9)
	assert.InDelta(t, 1.0, sum(1), 1e-9)

	lines := strings.Split(strings.TrimSpace(log.String()), "\n")
	require.Len(t, lines, 3)
	for i, l := range lines {
		var d sched.ScheduleRecord
		require.NoError(t, json.Unmarshal([]byte(l), &d))
		assert.Equal(t, i, d.Task)
		assert.Len(t, d.Candidates, 2)
		assert.Contains(t, []string{"CPU0", "CPU1"}, d.Chosen)
	}

	log.Reset()
	o.ExplainTask = 2
	s, _ = sim.New(m, g, o)
	_, err = s.Run()
	require.NoError(t, err)
	assert.Equal(t, 1, strings.Count(log.String(), "\n"))
	assert.Contains(t, log.String(), `"task":2`)
}
