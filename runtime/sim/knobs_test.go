package sim_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/starsim/starsim/calibrate"
	"github.com/starsim/starsim/models"
	"github.com/starsim/starsim/runtime/graph"
	"github.com/starsim/starsim/runtime/machine"
	"github.com/starsim/starsim/runtime/sched"
	"github.com/starsim/starsim/runtime/sim"
)

// TestDMWeights: every explained fitness is alpha·(end - min end) +
// beta·penalty with the weights given (StarPU's 1, 1 by default), and the
// defaults given explicitly change nothing.
func TestDMWeights(t *testing.T) {
	cal := calibrate.Default()
	g, err := models.New("cholesky", models.Options{N: 3840, Block: 960})
	require.NoError(t, err)
	runWith := func(w *sched.DMWeights) (*sim.Result, []sched.ScheduleRecord) {
		var log bytes.Buffer
		o := sim.DefaultOptions()
		o.Sched, o.Explain, o.DMWeights = "dmda", &log, w
		s, err := sim.New(cal.RuntimeMachine(), g, o)
		require.NoError(t, err)
		res, err := s.Run()
		require.NoError(t, err)
		var ds []sched.ScheduleRecord
		sc := bufio.NewScanner(&log)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var d sched.ScheduleRecord
			require.NoError(t, json.Unmarshal(sc.Bytes(), &d))
			if d.Event == "schedule" {
				ds = append(ds, d)
			}
		}
		return res, ds
	}
	check := func(ds []sched.ScheduleRecord, alpha, beta float64) {
		require.NotEmpty(t, ds)
		pen := false
		for _, d := range ds {
			endMin := math.Inf(1)
			for _, c := range d.Candidates {
				endMin = math.Min(endMin, c.EndUS)
			}
			for _, c := range d.Candidates {
				assert.InDelta(t, alpha*(c.EndUS-endMin)+beta*c.PenaltyUS, c.Fitness, 1e-6*(1+math.Abs(c.Fitness)))
				pen = pen || c.PenaltyUS > 0
			}
		}
		assert.True(t, pen, "some candidate pays a transfer")
	}
	def, dd := runWith(nil)
	check(dd, 1, 1)
	same, _ := runWith(&sched.DMWeights{Alpha: 1, Beta: 1, Gamma: 1000})
	assert.Equal(t, def.MakespanS, same.MakespanS)
	_, dw := runWith(&sched.DMWeights{Alpha: 2, Beta: 0.5, Gamma: 1000})
	check(dw, 2, 0.5)
}

// TestGPUMemLimits: a per-device limit applies to that GPU only; the
// global limit wins over it (StarPU reads STARPU_LIMIT_CUDA_MEM first).
func TestGPUMemLimits(t *testing.T) {
	cal := calibrate.Default()
	g, err := models.New("cholesky", models.Options{N: 1920, Block: 960})
	require.NoError(t, err)
	caps := func(global int64, per map[string]int64) map[string]int64 {
		o := sim.DefaultOptions()
		o.GPUMemLimitBytes, o.GPUMemLimitByDevice = global, per
		s, err := sim.New(cal.RuntimeMachine(), g, o)
		require.NoError(t, err)
		res, err := s.Run()
		require.NoError(t, err)
		out := map[string]int64{}
		for _, m := range res.Memory {
			out[m.Node] = m.CapacityBytes
		}
		return out
	}
	def := caps(0, nil)
	per := caps(0, map[string]int64{"CUDA1": 400 << 20})
	assert.Equal(t, int64(400<<20), per["CUDA1"])
	assert.Equal(t, def["CUDA0"], per["CUDA0"])
	assert.NotEqual(t, def["CUDA1"], per["CUDA1"])
	both := caps(300<<20, map[string]int64{"CUDA1": 400 << 20})
	assert.Equal(t, int64(300<<20), both["CUDA1"])
	assert.Equal(t, int64(300<<20), both["CUDA0"])
}

// TestDuplicateBuffer: a task that lists a data twice (StarPU 1.3's
// Cholesky reads the panel tile twice in its diagonal GEMM) runs with its
// invariants checked, and pays the per-buffer fetch cost once per data.
func TestDuplicateBuffer(t *testing.T) {
	m := &machine.Machine{CPUCores: 1, CPUArch: "cpu0",
		Kernels: map[machine.KernelKey]machine.KernelStats{{Model: "k", Arch: "cpu0"}: {MeanUS: 1000}},
		Costs:   machine.Costs{FetchInputPerBufS: 1e-6}}
	mk := func(dup bool) *graph.Graph {
		b := []graph.Access{{Handle: 0, Mode: graph.R}, {Handle: 1, Mode: graph.R}, {Handle: 2, Mode: graph.RW}}
		if dup {
			b[1].Handle = 0
		}
		return &graph.Graph{Name: "g", TotalFlops: 1,
			Handles: []graph.Handle{{ID: 0, Name: "A", SizeBytes: 8}, {ID: 1, Name: "B", SizeBytes: 8}, {ID: 2, Name: "C", SizeBytes: 8}},
			Tasks:   []graph.Task{{ID: 0, Name: "K", Model: "k", Buffers: b}}}
	}
	mk2 := func(dup bool) float64 {
		o := sim.DefaultOptions()
		o.Check = true
		s, err := sim.New(m, mk(dup), o)
		require.NoError(t, err)
		res, err := s.Run()
		require.NoError(t, err)
		return res.MakespanS
	}
	assert.InDelta(t, 1e-6, mk2(false)-mk2(true), 1e-12, "one fetch cost less with a duplicate")
}
