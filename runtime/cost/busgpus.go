package cost

import (
	"strings"

	"github.com/starsim/starsim/runtime/machine"
)

// BusGPUs returns, per [src][dst] memory-node pair, the GPU count StarPU
// multiplies a transfer prediction's bandwidth term by (twice that count:
// starpu_transfer_predict). It reproduces how StarPU over SimGrid fills
// starpu_bus_get_ngpus (_starpu_simgrid_count_ngpus in src/core/simgrid.c),
// then replaces any count but 1 by the number of GPUs in use:
//
//   - buses to or from RAM are never counted: every GPU in use;
//   - a device pair whose route is one link (a direct link): 1;
//   - a route through the link named "Host" (crossing the host bridge):
//     every GPU in use;
//   - otherwise the PCI bridge of the route is its last link named
//     "... through" before the first "... up" link, and the count is the
//     number of GPUs whose route to RAM crosses that bridge: 1 if only one
//     does, else every GPU in use.
//
// Device pairs without a route (copies through RAM) are predicted hop by
// hop, with the RAM buses' count. Link names follow StarPU's platform
// writer (hwloc PCI bridges); other platforms fall in the first cases.
func BusGPUs(routes map[machine.Dir][]string, nodes []string, ngpus int) [][]int {
	all := ngpus
	out := make([][]int, len(nodes))
	for i := range out {
		out[i] = make([]int, len(nodes))
		for j := range out[i] {
			out[i][j] = all
		}
	}
	for i := 1; i < len(nodes); i++ {
		for j := 1; j < len(nodes); j++ {
			if i == j {
				continue
			}
			r, ok := routes[machine.Dir{Src: nodes[i], Dst: nodes[j]}]
			if !ok {
				continue
			}
			if n := bridgeGPUs(routes, nodes, r); n == 1 {
				out[i][j] = 1
			}
		}
	}
	return out
}

// bridgeGPUs counts the GPUs in use behind route r's PCI bridge, as
// _starpu_simgrid_count_ngpus does; 0 when it finds no bridge.
func bridgeGPUs(routes map[machine.Dir][]string, nodes []string, r []string) int {
	if len(r) == 1 {
		return 1
	}
	for _, l := range r {
		if l == "Host" {
			return 0
		}
	}
	through := ""
	for _, l := range r {
		if strings.HasSuffix(l, " through") {
			through = l
		} else if strings.HasSuffix(l, " up") {
			break
		}
	}
	if through == "" {
		return 0
	}
	n := 0
	for g := 1; g < len(nodes); g++ {
		for _, l := range routes[machine.Dir{Src: nodes[g], Dst: "RAM"}] {
			if l == through {
				n++
				break
			}
		}
	}
	return n
}
