package network

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/starsim/starsim/emulator"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// netSpec is a self-contained network scenario (the fluid-case file shape).
type netSpec struct {
	Links []struct {
		ID            string  `json:"id"`
		Bandwidth     float64 `json:"bandwidth"`
		Latency       float64 `json:"latency"`
		SharingPolicy string  `json:"sharing_policy"`
	} `json:"links"`
	Routes []struct {
		Src   string   `json:"src"`
		Dst   string   `json:"dst"`
		Links []string `json:"links"`
	} `json:"routes"`
	Flows []struct {
		ID    string  `json:"id"`
		Src   string  `json:"src"`
		Dst   string  `json:"dst"`
		Bytes float64 `json:"bytes"`
		Start float64 `json:"start"`
	} `json:"flows"`
	Expected map[string]struct {
		Start, Finish, Duration float64
	} `json:"expected"`
}

// addSpecLinks adds spec's links to net and returns their ids by name.
func addSpecLinks(t testing.TB, net *Network, spec *netSpec) map[string]LinkID {
	ids := map[string]LinkID{}
	for _, l := range spec.Links {
		sh := Shared
		if l.SharingPolicy == "FATPIPE" {
			sh = Fatpipe
		}
		id, err := net.AddLink(l.ID, l.Bandwidth, l.Latency, sh)
		require.NoError(t, err)
		ids[l.ID] = id
	}
	return ids
}

// runSpec simulates spec with the fast network and returns finish times in
// flow order.
func runSpec(t testing.TB, spec *netSpec, opts Options) []float64 {
	eng := emulator.NewEngine()
	net := New(eng, opts)
	ids := addSpecLinks(t, net, spec)
	routes := map[[2]string]*Route{}
	for _, r := range spec.Routes {
		var ls []LinkID
		for _, name := range r.Links {
			ls = append(ls, ids[name])
		}
		rt, err := net.NewRoute(ls)
		require.NoError(t, err)
		routes[[2]string{r.Src, r.Dst}] = rt
	}
	finish := make([]float64, len(spec.Flows))
	for i, f := range spec.Flows {
		rt := routes[[2]string{f.Src, f.Dst}]
		require.NotNil(t, rt, "flow %s has no route", f.ID)
		eng.Post(f.Start, func(int) {
			net.Send(rt, f.Bytes, func(int) { finish[i] = eng.NowS() }, 0)
		}, 0)
	}
	eng.Run()
	return finish
}

func relErr(got, want float64) float64 {
	if got == want {
		return 0
	}
	return math.Abs(got-want) / math.Max(math.Abs(want), 1e-300)
}

// TestFluidCases runs the hand-derived cases of the shared data set
// fluid-cases, outside the repository (each file holds its derivation; they
// were checked against SimGrid 3.32); it skips without them.
func TestFluidCases(t *testing.T) {
	files, _ := filepath.Glob("../../shared/docs/fluid-cases/*.json")
	if len(files) == 0 {
		t.Skip("../shared/docs/fluid-cases not found")
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			require.NoError(t, err)
			var spec netSpec
			require.NoError(t, json.Unmarshal(data, &spec))
			require.NotEmpty(t, spec.Expected)
			finish := runSpec(t, &spec, Options{Check: true})
			for i, f := range spec.Flows {
				want := spec.Expected[f.ID]
				assert.LessOrEqual(t, relErr(finish[i], want.Finish), 1e-12, "flow %s: got %.17g want %.17g", f.ID, finish[i], want.Finish)
			}
		})
	}
}

