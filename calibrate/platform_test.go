package calibrate

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/starsim/starsim/emulator/network"
	"github.com/starsim/starsim/platforms"
	"github.com/starsim/starsim/platforms/netsim"
)

func TestBuildPlatformDefault(t *testing.T) {
	f := Default()
	p, err := BuildPlatform(f)
	require.NoError(t, err)
	h, ok := p.Host("CUDA2")
	require.True(t, ok)
	mem, _ := h.Prop("memsize")
	assert.Equal(t, "34359738368", mem)
	model, _ := h.Prop("model")
	assert.Equal(t, "Tesla V100-PCIE-32GB", model)
	_, ok = p.Host("CPU39")
	assert.True(t, ok)
	assert.Equal(t, "network/TCP-gamma", p.Config[0].ID)
	// Every calibration transfer direction with a route has the same route.
	for _, r := range f.Network.Routes {
		links, ok := p.Route(r.Src, r.Dst)
		require.True(t, ok)
		assert.Equal(t, r.Links, links)
	}
	// A lone RAM->CUDA0 tile crosses RAM-CUDA0 and the socket link: its time
	// is the route latency plus bytes over the narrowest link.
	res := runOne(t, p, "RAM", "CUDA0", 3686400)
	tr := f.Transfers[0]
	require.Equal(t, "RAM", tr.Src)
	assert.InDelta(t, tr.PredictedLatencyS+3686400/tr.PredictedBandwidthBps, res, 1e-15)
}

// runOne simulates one transfer alone on the platform and returns its duration.
func runOne(t *testing.T, p *platforms.Platform, src, dst string, bytes float64) float64 {
	t.Helper()
	sc := &netsim.Scenario{File: "x", Flows: []netsim.Flow{{ID: "f", Src: src, Dst: dst, Bytes: bytes}}}
	res, err := netsim.RunOn(netsim.PlatformTopology(p), sc, netsim.Options{Network: network.Options{Check: true}})
	require.NoError(t, err)
	return res.Flows[0].DurationS
}
