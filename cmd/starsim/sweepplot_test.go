package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func svgOf(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(data)
}

func assertSVGHas(t *testing.T, svg string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		assert.True(t, strings.Contains(svg, w), "the SVG lacks %q", w)
	}
}

// TestSweepPlotTitle: a sweep's figure is titled with what its runs share
// (machine, application, block, precision, worker counts), the varying
// scheduler telling the curves apart.
func TestSweepPlotTitle(t *testing.T) {
	p := filepath.Join(t.TempDir(), "s.svg")
	code, _, errs := runCLI("sweep", "--n", "4800,9600", "--sched", "dmda,dmdas", "--ncpu", "2", "-j", "2", "--plot", p)
	require.Equal(t, 0, code, errs)
	svg := svgOf(t, p)
	assertSVGHas(t, svg, "starsim-default-2s-4v100: cholesky, block 960, float, 2 CPU + 4 GPU workers", ">dmda<", ">dmdas<", "matrix order N")
	assert.NotContains(t, svg, "Predicted performance")
}

// TestSweepPlotWhatIf: with a what-if of several values, GFlop/s is drawn
// against it, one panel per N, and the title gives the GPU counts' range.
func TestSweepPlotWhatIf(t *testing.T) {
	p := filepath.Join(t.TempDir(), "w.svg")
	code, _, errs := runCLI("sweep", "--n", "4800,9600", "--sched", "dmda", "--ncpu", "0", "--gpus", "1,2,3", "-j", "2", "--plot", p)
	require.Equal(t, 0, code, errs)
	svg := svgOf(t, p)
	assertSVGHas(t, svg, "starsim-default-2s-4v100: cholesky, dmda, block 960, float, 0 CPU + 1–3 GPU workers",
		">N=4800<", ">N=9600<", "GPUs (what-if --gpus)")
}

// TestSweepPricePlot: --currency names the unit of the price axis and
// column; without it, stderr says the prices have none.
func TestSweepPricePlot(t *testing.T) {
	dir := t.TempDir()
	price := filepath.Join(dir, "price.json")
	require.NoError(t, os.WriteFile(price, []byte(`{"cpu": 4000, "Tesla V100-PCIE-32GB": 9000}`), 0o644))
	p := filepath.Join(dir, "p.svg")
	code, out, errs := runCLI("sweep", "--n", "4800", "--sched", "dmda", "--gpus", "2,4", "--ncpu", "0", "-j", "2",
		"--price", price, "--currency", "EUR", "--plot-price", p)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "GFLOP/S PER 1000 EUR")
	assertSVGHas(t, svgOf(t, p), "GFlop/s per 1000 EUR", "— per price")

	code, out, errs = runCLI("sweep", "--n", "4800", "--sched", "dmda", "--ncpu", "0", "-j", "1", "--price", price, "--plot-price", p)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, errs, "prices have no currency (--currency)")
	assert.Contains(t, out, "GFLOP/S PER 1000 UNITS OF MONEY")
	assertSVGHas(t, svgOf(t, p), "GFlop/s per 1000 units of money")
}
