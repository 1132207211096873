package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/starsim/starsim/calibrate"
)

// withoutModels writes the embedded calibration less the kernel models
// drop keeps (model, arch) and returns its path.
func withoutModels(t *testing.T, dir, name string, drop func(model, arch string) bool) string {
	t.Helper()
	f := calibrate.Default()
	var keep []calibrate.KernelModel
	for _, k := range f.Kernels {
		if !drop(k.Model, k.Arch) {
			keep = append(keep, k)
		}
	}
	f.Kernels = keep
	p := filepath.Join(dir, name)
	fh, err := os.Create(p)
	require.NoError(t, err)
	require.NoError(t, f.Write(fh))
	require.NoError(t, fh.Close())
	return p
}

// TestUncalibratedWarnings: idle workers and kernels that will not run
// somewhere are said on stderr before the run, and the (model, arch)
// pairs said are those the run reports as uncalibrated.
func TestUncalibratedWarnings(t *testing.T) {
	dir := t.TempDir()
	noCPU := withoutModels(t, dir, "nocpu.json", func(_, arch string) bool { return arch == "cpu0" })
	noCPUPotrf := withoutModels(t, dir, "nocpupotrf.json", func(model, arch string) bool { return arch == "cpu0" && model == "chol_model_potrf" })
	noGEMM12 := withoutModels(t, dir, "nogemm.json", func(model, arch string) bool {
		return (arch == "cuda1" || arch == "cuda2") && model == "chol_model_gemm"
	})
	noGPU3 := withoutModels(t, dir, "nogpu3.json", func(_, arch string) bool { return arch == "cuda3" })
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--calib", "default"}, nil},
		{[]string{"--calib", noCPU}, []string{"the 36 CPU workers (cpu0) will sit idle: the calibration has no model on their arch for any of this run's kernels (chol_model_gemm, chol_model_potrf, chol_model_syrk, chol_model_trsm); --ncpu 0 leaves them out"}},
		{[]string{"--calib", noCPU, "--ncpu", "1"}, []string{"the CPU worker (cpu0) will sit idle: the calibration has no model on their arch for any of this run's kernels (chol_model_gemm, chol_model_potrf, chol_model_syrk, chol_model_trsm); --ncpu 0 leaves them out"}},
		{[]string{"--calib", noCPU, "--ncpu", "0"}, nil},
		{[]string{"--calib", noCPUPotrf, "--ncpu", "4"}, []string{"the 4 CPU workers (cpu0) will not run chol_model_potrf: the calibration has no model of it on their arch (StarPU over SimGrid would abort)"}},
		{[]string{"--calib", noGEMM12}, []string{"GPU workers CUDA1, CUDA2 (cuda1, cuda2) will not run chol_model_gemm: the calibration has no model of it on their arch (StarPU over SimGrid would abort)"}},
		{[]string{"--calib", noGEMM12, "--ncuda", "2"}, []string{"GPU worker CUDA1 (cuda1) will not run chol_model_gemm: the calibration has no model of it on their arch (StarPU over SimGrid would abort)"}},
		{[]string{"--calib", noGPU3, "--ncpu", "0"}, []string{"GPU worker CUDA3 (cuda3) will sit idle: the calibration has no model on their arch for any of this run's kernels (chol_model_gemm, chol_model_potrf, chol_model_syrk, chol_model_trsm)"}},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			code, out, errs := runCLI(append([]string{"run", "--n", "3840", "--json"}, c.args...)...)
			require.Equal(t, 0, code, errs)
			var said []string
			for _, l := range strings.Split(strings.TrimSuffix(errs, "\n"), "\n") {
				if w, ok := strings.CutPrefix(l, "starsim: warning: "); ok {
					said = append(said, w)
				}
			}
			assert.Equal(t, c.want, said)
			// The pairs the warnings name are the run's uncalibrated ones.
			var res struct {
				Uncalibrated []struct{ Model, Arch string } `json:"uncalibrated"`
				Workers      []struct{ Arch string }        `json:"workers"`
			}
			require.NoError(t, json.Unmarshal([]byte(out), &res))
			var got, want []string
			for _, u := range res.Uncalibrated {
				want = append(want, u.Model+"@"+u.Arch)
			}
			for _, w := range said {
				models, archs := parseWarning(t, w)
				for _, m := range models {
					for _, a := range archs {
						got = append(got, m+"@"+a)
					}
				}
			}
			sort.Strings(got)
			sort.Strings(want)
			assert.Equal(t, want, got)
		})
	}
}

// parseWarning reads the models and archs an uncalibrated warning names.
func parseWarning(t *testing.T, w string) (models, archs []string) {
	t.Helper()
	open, end := strings.Index(w, "("), strings.Index(w, ")")
	require.True(t, open > 0 && end > open, w)
	archs = strings.Split(w[open+1:end], ", ")
	if i := strings.Index(w, "any of this run's kernels ("); i >= 0 {
		rest := w[i+len("any of this run's kernels ("):]
		models = strings.Split(rest[:strings.Index(rest, ")")], ", ")
		return models, archs
	}
	rest := w[strings.Index(w, "will not run ")+len("will not run "):]
	models = strings.Split(rest[:strings.Index(rest, ": ")], ", ")
	return models, archs
}

// TestUncalibratedTable: the run's table lists the pairs not run, as the
// golden file pins it, and a sweep warns once per machine and app.
func TestUncalibratedTable(t *testing.T) {
	dir := t.TempDir()
	p := withoutModels(t, dir, "nocpupotrf.json", func(model, arch string) bool { return arch == "cpu0" && model == "chol_model_potrf" })
	code, out, errs := runCLI("run", "--calib", p, "--n", "3840", "--ncpu", "2")
	require.Equal(t, 0, code, errs)
	golden(t, "run-uncalibrated", strings.ReplaceAll(out, dir, "$D"))

	code, _, errs = runCLI("sweep", "--calib", p, "--n", "1920,3840", "--sched", "dmda,dmdas", "--ncpu", "2", "--block", "640,960")
	require.Equal(t, 0, code, errs)
	assert.Equal(t, "starsim: warning: starsim-default-2s-4v100, cholesky: the 2 CPU workers (cpu0) will not run chol_model_potrf: the calibration has no model of it on their arch (StarPU over SimGrid would abort)\n", errs)
}
