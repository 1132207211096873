package memory

import (
	"fmt"
	"math/bits"

	"github.com/starsim/starsim/runtime/graph"
)

// Memory is the data's copies over the memory nodes: node 0 is RAM, the
// home of every handle, the others are GPUs of limited capacity.
type Memory struct {
	Nodes   []*Node
	handles []Handle
	// Allocations counts the buffers obtained from devices (suballocator
	// chunks and large buffers), Evictions the copies evicted.
	Allocations, Evictions int
	// CheckLRU verifies the LRU lists before each reclaim; the first
	// failure is kept (Err).
	CheckLRU bool
	err      error
	// Test hooks, for the tests of the runtime's --check: OverCapacity
	// lets allocations exceed a node's capacity, NoInvalidate leaves the
	// other copies valid when a task writes.
	OverCapacity, NoInvalidate bool
	tidy                       []*Handle // scratch of Tidy
	// cells[n*len(handles)+h] is handle h's cell on node n (Handle.Cell),
	// once EnableCells made them; stamp is the next cell change's stamp.
	cells []Cell
	stamp uint64
}

// EnableCells makes the handles' cells (Handle.Cell) and keeps them up to
// date from then on. Their upkeep costs a little at each change of a
// copy's state: only the runs whose scheduler reads them enable them.
func (m *Memory) EnableCells() {
	if m.cells != nil {
		return
	}
	m.cells = make([]Cell, len(m.handles)*len(m.Nodes))
	for i := range m.handles {
		for n := range m.Nodes {
			m.sync(&m.handles[i], n)
		}
	}
}

// Node is one memory node's allocation state.
type Node struct {
	ID       int
	Name     string // "RAM", "CUDA0"
	Capacity int64  // bytes; 0: unlimited
	used     int64  // bytes of the copies allocated here
	// devUsed is the device memory taken (bytes): whole suballocator chunks
	// and direct buffers; Capacity bounds it. peak is its maximum.
	devUsed int64
	peak    int64
	// main and prot are the node's allocated copies in LRU order: prot
	// those protected by a pending task prefetch, main the others (see
	// lruList).
	main, prot lruList
	// ord links both lists' copies in stamp order, by handle ID (see
	// ordLink); ordHead and ordTail end it (-1: empty). reps[i*stride] is
	// handle i's copy on the node.
	ord              []ordLink
	ordHead, ordTail int32
	reps             []Replica
	stride           int
	// sub holds a device's buffers of at most 4 MiB (StarPU's
	// suballocator); a new chunk costs one device allocation.
	sub    subAllocator
	direct int64 // bytes of direct (non-suballocated) buffers
	// evictGen changes whenever a copy may have become evictable; a reclaim
	// that found nothing to evict is not retried until it changes.
	evictGen uint64
	noVictim [4]uint64 // evictGen+1 at the last fruitless reclaim, per level
	// nalloc and ndirty count allocated device copies and the valid ones
	// whose home copy is invalid (a write-back needed before eviction). An
	// invalid copy counts as clean: StarPU's chunk keeps its flag when
	// another node's write invalidates it, clean for a copy that was never
	// written there (one that was stays dirty in StarPU; a per-chunk flag,
	// tried, agreed worse with the peer: docs/fidelity.md).
	nalloc, ndirty int
	tidying        int    // tidy write-backs under way
	tidyGen        uint64 // evictGen+1 at the last tidy scan
	// tailStamp and headStamp are the last stamps given by pushTail
	// (increasing) and moveHead (decreasing), so stamps follow list order.
	tailStamp, headStamp int64
	// indexed: the lists' droppable indexes are kept. They are built at
	// the node's first reclaim, so nodes that never fill pay nothing.
	indexed bool
}

// Used is the bytes of the copies allocated on the node.
func (n *Node) Used() int64 { return n.used }

// DevUsed is the device memory the node's buffers take (whole chunks).
func (n *Node) DevUsed() int64 { return n.devUsed }

// Peak is the most device memory taken at once.
func (n *Node) Peak() int64 { return n.peak }

// Changed says that a copy on the node may have become evictable: a
// reclaim that found nothing is worth trying again.
func (n *Node) Changed() { n.evictGen++ }

