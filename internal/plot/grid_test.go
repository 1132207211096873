package plot

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func whatIfGrid() Grid {
	g := Grid{Title: "attila: cholesky, block 960, float", XLabel: "GPUs", YLabel: "GFlop/s"}
	for i, n := range []string{"N=9600", "N=19200", "N=28800", "N=38400"} {
		f := Figure{Title: n}
		for j, s := range []string{"dmda", "dmdas"} {
			f.Series = append(f.Series, Series{Name: s, X: []float64{1, 2, 3, 4},
				Y: []float64{200 * float64(i+1), 380 * float64(i+1), 520*float64(i+1) + float64(j*50), 600*float64(i+1) + float64(j*90)}})
		}
		g.Panels = append(g.Panels, f)
	}
	return g
}

// TestGrid: every panel is drawn (not blank), on a shared Y range; the SVG
// names each series once in the legend.
func TestGrid(t *testing.T) {
	rows, img, _ := renderPNG(t, RenderGrid, whatIfGrid())
	require.Len(t, rows, 4)
	assert.Greater(t, img.Bounds().Dy(), 2*259, "two rows of 2.7 in panels")
	for _, r := range rows {
		assert.Equal(t, 8, r.DrawnItems)
		assert.Greater(t, nonBackground(img, r.X0+2, r.Y0+2, r.X1-2, r.Y1-2), 100, "panel %d is blank", r.Block)
	}
	assert.Equal(t, rows[0].Y0, rows[1].Y0, "a row of panels is aligned")

	s := renderSVG(t, RenderGrid, whatIfGrid())
	assert.Equal(t, 1, strings.Count(s, ">dmdas<"), "one legend entry per series")
	for _, want := range []string{"attila: cholesky, block 960, float", "N=38400", ">GPUs<", ">GFlop/s<"} {
		assert.True(t, strings.Contains(s, want), "the SVG lacks %q", want)
	}

	var buf bytes.Buffer
	_, err := RenderGrid(&buf, Grid{}, ".png")
	assert.Error(t, err)
	g := whatIfGrid()
	g.Panels[1].Series[0].Y[0] = math.Inf(-1)
	_, err = RenderGrid(&buf, g, ".png")
	assert.Error(t, err)
}
