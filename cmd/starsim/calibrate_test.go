package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/starsim/starsim/calibrate"
	"github.com/starsim/starsim/platforms"
)

const samplingDir = "../../../shared/calibrations/starpu-sampling"

func TestCalibrateImportShowBuild(t *testing.T) {
	if _, err := os.Stat(samplingDir); err != nil {
		t.Skip("../shared not found")
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "attila.calib.json")
	code, stdout, errs := runCLI("calibrate", "import", "--starpu", samplingDir, "--host", "attila", "-o", out)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, stdout, "12 CPU cores, 6 devices")

	// show --json gives the documented kernel rows.
	code, stdout, errs = runCLI("calibrate", "show", "--json", out)
	require.Equal(t, 0, code, errs)
	var sum struct {
		Kernels []map[string]any `json:"kernels"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &sum))
	found := false
	for _, r := range sum.Kernels {
		for _, k := range []string{"model", "arch", "footprint", "size", "flops", "n", "mean_us", "stddev_us"} {
			require.Contains(t, r, k)
		}
		if r["model"] == "chol_model_gemm" && r["arch"] == "cuda0" && r["footprint"] == "24c84a50" {
			found = true
			assert.InDelta(t, 2795.67, r["mean_us"].(float64), 0.005)
			assert.Equal(t, 6503.0, r["n"])
		}
	}
	assert.True(t, found)

	// The same from the StarPU directory directly.
	code, stdout2, errs := runCLI("calibrate", "show", "--json", "--starpu", samplingDir, "--host", "attila")
	require.Equal(t, 0, code, errs)
	var sum2 struct {
		Kernels []map[string]any `json:"kernels"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout2), &sum2))
	assert.Equal(t, sum.Kernels, sum2.Kernels)

	code, stdout, errs = runCLI("calibrate", "show", out)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, stdout, "chol_model_gemm")
	assert.Contains(t, stdout, "RAM -> CUDA0")

	xml := filepath.Join(dir, "attila.xml")
	code, _, errs = runCLI("platform", "build", out, "-o", xml)
	require.Equal(t, 0, code, errs)
	p, err := platforms.ParseFile(xml)
	require.NoError(t, err)
	_, ok := p.Route("CUDA2", "CUDA0")
	assert.True(t, ok)
}

func TestCalibrateDefaultAndFit(t *testing.T) {
	code, stdout, errs := runCLI("calibrate", "show")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, stdout, "starsim-default-2s-4v100")

	dir := t.TempDir()
	k := filepath.Join(dir, "k.csv")
	var b strings.Builder
	b.WriteString("model,arch,footprint,size,duration_us\n")
	for i := 0; i < 50; i++ {
		b.WriteString("chol_model_gemm,cuda0,24c84a50,11059200,")
		b.WriteString([]string{"150", "155", "160", "158", "1500"}[i%5])
		b.WriteString("\n")
	}
	require.NoError(t, os.WriteFile(k, []byte(b.String()), 0o644))
	out := filepath.Join(dir, "fit.calib.json")
	code, _, errs = runCLI("calibrate", "fit", "-o", out, "--kernels", k)
	require.Equal(t, 0, code, errs)
	f, err := calibrate.ReadFile(out)
	require.NoError(t, err)
	for _, km := range f.Kernels {
		if km.Model == "chol_model_gemm" && km.Arch == "cuda0" {
			for _, e := range km.Entries {
				if e.Footprint == "24c84a50" {
					assert.Equal(t, uint64(50), e.N)
					assert.InDelta(t, (150+155+160+158+1500)/5.0, e.MeanUS, 1e-9)
					require.NotNil(t, e.Histogram)
				}
			}
		}
	}

	// A bad CSV line is reported with its line and no output is written.
	require.NoError(t, os.WriteFile(k, []byte("chol,cuda0,24c84a50,10,1\nchol,cuda0,24c84a50,10,-1\n"), 0o644))
	bad := filepath.Join(dir, "bad.calib.json")
	code, _, errs = runCLI("calibrate", "fit", "-o", bad, "--kernels", k)
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "k.csv:2: duration_us must be >= 0")
	_, err = os.Stat(bad)
	assert.True(t, os.IsNotExist(err))

	code, _, errs = runCLI("calibrate", "show", "testdata/small.platform.xml")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "small.platform.xml:1:")
}
