package cost

import (
	"testing"

	"github.com/starsim/starsim/runtime/machine"
	"github.com/stretchr/testify/assert"
)

// The routes of a StarPU-written platform (attila's layout): CUDA0 and
// CUDA1 behind one PCI bridge, CUDA2 behind another one reached through
// the host; plus a one-link peer pair and a bridge only one GPU uses.
func TestBusGPUsFollowsStarPU(t *testing.T) {
	up0 := []string{"CUDA0-RAM", "PCI:02:00.0 up", "PCI:[02-02] through", "PCI:[02-02] up", "PCI:[00-07] through", "PCI:[00-07] up", "Host"}
	up1 := []string{"CUDA1-RAM", "PCI:03:00.0 up", "PCI:[03-03] through", "PCI:[03-03] up", "PCI:[00-07] through", "PCI:[00-07] up", "Host"}
	up2 := []string{"CUDA2-RAM", "PCI:84:00.0 up", "PCI:[84-84] through", "PCI:[84-84] up", "PCI:[80-84] through", "PCI:[80-84] up", "Host"}
	up3 := []string{"CUDA3-RAM", "PCI:90:00.0 up", "PCI:[90-90] through", "PCI:[90-90] up", "Host"}
	routes := map[machine.Dir][]string{
		{Src: "CUDA0", Dst: "RAM"}: up0, {Src: "CUDA1", Dst: "RAM"}: up1, {Src: "CUDA2", Dst: "RAM"}: up2, {Src: "CUDA3", Dst: "RAM"}: up3,
		// Through the [00-07] bridge, which CUDA0 and CUDA1 both use.
		{Src: "CUDA0", Dst: "CUDA1"}: {"CUDA0-CUDA1", "PCI:03:00.0 down", "PCI:[03-03] through", "PCI:[03-03] down", "PCI:[00-07] through", "PCI:[02-02] up", "PCI:[02-02] through", "PCI:02:00.0 up"},
		// Through the host bridge.
		{Src: "CUDA0", Dst: "CUDA2"}: {"CUDA0-CUDA2", "PCI:84:00.0 down", "Host", "PCI:02:00.0 up"},
		// A direct link.
		{Src: "CUDA2", Dst: "CUDA3"}: {"CUDA2-CUDA3"},
		// Through [90-90], which only CUDA3 uses.
		{Src: "CUDA1", Dst: "CUDA3"}: {"CUDA1-CUDA3", "PCI:90:00.0 down", "PCI:[90-90] through", "PCI:03:00.0 up"},
		// No bridge named at all.
		{Src: "CUDA3", Dst: "CUDA0"}: {"CUDA3-CUDA0", "switch"},
	}
	nodes := []string{"RAM", "CUDA0", "CUDA1", "CUDA2", "CUDA3"}
	g := BusGPUs(routes, nodes, 4)
	tests := []struct {
		src, dst, want int
	}{
		{0, 1, 4}, {1, 0, 4}, // RAM buses: every GPU
		{1, 2, 4}, // bridge shared by two GPUs: every GPU
		{1, 3, 4}, // through Host
		{3, 4, 1}, // direct link
		{2, 4, 1}, // bridge of one GPU
		{4, 1, 4}, // no bridge found
		{2, 1, 4}, // no route: through RAM
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, g[tc.src][tc.dst], "%s->%s", nodes[tc.src], nodes[tc.dst])
	}
}
