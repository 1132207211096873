package calibrate

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/starsim/starsim/models"
	"github.com/starsim/starsim/runtime/sim"
)

// calibrate fit makes the QR kernels' models from measured samples (here
// synthetic ones, keyed by the footprints of models.QRKernels): on a base
// without them, the QR graph cannot run; fitted, it runs for the samples'
// means.
func TestFitMakesQRKernels(t *testing.T) {
	base := Default()
	kept := base.Kernels[:0]
	for _, k := range base.Kernels {
		if k.Model[1:] != "geqrt" && k.Model[1:] != "lacpy" && k.Model[1:] != "laset" && k.Model[1:] != "ormqr" && k.Model[1:] != "tpqrt" && k.Model[1:] != "tpmqrt" {
			kept = append(kept, k)
		}
	}
	base.Kernels = kept
	g, err := models.QR(models.Options{N: 3840, Block: 960, Precision: models.Double})
	require.NoError(t, err)
	o := sim.DefaultOptions()
	o.NCPU, o.NCUDA = 2, 1
	_, err = sim.New(base.RuntimeMachine(), g, o)
	require.ErrorContains(t, err, "dgeqrt", "the base lacks QR")
	var samples []KernelSample
	mean := map[string]float64{}
	for i, k := range models.QRKernels(models.Double, 960, 48) {
		archs := []string{"cpu0"}
		if !k.CPUOnly {
			archs = append(archs, "cuda0")
		}
		for _, arch := range archs {
			m := float64(1000 * (i + 1))
			if arch == "cuda0" {
				m /= 10
			}
			mean[k.Symbol+"/"+arch] = m
			for _, d := range []float64{-0.02, 0, 0.02} { // mean m
				samples = append(samples, KernelSample{Model: k.Symbol, Arch: arch, Footprint: fmt.Sprintf("%08x", k.Footprint),
					SizeBytes: uint64(k.Bytes), DurationUS: m * (1 + d)})
			}
		}
	}
	f, err := Fit(base, samples, nil)
	require.NoError(t, err)
	found := 0
	for _, km := range f.Kernels {
		if want, ok := mean[km.Model+"/"+km.Arch]; ok {
			require.Len(t, km.Entries, 1)
			assert.InDelta(t, want, km.Entries[0].MeanUS, 1e-9*want, km.Model)
			found++
		}
	}
	assert.Equal(t, len(mean), found)
	s, err := sim.New(f.RuntimeMachine(), g, o)
	require.NoError(t, err)
	r, err := s.Run()
	require.NoError(t, err)
	assert.Positive(t, r.MakespanS)
}
