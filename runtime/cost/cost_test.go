package cost

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/starsim/starsim/calibrate/fit"
	"github.com/starsim/starsim/runtime/graph"
	"github.com/starsim/starsim/runtime/machine"
	"github.com/stretchr/testify/assert"
)

// star is RAM and two GPUs on one link each, CUDA0->CUDA1 direct (one
// link, so StarPU counts one GPU on it), no CUDA1->CUDA0 route.
func star() *machine.Machine {
	d := func(a, b string) machine.Dir { return machine.Dir{Src: a, Dst: b} }
	p := machine.Prediction{LatencyS: 10e-6, BandwidthBps: 1e9}
	return &machine.Machine{
		Links: []machine.Link{{ID: "l0", BandwidthBps: 2e9, LatencyS: 1e-6}, {ID: "l1", BandwidthBps: 4e9, LatencyS: 2e-6}, {ID: "p", BandwidthBps: 8e9}},
		Routes: map[machine.Dir][]string{d("RAM", "CUDA0"): {"l0"}, d("CUDA0", "RAM"): {"l0"}, d("RAM", "CUDA1"): {"l1", "l0"},
			d("CUDA1", "RAM"): {"l1"}, d("CUDA0", "CUDA1"): {"p"}},
		Predict: map[machine.Dir]machine.Prediction{d("RAM", "CUDA0"): p, d("CUDA0", "RAM"): p, d("RAM", "CUDA1"): p,
			d("CUDA1", "RAM"): p, d("CUDA0", "CUDA1"): {LatencyS: 1e-6, BandwidthBps: 4e9}},
		Pitch: map[machine.Dir][]machine.PitchModel{d("RAM", "CUDA1"): {
			{PitchLoBytes: 0, PitchHiBytes: 4096, Segments: []machine.PitchSegment{{LoBytes: 0, HiBytes: math.Inf(1), InterceptS: 5e-6, SlopeSPerByte: 1e-9}}},
			{PitchLoBytes: 8192, PitchHiBytes: 8192, Segments: []machine.PitchSegment{{LoBytes: 0, HiBytes: 1e6, InterceptS: 1e-3, SlopeSPerByte: 0}}},
		}},
	}
}

var nodes = []string{"RAM", "CUDA0", "CUDA1"}

func TestPredictUS(t *testing.T) {
	c := New(star(), nodes, 2, true)
	// latency + size/bandwidth × 2 × the bus's GPU count (both GPUs on a
	// RAM bus, one on the direct link).
	assert.InDelta(t, 10+1e6/1e9*1e6*4, c.PredictUS(0, 1, 1e6), 1e-9)
	assert.InDelta(t, 1+1e6/4e9*1e6*2, c.PredictUS(1, 2, 1e6), 1e-9)
	assert.Zero(t, c.PredictUS(2, 1, 1e6), "no prediction")
	plain := New(star(), nodes, 2, false)
	assert.InDelta(t, 10+1e6/1e9*1e6, plain.PredictUS(0, 1, 1e6), 1e-9)
}

func TestFetchAndSource(t *testing.T) {
	c := New(star(), nodes, 2, false)
	const size = 1e6
	// Valid in RAM and on CUDA0: to CUDA1 the peer link is cheaper.
	assert.Equal(t, c.PredictUS(1, 2, size), c.FetchUS(0b011, 2, size))
	src, ok := c.BestSource(0b011, 2, size)
	assert.True(t, ok)
	assert.Equal(t, 1, src)
	// Valid on CUDA1 only: no route to CUDA0, so through RAM.
	assert.Equal(t, c.PredictUS(2, 0, size)+c.PredictUS(0, 1, size), c.FetchUS(0b100, 1, size))
	src, ok = c.BestSource(0b100, 1, size)
	assert.True(t, ok)
	assert.Equal(t, 2, src, "the first valid node: the copy goes through RAM")
	assert.Zero(t, c.FetchUS(0b010, 1, size), "valid there already")
	_, ok = c.BestSource(0, 1, size)
	assert.False(t, ok)
	assert.True(t, c.Direct(1, 2))
	assert.False(t, c.Direct(2, 1))
}