// NodeSpec is a memory node: its name and capacity (bytes, 0: unlimited).
type NodeSpec struct {
	Name          string
	CapacityBytes int64
}

// New makes the memory nodes (nodes[0] is RAM; at most MaxNodes).
// hiddenHoles reproduces StarPU 1.4's suballocator accident (see
// subAllocator.staleMax).
func New(nodes []NodeSpec, hiddenHoles bool) (*Memory, error) {
	if len(nodes) > MaxNodes {
		return nil, fmt.Errorf("%d memory nodes: at most %d are supported", len(nodes), MaxNodes)
	}
	m := &Memory{}
	for i, spec := range nodes {
		n := &Node{ID: i, Name: spec.Name, Capacity: spec.CapacityBytes}
		n.sub.staleMax = hiddenHoles
		m.Nodes = append(m.Nodes, n)
	}
	return m, nil
}

// SetHandles makes the state of the graph's handles, every one valid at
// home only. Each kind of state lives in one slab.
func (m *Memory) SetHandles(handles []graph.Handle) error {
	m.handles = make([]Handle, len(handles))
	m.cells = nil // (EnableCells, for these handles)
	nn := len(m.Nodes)
	rslab := make([]Replica, len(handles)*nn)
	for n, node := range m.Nodes {
		node.ord, node.ordHead, node.ordTail = make([]ordLink, len(handles)), -1, -1
		node.reps, node.stride = rslab[min(n, len(rslab)):], nn // (no handles: empty)
	}
	for i := range handles {
		h := &handles[i]
		if h.ID != i {
			return fmt.Errorf("handle %d has ID %d", i, h.ID)
		}
		hs := &m.handles[i]
		hs.spec, hs.size, hs.id, hs.reps, hs.m = h, h.SizeBytes, int32(i), rslab[i*nn:(i+1)*nn:(i+1)*nn], m
		for n := range hs.reps {
			hs.reps[n] = Replica{h: hs, node: uint8(n)}
		}
		hs.reps[0].state = Owner // data starts valid at home (RAM)
		hs.reps[0].setAllocated(true)
		hs.valid = 1
	}
	return nil
}

// Handle is handle id's state.
func (m *Memory) Handle(id int) *Handle { return &m.handles[id] }

// NumHandles is the number of handles.
func (m *Memory) NumHandles() int { return len(m.handles) }

// Err is the first failure Check found.
func (m *Memory) Err() error { return m.err }

// suballocated says whether a copy of size bytes on node n comes out of
// the suballocator (device buffers of at most 4 MiB).
func suballocated(n int, size int64) bool { return n != 0 && size <= subMaxBytes }

// AllocKind says how an allocation went.
type AllocKind uint8

// Allocation outcomes.
const (
	// Allocated: the copy has a buffer out of the node's free room (a
	// suballocator slot, or RAM); no cost.
	Allocated AllocKind = iota
	// NewBuffer: the copy has a buffer the device allocated (a new 32 MiB
	// chunk, or a direct buffer): a cudaMalloc's cost.
	NewBuffer
	// Reuse: the node is full; the copy may take the buffer of Victim,
	// which needs no write-back (Memory.Reuse drops Victim and commits).
	Reuse
	// NeedReclaim: the node is full and no copy of the same size can be
	// dropped: the generic reclaim must make room (NextVictim).
	NeedReclaim
	// NoRoom: the node is full and the request may not evict (an idle
	// request), or a reclaim found nothing evictable since the node last
	// changed.
	NoRoom
)

// Alloc is the outcome of Allocate.
type Alloc struct {
	Kind   AllocKind
	Victim *Replica // with Reuse
}

