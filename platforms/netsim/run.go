package netsim

import (
	"fmt"
	"math"

	"github.com/starsim/starsim/emulator"
	"github.com/starsim/starsim/emulator/network"
	"github.com/starsim/starsim/internal/srcerr"
	"github.com/starsim/starsim/platforms"
)

// FlowResult is one flow's outcome (seconds, bytes).
type FlowResult struct {
	ID        string  `json:"id"`
	Src       string  `json:"src"`
	Dst       string  `json:"dst"`
	Bytes     float64 `json:"bytes"`
	StartS    float64 `json:"start"`
	FinishS   float64 `json:"finish"`
	DurationS float64 `json:"duration"`
}

// Result lists the flows in input order and the makespan (latest finish, 0
// without flows), in seconds.
type Result struct {
	Flows     []FlowResult `json:"flows"`
	MakespanS float64      `json:"makespan"`
}

// Topology is a set of links and one-way routes, from a scenario or a
// platform, ready to build an emulator network.
type Topology struct {
	Links  []Link
	Routes map[[2]string][]string
}

// TopologyOf returns the scenario's own links and routes, or those of its
// platform file.
func TopologyOf(sc *Scenario) (*Topology, error) {
	if sc.PlatformFile == "" {
		t := &Topology{Links: sc.Links, Routes: map[[2]string][]string{}}
		for _, r := range sc.Routes {
			t.Routes[[2]string{r.Src, r.Dst}] = r.Links
		}
		return t, nil
	}
	p, err := platforms.ParseFile(sc.PlatformFile)
	if err != nil {
		return nil, err
	}
	return PlatformTopology(p), nil
}

// PlatformTopology converts a platform's links and directed routes.
func PlatformTopology(p *platforms.Platform) *Topology {
	t := &Topology{Routes: map[[2]string][]string{}}
	for _, l := range p.Links {
		t.Links = append(t.Links, Link{ID: l.ID, BandwidthBps: l.BandwidthBps, LatencyS: l.LatencyS, Sharing: string(l.Sharing), Line: l.Line})
	}
	for _, r := range p.DirectedRoutes() {
		t.Routes[[2]string{r.Src, r.Dst}] = r.Links
	}
	return t
}

// Options select the network model. Times are computed exactly; SimGrid's
// default surf/precision (events under 1e-9 s apart merged) is not mimicked.
type Options struct {
	Network network.Options
}

// Run simulates every flow of sc on its topology.
func Run(sc *Scenario, opts Options) (*Result, error) {
	topo, err := TopologyOf(sc)
	if err != nil {
		return nil, err
	}
	return RunOn(topo, sc, opts)
}

// RunOn simulates the flows of sc on topo (sc's own links and routes are
// ignored).
func RunOn(topo *Topology, sc *Scenario, opts Options) (*Result, error) {
	var err error
	eng := emulator.NewEngine()
	net := network.New(eng, opts.Network)
	ids := make(map[string]network.LinkID, len(topo.Links))
	lat := make(map[string]float64, len(topo.Links))
	for _, l := range topo.Links {
		sh := network.Shared
		if l.Sharing == "FATPIPE" {
			sh = network.Fatpipe
		}
		id, err := net.AddLink(l.ID, l.BandwidthBps, l.LatencyS, sh)
		if err != nil {
			file := sc.File
			if sc.PlatformFile != "" {
				file = sc.PlatformFile
			}
			return nil, srcerr.Errorf(file, l.Line, "%v", err)
		}
		lat[l.ID] = l.LatencyS
		ids[l.ID] = id
	}
	routes := map[[2]string]*network.Route{}
	res := &Result{Flows: make([]FlowResult, len(sc.Flows))}
	for i, f := range sc.Flows {
		key := [2]string{f.Src, f.Dst}
		rt := routes[key]
		if rt == nil {
			names, ok := topo.Routes[key]
			if !ok {
				return nil, srcerr.Errorf(sc.File, f.Line, "flow %q: no route from %q to %q in %s", f.ID, f.Src, f.Dst, sc.PlatformFile)
			}
			links := make([]network.LinkID, len(names))
			for j, n := range names {
				links[j] = ids[n]
			}
			if rt, err = net.NewRoute(links); err != nil {
				return nil, srcerr.Errorf(sc.File, f.Line, "flow %q: %v", f.ID, err)
			}
			routes[key] = rt
		}
		res.Flows[i] = FlowResult{ID: f.ID, Src: f.Src, Dst: f.Dst, Bytes: f.Bytes, StartS: f.StartS, FinishS: math.NaN()}
		out := &res.Flows[i]
		bytes := f.Bytes
		eng.Post(f.StartS, func(int) {
			net.Send(rt, bytes, func(int) {
				out.FinishS = eng.NowS()
				out.DurationS = out.FinishS - out.StartS
			}, 0)
		}, 0)
	}
	eng.Run()
	for i, f := range res.Flows {
		if math.IsNaN(f.FinishS) {
			return nil, fmt.Errorf("internal error: flow %q never finished", f.ID)
		}
		// A flow that takes time must not end when it starts: its time
		// would be lost to float64 rounding (a start far beyond the flows'
		// own times) or beyond float64 (an infinite finish).
		in := sc.Flows[i]
		needs := in.Bytes > 0
		for _, n := range topo.Routes[[2]string{in.Src, in.Dst}] {
			needs = needs || lat[n] > 0
		}
		if math.IsInf(f.FinishS, 0) || (needs && !(f.DurationS > 0)) {
			return nil, srcerr.Errorf(sc.File, in.Line, "flow %q: its duration is lost to float64 rounding (start %v s, finish %v s): give times and sizes of comparable scales", f.ID, f.StartS, f.FinishS)
		}
		res.MakespanS = math.Max(res.MakespanS, f.FinishS)
	}
	return res, nil
}