// TestHandDerived covers cases the shared set does not.
func TestHandDerived(t *testing.T) {
	// FATPIPE with unequal route latencies, SimGrid semantics: the constraint's
	// level is set by the largest 1/penalty and every flow on it is fixed at
	// that level. Routes: a = [FP, A] latency 1e-5, b = [FP, B] latency 3e-5.
	// FP (1e9, FATPIPE, lat 0) has usage max(1/1e-5, 1/3e-5) = 1e5, level
	// 1e9/1e5 = 1e4: a = 1e4/1e-5 = 1e9, b = 1e4/3e-5 = 3.333e8 B/s.
	// a: 1e-5 + 1e6/1e9 = 0.00101. Until then b (active from 3e-5) sent
	// 3.333e8*(0.00101-3e-5) = 326666.67 B; then alone at 1e9: 673333.33/1e9
	// -> b finishes at 0.00101 + 0.00067333 = 0.00168333.
	spec := &netSpec{}
	must(json.Unmarshal([]byte(`{
	 "links":[{"id":"FP","bandwidth":1e9,"latency":0,"sharing_policy":"FATPIPE"},
	          {"id":"A","bandwidth":1e12,"latency":1e-5},{"id":"B","bandwidth":1e12,"latency":3e-5}],
	 "routes":[{"src":"x","dst":"a","links":["FP","A"]},{"src":"x","dst":"b","links":["FP","B"]}],
	 "flows":[{"id":"a","src":"x","dst":"a","bytes":1e6,"start":0},{"id":"b","src":"x","dst":"b","bytes":1e6,"start":0}]}`), spec))
	finish := runSpec(t, spec, Options{Check: true})
	assert.InDelta(t, 0.00101, finish[0], 1e-15)
	bSent := 1e9 / 3 * (0.00101 - 3e-5)
	assert.InDelta(t, 0.00101+(1e6-bSent)/1e9, finish[1], 1e-15)

	// Plain max-min ignores latencies: case (e) with equal shares. Both
	// active from their latency ends (1e-5, 3e-5). [1e-5,3e-5): f0 alone,
	// 2e4 B sent. Then 5e8 each: f0 done at 3e-5 + 9.8e5/5e8 = 0.00199;
	// f1 sent 9.8e5, 2e4 left alone: 0.00199 + 2e-5 = 0.00201.
	spec = &netSpec{}
	must(json.Unmarshal([]byte(`{
	 "links":[{"id":"Share","bandwidth":1e9,"latency":0},{"id":"P0","bandwidth":1e11,"latency":1e-5},{"id":"P1","bandwidth":1e11,"latency":3e-5}],
	 "routes":[{"src":"R","dst":"G0","links":["P0","Share"]},{"src":"R","dst":"G1","links":["P1","Share"]}],
	 "flows":[{"id":"f0","src":"R","dst":"G0","bytes":1e6,"start":0},{"id":"f1","src":"R","dst":"G1","bytes":1e6,"start":0}]}`), spec))
	finish = runSpec(t, spec, Options{PlainMaxMin: true, Check: true})
	assert.InDelta(t, 0.00199, finish[0], 1e-15)
	assert.InDelta(t, 0.00201, finish[1], 1e-15)

	// Identical flows on one route finish together, and in issue order.
	eng := emulator.NewEngine()
	net := New(eng, Options{Check: true})
	l, _ := net.AddLink("L", 1e9, 1e-5, Shared)
	r, _ := net.NewRoute([]LinkID{l})
	var order []int
	for i := 0; i < 4; i++ {
		net.Send(r, 1e6, func(int) { order = append(order, i) }, 0)
	}
	eng.Run()
	assert.Equal(t, []int{0, 1, 2, 3}, order)
	assert.InDelta(t, 1e-5+4e6/1e9, eng.NowS(), 1e-15)
	assert.Equal(t, 4e6, net.LinkBytes(l))
}

