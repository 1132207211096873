package calibrate_test

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/starsim/starsim/calibrate"
	"github.com/starsim/starsim/models"
	"github.com/starsim/starsim/runtime/sim"
)

// TestWhatIfRuns: the runtime runs a tiled Cholesky (checked invariants on)
// on every transformed machine, within the GPUs' (possibly reduced) memory.
// Which GPUs dmda uses is its business: with StarPU's transfer-prediction
// factor (2 x the number of GPUs) it leaves every GPU idle on the 5-GPU
// default at this size; TestWhatIfCloneRuns checks a clone does work.
func TestWhatIfRuns(t *testing.T) {
	def := calibrate.Default()
	other := calibrate.Default()
	other.Name = "slowgpu"
	for i := range other.Kernels {
		if k := &other.Kernels[i]; k.Arch == "cuda0" {
			for j := range k.Entries {
				k.Entries[j].MeanUS *= 2
			}
		}
	}
	type tc struct {
		name string
		make func() (*calibrate.File, error)
	}
	cases := []tc{
		{"default", func() (*calibrate.File, error) { return def, nil }},
		{"default+gpus5", func() (*calibrate.File, error) { return def.WithGPUs(5) }},
		{"default+gpus2", func() (*calibrate.File, error) { return def.WithGPUs(2) }},
		{"default+gpus1", func() (*calibrate.File, error) { return def.WithGPUs(1) }},
		{"default+pcix2", func() (*calibrate.File, error) { return def.ScalePCIBandwidth(2) }},
		{"default+pcix0.25", func() (*calibrate.File, error) { return def.ScalePCIBandwidth(0.25) }},
		{"default+mem64MiB", func() (*calibrate.File, error) { return def.WithGPUMemory(64 << 20) }},
		{"default+gpu(slowgpu)", func() (*calibrate.File, error) { return def.WithGPUFrom(other) }},
	}
	const sampling = "../../shared/calibrations/starpu-sampling"
	if _, err := os.Stat(sampling); err == nil {
		attila, _, err := calibrate.Import(sampling, "attila")
		require.NoError(t, err)
		cases = append(cases,
			tc{"attila", func() (*calibrate.File, error) { return attila, nil }},
			tc{"attila+gpus4", func() (*calibrate.File, error) { return attila.WithGPUs(4) }},
			tc{"attila+gpus1", func() (*calibrate.File, error) { return attila.WithGPUs(1) }},
			tc{"attila+pcix2", func() (*calibrate.File, error) { return attila.ScalePCIBandwidth(2) }},
			tc{"attila+mem64MiB", func() (*calibrate.File, error) { return attila.WithGPUMemory(64 << 20) }},
			tc{"default+gpu(attila)", func() (*calibrate.File, error) { return def.WithGPUFrom(attila) }},
			tc{"attila+gpu(default)", func() (*calibrate.File, error) { return attila.WithGPUFrom(def) }},
		)
	} else {
		t.Log("../shared not found: attila cases skipped")
	}
	makespan := map[string]float64{}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, err := c.make()
			require.NoError(t, err)
			want := strings.ReplaceAll(c.name, "default", def.Name)
			assert.Equal(t, want, f.Name)
			g, err := models.New("cholesky", models.Options{N: 960 * 8, Block: 960})
			require.NoError(t, err)
			opts := sim.DefaultOptions()
			opts.Check = true
			s, err := sim.New(f.RuntimeMachine(), g, opts)
			require.NoError(t, err)
			res, err := s.Run()
			require.NoError(t, err)
			assert.Greater(t, res.MakespanS, 0.0)
			assert.Empty(t, res.Uncalibrated)
			makespan[c.name] = res.MakespanS

			if strings.Contains(c.name, "+mem64MiB") {
				assert.Positive(t, res.Evictions, "a 64 MiB GPU (one suballocator chunk) must evict")
			}
			for _, m := range res.Memory {
				assert.LessOrEqual(t, m.PeakBytes, m.CapacityBytes, m.Node)
				if strings.Contains(c.name, "+mem64MiB") && strings.HasPrefix(m.Node, "CUDA") {
					assert.LessOrEqual(t, m.CapacityBytes, int64(64<<20), m.Node)
				}
			}
			t.Logf("%s: makespan %.4f s, %.1f GFlop/s, %d evictions", c.name, res.MakespanS, res.GFlops, res.Evictions)
		})
	}
	// Coarse, deterministic sanity on the default machine: slower GPU
	// kernels or a slower bus make the run slower.
	if makespan["default"] > 0 {
		assert.Greater(t, makespan["default+gpu(slowgpu)"], makespan["default"])
		assert.Greater(t, makespan["default+pcix0.25"], makespan["default+pcix2"])
	}
}

// TestWhatIfCloneRuns: on a larger Cholesky, the scheduler gives tasks to
// every GPU of the 5- and 6-GPU default, clones included, with transfers to
// and from them.
func TestWhatIfCloneRuns(t *testing.T) {
	for _, k := range []int{5, 6} {
		f, err := calibrate.Default().WithGPUs(k)
		require.NoError(t, err)
		g, err := models.New("cholesky", models.Options{N: 960 * 24, Block: 960})
		require.NoError(t, err)
		opts := sim.DefaultOptions()
		opts.Check = true
		s, err := sim.New(f.RuntimeMachine(), g, opts)
		require.NoError(t, err)
		res, err := s.Run()
		require.NoError(t, err)
		tasks := map[string]int{}
		for _, w := range res.Workers {
			tasks[w.Arch] += w.NTasks
		}
		moved := map[string]float64{}
		for _, d := range res.Transfers {
			moved[d.Src] += d.Bytes
			moved[d.Dst] += d.Bytes
		}
		for _, d := range f.Machine.Devices {
			assert.Positive(t, tasks[d.Arch], "%d GPUs: %s runs no task", k, d.Name)
			assert.Positive(t, moved[d.Name], "%d GPUs: no transfer to or from %s", k, d.Name)
		}
		t.Logf("%d GPUs: makespan %.4f s, tasks per arch %v", k, res.MakespanS, tasks)
	}
}
