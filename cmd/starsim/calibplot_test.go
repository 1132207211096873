package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/starsim/starsim/calibrate"
)

// TestCalibrateShowModel: --model prints one model as
// starpu_perfmodel_display -s does (golden, embedded calibration);
// --arch keeps an arch or a kind; --json the file's models.
func TestCalibrateShowModel(t *testing.T) {
	code, out, errs := runCLI("calibrate", "show", "--model", "chol_model_gemm", "--arch", "cuda0")
	require.Equal(t, 0, code, errs)
	golden(t, "calibrate-show-model", out)

	code, out, errs = runCLI("calibrate", "show", "--model", "chol_model_potrf", "--arch", "cuda")
	require.Equal(t, 0, code, errs)
	assert.Equal(t, 4, strings.Count(out, "# performance model for cuda"), out)
	assert.NotContains(t, out, "cpu0")
	code, out, errs = runCLI("calibrate", "show", "--model", "chol_model_potrf", "--arch", "cuda_2")
	require.Equal(t, 0, code, errs)
	assert.Equal(t, "# performance model for cuda2_impl0\n", strings.SplitAfter(out, "\n")[0])

	code, out, errs = runCLI("calibrate", "show", "--model", "chol_model_potrf", "--json")
	require.Equal(t, 0, code, errs)
	var ms []calibrate.KernelModel
	require.NoError(t, json.Unmarshal([]byte(out), &ms))
	require.Len(t, ms, 5)
	assert.Equal(t, "cpu0", ms[0].Arch)
	assert.Equal(t, "chol_model_potrf", ms[4].Model)
}

// TestCalibrateShowModelErrors: an unknown model or arch lists the choices.
func TestCalibrateShowModelErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"show", "--model", "gemm"}, `has no model "gemm" (models: chol_model_gemm, chol_model_potrf,`},
		{[]string{"show", "--model", "chol_model_gemm", "--arch", "opencl0"}, `model chol_model_gemm has no arch "opencl0" (archs: cpu0, cuda0, cuda1, cuda2, cuda3; or a kind: cpu, cuda)`},
		{[]string{"show", "--arch", "cuda0"}, "--arch goes with --model SYMBOL"},
		{[]string{"plot", "--model", "gemm", "-o", "x.png"}, `has no model "gemm"`},
		{[]string{"plot", "--model", "chol_model_gemm", "-o", "x.pdf"}, `unsupported extension ".pdf"`},
		{[]string{"plot", "-o", "x.png"}, "want --model SYMBOL -o F.png|F.svg"},
	} {
		code, _, errs := runCLI(append([]string{"calibrate"}, c.args...)...)
		assert.Equal(t, 2, code, c.args)
		assert.Contains(t, errs, c.want, c.args)
	}
}

// TestPerfmodelDisplayAgrees: on ../shared's attila, the footprint lines are
// those of StarPU's own starpu_perfmodel_display -s (run when the peer is
// built in /tmp/starpu-peer), byte for byte.
func TestPerfmodelDisplayAgrees(t *testing.T) {
	tool := "/tmp/starpu-peer/bin/starpu_perfmodel_display"
	sampling := filepath.Join("..", "..", "..", "shared", "calibrations", "starpu-sampling")
	if _, err := os.Stat(tool); err != nil {
		t.Skip("starpu_perfmodel_display not built in /tmp/starpu-peer")
	}
	if _, err := os.Stat(sampling); err != nil {
		t.Skip("no ../shared calibrations")
	}
	dir := t.TempDir()
	require.NoError(t, exec.Command("cp", "-r", sampling, filepath.Join(dir, "s")).Run())
	for _, sym := range []string{"chol_model_gemm", "chol_model_potrf"} {
		cmd := exec.Command(tool, "-s", sym)
		cmd.Env = append(os.Environ(), "STARPU_PERF_MODEL_DIR="+filepath.Join(dir, "s"), "STARPU_HOSTNAME=attila",
			"LD_LIBRARY_PATH=/tmp/starpu-peer/lib", "STARPU_HOME="+dir)
		var theirs bytes.Buffer
		cmd.Stdout = &theirs
		require.NoError(t, cmd.Run())
		code, ours, errs := runCLI("calibrate", "show", "--starpu", sampling, "--host", "attila", "--model", sym)
		require.Equal(t, 0, code, errs)
		data := func(s string) string {
			var keep []string
			for _, l := range strings.Split(s, "\n") {
				if l != "" && !strings.HasPrefix(l, "# performance model for") {
					keep = append(keep, l)
				}
			}
			return strings.Join(keep, "\n")
		}
		assert.Equal(t, data(theirs.String()), data(ours), sym)
		assert.Equal(t, strings.Count(theirs.String(), "# performance model for"), strings.Count(ours, "# performance model for"))
	}
}

// TestCalibratePlot draws a model as PNG, then with the histograms that
// calibrate fit makes: one more panel, the PNG taller by its height.
func TestCalibratePlot(t *testing.T) {
	dir := t.TempDir()
	p1 := filepath.Join(dir, "m.png")
	code, out, errs := runCLI("calibrate", "plot", "--model", "chol_model_gemm", "-o", p1)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "model chol_model_gemm, 5 arch(s)")
	w1, h1 := pngSize(t, p1)
	assert.Equal(t, 768, w1, "8 in at 96 dpi")
	assert.Equal(t, 480, h1, "5 in: no histogram")

	// Two footprints of cuda0 measured, bimodal: calibrate fit gives them
	// histograms.
	var csv strings.Builder
	csv.WriteString("model,arch,footprint,size,duration_us\n")
	for i := 0; i < 200; i++ {
		d := 150.0 + float64(i%7)
		if i%3 == 0 {
			d = 190 + float64(i%5)
		}
		fmt.Fprintf(&csv, "chol_model_gemm,cuda0,24c84a50,11059200,%g\n", d)
		fmt.Fprintf(&csv, "chol_model_gemm,cuda0,f0ac7beb,4915200,%g\n", d/2.5)
	}
	kcsv, calib := filepath.Join(dir, "k.csv"), filepath.Join(dir, "fit.calib.json")
	require.NoError(t, os.WriteFile(kcsv, []byte(csv.String()), 0o644))
	code, _, errs = runCLI("calibrate", "fit", "--kernels", kcsv, "-o", calib)
	require.Equal(t, 0, code, errs)
	p2 := filepath.Join(dir, "h.svg")
	code, _, errs = runCLI("calibrate", "plot", calib, "--model", "chol_model_gemm", "--arch", "cuda0", "-o", p2)
	require.Equal(t, 0, code, errs)
	svg, err := os.ReadFile(p2)
	require.NoError(t, err)
	for _, want := range []string{"Model for codelet chol_model_gemm on starsim-default-2s-4v100", "average cuda0_impl0",
		"duration (ms), cuda0_impl0", "samples per ms", "11059200 B", "4915200 B"} {
		assert.True(t, strings.Contains(string(svg), want), "the SVG lacks %q", want)
	}
	p3 := filepath.Join(dir, "h.png")
	code, _, errs = runCLI("calibrate", "plot", calib, "--model", "chol_model_gemm", "-o", p3)
	require.Equal(t, 0, code, errs)
	w3, h3 := pngSize(t, p3)
	assert.Equal(t, 768, w3)
	assert.Equal(t, 480+211, h3, "one histogram panel of 2.2 in")
}

func pngSize(t *testing.T, path string) (int, int) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	img, err := png.Decode(bytes.NewReader(data))
	require.NoError(t, err)
	return img.Bounds().Dx(), img.Bounds().Dy()
}
