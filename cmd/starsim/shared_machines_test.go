package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const nativeSampling = "../../../shared/reference/native-cpu-trace/sampling"

func needSharedSampling(t *testing.T) {
	if _, err := os.Stat(samplingDir); err != nil {
		t.Skip("../shared not found")
	}
}

// TestSharedMachines: the four machines of ../shared import and run, named
// with their source and StarPU 1.4 generation.
func TestSharedMachines(t *testing.T) {
	needSharedSampling(t)
	for host, cores := range map[string]int{"attila": 12, "mirage": 12, "hannibal": 8, "hannibal-pitch": 8} {
		t.Run(host, func(t *testing.T) {
			r, errs := runJSONOf(t, "run", "--starpu", samplingDir, "--host", host, "--ncpu", "0", "--n", "9600", "--sched", "dmdas")
			assert.Empty(t, errs)
			assert.Equal(t, host, r.Machine.Name)
			assert.Equal(t, "StarPU sampling directory "+samplingDir+" (--starpu), host "+host+" (--host)", r.Machine.Source)
			assert.Equal(t, "1.4", r.Machine.Generation)
			assert.Equal(t, cores, r.Machine.CPUCores)
			assert.Equal(t, 3, r.Machine.GPUs)
			assert.Greater(t, r.GFlops, 0.0)
			// LU: the unsuffixed models, the variants named.
			r, _ = runJSONOf(t, "run", "--starpu", samplingDir, "--host", host, "--ncpu", "0", "--n", "9600", "--app", "lu")
			assert.Equal(t, "no BLAS suffix (the calibration also has _atlas, _goto, _openblas)", r.Machine.BLASVariant)
		})
	}
}

// TestNativeMachine: the native trace's calibration (LU models only under
// _openblas) runs LU, and replays its trace named.
func TestNativeMachine(t *testing.T) {
	if _, err := os.Stat(nativeSampling); err != nil {
		t.Skip("../shared not found")
	}
	r, errs := runJSONOf(t, "run", "--starpu", nativeSampling, "--host", "nativecpu", "--app", "lu", "--n", "7680")
	assert.Contains(t, errs, "platform file not used")
	assert.Equal(t, "_openblas", r.Machine.BLASVariant)
	assert.Equal(t, 2, r.Machine.CPUCores)
	assert.Equal(t, 0, r.Machine.GPUs)
	code, out, errs := runCLI("replay", filepath.Dir(nativeSampling), "--starpu", nativeSampling, "--host", "nativecpu", "--sched", "dmda")
	require.Equal(t, 0, code, errs)
	assert.True(t, strings.HasPrefix(out, "machine: nativecpu, StarPU sampling directory "+nativeSampling+" (--starpu), host nativecpu (--host); 2 CPU cores, 0 GPUs; StarPU 1.4 models and task graph (the calibration has StarPU 1.4's model names: "), out)
}

// as13 copies host's calibration under StarPU 1.3's model names
// (chol_model_11/21/22, starpu_Xlu_lu_model_11/12/21/22; the SYRK model
// has no 1.3 counterpart and is left out), a real machine written the way
// StarPU 1.3 names its models.
func as13(t *testing.T, host string) string {
	t.Helper()
	dir := t.TempDir()
	for _, sub := range []string{"bus", filepath.Join("codelets", "45")} {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, sub), 0o755))
	}
	ents, err := os.ReadDir(filepath.Join(samplingDir, "bus"))
	require.NoError(t, err)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), host+".") {
			data, err := os.ReadFile(filepath.Join(samplingDir, "bus", e.Name()))
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(dir, "bus", e.Name()), data, 0o644))
		}
	}
	rename := strings.NewReplacer("chol_model_potrf", "chol_model_11", "chol_model_trsm", "chol_model_21", "chol_model_gemm", "chol_model_22",
		"lu_model_getrf", "lu_model_11", "lu_model_trsm_ll", "lu_model_12", "lu_model_trsm_ru", "lu_model_21", "lu_model_gemm", "lu_model_22")
	cod := filepath.Join(samplingDir, "codelets", "45")
	ents, err = os.ReadDir(cod)
	require.NoError(t, err)
	for _, e := range ents {
		name := e.Name()
		if !strings.HasSuffix(name, "."+host) || strings.HasPrefix(name, "chol_model_syrk") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(cod, name))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, "codelets", "45", rename.Replace(name)), data, 0o644))
	}
	return dir
}

// TestRealMachineAs13: attila's models under StarPU 1.3's names run 1.3's
// graphs: Cholesky's diagonal updates are GEMMs (chol_model_22's duration,
// twice 1.4's SYRK), so it takes longer; LU's tasks are 1.4's, with other
// priorities.
func TestRealMachineAs13(t *testing.T) {
	needSharedSampling(t)
	dir := as13(t, "attila")
	for _, sched := range []string{"dmda", "dmdas"} {
		r13, errs := runJSONOf(t, "run", "--starpu", dir, "--host", "attila", "--ncpu", "0", "--n", "19200", "--sched", sched, "--check")
		assert.Empty(t, errs)
		assert.Equal(t, "1.3", r13.Machine.Generation)
		assert.Equal(t, "auto: the calibration has StarPU 1.3's chol_model_11, chol_model_21, chol_model_22, none of 1.4's", r13.Machine.GenerationReason)
		r14, _ := runJSONOf(t, "run", "--starpu", samplingDir, "--host", "attila", "--ncpu", "0", "--n", "19200", "--sched", sched)
		assert.Equal(t, r14.NTasks, r13.NTasks)
		c13, c14 := kernelCounts(r13), kernelCounts(r14)
		assert.Equal(t, c14["GEMM"]+c14["SYRK"], c13["GEMM"])
		assert.Greater(t, r13.MakespanS, r14.MakespanS, sched)
		l13, _ := runJSONOf(t, "run", "--starpu", dir, "--host", "attila", "--ncpu", "0", "--n", "19200", "--sched", sched, "--app", "lu")
		assert.Equal(t, "1.3", l13.Machine.Generation)
		l14, _ := runJSONOf(t, "run", "--starpu", samplingDir, "--host", "attila", "--ncpu", "0", "--n", "19200", "--sched", sched, "--app", "lu")
		assert.Equal(t, kernelCounts(l14), kernelCounts(l13))
		// Without priorities the two LU graphs are the same.
		n13, _ := runJSONOf(t, "run", "--starpu", dir, "--host", "attila", "--ncpu", "0", "--n", "19200", "--sched", sched, "--app", "lu", "--no-prio")
		n14, _ := runJSONOf(t, "run", "--starpu", samplingDir, "--host", "attila", "--ncpu", "0", "--n", "19200", "--sched", sched, "--app", "lu", "--no-prio")
		assert.Equal(t, n14.MakespanS, n13.MakespanS)
	}
}
