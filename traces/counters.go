package traces

import (
	"github.com/starsim/starsim/runtime/graph"
	"github.com/starsim/starsim/runtime/machine"
)

// runCounters follows the counters a run's traces show, from the runtime's
// observer events: ready tasks (pushes - pops), bytes allocated per memory
// node, bytes in flight per transfer direction. The Chrome writer and the
// panel recorder both use it, so they show the same values.
//
// Memory nodes and directions get indexes in the order they are first
// seen; onNode and onDir (may be nil) are called then, before the event
// that revealed them changes a value.
type runCounters struct {
	onNode func(idx int, name string)
	onDir  func(idx int, name, src, dst string)

	nodeIdx map[string]int
	nodes   []string
	dirIdx  map[[2]int]int
	open    map[uint64]openXfer

	ready    int64
	used     []int64 // bytes allocated, per node
	inFlight []int64 // bytes being copied, per direction
}

type openXfer struct {
	dir   int
	bytes int64
}

func newRunCounters() *runCounters {
	return &runCounters{nodeIdx: map[string]int{}, dirIdx: map[[2]int]int{}, open: map[uint64]openXfer{}}
}

// node returns the index of memory node n.
func (c *runCounters) node(n string) int {
	if i, ok := c.nodeIdx[n]; ok {
		return i
	}
	i := len(c.nodes)
	c.nodeIdx[n] = i
	c.nodes = append(c.nodes, n)
	c.used = append(c.used, 0)
	if c.onNode != nil {
		c.onNode(i, n)
	}
	return i
}

// dir returns the index of direction src->dst.
func (c *runCounters) dir(src, dst string) int {
	k := [2]int{c.node(src), c.node(dst)}
	if d, ok := c.dirIdx[k]; ok {
		return d
	}
	d := len(c.inFlight)
	c.dirIdx[k] = d
	c.inFlight = append(c.inFlight, 0)
	if c.onDir != nil {
		c.onDir(d, machine.Dir{Src: src, Dst: dst}.String(), src, dst)
	}
	return d
}

// push and pop count the scheduler's ready tasks.
func (c *runCounters) push() { c.ready++ }
func (c *runCounters) pop()  { c.ready-- }

// memory applies an allocation ("allocate") or a release ("free",
// "evict") of h's copy on node; ok is false for other events.
func (c *runCounters) memory(node, event string, h *graph.Handle) (idx int, ok bool) {
	if h == nil {
		return 0, false
	}
	var delta int64
	switch event {
	case "allocate":
		delta = h.SizeBytes
	case "free", "evict":
		delta = -h.SizeBytes
	default:
		return 0, false
	}
	idx = c.node(node)
	c.used[idx] += delta
	return idx, true
}

// transferStart opens copy id and returns its direction.
func (c *runCounters) transferStart(id uint64, src, dst string, bytes int64) int {
	d := c.dir(src, dst)
	c.open[id] = openXfer{dir: d, bytes: bytes}
	c.inFlight[d] += bytes
	return d
}

// transferEnd closes copy id; ok is false for an unknown id.
func (c *runCounters) transferEnd(id uint64) (dir int, ok bool) {
	x, ok := c.open[id]
	if !ok {
		return 0, false
	}
	delete(c.open, id)
	c.inFlight[x.dir] -= x.bytes
	return x.dir, true
}