// Allocate gives h's copy on node n a buffer for a request of level lvl,
// as starpu_malloc_on_node_flags and StarPU 1.4's allocator
// (_starpu_allocate_interface) do: a suballocator slot (a new chunk if
// none is free and the device has 32 MiB left), or a direct buffer. When
// the device is full it looks, for any level but Idle, for the least
// recently used copy of the same size that needs no write-back (invalid,
// or valid elsewhere: try_to_reuse_potentially_in_use_mc; StarPU matches
// the data's allocation footprint, starsim's handles differ by size only)
// and returns Reuse; failing that, NeedReclaim. A fetch takes copies in one
// LRU order whatever their protection; prefetches never take copies
// protected by a pending task prefetch (starpu_data_can_evict). With
// Allocated and NewBuffer the copy is allocated (see commit).
func (m *Memory) Allocate(h *Handle, n int, lvl Level) Alloc {
	node := m.Nodes[n]
	r := &h.reps[n]
	size := h.size
	if suballocated(n, size) {
		nb := subBlocks(size)
		if slot, ok := node.sub.alloc(nb); ok {
			r.slot = slot
			m.commit(r)
			return Alloc{Kind: Allocated}
		}
		if node.Capacity == 0 || node.devUsed+subChunkBytes <= node.Capacity || m.OverCapacity {
			r.slot = node.sub.grow(nb)
			node.devUsed += subChunkBytes
			m.Allocations++
			m.commit(r)
			return Alloc{Kind: NewBuffer}
		}
	} else if node.Capacity == 0 || node.devUsed+size <= node.Capacity || m.OverCapacity {
		node.devUsed += size
		node.direct += size
		m.commit(r)
		if n != 0 {
			// A cudaMalloc: StarPU's reclaim frees evicted buffers for
			// real, so each allocation pays again.
			m.Allocations++
			return Alloc{Kind: NewBuffer}
		}
		return Alloc{Kind: Allocated}
	}
	if lvl == Idle || node.noVictim[lvl] == node.evictGen+1 {
		return Alloc{Kind: NoRoom}
	}
	if v := m.reuseVictim(node, size, lvl); v != nil {
		return Alloc{Kind: Reuse, Victim: v}
	}
	return Alloc{Kind: NeedReclaim}
}

// Reuse drops v (an Alloc's Victim) and gives its buffer to h's copy on
// v's node, which is then allocated.
func (m *Memory) Reuse(h *Handle, v *Replica) {
	r := &h.reps[v.node]
	r.slot = v.slot
	m.Evict(v, false) // leaves a dead entry: the indexes keep their positions
	m.commit(r)
}

// commit makes r allocated once it has its buffer: counted, and the most
// recently used copy of its node.
func (m *Memory) commit(r *Replica) {
	node := m.Nodes[r.node]
	node.used += r.h.size
	node.peak = max(node.peak, node.devUsed)
	r.setAllocated(true)
	m.sync(r.h, r.Node())
	if r.node != 0 {
		node.nalloc++
		if r.state != Invalid && r.h.reps[0].state == Invalid {
			node.ndirty++
		}
	}
	node.pushTail(r)
}

// Evict evicts r; its buffer is given back to the allocator, or, with
// giveBack false, kept for a copy that reuses it. It reports whether
// device memory went back to a GPU (a direct buffer, or an emptied chunk):
// a cudaFree.
func (m *Memory) Evict(r *Replica, giveBack bool) (deviceFreed bool) {
	node := m.Nodes[r.node]
	node.remove(r)
	node.used -= r.h.size
	if !giveBack {
		// The reusing copy takes the buffer as it is.
	} else if suballocated(r.Node(), r.h.size) {
		if node.sub.release(r.slot, subBlocks(r.h.size)) {
			node.devUsed -= subChunkBytes
			deviceFreed = true
		}
	} else {
		node.devUsed -= r.h.size
		node.direct -= r.h.size
		deviceFreed = r.node != 0
	}
	r.slot = subSlot{}
	m.SetState(r.h, r.Node(), Invalid) // (no longer dirty)
	r.setAllocated(false)
	m.sync(r.h, r.Node())
	node.nalloc--
	m.Evictions++
	return deviceFreed
}