// TestFetchMemo: FetchUS's remembered answers are its computation's,
// over many more questions than the memo holds (so entries are replaced
// and slots shared), asked again in another order.
func TestFetchMemo(t *testing.T) {
	c := New(star(), nodes, 2, true)
	r := rand.New(rand.NewPCG(1, 2))
	type q struct {
		ready uint64
		dst   int
		size  int64
	}
	var qs []q
	for range 4 * fetchMemoSize {
		qs = append(qs, q{r.Uint64N(8), r.IntN(3), int64(r.IntN(5)) << 20})
	}
	for range 3 {
		for _, x := range qs {
			assert.Equal(t, c.fetchUS(x.ready, x.dst, x.size), c.FetchUS(x.ready, x.dst, x.size), "%+v", x)
		}
		r.Shuffle(len(qs), func(i, j int) { qs[i], qs[j] = qs[j], qs[i] })
	}
}

func TestPayload(t *testing.T) {
	c := New(star(), nodes, 2, true)
	tile := &graph.Handle{PitchBytes: 4096}
	// RAM->CUDA1: 5 µs + 1 ns/B; minus the route's 3 µs latency, times
	// its narrowest 2 GB/s.
	assert.InDelta(t, (5e-6+1e-9*1e5-3e-6)*2e9, c.Payload(0, 2, tile, 1e5), 1e-6)
	// The nearest pitch range: 8192 for 7000; no segment beyond 1e6 bytes.
	assert.InDelta(t, (1e-3-3e-6)*2e9, c.Payload(0, 2, &graph.Handle{PitchBytes: 7000}, 1e5), 1e-3)
	assert.Equal(t, 2e6, c.Payload(0, 2, &graph.Handle{PitchBytes: 8192}, 2e6))
	assert.Equal(t, 1e5, c.Payload(0, 1, tile, 1e5), "no model")
	assert.Equal(t, 1e5, c.Payload(0, 2, &graph.Handle{}, 1e5), "no pitch")
	fast := []machine.PitchModel{{PitchHiBytes: 1e9, Segments: []machine.PitchSegment{{HiBytes: math.Inf(1), InterceptS: 1e-6}}}}
	m := star()
	m.Pitch[machine.Dir{Src: "RAM", Dst: "CUDA1"}] = fast
	assert.Zero(t, New(m, nodes, 2, true).Payload(0, 2, tile, 1e5), "faster than the latency: nothing to send")
}

func TestSampleUS(t *testing.T) {
	k := &machine.KernelStats{MeanUS: 100, StddevUS: 1000, EdgesUS: []float64{10, 20, 40}, Counts: []uint64{1, 3}}
	rng := rand.New(rand.NewPCG(1, 2))
	ref := rand.New(rand.NewPCG(1, 2))
	assert.Equal(t, 100.0, SampleUS(k, Mean, rng))
	assert.Equal(t, ref.Uint64(), rng.Uint64(), "the mean draws nothing")
	for range 100 {
		u := ref.Float64()
		got := SampleUS(k, Histogram, rng)
		assert.Equal(t, fit.Histogram{EdgesUS: k.EdgesUS, Counts: k.Counts}.Sample(u), got)
		assert.True(t, got >= 10 && got < 40, "%v", got)
	}
	zero := 0
	for range 100 {
		v := SampleUS(k, Normal, rng)
		assert.GreaterOrEqual(t, v, 0.0)
		if v == 0 {
			zero++
		}
	}
	assert.Positive(t, zero, "a normal law of stddev 10 × the mean is cut at 0")
	assert.Equal(t, 100.0, SampleUS(&machine.KernelStats{MeanUS: 100}, Histogram, rng), "no histogram: the mean")
}
