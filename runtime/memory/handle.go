package memory

import (
	"fmt"
	"math/bits"

	"github.com/starsim/starsim/runtime/graph"
)

// State is a copy's MSI state.
type State uint8

// MSI states.
const (
	Invalid State = iota
	Shared
	Owner
)

// Level is a request's urgency, StarPU's prefetch levels: lower is more
// urgent. It decides what a reclaim may evict.
type Level uint8

// Request levels.
const (
	Fetch Level = iota
	TaskPrefetch
	Prefetch
	Idle
)

var levelNames = [...]string{"fetch", "task-prefetch", "prefetch", "idle"}

// String is the level's name in decision logs ("task-prefetch").
func (l Level) String() string { return levelNames[l] }

// MaxNodes bounds the memory nodes: a handle's bit sets have 64 bits.
const MaxNodes = 64

// Handle is the runtime's state of one piece of data: its copy on each
// memory node.
//
// Bit n of valid, allocated and loading mirrors the copy on node n: state
// not Invalid, allocated, a copy into it under way. The schedulers' queries
// at every push and pop (transfer penalties, ready-first scans) read these
// bits instead of one replica, a cache line, per node. They and size come
// first: 32 bytes that never straddle two cache lines, the struct being
// padded to 96 bytes (the slab New makes starts on a page).
type Handle struct {
	valid, allocated, loading uint64
	size                      int64 // spec.SizeBytes, read on hot paths without touching spec
	spec                      *graph.Handle
	reps                      []Replica
	// version counts writes; a write-back that started before a write
	// must not make its stale copy valid.
	version uint64
	m       *Memory // its Memory, which may keep its cells (Cell)
	id      int32
	_       [12]byte // to 96 bytes: see valid
}

// Spec is the handle as the application registered it.
func (h *Handle) Spec() *graph.Handle { return h.spec }

// ID is the handle's index in its graph.
func (h *Handle) ID() int { return int(h.id) }

// Size is the handle's size in bytes.
func (h *Handle) Size() int64 { return h.size }

// Version counts the writes to the data so far.
func (h *Handle) Version() uint64 { return h.version }

// Ready is the bit set of nodes holding an allocated, valid copy.
func (h *Handle) Ready() uint64 { return h.valid & h.allocated }

// Loading is the bit set of nodes a copy is being made to.
func (h *Handle) Loading() uint64 { return h.loading }

// NValid counts the allocated copies in a valid state.
func (h *Handle) NValid() int { return bits.OnesCount64(h.Ready()) }

// Rep is the handle's copy on node n.
func (h *Handle) Rep(n int) *Replica { return &h.reps[n] }

// NonReady is what h adds to a task's NonReadyBytes on the node of bit:
// its size if read and not valid there (and if not being loaded there
// either), and if not allocated there.
func (h *Handle) NonReady(read bool, bit uint64) (nonReady, nonLoading, nonAllocated int64) {
	if read && h.Ready()&bit == 0 {
		nonReady = h.size
		if h.loading&bit == 0 {
			nonLoading = h.size
		}
	}
	if h.allocated&bit == 0 {
		nonAllocated = h.size
	}
	return
}

// Cell mirrors one handle's copy on one node. State holds its size (bits
// CellSizeShift and up) and whether the copy is ready (valid and
// allocated), being loaded, allocated (bits CellReady, CellLoading,
// CellAllocated). Stamp changes with State, to a value larger than every
// stamp before it: a reader that derived something from cells knows it
// is still true while their stamps are below the largest it saw, plus 1.
// The cells of a node are one dense array, so a scan of many tasks' data
// on one node (the ready-first pops) reads a few cache lines where the
// handles, 96 bytes apart, would each cost a miss.
type Cell struct {
	State, Stamp uint64
}

// Cell state bits.
const (
	CellReady     = 1
	CellLoading   = 2
	CellAllocated = 4
	CellSizeShift = 3
)

// Cell is h's cell on node n; it changes as the copy does. Nil unless h's
// Memory keeps cells (Memory.EnableCells).
func (h *Handle) Cell(n int) *Cell {
	if h.m == nil || h.m.cells == nil {
		return nil
	}
	return &h.m.cells[n*len(h.m.handles)+int(h.id)]
}

// cellState is what the State of h's cell on node n must be.
func (h *Handle) cellState(n int) uint64 {
	bit := uint64(1) << uint(n)
	c := uint64(h.size) << CellSizeShift
	if h.Ready()&bit != 0 {
		c |= CellReady
	}
	if h.loading&bit != 0 {
		c |= CellLoading
	}
	if h.allocated&bit != 0 {
		c |= CellAllocated
	}
	return c
}

