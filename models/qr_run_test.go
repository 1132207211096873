package models_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/starsim/starsim/calibrate"
	"github.com/starsim/starsim/models"
	"github.com/starsim/starsim/runtime/sim"
)

// The tiled QR runs on the embedded calibration, which models its
// kernels: the panel kernels on CPU cores only, the updates on GPUs too;
// a GPU-only run cannot run the panels.
func TestQRRunsOnDefault(t *testing.T) {
	m := calibrate.Default().RuntimeMachine()
	for _, prec := range []models.Precision{models.Single, models.Double} {
		g, err := models.QR(models.Options{N: 9600, Block: 960, Precision: prec})
		require.NoError(t, err)
		o := sim.DefaultOptions()
		o.Sched, o.Check = "dmdas", true
		s, err := sim.New(m, g, o)
		require.NoError(t, err)
		r, err := s.Run()
		require.NoError(t, err)
		// What the calibration lacks: the CPU-only kernels on GPUs, no more.
		for _, u := range r.Uncalibrated {
			assert.NotEqual(t, "cpu0", u.Arch, u.Model)
			assert.Regexp(t, "^[sd](geqrt|lacpy|laset|tpqrt)$", u.Model)
		}
		assert.Len(t, r.Uncalibrated, 4*4)
		byKernel := map[string]map[string]int{}
		for _, w := range r.Workers {
			for k, n := range w.ByKernel {
				if byKernel[k] == nil {
					byKernel[k] = map[string]int{}
				}
				kind := "cpu"
				if w.Arch != "cpu0" {
					kind = "gpu"
				}
				byKernel[k][kind] += n
			}
		}
		for _, k := range []string{"GEQRT", "LACPY", "LASET", "TPQRT"} {
			assert.Zero(t, byKernel[k]["gpu"], "%s on a GPU", k)
			assert.Positive(t, byKernel[k]["cpu"], k)
		}
		assert.Positive(t, byKernel["TPMQRT"]["gpu"], "updates on GPUs")
		assert.Greater(t, r.GFlops, 100.0)
		t.Logf("%s: %.1f GFlop/s, %.1f ms", prec, r.GFlops, r.MakespanS*1e3)
	}
	g, err := models.QR(models.Options{N: 3840, Block: 960})
	require.NoError(t, err)
	o := sim.DefaultOptions()
	o.NCPU = 0
	_, err = sim.New(m, g, o)
	assert.ErrorContains(t, err, "GEQRT): kernel sgeqrt")
}
