package traces

import (
	"github.com/starsim/starsim/runtime/graph"
	"github.com/starsim/starsim/runtime/machine"
)

// Counters follows the counters a run's traces show, from the runtime's
// observer events: ready tasks (pushes - pops), bytes allocated per memory
// node, bytes in flight per transfer direction. The Chrome writer and the
// panel recorder both use it, so they show the same values.
//
// Memory nodes and directions get indexes in the order they are first
// seen; OnNode and OnDir (may be nil) are called then, before the event
// that revealed them changes a value.
type Counters struct {
	OnNode func(idx int, name string)
	OnDir  func(idx int, name, src, dst string)
	// Nodes, Ready, Used and InFlight are the values: read them, the
	// methods change them.

	nodeIdx map[string]int
	Nodes   []string
	dirIdx  map[[2]int]int
	open    map[uint64]openXfer

	Ready    int64
	Used     []int64 // bytes allocated, per node
	InFlight []int64 // bytes being copied, per direction
}

type openXfer struct {
	dir   int
	bytes int64
}

// NewCounters returns counters at zero.
func NewCounters() *Counters {
	return &Counters{nodeIdx: map[string]int{}, dirIdx: map[[2]int]int{}, open: map[uint64]openXfer{}}
}

// Node returns the index of memory node n.
func (c *Counters) Node(n string) int {
	if i, ok := c.nodeIdx[n]; ok {
		return i
	}
	i := len(c.Nodes)
	c.nodeIdx[n] = i
	c.Nodes = append(c.Nodes, n)
	c.Used = append(c.Used, 0)
	if c.OnNode != nil {
		c.OnNode(i, n)
	}
	return i
}

// Dir returns the index of direction src->dst.
func (c *Counters) Dir(src, dst string) int {
	k := [2]int{c.Node(src), c.Node(dst)}
	if d, ok := c.dirIdx[k]; ok {
		return d
	}
	d := len(c.InFlight)
	c.dirIdx[k] = d
	c.InFlight = append(c.InFlight, 0)
	if c.OnDir != nil {
		c.OnDir(d, machine.Dir{Src: src, Dst: dst}.String(), src, dst)
	}
	return d
}

// Push counts a task pushed to the scheduler (ready).
func (c *Counters) Push() { c.Ready++ }

// Pop counts a task popped from the scheduler.
func (c *Counters) Pop() { c.Ready-- }

// Memory applies an allocation ("allocate") or a release ("free",
// "evict") of h's copy on node; ok is false for other events.
func (c *Counters) Memory(node, event string, h *graph.Handle) (idx int, ok bool) {
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
	idx = c.Node(node)
	c.Used[idx] += delta
	return idx, true
}

// TransferStart opens copy id and returns its direction.
func (c *Counters) TransferStart(id uint64, src, dst string, bytes int64) int {
	d := c.Dir(src, dst)
	c.open[id] = openXfer{dir: d, bytes: bytes}
	c.InFlight[d] += bytes
	return d
}

// TransferEnd closes copy id; ok is false for an unknown id.
func (c *Counters) TransferEnd(id uint64) (dir int, ok bool) {
	x, ok := c.open[id]
	if !ok {
		return 0, false
	}
	delete(c.open, id)
	c.InFlight[x.dir] -= x.bytes
	return x.dir, true
}
