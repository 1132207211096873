package network

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/starsim/starsim/emulator"
)

// pciStar8 builds an 8-GPU PCI star like StarPU's platforms: per-GPU up and
// down links, one shared host bridge, host<->device routes and
// device->device routes through the host (crossing the bridge twice).
func pciStar8(net *Network) (routes []*Route) {
	share, _ := net.AddLink("Share", 24e9, 0, Shared)
	up := make([]LinkID, 8)
	down := make([]LinkID, 8)
	for g := 0; g < 8; g++ {
		up[g], _ = net.AddLink(fmt.Sprintf("GPU%d-RAM", g), 12e9+float64(g)*1e8, 10e-6, Shared)
		down[g], _ = net.AddLink(fmt.Sprintf("RAM-GPU%d", g), 11e9+float64(g)*1e8, 9e-6, Shared)
	}
	for g := 0; g < 8; g++ {
		r1, _ := net.NewRoute([]LinkID{down[g], share})
		r2, _ := net.NewRoute([]LinkID{up[g], share})
		routes = append(routes, r1, r2)
		for h := 0; h < 8; h++ {
			if h != g {
				r, _ := net.NewRoute([]LinkID{up[g], share, share, down[h]})
				routes = append(routes, r)
			}
		}
	}
	return routes
}

// benchFlows runs n flows of one 960x960 float tile (3 686 400 B) on random
// routes of an 8-GPU PCI star. meanGapS is the mean inter-arrival time (0:
// all start at once, the worst case for sharing).
func benchFlows(b *testing.B, n int, meanGapS float64) {
	b.ReportAllocs()
	var solves uint64
	for b.Loop() {
		eng := emulator.NewEngine()
		net := New(eng, Options{})
		routes := pciStar8(net)
		rng := rand.New(rand.NewPCG(1, 1))
		t := 0.0
		done := 0
		for i := 0; i < n; i++ {
			r := routes[rng.IntN(len(routes))]
			bytes := float64(3686400 * (1 + rng.IntN(3)))
			eng.Post(t, func(int) { net.Send(r, bytes, func(int) { done++ }, 0) }, 0)
			t += rng.ExpFloat64() * meanGapS
		}
		eng.Run()
		if done != n {
			b.Fatalf("%d of %d flows done", done, n)
		}
		solves = net.Stats()
	}
	b.ReportMetric(float64(solves), "solves/op")
}

// BenchmarkNetwork10kFlowsPCIStar8 is the network's benchmark: 10 000 flows on
// an 8-GPU PCI star, arriving every 400 µs on average: about 1.8e10 B/s
// offered to a 2.4e10 B/s bridge, a busy bus with a handful of flows in
// flight, as in a tiled factorization.
func BenchmarkNetwork10kFlowsPCIStar8(b *testing.B) { benchFlows(b, 10000, 400e-6) }

// BenchmarkNetwork10kFlowsPCIStar8Saturated offers ~8x the bridge's capacity
// (a flow every 50 µs): thousands of flows end up in flight in one component.
func BenchmarkNetwork10kFlowsPCIStar8Saturated(b *testing.B) { benchFlows(b, 10000, 50e-6) }

// BenchmarkNetwork10kFlowsPCIStar8AllAtOnce starts all 10 000 flows at t=0.
func BenchmarkNetwork10kFlowsPCIStar8AllAtOnce(b *testing.B) { benchFlows(b, 10000, 0) }

// BenchmarkNetwork10kFlowsPCIStar8Sparse spaces flows 5 ms apart on average,
// several times their duration: most solves find a lone route with flows
// (solveComponent's soloRate fast path), as between bursts in a real run.
func BenchmarkNetwork10kFlowsPCIStar8Sparse(b *testing.B) { benchFlows(b, 10000, 5e-3) }