// SetState changes h's state on node n, keeping the nodes' dirty counts (a
// device copy is dirty while the home copy, in RAM, is invalid) and the
// droppable indexes (a copy valid elsewhere may be dropped).
func (m *Memory) SetState(h *Handle, n int, st State) {
	r := &h.reps[n]
	if r.allocated {
		was := h.NValid() >= 2
		setBit(&h.valid, n, st != Invalid)
		if now := h.NValid() >= 2; now != was {
			for k := range h.reps {
				h.reps[k].shared = now
				if k != n {
					if nk := m.Nodes[k]; nk.needsReindex(&h.reps[k]) {
						nk.reindexChange(&h.reps[k])
					}
				}
			}
		}
	}
	if (r.state == Invalid) != (st == Invalid) {
		delta := 1 // becomes valid, or home becomes invalid
		if (st == Invalid) != (n == 0) {
			delta = -1
		}
		if n == 0 {
			// Home changes: every valid device copy turns dirty or clean.
			for k := 1; k < len(h.reps); k++ {
				if rk := &h.reps[k]; rk.allocated && rk.state != Invalid {
					m.Nodes[k].ndirty += delta
				}
			}
		} else if r.allocated && h.reps[0].state == Invalid {
			m.Nodes[n].ndirty += delta
		}
	}
	r.state = st
	setBit(&h.valid, n, st != Invalid)
	m.sync(h, n)
	if nn := m.Nodes[n]; nn.needsReindex(r) {
		nn.reindexChange(r)
	}
}

// Write records a task's write of h on node n (MSI): a new version, n's
// copy the owner, every other copy invalid.
func (m *Memory) Write(h *Handle, n int) {
	h.version++
	m.Own(h, n)
}

// Own makes n's copy of h the owner and every other copy invalid, the data
// unchanged: StarPU gives a task's copy of data it will write ownership
// when the copy is fetched, before the task runs.
func (m *Memory) Own(h *Handle, n int) {
	// The valid bits, not the replicas: those are scattered.
	for set := h.valid &^ (1 << uint(n)); set != 0 && !m.NoInvalidate; set &= set - 1 {
		m.SetState(h, bits.TrailingZeros64(set), Invalid)
	}
	m.SetState(h, n, Owner)
}

// CopyDone records a copy of h from src to dst that made dst valid: a read
// on a non-owner makes every valid copy shared.
func (m *Memory) CopyDone(h *Handle, src, dst int) {
	if h.reps[src].state == Owner {
		m.SetState(h, src, Shared)
	}
	m.SetState(h, dst, Shared)
}

// WriteBackDone records a write-back of h from src to home (dst) issued at
// version: home is valid again, shared with src, unless a task wrote the
// data meanwhile (the copy carried a stale version).
func (m *Memory) WriteBackDone(h *Handle, src, dst int, version uint64) {
	if version == h.version {
		m.SetState(h, dst, Shared)
		m.SetState(h, src, Shared)
	}
}

// SetLoading records that a copy into h's copy on node n starts (on) or
// ended.
func (m *Memory) SetLoading(h *Handle, n int, on bool) {
	h.reps[n].incoming = on
	setBit(&h.loading, n, on)
	m.sync(h, n)
}

// Touch makes h's copy on n the most recently used: in StarPU only
// allocations and request hits do (_starpu_memchunk_recently_used), not
// the kernels that use a copy.
func (m *Memory) Touch(h *Handle, n int) { m.Nodes[n].touch(&h.reps[n]) }

// Pin counts a task that fetched h's copy on n; Unpin its end.
func (m *Memory) Pin(h *Handle, n int)   { h.reps[n].refs++ }
func (m *Memory) Unpin(h *Handle, n int) { h.reps[n].refs-- }

// Protect counts a task prefetch pending on h's copy on n (prefetches do
// not evict it); Unprotect its fetch. Relist then moves the copy to the
// list its protection says, at its place in LRU order.
func (m *Memory) Protect(h *Handle, n int) { h.reps[n].protect++ }
func (m *Memory) Unprotect(h *Handle, n int) {
	// Never below zero, as StarPU's fetch tail: a task whose prefetch did
	// not count (Options.StarPUPrefetchJoinLoss) takes another's count.
	if r := &h.reps[n]; r.protect > 0 {
		r.protect--
	}
}
func (m *Memory) Relist(h *Handle, n int) { m.Nodes[n].relist(&h.reps[n]) }

// WontUse makes h's device copies the first evicted
// (starpu_data_wont_use).
func (m *Memory) WontUse(h *Handle) {
	for n := 1; n < len(h.reps); n++ {
		r := &h.reps[n]
		if r.allocated && r.list != nil {
			m.Nodes[n].moveHead(r)
			m.Nodes[n].evictGen++
		}
	}
}