// sync brings h's cell on node n up to date with its bit sets, when m
// keeps cells: a new state gets a new stamp.
func (m *Memory) sync(h *Handle, n int) {
	if m.cells != nil {
		c := &m.cells[n*len(m.handles)+int(h.id)]
		if st := h.cellState(n); st != c.State {
			c.State, c.Stamp = st, m.stamp
			m.stamp++
		}
	}
}

// Buf is one buffer of a task: its data and access mode, side by side for
// the loops over a task's buffers.
type Buf struct {
	H    *Handle
	Mode graph.Mode
}

// NonReadyBytes sizes the buffers' data on node: not valid there (read
// ones only), not valid nor being loaded, not allocated (StarPU's
// ready-first pops compare these).
func NonReadyBytes(bufs []Buf, node int) (nonReady, nonLoading, nonAllocated int64) {
	bit := uint64(1) << uint(node)
	for _, b := range bufs {
		r, l, a := b.H.NonReady(b.Mode&graph.R != 0, bit)
		nonReady, nonLoading, nonAllocated = nonReady+r, nonLoading+l, nonAllocated+a
	}
	return
}

// Replica is a handle's copy on one memory node. Its fields are sized and
// ordered for 72 bytes: the replicas are read at random, at every push,
// pop and copy, and with 88 bytes those of a few thousand handles
// outgrew a core's L2 cache.
type Replica struct {
	h *Handle
	// stamp orders the node's LRU lists (head smallest).
	stamp int64
	// LRU list of the node's allocated replicas (head: evicted first).
	prev, next *Replica
	list       *lruList
	slot       subSlot // where the buffer lives, when suballocated
	refs       int32   // tasks that fetched it and have not finished (< 2^31 tasks)
	protect    int32   // task prefetches pending (not evictable by prefetches)
	node       uint8   // < MaxNodes
	state      State
	allocated  bool
	incoming   bool // a copy into it is under way (mirrors h.loading)
	evicting   bool // being written back home before its eviction
	// shared mirrors h.NValid() >= 2: a valid copy that is shared is
	// valid elsewhere too, so a reclaim may drop it (see needsReindex).
	shared bool
	// droppable says r is in its list's droppable index.
	droppable bool
}

// Handle is the data r is a copy of.
func (r *Replica) Handle() *Handle { return r.h }

// Node is r's memory node.
func (r *Replica) Node() int { return int(r.node) }

// State is r's MSI state.
func (r *Replica) State() State { return r.state }

// Allocated reports whether r has a buffer.
func (r *Replica) Allocated() bool { return r.allocated }

// Refs counts the tasks that fetched r and have not ended.
func (r *Replica) Refs() int { return int(r.refs) }

// Protected counts the task prefetches pending on r.
func (r *Replica) Protected() int { return int(r.protect) }

// setBit sets or clears bit n of *set.
func setBit(set *uint64, n int, on bool) {
	if on {
		*set |= 1 << uint(n)
	} else {
		*set &^= 1 << uint(n)
	}
}

// setAllocated marks r allocated or not, with its handle's bit.
func (r *Replica) setAllocated(on bool) {
	r.allocated = on
	setBit(&r.h.allocated, int(r.node), on)
}

// checkBits verifies that h's bit sets mirror its replicas and its cells
// the bit sets, and that no copy
// is valid without being allocated (NValid and the shared flags, updated by
// SetState only, rely on it).
func (h *Handle) checkBits() error {
	if h.valid&^h.allocated != 0 {
		return fmt.Errorf("check: %s valid on unallocated nodes (bits %b)", h.spec.Name, h.valid&^h.allocated)
	}
	for n := range h.reps {
		r := &h.reps[n]
		bit := uint64(1) << uint(n)
		if (h.valid&bit != 0) != (r.state != Invalid) || (h.allocated&bit != 0) != r.allocated || (h.loading&bit != 0) != r.incoming {
			return fmt.Errorf("check: %s on node %d: bits valid/allocated/loading %t/%t/%t, replica %t/%t/%t", h.spec.Name, n,
				h.valid&bit != 0, h.allocated&bit != 0, h.loading&bit != 0, r.state != Invalid, r.allocated, r.incoming)
		}
		if c := h.Cell(n); c != nil && c.State != h.cellState(n) {
			return fmt.Errorf("check: %s on node %d: cell %#x, bit sets give %#x", h.spec.Name, n, c.State, h.cellState(n))
		}
	}
	return nil
}