// TestSendRecyclesFlows: flows sent from a completion finish as others do,
// and completed flows are reused: the network keeps no more flows than
// were ever in flight at once.
func TestSendRecyclesFlows(t *testing.T) {
	eng := emulator.NewEngine()
	net := New(eng, Options{Check: true})
	l, _ := net.AddLink("L", 1e9, 1e-5, Shared)
	r, _ := net.NewRoute([]LinkID{l})
	var got []int
	var done func(int)
	done = func(tag int) {
		got = append(got, tag)
		if tag == 2 {
			net.Send(r, 1e6, func(tag int) {
				got = append(got, tag)
				assert.InDelta(t, 1e-5+2e6/1e9+1e-5+1e6/1e9, eng.NowS(), 1e-15)
			}, 3)
		}
	}
	net.Send(r, 1e6, done, 1)
	net.Send(r, 1e6, done, 2)
	eng.Run()
	assert.Equal(t, []int{1, 2, 3}, got)
	assert.Equal(t, 3e6, net.LinkBytes(l))
	assert.Len(t, net.flows, 2, "the third flow reused a completed one")
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

func TestNetworkRejectsBadLinks(t *testing.T) {
	net := New(emulator.NewEngine(), Options{})
	for _, c := range []struct{ bw, lat float64 }{{0, 0}, {-1, 0}, {math.NaN(), 0}, {math.Inf(1), 0}, {1, -1}, {1, math.NaN()}} {
		_, err := net.AddLink("x", c.bw, c.lat, Shared)
		assert.Error(t, err, "bw %v lat %v", c.bw, c.lat)
	}
	_, err := net.NewRoute([]LinkID{3})
	assert.Error(t, err)
}

// randomPCISpec builds a seeded PCI-like star: per-GPU up/down links, one
// shared link, host-device and device-device routes (the latter cross the
// shared link twice, as StarPU's platforms do), staggered flows.
func randomPCISpec(rng *rand.Rand, ngpu, nflows int) *netSpec {
	spec := &netSpec{}
	type L = struct {
		ID            string  `json:"id"`
		Bandwidth     float64 `json:"bandwidth"`
		Latency       float64 `json:"latency"`
		SharingPolicy string  `json:"sharing_policy"`
	}
	lat := func() float64 {
		if rng.IntN(5) == 0 {
			return 0
		}
		return float64(1+rng.IntN(30)) * 1e-6
	}
	bw := func() float64 { return (1 + 15*rng.Float64()) * 1e9 }
	shareBw := bw()
	spec.Links = append(spec.Links, L{"Share", shareBw, 0, ""})
	for g := 0; g < ngpu; g++ {
		pol := ""
		if rng.IntN(6) == 0 {
			pol = "FATPIPE"
		}
		spec.Links = append(spec.Links, L{fmt.Sprintf("RAM-GPU%d", g), bw(), lat(), pol}, L{fmt.Sprintf("GPU%d-RAM", g), bw(), lat(), ""})
	}
	type R = struct {
		Src   string   `json:"src"`
		Dst   string   `json:"dst"`
		Links []string `json:"links"`
	}
	for g := 0; g < ngpu; g++ {
		gn := fmt.Sprintf("GPU%d", g)
		spec.Routes = append(spec.Routes, R{"RAM", gn, []string{"RAM-" + gn, "Share"}}, R{gn, "RAM", []string{gn + "-RAM", "Share"}})
		for h := 0; h < ngpu; h++ {
			if h != g {
				hn := fmt.Sprintf("GPU%d", h)
				spec.Routes = append(spec.Routes, R{gn, hn, []string{gn + "-RAM", "Share", "Share", "RAM-" + hn}})
			}
		}
	}
	t := 0.0
	for i := 0; i < nflows; i++ {
		r := spec.Routes[rng.IntN(len(spec.Routes))]
		var bytes float64
		switch rng.IntN(8) {
		case 0:
			bytes = 0
		case 1:
			bytes = 3686400 // a 960x960 float tile, often repeated: ties
		default:
			bytes = float64(1 + rng.IntN(64<<20))
		}
		if rng.IntN(3) != 0 {
			t += rng.ExpFloat64() * 2e-3
		}
		spec.Flows = append(spec.Flows, struct {
			ID    string  `json:"id"`
			Src   string  `json:"src"`
			Dst   string  `json:"dst"`
			Bytes float64 `json:"bytes"`
			Start float64 `json:"start"`
		}{fmt.Sprint(i), r.Src, r.Dst, bytes, t})
	}
	return spec
}

// TestNetworkAgainstReference compares the incremental, per-route network
// with a slow reference that re-solves every flow individually at every event.
func TestNetworkAgainstReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(42, 7))
	worst := 0.0
	for trial := 0; trial < 300; trial++ {
		spec := randomPCISpec(rng, 1+rng.IntN(8), 1+rng.IntN(120))
		got := runSpec(t, spec, Options{Check: true})
		want := referenceRun(spec)
		for i := range spec.Flows {
			d := want[i] - spec.Flows[i].Start
			e := math.Abs(got[i]-want[i]) / math.Max(d, 1e-12)
			worst = math.Max(worst, e)
			require.LessOrEqual(t, e, 1e-9, "trial %d flow %d: got %.17g want %.17g", trial, i, got[i], want[i])
		}
	}
	t.Logf("worst relative duration error vs reference: %.3g", worst)
}

