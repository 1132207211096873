package plot

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestInputsDigest: every Save* reports what it draws, numbers rounded to
// 4 significant digits, so noise in the last bits changes nothing.
func TestInputsDigest(t *testing.T) {
	got := map[string]string{}
	Inputs = func(path, d string) { got[filepath.Base(path)] = d }
	defer func() { Inputs = nil }()
	dir := t.TempDir()
	f := threeSeries()
	require.NoError(t, Save(f, filepath.Join(dir, "a.svg")))
	f.Series[0].Y[0] *= 1 + 1e-9
	require.NoError(t, Save(f, filepath.Join(dir, "b.svg")))
	assert.Equal(t, got["a.svg"], got["b.svg"])
	assert.True(t, strings.HasPrefix(got["a.svg"], `figure "GEMM time vs matrix size" x "matrix size N" y "time (s)"`), got["a.svg"])
	assert.Contains(t, got["a.svg"], `series "emulator <fp32>": (9600, 0.5) (1.92e+04, 4)`)
	f.Series[0].Y[0] *= 1.001
	require.NoError(t, Save(f, filepath.Join(dir, "c.svg")))
	assert.NotEqual(t, got["a.svg"], got["c.svg"])

	require.NoError(t, SaveGrid(whatIfGrid(), filepath.Join(dir, "g.svg")))
	assert.Contains(t, got["g.svg"], `panel "N=38400"`)
	require.NoError(t, SavePanel(Panel{Title: "p", Blocks: []Block{{Title: "run", TL: synthetic(4, []string{"GEMM"}, true)}}}, filepath.Join(dir, "p.svg")))
	assert.Contains(t, got["p.svg"], `row "CUDA1" cuda: FetchingInput=`)
	assert.Contains(t, got["p.svg"], `series "RAM->CUDA0" inflight: bins`)
	require.NoError(t, SaveModelFigure(modelFig(), filepath.Join(dir, "m.svg")))
	assert.Contains(t, got["m.svg"], `arch "cuda0_impl0": (1e+06, 0.2±0.01)`)
}
