package network

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/starsim/starsim/emulator"
	"github.com/stretchr/testify/require"
)

// TestSoloRateMatchesSolver checks that solveComponent's fast path for a
// component with one route with flows (soloRate) gives the very bits that
// maxmin.Solver (solveMaxMin) gives on the same component: random links
// (SHARED/FATPIPE, bandwidths and latencies over many magnitudes, extreme
// ones included), routes listing links several times, 1..5 flows, and
// flowless routes whose links stay in the component.
func TestSoloRateMatchesSolver(t *testing.T) {
	rng := rand.New(rand.NewPCG(2024, 11))
	mag := func(lo, hi int) float64 { // (1..10) x 10^[lo, hi]
		return (1 + 9*rng.Float64()) * math.Pow(10, float64(lo+rng.IntN(hi-lo+1)))
	}
	extremeBw := []float64{math.SmallestNonzeroFloat64, 1e-300, 1, 1e300, math.MaxFloat64}
	extremeLat := []float64{0, math.SmallestNonzeroFloat64, 1e-300, 1e300, math.MaxFloat64}
	plainMaxMin := 0
	for trial := 0; trial < 20000; trial++ {
		opts := Options{PlainMaxMin: rng.IntN(8) == 0}
		if opts.PlainMaxMin {
			plainMaxMin++
		}
		net := New(emulator.NewEngine(), opts)
		nl := 1 + rng.IntN(12)
		for i := 0; i < nl; i++ {
			bw := mag(6, 12)
			if rng.IntN(10) == 0 {
				bw = extremeBw[rng.IntN(len(extremeBw))]
			}
			lat := 0.0
			switch rng.IntN(10) {
			case 0:
			case 1:
				lat = extremeLat[rng.IntN(len(extremeLat))]
			default:
				lat = mag(-8, -4)
			}
			sh := Shared
			if rng.IntN(3) == 0 {
				sh = Fatpipe
			}
			_, err := net.AddLink("l", bw, lat, sh)
			require.NoError(t, err)
		}
		// The route: 1..10 links drawn with replacement, so often repeated.
		links := make([]LinkID, 1+rng.IntN(10))
		for i := range links {
			links[i] = LinkID(rng.IntN(nl))
		}
		r, err := net.NewRoute(links)
		require.NoError(t, err)
		k := 1 + rng.IntN(5)
		for i := 0; i < k; i++ {
			r.active = append(r.active, &flow{route: r})
		}
		// The component: r, a few flowless routes, and all their links
		// (which also pulls in links r does not use), in random order.
		net.compR = append(net.compR[:0], r)
		for i := rng.IntN(3); i > 0; i-- {
			e, err := net.NewRoute([]LinkID{LinkID(rng.IntN(nl)), LinkID(rng.IntN(nl))})
			require.NoError(t, err)
			net.compR = append(net.compR, e)
		}
		net.compL = net.compL[:0]
		for i := range net.links {
			net.compL = append(net.compL, LinkID(i))
		}
		rng.Shuffle(len(net.compL), func(i, j int) { net.compL[i], net.compL[j] = net.compL[j], net.compL[i] })
		rng.Shuffle(len(net.compR), func(i, j int) { net.compR[i], net.compR[j] = net.compR[j], net.compR[i] })

		rate, ok := net.soloRate(r, k)
		if !(r.penalty/float64(k) > 0) {
			// A penalty the solver rejects: the fast path must defer.
			require.False(t, ok)
			require.Panics(t, net.solveMaxMin)
			continue
		}
		require.True(t, ok)
		net.solveMaxMin()
		want := net.rates[r.solverIdx]
		require.True(t, rate == want || (math.IsNaN(rate) && math.IsNaN(want)),
			"trial %d (k=%d, uses %v, penalty %g): fast path %.17g (%x), solver %.17g (%x)",
			trial, k, r.uses, r.penalty, rate, math.Float64bits(rate), want, math.Float64bits(want))
		require.Equal(t, math.Float64bits(want), math.Float64bits(rate), "trial %d", trial)
		// solveComponent stores rate/k: the same division either way.
		require.Equal(t, math.Float64bits(r.rateBps), math.Float64bits(rate/float64(k)), "trial %d", trial)
	}
	require.Positive(t, plainMaxMin)
}

// TestSoloFastPathEndToEnd runs random PCI-star scenarios (in which most
// solves have a lone route with flows) with and without the fast path: every
// finish time must be bit-identical.
func TestSoloFastPathEndToEnd(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 2024))
	for trial := 0; trial < 200; trial++ {
		spec := randomPCISpec(rng, 1+rng.IntN(8), 1+rng.IntN(200))
		if sparse := []float64{1, 1, 20, 200}[trial%4]; sparse > 1 {
			// Sparser arrivals: more flows run alone.
			for i := range spec.Flows {
				spec.Flows[i].Start *= sparse
			}
		}
		check := trial%8 < 4
		fast := runSpec(t, spec, Options{Check: check})
		slow := runSpec(t, spec, Options{Check: check, noSolo: true})
		for i := range fast {
			require.Equal(t, math.Float64bits(slow[i]), math.Float64bits(fast[i]),
				"trial %d flow %d: fast path %.17g, solver %.17g", trial, i, fast[i], slow[i])
		}
	}
}
