package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image/png"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/starsim/starsim/traces/compare"
)

// compareNative is the real StarPU trace (see its README).
const compareNative = "../../../shared/reference/native-cpu-trace"

func needCompareNative(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(compareNative, "tasks.rec")); err != nil {
		t.Skipf("native trace not available: %v", err)
	}
}

// compareJSON runs `starsim compare --json args...` and decodes the report.
func compareJSON(t *testing.T, args ...string) compare.Report {
	t.Helper()
	code, out, errs := runCLI(append([]string{"compare", "--json"}, args...)...)
	require.Equal(t, 0, code, errs)
	var r compare.Report
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	return r
}

// TestCompareNativeSelfCLI: the native trace against itself: makespan
// 706.3 ms and no difference anywhere; text and JSON forms.
func TestCompareNativeSelfCLI(t *testing.T) {
	needCompareNative(t)
	code, out, errs := runCLI("compare", compareNative, filepath.Join(compareNative, "tasks.rec"))
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "makespan (ms)  706.276  706.276  +0.00")
	assert.Contains(t, out, "DURATIONS ms")

	r := compareJSON(t, compareNative, compareNative)
	assert.InDelta(t, 706.3, r.MakespanA, 0.1)
	assert.Zero(t, r.MakespanErrPct)
	assert.Zero(t, r.GFlopsErrPct)
	require.Len(t, r.Kernels, 4)
	for _, k := range r.Kernels {
		assert.Zero(t, k.MeanErrPct)
		assert.Equal(t, k.CountA, k.CountB)
	}
	for _, d := range r.Distributions {
		assert.Zero(t, d.KS)
	}
	for _, w := range r.Workers {
		assert.Equal(t, w.BusyPctA, w.BusyPctB)
	}
}

// TestCompareSeeds compares two runs of the same problem whose kernel
// durations are drawn (--durations normal) with seeds 1 and 2.
//
// Why the bounds are plausible: both runs draw every kernel's duration from
// the same per-(kernel, worker) normal law of the default calibration, so
// only the draws differ.
//   - Makespan: it is the sum of the durations along the critical path
//     (tens of kernels, each with a relative spread of a few %) plus
//     scheduling effects; independent errors largely cancel over the path,
//     so the two makespans differ by well under 5 % (0.34 % here).
//   - KS distance: for each (kernel, worker type) it is the two-sample
//     Kolmogorov-Smirnov statistic of two samples of one law. Draws are
//     continuous, so they never tie and D > 0. Under that null hypothesis
//     P(D >= 0.5) is 1.2 % for n = m = 20 (exact lattice-path count), so a
//     row with at least 20 tasks per side stays below 0.5. Smaller rows are
//     coarser (D is a multiple of 1/n: P(D >= 0.5) is 17 % for n = m = 10,
//     36 % for n = m = 5), so for them the test only checks D against the
//     1 % critical value 1.63 * sqrt((n+m)/(n*m)) where that is below 1.
//
// A last check: per-kernel mean durations differ by a few % at most.
func TestCompareSeeds(t *testing.T) {
	dir := t.TempDir()
	d1, d2 := filepath.Join(dir, "s1"), filepath.Join(dir, "s2")
	for seed, d := range map[string]string{"1": d1, "2": d2} {
		code, _, errs := runCLI("run", "--n", "5760", "--sched", "dmdas", "--durations", "normal", "--seed", seed, "--trace-rec", d)
		require.Equal(t, 0, code, errs)
	}
	r := compareJSON(t, d1, d2)
	assert.NotZero(t, r.MakespanErrPct, "different draws")
	assert.Less(t, math.Abs(r.MakespanErrPct), 5.0)
	assert.Less(t, math.Abs(r.GFlopsErrPct), 5.0)
	require.NotEmpty(t, r.Distributions)
	big := 0
	for _, d := range r.Distributions {
		assert.Positive(t, d.KS, "%s on %s", d.Kernel, d.WorkerType)
		n, m := float64(d.NA), float64(d.NB)
		if d.NA >= 20 && d.NB >= 20 {
			big++
			assert.Less(t, d.KS, 0.5, "%s on %s, n=%d/%d", d.Kernel, d.WorkerType, d.NA, d.NB)
		} else if crit := 1.63 * math.Sqrt((n+m)/(n*m)); d.NA > 0 && d.NB > 0 && crit < 1 {
			assert.Less(t, d.KS, crit, "%s on %s, n=%d/%d", d.Kernel, d.WorkerType, d.NA, d.NB)
		}
	}
	assert.Positive(t, big, "at least one kernel has 20 tasks per side")
	for _, k := range r.Kernels {
		if k.CountA >= 5 && k.CountB >= 5 {
			assert.Less(t, math.Abs(k.MeanErrPct), 5.0, "%s on %s", k.Kernel, k.WorkerType)
		}
	}
}

