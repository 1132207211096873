package timeline

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStatesAndDoubling(t *testing.T) {
	tl := New()
	w := tl.AddRow("CUDA0", "cuda")
	gemm, fetch := tl.State("GEMM"), tl.State("FetchingInput")
	tl.Enter(w, fetch, 0)
	tl.Enter(w, gemm, 1e-3)
	tl.Enter(w, fetch, 3e-3)
	tl.Close(10e-3)
	// 10 ms over 4096 bins of 1 µs: two doublings (bins of 4 µs hold 16 ms).
	assert.Equal(t, 1e-6*4, tl.BinS())
	assert.InDelta(t, 2e-3, tl.Total(w, gemm), 1e-9)
	assert.InDelta(t, 8e-3, tl.Total(w, fetch), 1e-9)
	assert.Equal(t, 2500, tl.Used())
	d := tl.Dominant(w)
	assert.Equal(t, fetch, d[0])
	assert.Equal(t, gemm, d[250], "bin [1 ms, 1.004 ms)")
	assert.Equal(t, gemm, d[749])
	assert.Equal(t, fetch, d[750])

	// A long run keeps the same number of bins, and the totals.
	tl.Enter(w, gemm, 10e-3)
	tl.Close(100)
	assert.Equal(t, Bins, len(tl.rows[w].occ[gemm]))
	assert.InDelta(t, 100-10e-3+2e-3, tl.Total(w, gemm), 1e-3)
	assert.GreaterOrEqual(t, tl.BinS()*Bins, 100.0)
	assert.Less(t, tl.BinS()*Bins/2, 100.0)
}

func TestLevels(t *testing.T) {
	tl := New()
	s := tl.AddSeries("ready", "ready")
	tl.Set(s, 2, 0)
	tl.Set(s, 4, 1e-6*0.5) // half the first bin at 2, half at 4
	tl.Close(2e-6)
	mean, ok := tl.Mean(s)
	require.Len(t, mean, 2)
	assert.True(t, ok[0] && ok[1])
	assert.InDelta(t, 3, mean[0], 1e-9)
	assert.InDelta(t, 4, mean[1], 1e-9)
	mx, _ := tl.Max(s)
	assert.Equal(t, 4.0, mx[0])
	assert.True(t, tl.Series()[s].HasData())
	e := tl.AddSeries("empty", "memory")
	assert.False(t, tl.Series()[e].HasData())
	_, ok = tl.Mean(e)
	assert.False(t, ok[0])
}

// TestBadIntervals: nothing non-finite, reversed, negative-only or absurdly
// late is recorded, and nothing panics.
func TestBadIntervals(t *testing.T) {
	tl := New()
	w := tl.AddRow("CPU0", "cpu")
	s := tl.AddSeries("x", "ready")
	k := tl.State("K")
	for _, iv := range [][2]float64{{math.NaN(), 1}, {0, math.Inf(1)}, {2, 1}, {-2, -1}, {0, 1e300}, {1e308, 1.7e308}} {
		tl.AddState(w, k, iv[0], iv[1])
		tl.AddLevel(s, 1, iv[0], iv[1])
	}
	tl.AddLevel(s, math.NaN(), 0, 1)
	tl.AddState(7, k, 0, 1)
	tl.AddState(w, 9, 0, 1)
	assert.Equal(t, 0.0, tl.EndS())
	assert.Equal(t, 0.0, tl.Total(w, k))
	tl.AddState(w, k, -1, 1e-6) // clipped at 0
	assert.InDelta(t, 1e-6, tl.Total(w, k), 1e-12)
}

func TestStateCap(t *testing.T) {
	tl := New()
	for i := 0; i < 40; i++ {
		tl.State(string(rune('a' + i)))
	}
	assert.Len(t, tl.States(), MaxStates)
	assert.Equal(t, Other, tl.States()[MaxStates-1])
	assert.Equal(t, MaxStates-1, tl.State("zzz"))
	assert.Equal(t, 0, tl.State("a"))
}

func TestCaps(t *testing.T) {
	tl := New()
	for i := 0; i < MaxRows; i++ {
		assert.Equal(t, i, tl.AddRow("w", "cpu"))
	}
	assert.Equal(t, -1, tl.AddRow("one too many", "cpu"))
	for i := 0; i < MaxSeries; i++ {
		assert.Equal(t, i, tl.AddSeries("s", GroupReady))
	}
	assert.Equal(t, -1, tl.AddSeries("one too many", GroupReady))
	k := tl.State("K")
	tl.AddState(0, k, 0, 1e-6)
	tl.AddState(-1, k, 0, 1)
	tl.Enter(-1, k, 0)
	tl.Set(-1, 1, 0)
	assert.Zero(t, tl.Total(-1, k))
	d := tl.Dominant(-1)
	assert.Equal(t, -1, d[0])
	_, ok := tl.Mean(-1)
	assert.False(t, ok[0])
}
