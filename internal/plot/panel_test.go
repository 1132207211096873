package plot

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/starsim/starsim/internal/timeline"
)

// synthetic builds a timeline of nw workers running kernels of names ks in
// turn, with fetches between, over about 50 ms, and its counters.
func synthetic(nw int, ks []string, memory bool) *timeline.Timeline {
	tl := timeline.New()
	fetch, idle := tl.State(timeline.StateFetch), tl.State(timeline.StateIdle)
	ready := tl.AddSeries("ready", timeline.GroupReady)
	var mem, fl []int
	for w := 0; w < nw; w++ {
		kind := "cpu"
		name := fmt.Sprintf("CPU%d", w)
		if w >= nw/2 {
			kind, name = "cuda", fmt.Sprintf("CUDA%d", w-nw/2)
			if memory {
				mem = append(mem, tl.AddSeries(name, timeline.GroupMemory))
				fl = append(fl, tl.AddSeries("RAM->"+name, timeline.GroupInFlight))
			}
		}
		tl.AddRow(name, kind)
	}
	for w := 0; w < nw; w++ {
		t := 0.0
		for i := 0; t < 50e-3; i++ {
			tl.Enter(w, fetch, t)
			t += 0.2e-3 * float64(1+(i+w)%3)
			tl.Enter(w, tl.State(ks[(i+w)%len(ks)]), t)
			t += 1e-3 * float64(1+(i*7+w)%4)
			tl.Enter(w, idle, t)
			t += 0.1e-3
		}
	}
	for i := 0; i < 100; i++ {
		tl.Set(ready, float64((i*37)%23), float64(i)*0.5e-3)
		for j := range mem {
			tl.Set(mem[j], float64(i*(j+1))*(1<<20), float64(i)*0.5e-3)
			tl.Set(fl[j], float64((i+j)%3)*3686400, float64(i)*0.5e-3)
		}
	}
	tl.Close(55e-3)
	return tl
}

// renderPNG draws fig with render (a Render function) as a PNG and returns
// its rows, the decoded image and the file's bytes.
func renderPNG[F any](t *testing.T, render func(io.Writer, F, string) ([]PanelRow, error), fig F) ([]PanelRow, image.Image, []byte) {
	t.Helper()
	var buf bytes.Buffer
	rows, err := render(&buf, fig, ".png")
	require.NoError(t, err)
	img, err := png.Decode(bytes.NewReader(buf.Bytes()))
	require.NoError(t, err)
	return rows, img, buf.Bytes()
}

// renderSVG draws fig with render (a Render function) as an SVG.
func renderSVG[F any](t *testing.T, render func(io.Writer, F, string) ([]PanelRow, error), fig F) string {
	t.Helper()
	var buf bytes.Buffer
	_, err := render(&buf, fig, ".svg")
	require.NoError(t, err)
	return buf.String()
}

// blank says whether a region of img has only the background (white or
// the Gantt's row bands).
func nonBackground(img image.Image, x0, y0, x1, y1 int) int {
	n := 0
	for y := y0; y < y1; y++ {
		for x := x0; x < x1; x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			c := color.RGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8)}
			if c.R == c.G && c.G == c.B && c.R >= 0xdd {
				continue // white, bands, grid lines
			}
			n++
		}
	}
	return n
}

func TestPanelPNG(t *testing.T) {
	p := Panel{Title: "machine: app N=9600, block 960, float, dmda, 2 CPU + 2 GPU workers",
		Blocks: []Block{{Title: "run", TL: synthetic(4, []string{"POTRF", "TRSM", "SYRK", "GEMM"}, true)}}}
	rows, img, data := renderPNG(t, RenderPanel, p)
	assert.Equal(t, 1056, img.Bounds().Dx(), "11 in at 96 dpi")
	var kinds []string
	for _, r := range rows {
		kinds = append(kinds, r.Kind)
		assert.Greater(t, r.X1-r.X0, 800, r.Kind)
		assert.Greater(t, r.Y1-r.Y0, 30, r.Kind)
		assert.Positive(t, r.DrawnItems, r.Kind)
		assert.Greater(t, nonBackground(img, r.X0+2, r.Y0+2, r.X1-2, r.Y1-2), (r.X1-r.X0)/4, "%s panel is blank", r.Kind)
	}
	assert.Equal(t, []string{"gantt", timeline.GroupReady, timeline.GroupMemory, timeline.GroupInFlight}, kinds)
	if os.Getenv("PANEL_OUT") != "" {
		require.NoError(t, os.WriteFile(os.Getenv("PANEL_OUT"), data, 0o644))
	}
}

func BenchmarkPanelRender(b *testing.B) {
	p := Panel{Title: "bench", Blocks: []Block{{Title: "run", TL: synthetic(8, []string{"POTRF", "TRSM", "SYRK", "GEMM"}, true)}}}
	for i := 0; i < b.N; i++ {
		var buf bytes.Buffer
		if _, err := RenderPanel(&buf, p, ".png"); err != nil {
			b.Fatal(err)
		}
	}
}

// TestPanelTwoBlocks: two runs (compare --plot), the second without
// counters but saying why: every row is drawn, one legend for both.
func TestPanelTwoBlocks(t *testing.T) {
	b := timeline.New()
	w := b.AddRow("CPU0", "cpu")
	b.AddState(w, b.State("GEMM"), 0, 30e-3)
	p := Panel{Title: "A vs B", Blocks: []Block{
		{Title: "A", TL: synthetic(2, []string{"GEMM", "TRSM"}, true)},
		{Title: "B", TL: b, Absent: map[string]string{timeline.GroupReady: "not in tasks.rec", timeline.GroupMemory: "not in tasks.rec"}},
	}}
	rows, img, _ := renderPNG(t, RenderPanel, p)
	var kinds []string
	for _, r := range rows {
		kinds = append(kinds, fmt.Sprint(r.Block, " ", r.Kind))
		assert.Greater(t, nonBackground(img, r.X0+2, r.Y0+1, r.X1-2, r.Y1-1), 20, "block %d %s is blank", r.Block, r.Kind)
	}
	assert.Equal(t, []string{"0 gantt", "0 ready", "0 memory", "0 inflight", "1 gantt", "1 absent:ready", "1 absent:memory"}, kinds)
	svg := renderSVG(t, RenderPanel, p)
	assert.Equal(t, 1, strings.Count(svg, ">fetching input<"))
	assert.Contains(t, svg, "GPU memory used (MiB): not in tasks.rec")
}
