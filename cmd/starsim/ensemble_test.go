package main

import (
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEnsembleFactors(t *testing.T) {
	assert.Equal(t, []float64{1, 1.0001, 0.9999}, ensembleFactors(3))
	f := ensembleFactors(6)
	want := []float64{1, 1 + 1e-4, 1 - 1e-4, 1 + 2e-4, 1 - 2e-4, 1 + 3e-4}
	for i := range want {
		assert.InDelta(t, want[i], f[i], 1e-15, "member %d", i)
	}
}

// ensembleArgs is a configuration whose GFlop/s move by a few percent
// between members: Cholesky under dmdar in 384 MiB GPUs evicts and
// reloads constantly, so a copy ending a few microseconds earlier changes
// which tile a GPU runs next.
var ensembleArgs = []string{"run", "--calib", "default", "--app", "cholesky", "--sched", "dmdar", "--n", "19200", "--gpu-mem", "384MiB", "--ncpu", "0"}

// TestEnsembleMatchesSeparateRuns: each member is the run --pci-bw-scale
// gives on its own, the summary is that of the members, and the output is
// the same every time (members run concurrently).
func TestEnsembleMatchesSeparateRuns(t *testing.T) {
	single, _ := runJSONOf(t, ensembleArgs...)
	assert.Nil(t, single.Ensemble, "no ensemble without --ensemble")
	args := append(slices.Clone(ensembleArgs), "--ensemble", "5")
	r, errs := runJSONOf(t, args...)
	e := r.Ensemble
	require.NotNil(t, e)
	assert.Equal(t, 5, e.Runs)
	assert.Equal(t, single.GFlops, r.GFlops, "the run itself is unchanged")
	assert.Equal(t, single.GFlops, e.GFlops[0])
	for i, x := range e.BandwidthFactors {
		if i == 0 {
			continue
		}
		sep, _ := runJSONOf(t, append(slices.Clone(ensembleArgs), "--pci-bw-scale", strconv.FormatFloat(x, 'g', -1, 64))...)
		assert.Equal(t, sep.GFlops, e.GFlops[i], "member %d (x%v)", i, x)
		assert.Equal(t, sep.MakespanS, e.MakespanS[i], "member %d (x%v)", i, x)
	}
	assert.Equal(t, slices.Min(e.GFlops), e.GFlopsMin)
	assert.Equal(t, slices.Max(e.GFlops), e.GFlopsMax)
	sorted := slices.Sorted(slices.Values(e.GFlops))
	assert.Equal(t, sorted[2], e.GFlopsMedian)
	assert.Greater(t, e.GFlopsMax-e.GFlopsMin, 0.01*e.GFlopsMedian, "this configuration was chosen for its spread")
	assert.Contains(t, errs, "the ensemble's GFlop/s span")

	_, out1, _ := runCLI(append(args, "--json")...)
	_, out2, _ := runCLI(append(args, "--json")...)
	assert.Equal(t, out1, out2)

	code, text, _ := runCLI(append(slices.Clone(ensembleArgs), "--ensemble", "4")...)
	require.Equal(t, 0, code)
	assert.Contains(t, text, "ensemble of 4 runs (every link bandwidth x1, x1.0001, x0.9999, ...): GFlop/s median ")
}

func TestEnsembleErrors(t *testing.T) {
	for _, c := range []struct{ args []string }{
		{[]string{"run", "--calib", "default", "--ensemble", "1"}},
		{[]string{"run", "--calib", "default", "--ensemble", "65"}},
		{[]string{"run", "--calib", "default", "--ensemble", "0"}},
	} {
		code, out, errs := runCLI(c.args...)
		assert.Equal(t, 2, code, c.args)
		assert.Empty(t, out)
		assert.Contains(t, errs, "want a run count from 2 to 64")
	}
	code, _, errs := runCLI("run", "--calib", "default", "--ensemble", "3", "--sched", "external:true")
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "does not go with an external scheduler")
	code, _, errs = runCLI("replay", "--ensemble", "3")
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "--ensemble")
}
