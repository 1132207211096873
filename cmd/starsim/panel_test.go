package main

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRunPlot: run --plot draws the panel (PNG and SVG) without changing
// what the run prints; the SVG's title names the machine and the
// configuration, the legend every kernel.
func TestRunPlot(t *testing.T) {
	dir := t.TempDir()
	args := []string{"run", "--n", "9600", "--ncpu", "2", "--sched", "dmdas"}
	code, plain, errs := runCLI(args...)
	require.Equal(t, 0, code, errs)

	pngPath := filepath.Join(dir, "run.png")
	code, out, errs := runCLI(append(args, "--plot", pngPath)...)
	require.Equal(t, 0, code, errs)
	assert.Equal(t, plain, out, "--plot changes nothing else")
	data, err := os.ReadFile(pngPath)
	require.NoError(t, err)
	img, err := png.Decode(bytes.NewReader(data))
	require.NoError(t, err)
	assert.Equal(t, 1056, img.Bounds().Dx(), "11 in at 96 dpi")
	assert.Greater(t, img.Bounds().Dy(), 400)

	svgPath := filepath.Join(dir, "run.svg")
	code, _, errs = runCLI(append(args, "--plot", svgPath)...)
	require.Equal(t, 0, code, errs)
	svg, err := os.ReadFile(svgPath)
	require.NoError(t, err)
	for _, want := range []string{"cholesky N=9600, block 960, float, dmdas, 2 CPU + 4 GPU workers",
		"POTRF", "TRSM", "SYRK", "GEMM", "fetching input", "ready tasks", "GPU memory used (MiB)", "in flight (MiB)",
		"CPU0", "CUDA3", "simulated time (ms)"} {
		assert.True(t, strings.Contains(string(svg), want), "the SVG lacks %q", want)
	}
}

// TestPlotFlagErrors: a --plot file of another kind is a usage error, told
// before the run.
func TestPlotFlagErrors(t *testing.T) {
	for _, cmd := range []string{"run", "replay"} {
		code, _, errs := runCLI(cmd, "--plot", "x.gif", "whatever")
		assert.Equal(t, 2, code, cmd)
		assert.Contains(t, errs, "unsupported extension \".gif\"", cmd)
	}
}

// TestReplayPlot replays starsim's own tasks.rec with a panel.
func TestReplayPlot(t *testing.T) {
	dir := t.TempDir()
	rec := filepath.Join(dir, "rec")
	code, _, errs := runCLI("run", "--n", "4800", "--ncpu", "2", "--trace-rec", rec)
	require.Equal(t, 0, code, errs)
	svgPath := filepath.Join(dir, "replay.svg")
	code, _, errs = runCLI("replay", rec, "--calib", "default", "--ncpu", "2", "--plot", svgPath)
	require.Equal(t, 0, code, errs)
	svg, err := os.ReadFile(svgPath)
	require.NoError(t, err)
	want := "replay of " + rec + " (35 tasks), dmda, 2 CPU + 4 GPU workers"
	assert.True(t, strings.Contains(string(svg), want), "the SVG lacks %q", want)
}

// TestReplayPaje: replay refuses a Paje trace, saying what to give instead.
func TestReplayPaje(t *testing.T) {
	code, _, errs := runCLI("replay", filepath.Join("..", "..", "traces", "paje", "testdata", "starpu-quirks.paje"))
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "starpu-quirks.paje: a Paje trace holds no data accesses nor dependencies to replay: give the tasks.rec")
}