// TestCompareChromeVsRecCLI: one run written as tasks.rec and as Chrome
// JSON: the same per-kernel counts and no difference at all.
func TestCompareChromeVsRecCLI(t *testing.T) {
	dir := t.TempDir()
	rec, chrome := filepath.Join(dir, "rec"), filepath.Join(dir, "t.json")
	code, _, errs := runCLI("run", "--n", "5760", "--sched", "dmdas", "--durations", "normal", "--seed", "3", "--trace-rec", rec, "--trace-chrome", chrome)
	require.Equal(t, 0, code, errs)
	r := compareJSON(t, rec, chrome)
	assert.Equal(t, "tasks.rec", r.A.Format)
	assert.Equal(t, "chrome", r.B.Format)
	assert.Equal(t, r.A.Tasks, r.B.Tasks)
	assert.Zero(t, r.MakespanErrPct)
	require.NotEmpty(t, r.Kernels)
	for _, k := range r.Kernels {
		assert.Equal(t, k.CountA, k.CountB, "%s on %s", k.Kernel, k.WorkerType)
		assert.Positive(t, k.CountA)
	}
	for _, d := range r.Distributions {
		assert.Zero(t, d.KS)
	}
}

// TestCompareNativeVsPrediction: the native trace against starsim's
// prediction of it (calibration imported from the run's own sampling
// directory, 2 CPUs, dmda), with a Gantt chart in PNG and SVG.
func TestCompareNativeVsPrediction(t *testing.T) {
	needCompareNative(t)
	dir := t.TempDir()
	calib := filepath.Join(dir, "native.calib.json")
	code, _, errs := runCLI("calibrate", "import", "--starpu", filepath.Join(compareNative, "sampling"), "--host", "nativecpu", "-o", calib)
	require.Equal(t, 0, code, errs)
	pred := filepath.Join(dir, "pred")
	code, _, errs = runCLI("run", "--calib", calib, "--n", "7680", "--ncpu", "2", "--sched", "dmda", "--trace-rec", pred)
	require.Equal(t, 0, code, errs)

	pngPath, svgPath := filepath.Join(dir, "g.png"), filepath.Join(dir, "g.svg")
	r := compareJSON(t, "--plot", pngPath, compareNative, pred)
	assert.Less(t, math.Abs(r.MakespanErrPct), 5.0, "starsim predicts the native run within 5 %%: %.2f %%", r.MakespanErrPct)
	assert.Equal(t, 120, r.B.Tasks)
	for _, k := range r.Kernels {
		assert.Equal(t, k.CountA, k.CountB, k.Kernel)
		assert.Less(t, math.Abs(k.MeanErrPct), 5.0, k.Kernel)
	}
	data, err := os.ReadFile(pngPath)
	require.NoError(t, err)
	_, err = png.Decode(bytes.NewReader(data))
	require.NoError(t, err)

	code, out, errs := runCLI("compare", compareNative, pred, "--plot", svgPath)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "KERNEL")
	svg, err := os.ReadFile(svgPath)
	require.NoError(t, err)
	assert.Contains(t, string(svg), "<svg")
}