// referenceRun is the obviously-correct, slow simulation: flows one by one,
// a from-scratch progressive filling over every active flow after every
// event, time advanced to the earliest activation or completion.
func referenceRun(spec *netSpec) []float64 {
	type lk struct {
		bw, lat float64
		fat     bool
	}
	links := map[string]lk{}
	for _, l := range spec.Links {
		links[l.ID] = lk{l.Bandwidth, l.Latency, l.SharingPolicy == "FATPIPE"}
	}
	route := map[[2]string][]string{}
	for _, r := range spec.Routes {
		route[[2]string{r.Src, r.Dst}] = r.Links
	}
	n := len(spec.Flows)
	lat := make([]float64, n)
	pen := make([]float64, n)
	rem := make([]float64, n)
	finish := make([]float64, n)
	state := make([]int, n) // 0 not started, 1 active, 2 done
	for i, f := range spec.Flows {
		for _, l := range route[[2]string{f.Src, f.Dst}] {
			lat[i] += links[l].lat
		}
		pen[i] = lat[i]
		if pen[i] == 0 {
			pen[i] = 1
		}
		rem[i] = f.Bytes
	}
	now := 0.0
	for {
		// Rates by progressive filling over individual active flows.
		rate := make([]float64, n)
		fixed := make([]bool, n)
		for {
			best := math.Inf(1)
			var bestLinks []string
			for _, l := range spec.Links {
				used, sumw, maxw, any := 0.0, 0.0, 0.0, false
				for i, f := range spec.Flows {
					if state[i] != 1 {
						continue
					}
					c := 0.0
					for _, x := range route[[2]string{f.Src, f.Dst}] {
						if x == l.ID {
							c++
						}
					}
					if c == 0 {
						continue
					}
					if fixed[i] {
						used += c * rate[i]
						continue
					}
					any = true
					sumw += c / pen[i]
					maxw = math.Max(maxw, 1/pen[i])
				}
				if !any {
					continue
				}
				var level float64
				if links[l.ID].fat {
					level = l.Bandwidth / maxw
				} else {
					level = math.Max(l.Bandwidth-used, 0) / sumw
				}
				if level < best*(1-1e-12) {
					best, bestLinks = level, []string{l.ID}
				} else if level <= best*(1+1e-12) {
					bestLinks = append(bestLinks, l.ID)
				}
			}
			if bestLinks == nil {
				break
			}
			for i, f := range spec.Flows {
				if state[i] != 1 || fixed[i] {
					continue
				}
				for _, x := range route[[2]string{f.Src, f.Dst}] {
					for _, b := range bestLinks {
						if x == b {
							fixed[i] = true
						}
					}
				}
				if fixed[i] {
					rate[i] = best / pen[i]
				}
			}
		}
		// Next event.
		next := math.Inf(1)
		for i, f := range spec.Flows {
			switch state[i] {
			case 0:
				next = math.Min(next, f.Start+lat[i])
			case 1:
				next = math.Min(next, now+rem[i]/rate[i])
			}
		}
		if math.IsInf(next, 1) {
			return finish
		}
		dt := next - now
		for i := range spec.Flows {
			if state[i] == 1 {
				rem[i] -= rate[i] * dt
				if rem[i] <= 1e-6 {
					state[i], finish[i] = 2, next
				}
			}
		}
		now = next
		for i, f := range spec.Flows {
			if state[i] == 0 && f.Start+lat[i] <= now {
				if f.Bytes == 0 {
					state[i], finish[i] = 2, f.Start+lat[i]
				} else {
					state[i] = 1
				}
			}
		}
	}
}

// TestRoutesAddedDuringRun creates each route only when its first flow
// starts, while other flows are in flight (splitting link groups that have
// active routes), and checks every finish time against the same scenario
// with all routes created up front: they must be bit-identical.
func TestRoutesAddedDuringRun(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 2025))
	for trial := 0; trial < 100; trial++ {
		spec := randomPCISpec(rng, 1+rng.IntN(8), 1+rng.IntN(150))
		opts := Options{Check: trial%2 == 0}
		want := runSpec(t, spec, opts)

		eng := emulator.NewEngine()
		net := New(eng, opts)
		ids := addSpecLinks(t, net, spec)
		routes := map[[2]string]*Route{}
		route := func(src, dst string) *Route {
			key := [2]string{src, dst}
			if rt := routes[key]; rt != nil {
				return rt
			}
			for _, r := range spec.Routes {
				if r.Src == src && r.Dst == dst {
					var ls []LinkID
					for _, name := range r.Links {
						ls = append(ls, ids[name])
					}
					rt, err := net.NewRoute(ls)
					require.NoError(t, err)
					routes[key] = rt
					return rt
				}
			}
			t.Fatalf("no route %s->%s", src, dst)
			return nil
		}
		got := make([]float64, len(spec.Flows))
		for i, f := range spec.Flows {
			eng.Post(f.Start, func(int) {
				net.Send(route(f.Src, f.Dst), f.Bytes, func(int) { got[i] = eng.NowS() }, 0)
			}, 0)
		}
		eng.Run()
		for i := range got {
			require.Equal(t, math.Float64bits(want[i]), math.Float64bits(got[i]),
				"trial %d flow %d: lazy routes %.17g, up front %.17g", trial, i, got[i], want[i])
		}
	}
}

// TestComponentSearchesAgree runs random PCI-star scenarios (up to 72
// routes, bursts of flows) with each component search, link by link
// (collectLinks) and by link groups (collect): every finish time must be
// bit-identical.
func TestComponentSearchesAgree(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 2025))
	for trial := 0; trial < 100; trial++ {
		spec := randomPCISpec(rng, 1+rng.IntN(8), 1+rng.IntN(300))
		check := trial%4 == 0
		links := runSpec(t, spec, Options{Check: check, search: searchLinks})
		groups := runSpec(t, spec, Options{Check: check, search: searchGroups})
		auto := runSpec(t, spec, Options{Check: check})
		for i := range links {
			require.Equal(t, math.Float64bits(links[i]), math.Float64bits(groups[i]),
				"trial %d flow %d: links %.17g, groups %.17g", trial, i, links[i], groups[i])
			require.Equal(t, math.Float64bits(links[i]), math.Float64bits(auto[i]), "trial %d flow %d", trial, i)
		}
	}
}