// TestComparePajePlot: compare reads StarPU's Paje format, and its --plot
// draws both traces' rows; a tasks.rec's counter rows say they are absent.
func TestComparePajePlot(t *testing.T) {
	dir := t.TempDir()
	quirks := filepath.Join("..", "..", "traces", "paje", "testdata", "starpu-quirks.paje")
	rec := filepath.Join(dir, "t.rec")
	require.NoError(t, os.WriteFile(rec, []byte("Name: GEMM\nWorkerId: 1\nMemoryNode: 0\nStartTime: 3\nEndTime: 6.5\nGFlop: 1.769472\n\n"+
		"Name: POTRF\nWorkerId: 0\nMemoryNode: 1\nStartTime: 2.5\nEndTime: 9\nGFlop: 0.295372\n"), 0o644))
	svgPath := filepath.Join(dir, "cmp.svg")
	code, out, errs := runCLI("compare", quirks, rec, "--plot", svgPath)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "(paje, 2 tasks, 2 workers)")
	assert.Contains(t, out, "makespan (ms)  6.500  6.500  +0.00")
	svg, err := os.ReadFile(svgPath)
	require.NoError(t, err)
	for _, want := range []string{"A: ../../traces/paje/testdata/starpu-quirks.paje (paje), makespan 6.5 ms, 2 tasks",
		"CUDA0_0 (w0)", "ready tasks: not in tasks.rec", "GPU memory used (MiB): not in tasks.rec", "in flight (MiB): not in tasks.rec"} {
		assert.True(t, strings.Contains(string(svg), want), "the SVG lacks %q", want)
	}
}

// TestReplayFlops: a tasks.rec without GFlop fields (StarPU's LU example
// sets no flops) replays with the flops of starsim's kernel formulas, the
// same GFlop/s as with the fields; with no known flop count, GFlop/s is
// said unknown rather than 0.
func TestReplayFlops(t *testing.T) {
	dir := t.TempDir()
	rec := filepath.Join(dir, "rec")
	code, _, errs := runCLI("run", "--app", "lu", "--n", "4800", "--ncpu", "2", "--trace-rec", rec)
	require.Equal(t, 0, code, errs)
	code, with, errs := runCLI("replay", rec, "--calib", "default", "--ncpu", "2")
	require.Equal(t, 0, code, errs)
	assert.NotContains(t, errs, "no GFlop")

	data, err := os.ReadFile(filepath.Join(rec, "tasks.rec"))
	require.NoError(t, err)
	var kept []string
	for _, l := range strings.Split(string(data), "\n") {
		if !strings.HasPrefix(l, "GFlop:") {
			kept = append(kept, l)
		}
	}
	noFlops := filepath.Join(dir, "noflops.rec")
	require.NoError(t, os.WriteFile(noFlops, []byte(strings.Join(kept, "\n")), 0o644))
	code, without, errs := runCLI("replay", noFlops, "--calib", "default", "--ncpu", "2")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, errs, "55 of 55 tasks have no GFlop in the trace: their flops come from the application's kernel formulas on their tile size (55) and from the calibration (0)")
	first := func(s string) string { _, rest, _ := strings.Cut(strings.SplitN(s, "\n", 2)[0], ": "); return rest }
	assert.Equal(t, first(with), first(without))
	assert.NotContains(t, without, " 0.0 GFlop/s")

	unknown := filepath.Join(dir, "unknown.rec")
	require.NoError(t, os.WriteFile(unknown, []byte(strings.ReplaceAll(strings.Join(kept, "\n"), "Model: starpu_slu_lu_model_", "Model: mine_")), 0o644))
	code, out, errs := runCLI("replay", unknown, "--calib", "default", "--ncpu", "2")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, errs, "no task has a known flop count: GFlop/s unknown")
	assert.Contains(t, out, "GFlop/s unknown (no flop count)")
}

// TestComparePajeGolden pins compare's report of a StarPU-format Paje
// trace against a tasks.rec.
func TestComparePajeGolden(t *testing.T) {
	code, out, errs := runCLI("compare", filepath.Join("..", "..", "traces", "paje", "testdata", "starpu-quirks.paje"), filepath.Join("testdata", "quirks-tasks.rec"))
	require.Equal(t, 0, code, errs)
	golden(t, "compare-paje", out)
}