// TestCompareErrors: bad traces exit 1 with FILE:LINE; bad usage exits 2.
func TestCompareErrors(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.rec")
	require.NoError(t, os.WriteFile(good, []byte("Name: GEMM\nWorkerId: 0\nMemoryNode: 0\nStartTime: 0\nEndTime: 1\n"), 0o644))
	notTrace := filepath.Join(dir, "notes.txt")
	require.NoError(t, os.WriteFile(notTrace, []byte("just some notes\n"), 0o644))
	truncated := filepath.Join(dir, "cut.rec")
	require.NoError(t, os.WriteFile(truncated, []byte("Name: GEMM\nWorkerId: 0\nMemoryNode: 0\nStartTime: 0\nEndTime: 1\n\nName: SYRK\nWorkerId: 1\nMemoryNode: 0\n"), 0o644))
	cutJSON := filepath.Join(dir, "cut.json")
	require.NoError(t, os.WriteFile(cutJSON, []byte("{\"traceEvents\":[\n{\"ph\":\"X\",\n"), 0o644))
	cases := []struct {
		name     string
		args     []string
		code     int
		inStderr string
	}{
		{"not a trace", []string{"compare", good, notTrace}, 1, notTrace + ":1: expected \"Field: value\", got \"just some notes\"; not a trace starsim reads: want a tasks.rec (a file, or a directory holding it or paje.trace), a Chrome JSON trace or a Paje trace"},
		{"truncated record", []string{"compare", truncated, good}, 1, truncated + ":7: task SYRK has a WorkerId but no StartTime or EndTime"},
		{"truncated JSON", []string{"compare", good, cutJSON}, 1, cutJSON + ":3: invalid JSON"},
		{"missing file", []string{"compare", good, filepath.Join(dir, "nope")}, 1, "nope"},
		{"one trace", []string{"compare", good}, 2, "want two traces A B"},
		{"bad plot extension", []string{"compare", "--plot", filepath.Join(dir, "g.pdf"), good, good}, 2, "unsupported extension"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := runCLI(c.args...)
			assert.Equal(t, c.code, code)
			assert.Empty(t, out, "no report on error")
			assert.Contains(t, errs, c.inStderr)
		})
	}
	code, out, errs := runCLI("compare", "--help")
	assert.Equal(t, 0, code)
	assert.Empty(t, errs)
	assert.True(t, strings.Contains(out, "Usage: starsim compare [flags] A B"))
}

// TestCompareHistogramSeeds: a calibration whose GPU kernels have
// histograms (fitted from seeded lognormal samples), run twice with
// --durations histogram and seeds 1 and 2: compare reports small,
// non-zero differences — same task graph, durations drawn from the same
// distributions, so the makespan moves by ~1 % and the per-kernel duration
// distributions of the two runs stay close (KS well below 0.5 for the
// kernels with many tasks).
func TestCompareHistogramSeeds(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(5, 6))
	var csv strings.Builder
	csv.WriteString("model,arch,footprint,size,duration_us\n")
	kern := []struct {
		model, fp string
		size      int
		meanUS    float64
	}{{"chol_model_potrf", "617e5fe6", 3686400, 351}, {"chol_model_trsm", "ff82dda0", 7372800, 115},
		{"chol_model_syrk", "ff82dda0", 7372800, 97}, {"chol_model_gemm", "24c84a50", 11059200, 158}}
	for _, k := range kern {
		for g := 0; g < 4; g++ {
			for i := 0; i < 200; i++ {
				fmt.Fprintf(&csv, "%s,cuda%d,%s,%d,%.3f\n", k.model, g, k.fp, k.size, k.meanUS*math.Exp(0.08*rng.NormFloat64()))
			}
		}
	}
	kpath := filepath.Join(dir, "k.csv")
	require.NoError(t, os.WriteFile(kpath, []byte(csv.String()), 0o644))
	calib := filepath.Join(dir, "h.calib.json")
	code, _, errs := runCLI("calibrate", "fit", "-o", calib, "--kernels", kpath)
	require.Equal(t, 0, code, errs)
	var recs [2]string
	for i, seed := range []string{"1", "2"} {
		recs[i] = filepath.Join(dir, "run"+seed)
		code, _, errs = runCLI("run", "--calib", calib, "--ncpu", "0", "--n", "9600", "--sched", "dmdas",
			"--durations", "histogram", "--seed", seed, "--trace-rec", recs[i])
		require.Equal(t, 0, code, errs)
	}
	code, out, errs := runCLI("compare", "--json", recs[0], recs[1])
	require.Equal(t, 0, code, errs)
	var rep struct {
		MakespanErrPct float64 `json:"makespan_err_pct"`
		Distributions  []struct {
			Kernel string  `json:"kernel"`
			NA     int     `json:"n_a"`
			NB     int     `json:"n_b"`
			KS     float64 `json:"ks"`
		} `json:"distributions"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.NotZero(t, rep.MakespanErrPct)
	assert.Less(t, math.Abs(rep.MakespanErrPct), 5.0)
	require.NotEmpty(t, rep.Distributions)
	for _, d := range rep.Distributions {
		assert.Greater(t, d.KS, 0.0, d.Kernel)
		if d.NA >= 50 && d.NB >= 50 {
			assert.Less(t, d.KS, 0.3, d.Kernel)
		}
	}
}
