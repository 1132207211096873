package plot

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func modelFig() ModelFigure {
	return ModelFigure{Title: "Model for codelet k on m", Archs: []ModelArch{
		{Name: "cpu0_impl0", SizeBytes: []float64{1e6, 4e6, 1e7}, MeanMs: []float64{3, 25, 84}, StddevMs: []float64{0.2, 5, 90},
			Linear: &[2]float64{1e-6, 1.2}},
		{Name: "cuda0_impl0", SizeBytes: []float64{1e6, 4e6, 1e7}, MeanMs: []float64{0.2, 0.9, 2.8}, StddevMs: []float64{0.01, 0.03, 0.05},
			NonLinear: &[3]float64{1e-7, 1.1, 0.01},
			Hists:     []ModelHist{{SizeBytes: 1e7, EdgesMs: []float64{2.7, 2.75, 2.8, 3}, Counts: []float64{10, 40, 5}}}},
	}}
}

// TestModelFigure: the model panel and the histogram panel are drawn (not
// blank); a negative-or-zero mean or a stddev larger than the mean cannot
// break the log axes.
func TestModelFigure(t *testing.T) {
	rows, img, _ := renderPNG(t, RenderModelFigure, modelFig())
	assert.Equal(t, 768, img.Bounds().Dx())
	assert.Equal(t, 480+211, img.Bounds().Dy())
	require.Len(t, rows, 2)
	assert.Equal(t, "model", rows[0].Kind)
	assert.Equal(t, "histogram", rows[1].Kind)
	for _, r := range rows {
		assert.Positive(t, r.DrawnItems)
		assert.Less(t, r.Y1, img.Bounds().Dy()+1, r.Kind)
		assert.Greater(t, nonBackground(img, r.X0+2, r.Y0+2, r.X1-2, r.Y1-2), 200, "%s panel is blank", r.Kind)
	}
	assert.LessOrEqual(t, rows[0].Y1, rows[1].Y0, "panels do not overlap")

	svg := renderSVG(t, RenderModelFigure, modelFig())
	for _, want := range []string{"average cpu0_impl0", "linear regression cpu0_impl0", "non-linear regression cuda0_impl0", "10000000 B"} {
		assert.True(t, strings.Contains(svg, want), "the SVG lacks %q", want)
	}

	f := modelFig()
	f.Archs[0].MeanMs[0] = 0
	f.Archs = f.Archs[:1]
	var buf bytes.Buffer
	rows, err := RenderModelFigure(&buf, f, ".png")
	require.NoError(t, err)
	assert.Len(t, rows, 1)
	_, err = RenderModelFigure(&buf, ModelFigure{Archs: []ModelArch{{Name: "x", SizeBytes: []float64{0}, MeanMs: []float64{1}}}}, ".png")
	require.Error(t, err)
}
