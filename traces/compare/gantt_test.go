package compare_test

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/starsim/starsim/traces"
	"github.com/starsim/starsim/traces/compare"
	"github.com/starsim/starsim/traces/formats"
)

// TestSaveGantt draws the native trace above a starsim run (default
// machine, 40 workers: the tall case) as PNG and SVG: both are written,
// the PNG decodes at the layout's size, the SVG names every kernel and
// worker, and saving again gives the same bytes.
func TestSaveGantt(t *testing.T) {
	a := loadNative(t)
	dir := t.TempDir()
	writeStarsimRun(t, dir, 1)
	b, err := formats.Load(filepath.Join(dir, "trace.json"))
	require.NoError(t, err)

	pngPath := filepath.Join(dir, "gantt.png")
	require.NoError(t, compare.SaveGantt(a, b, pngPath))
	data, err := os.ReadFile(pngPath)
	require.NoError(t, err)
	img, err := png.Decode(bytes.NewReader(data))
	require.NoError(t, err)
	assert.Equal(t, 1056, img.Bounds().Dx(), "11 in at 96 dpi")
	assert.Greater(t, img.Bounds().Dy(), 600, "40 workers make a tall B panel")

	svgPath := filepath.Join(dir, "gantt.SVG")
	require.NoError(t, compare.SaveGantt(a, b, svgPath))
	svg, err := os.ReadFile(svgPath)
	require.NoError(t, err)
	s := string(svg)
	assert.True(t, strings.HasPrefix(strings.TrimSpace(s), "<?xml") || strings.Contains(s[:min(len(s), 200)], "<svg"))
	for _, want := range []string{"GEMM", "POTRF", "SYRK", "TRSM", "CPU (w0)", "CUDA3 (w39)", "makespan 706.3 ms", "time since the first task start (ms)"} {
		assert.Contains(t, s, want)
	}

	again := filepath.Join(dir, "again.png")
	require.NoError(t, compare.SaveGantt(a, b, again))
	data2, err := os.ReadFile(again)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(data, data2), "deterministic PNG")
	require.NoError(t, compare.SaveGantt(a, b, svgPath))
	svg2, err := os.ReadFile(svgPath)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(svg, svg2), "deterministic SVG")
}

// TestSaveGanttSmall: two one-task traces with a kernel each (two legend
// entries), different makespans: the PNG is the minimum height.
func TestSaveGanttSmall(t *testing.T) {
	mk := func(name string, end float64) *traces.Trace {
		w, n, s, e := 0, 0, 0.0, end
		return &traces.Trace{Name: name, Format: "tasks.rec",
			Tasks:   []traces.TaskRecord{{Name: name, WorkerID: &w, MemoryNode: &n, StartTime: &s, EndTime: &e}},
			Workers: []traces.WorkerInfo{{ID: 0, Name: "CPU", Type: traces.WorkerCPU}}}
	}
	p := filepath.Join(t.TempDir(), "g.png")
	require.NoError(t, compare.SaveGantt(mk("X", 0.3), mk("Y", 1.7), p))
	fh, err := os.Open(p)
	require.NoError(t, err)
	defer fh.Close()
	img, err := png.Decode(fh)
	require.NoError(t, err)
	assert.Positive(t, img.Bounds().Dy())
}

func TestSaveGanttErrors(t *testing.T) {
	tr := &traces.Trace{Name: "empty"}
	err := compare.SaveGantt(tr, tr, filepath.Join(t.TempDir(), "g.pdf"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "unsupported extension \".pdf\"")
	require.Error(t, compare.SaveGantt(nil, tr, filepath.Join(t.TempDir(), "g.png")))
	err = compare.SaveGantt(tr, tr, filepath.Join(t.TempDir(), "no", "such", "dir", "g.png"))
	require.Error(t, err)
}
