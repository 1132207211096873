package calibrate

import (
	"fmt"
	"strconv"

	"github.com/starsim/starsim/platforms"
)

// StarPUNetworkConfig is the SimGrid network configuration StarPU writes in
// its platform files (CM02 with TCP-gamma off and unit factors).
var StarPUNetworkConfig = []Prop{
	{"network/TCP-gamma", "-1"},
	{"network/latency-factor", "1"},
	{"network/bandwidth-factor", "1"},
	{"network/weight-S", "0.0"},
	{"network/crosstraffic", "0"},
}

// BuildPlatform returns the SimGrid platform of a calibration, laid out as
// StarPU's generated platforms: hosts MAIN, CPU0.., each device (props model,
// memsize, memcpy_peer) and RAM; the calibration's links and one-way routes;
// StarPU's network config unless the file has its own. Route endpoints that
// are not memory nodes (e.g. StarPU's DISK0) become hosts of speed 1.
func BuildPlatform(f *File) (*platforms.Platform, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	p := &platforms.Platform{ZoneID: "AS0", Routing: "Full"}
	cfg := f.Network.Config
	if len(cfg) == 0 {
		cfg = StarPUNetworkConfig
	}
	for _, c := range cfg {
		p.Config = append(p.Config, platforms.Prop{ID: c.ID, Value: c.Value})
	}
	hosts := map[string]bool{}
	add := func(h platforms.Host) {
		hosts[h.ID] = true
		p.Hosts = append(p.Hosts, h)
	}
	add(platforms.Host{ID: "MAIN", SpeedFlops: 1})
	for i := 0; i < f.Machine.CPUCores; i++ {
		add(platforms.Host{ID: fmt.Sprintf("CPU%d", i), SpeedFlops: f.Machine.CPUSpeedFlops})
	}
	for _, d := range f.Machine.Devices {
		peer := "0"
		if d.PeerAccess {
			peer = "1"
		}
		props := []platforms.Prop{{ID: "model", Value: d.Model}, {ID: "memsize", Value: strconv.FormatInt(d.MemoryBytes, 10)}}
		if d.Kind == "cuda" {
			props = append(props, platforms.Prop{ID: "memcpy_peer", Value: peer})
		}
		add(platforms.Host{ID: d.Name, SpeedFlops: f.Machine.CPUSpeedFlops, Props: props})
	}
	add(platforms.Host{ID: "RAM", SpeedFlops: 1})
	for _, r := range f.Network.Routes {
		for _, h := range []string{r.Src, r.Dst} {
			if !hosts[h] {
				add(platforms.Host{ID: h, SpeedFlops: 1})
			}
		}
	}
	for _, l := range f.Network.Links {
		sh := platforms.Shared
		if l.Sharing == "FATPIPE" {
			sh = platforms.Fatpipe
		}
		p.Links = append(p.Links, platforms.Link{ID: l.ID, BandwidthBps: l.BandwidthBps, LatencyS: l.LatencyS, Sharing: sh})
	}
	for _, r := range f.Network.Routes {
		p.Routes = append(p.Routes, platforms.Route{Src: r.Src, Dst: r.Dst, Links: append([]string(nil), r.Links...)})
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return p, nil
}
