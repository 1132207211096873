package runtime

import (
	"fmt"
	"math"
	"math/bits"
	"sort"

	"github.com/starsim/starsim/emulator"
	"github.com/starsim/starsim/runtime/graph"
	"github.com/starsim/starsim/runtime/machine"
)

type msi uint8

const (
	invalid msi = iota
	shared
	owner
)

// Request levels, StarPU's prefetch levels: lower is more urgent.
type level uint8

const (
	levelFetch level = iota
	levelTaskPrefetch
	levelPrefetch
	levelIdle
)

// replica is a handle's copy on one memory node.
type replica struct {
	h         *handleState
	node      int
	state     msi
	allocated bool
	refs      int // tasks that fetched it and have not finished
	protect   int // task prefetches pending (not evictable by prefetches)
	incoming  *request
	evicting  bool
	wontUse   bool
	// shared mirrors h.nvalid() >= 2: a valid copy that is shared is valid
	// elsewhere too, so a reclaim may drop it (see needsReindex).
	shared bool
	// stamp orders the node's LRU lists (head smallest); droppable says r
	// is in its list's droppable index.
	stamp     int64
	droppable bool
	// LRU list of the node's allocated replicas (head: evicted first).
	prev, next *replica
	list       *lruList
	slot       subSlot // where the buffer lives, when suballocated
}

type handleState struct {
	// Bit n of valid, allocated and loading mirrors reps[n]: state not
	// invalid, allocated, incoming copy under way. The schedulers' queries
	// at every push and pop (transfer penalties, ready-first scans) read
	// these bits instead of one replica, a cache line, per node. They and
	// size come first: 32 bytes that never straddle two cache lines, the
	// struct being padded to 96 bytes (a large slab, as buildGraph makes,
	// starts on a page).
	valid, allocated, loading uint64
	size                      int64 // h.SizeBytes, read on hot paths without touching h
	h                         *graph.Handle
	reps                      []replica
	// wont_use: pending until the last writer submitted before it ends.
	wontUseAfter *TaskState
	wontUseArmed bool
	// version counts writes; a write-back that started before a write
	// must not make its stale copy valid.
	version uint64
	_       [8]byte // to 96 bytes: see valid
}

// maxNodes bounds the memory nodes: the bit sets of handleState.
const maxNodes = 64

// ready is the bit set of nodes holding an allocated, valid copy.
func (h *handleState) ready() uint64 { return h.valid & h.allocated }

// nvalid counts the allocated copies in a valid state.
func (h *handleState) nvalid() int { return bits.OnesCount64(h.ready()) }

// checkBits verifies that h's bit sets mirror its replicas, and that no copy
// is valid without being allocated (nvalid and the shared flags, updated by
// setState only, rely on it).
func (h *handleState) checkBits() error {
	if h.valid&^h.allocated != 0 {
		return fmt.Errorf("check: %s valid on unallocated nodes (bits %b)", h.h.Name, h.valid&^h.allocated)
	}
	for n := range h.reps {
		r := &h.reps[n]
		bit := uint64(1) << uint(n)
		if (h.valid&bit != 0) != (r.state != invalid) || (h.allocated&bit != 0) != r.allocated || (h.loading&bit != 0) != (r.incoming != nil) {
			return fmt.Errorf("check: %s on node %d: bits valid/allocated/loading %t/%t/%t, replica %t/%t/%t", h.h.Name, n,
				h.valid&bit != 0, h.allocated&bit != 0, h.loading&bit != 0, r.state != invalid, r.allocated, r.incoming != nil)
		}
	}
	return nil
}

// setBit sets or clears bit n of *set.
func setBit(set *uint64, n int, on bool) {
	if on {
		*set |= 1 << uint(n)
	} else {
		*set &^= 1 << uint(n)
	}
}

// setAllocated marks r allocated or not, with its handle's bit.
func (r *replica) setAllocated(on bool) {
	r.allocated = on
	setBit(&r.h.allocated, r.node, on)
}

// setIncoming records the copy under way to r (nil: none), with its
// handle's bit.
func (r *replica) setIncoming(req *request) {
	r.incoming = req
	setBit(&r.h.loading, r.node, req != nil)
}

type memNode struct {
	id       int
	name     string
	arch     string
	capacity int64 // 0: unlimited
	used     int64 // bytes of the copies allocated here
	// devUsed is the device memory taken (bytes): whole suballocator chunks
	// and direct buffers; capacity bounds it. peak is its maximum.
	devUsed int64
	peak    int64
	main    lruList
	prot    lruList
	// sub holds a device's buffers of at most 4 MiB (StarPU's
	// suballocator); a new chunk costs one device allocation.
	sub     subAllocator
	direct  int64         // bytes of direct (non-suballocated) buffers
	waiting []func() bool // allocations waiting for memory
	stalled bool
	// evictGen changes whenever a copy may have become evictable; a reclaim
	// that found nothing to evict is not retried until it changes.
	evictGen uint64
	noVictim [4]uint64 // evictGen+1 at the last fruitless reclaim, per level
	// nalloc and ndirty count allocated device copies and those whose home
	// copy is invalid (a write-back needed before eviction).
	nalloc, ndirty int
	tidying        int    // tidy write-backs under way
	tidyGen        uint64 // evictGen+1 at the last tidy scan
	// tailStamp and headStamp are the last stamps given by pushTail
	// (increasing) and moveHead (decreasing), so stamps follow list order.
	tailStamp, headStamp int64
	// indexed: the lists' droppable indexes are kept. They are built at
	// the node's first reclaim, so nodes that never fill pay nothing.
	indexed bool
	// driverStalled: the driver thread that handles the node's requests waits on
	// a synchronous kernel; the copies it handles neither start nor
	// complete (deferred holds those whose flow ended) until it returns.
	driverStalled bool
	deferred      []*request
	// reclaiming: the driver is in a synchronous reclaim (StarPU's
	// _starpu_memory_reclaim_generic): nothing may be allocated on the
	// node, and its worker neither completes, submits nor pops tasks, until
	// reclaimLeft bytes are freed or nothing more can be.
	reclaiming  bool
	reclaimLeft int64
	reclaimLvl  level
	reclaimFor  *handleState // the copy the reclaim makes room for
	// handledIn and handledOut are the directions whose requests the node's
	// driver issues: into the node (by source), and out of it to RAM.
	handledIn, handledOut []*direction
	progressPosted        bool
	progressAtS           float64 // when the posted pass runs (simulated s)
	// issueFreeS is when the node's driver has finished issuing the copies
	// it handles (each costs it the transfer queue cost, one after the
	// other): simulated seconds.
	issueFreeS float64
}

// direction holds the copies from one node to another. Requests wait in
// queue until the handling driver issues them, at most maxIssued(level) at
// a time (StarPU's per-(node, peer) pending limits). An issued copy's flow
// starts once every copy issued before it on this direction or on a serial
// one has ended (StarPU's simulator: transfers_are_sequential against its
// pending list), so one flow runs per direction at a time and serial
// directions take turns in issue order.
type direction struct {
	src, dst int
	handler  int // node whose driver starts and completes the copies
	issued   int // requests issued and not yet completed
	queue    []*request
	pend     []*request // issued copies whose flow has not ended, in issue order
	bytes    float64
	count    int
	serial   []*direction // directions whose copies never overlap with these (issue order)
}

// maxIssued is how many requests of a level a direction may have issued
// and uncompleted before it issues one more (StarPU's data_request.h:
// MAX_PENDING_REQUESTS_PER_NODE 5, ..._PREFETCH_... 2, ..._IDLE_... 1,
// all compared with one pending count).
func maxIssued(l level) int {
	switch l {
	case levelFetch:
		return 5
	case levelIdle:
		return 1
	}
	return 2
}

type request struct {
	h        *handleState
	src, dst int
	level    level
	prio     int // the requesting task's priority: higher issues first
	seq      uint64
	waiters  []waiter
	started  bool
	wb       bool // eviction write-back
	// nwait counts the earlier copies this one's flow waits for; wake
	// lists the later copies waiting for this one's flow.
	nwait int
	wake  []*request
	// syncs are the device frees waiting for every copy in flight to end.
	syncs   []*gpuSync
	version uint64
	xferID  uint64  // trace id of the copy, once started
	payload float64 // bytes the flow carries (pitch models may enlarge them)
}

// waiter is what runs when a copy completes: a bound call with its
// argument (hot paths: no allocation), or a closure (rare paths).
type waiter struct {
	call func(int)
	arg  int
	fn   func()
}

func (w waiter) none() bool { return w.call == nil && w.fn == nil }

// run runs w now, within the current event.
func (w waiter) run() {
	if w.call != nil {
		w.call(w.arg)
	} else if w.fn != nil {
		w.fn()
	}
}

// notify runs w as an event now.
func (s *Simulator) notify(w waiter) {
	if w.call != nil {
		s.eng.PostCallAfter(0, w.call, w.arg)
	} else if w.fn != nil {
		s.eng.PostAfter(0, w.fn)
	}
}

// fetch makes h valid on node n, then calls done. A valid copy is a hit; a
// pending request to n is joined (and upgraded); otherwise the copy comes
// from the best source, through RAM when there is no direct route. prio is
// the requesting task's priority (0 for the runtime's own copies).
func (s *Simulator) fetch(h *handleState, n int, lvl level, prio int, done waiter) {
	r := &h.reps[n]
	if r.state != invalid && r.allocated {
		// A hit: StarPU runs the fetch's callback at once
		// (_starpu_create_request_to_fetch_data), not as a later event.
		// The copy becomes the most recently used (_starpu_memchunk_recently_used):
		// in StarPU only allocations and request hits move a copy in LRU
		// order, not the kernels that use it.
		s.nodes[n].touch(r)
		done.run()
		return
	}
	if r.incoming != nil {
		req := r.incoming
		if !done.none() {
			req.waiters = append(req.waiters, done)
		}
		if lvl < req.level && !req.started {
			s.upgrade(req, lvl)
		}
		return
	}
	src, ok := s.bestSource(h, n)
	if !ok {
		s.fail(fmt.Errorf("no valid copy of %s anywhere", h.h.Name))
		return
	}
	if s.route(src, n) == nil {
		// Two hops: bring the data to RAM first.
		req := s.newRequest(h, 0, n, lvl, prio, done) // placeholder, started after the first hop
		r.setIncoming(req)
		s.fetch(h, 0, lvl, prio, waiter{fn: func() {
			req.src = 0
			s.enqueue(req)
		}})
		return
	}
	req := s.newRequest(h, src, n, lvl, prio, done)
	r.setIncoming(req)
	s.enqueue(req)
}

func (s *Simulator) newRequest(h *handleState, src, dst int, lvl level, prio int, done waiter) *request {
	s.seq++
	var req *request
	if n := len(s.freeReqs); n > 0 {
		req = s.freeReqs[n-1]
		s.freeReqs[n-1] = nil
		s.freeReqs = s.freeReqs[:n-1]
	} else {
		req = new(request)
	}
	*req = request{h: h, src: src, dst: dst, level: lvl, prio: prio, seq: s.seq, version: h.version,
		waiters: req.waiters[:0], wake: req.wake[:0], syncs: req.syncs[:0]}
	if !done.none() {
		req.waiters = append(req.waiters, done)
	}
	return req
}

// bestSource picks the valid copy with the smallest predicted transfer time
// over a direct route; RAM otherwise (StarPU's _starpu_select_src_node).
func (s *Simulator) bestSource(h *handleState, dst int) (int, bool) {
	best, bestT := -1, math.Inf(1)
	for set := h.ready() &^ (1 << uint(dst)); set != 0; set &= set - 1 {
		n := bits.TrailingZeros64(set)
		if s.route(n, dst) == nil {
			continue
		}
		if t := s.predictUS(n, dst, h.size); t < bestT {
			best, bestT = n, t
		}
	}
	if best >= 0 {
		return best, true
	}
	if set := h.ready(); set != 0 {
		return bits.TrailingZeros64(set), true
	}
	return 0, false
}

// allocate reserves room for h on n (no transfer: W-only access).
func (s *Simulator) allocate(h *handleState, n int, lvl level, done func()) {
	r := &h.reps[n]
	if r.allocated {
		s.eng.PostAfter(0, done)
		return
	}
	try := func() bool {
		costS, ok := s.reserve(h, n, lvl)
		if !ok {
			return false
		}
		s.eng.PostAfter(costS, done)
		return true
	}
	if !try() {
		s.nodes[n].waiting = append(s.nodes[n].waiting, try)
	}
}

// reserve allocates h on n now if there is room (evicting what it may),
// returning the allocation cost. It fails when memory is exhausted for now.
func (s *Simulator) reserve(h *handleState, n int, lvl level) (float64, bool) {
	r := &h.reps[n]
	node := s.nodes[n]
	if r.allocated {
		return 0, true
	}
	if node.reclaiming {
		return 0, false
	}
	cost, ok := s.obtain(node, r, lvl)
	if !ok {
		return 0, false
	}
	node.used += h.size
	node.peak = max(node.peak, node.devUsed)
	if s.opts.Check && node.capacity > 0 && node.devUsed > node.capacity {
		s.fail(fmt.Errorf("node %s over capacity: %d > %d bytes", node.name, node.devUsed, node.capacity))
	}
	r.setAllocated(true)
	s.obs.Memory(s.eng.NowS(), node.name, "allocate", h.h)
	if n != 0 {
		node.nalloc++
		if h.reps[0].state == invalid {
			node.ndirty++
		}
	}
	node.pushTail(r)
	return cost, true
}

// suballocated says whether a copy of size bytes on node n comes out of
// the suballocator (device buffers of at most 4 MiB).
func suballocated(n int, size int64) bool { return n != 0 && size <= subMaxBytes }

// obtain takes device memory for r, as starpu_malloc_on_node_flags: a
// suballocator slot (a new chunk if none is free and the device has 32 MiB
// left), or a direct buffer. When the device is full, it reclaims for any
// level but idle; a reclaim may hand r the buffer of an evicted copy. It
// returns the allocation cost in seconds.
func (s *Simulator) obtain(node *memNode, r *replica, lvl level) (float64, bool) {
	size := r.h.size
	if suballocated(node.id, size) {
		nb := subBlocks(size)
		if slot, ok := node.sub.alloc(nb); ok {
			r.slot = slot
			return 0, true
		}
		if node.capacity == 0 || node.devUsed+subChunkBytes <= node.capacity || plantedFault == faultOverCapacity {
			r.slot = node.sub.grow(nb)
			node.devUsed += subChunkBytes
			s.stats.Allocations++
			return s.m.Costs.DeviceAllocS, true
		}
	} else if node.capacity == 0 || node.devUsed+size <= node.capacity || plantedFault == faultOverCapacity {
		node.devUsed += size
		node.direct += size
		if node.id != 0 {
			// A cudaMalloc: StarPU's reclaim frees evicted buffers for
			// real, so each allocation pays again.
			s.stats.Allocations++
			return s.m.Costs.DeviceAllocS, true
		}
		return 0, true
	}
	if lvl == levelIdle {
		return 0, false
	}
	return 0, s.reclaim(node, r, lvl)
}

// reclaim makes room for r on its full node for a request of level lvl, as
// StarPU 1.4's allocator (_starpu_allocate_interface) does. First it takes
// the buffer of the least recently used copy of the same size that needs no
// write-back (invalid, or valid elsewhere): try_to_reuse_potentially_in_use_mc
// (StarPU matches the data's allocation footprint; starsim's handles differ
// by size only). Failing that, it starts the generic reclaim of twice the
// size on the node's driver thread (startSyncReclaim); the room comes when
// that ends. A fetch takes copies in one LRU order whatever their
// protection; prefetches never take copies protected by a pending task
// prefetch (starpu_data_can_evict). It reports whether r has its buffer.
func (s *Simulator) reclaim(node *memNode, r *replica, lvl level) bool {
	forH, size := r.h, r.h.size
	if node.noVictim[lvl] == node.evictGen+1 {
		return false
	}
	if !node.indexed {
		node.buildIndex()
	}
	if s.opts.Check {
		if err := node.checkLRU(); err != nil {
			s.fail(err)
		}
	}
	// The droppable indexes (copies that are invalid or valid elsewhere,
	// in LRU order), not the whole lists: most of a full device's copies
	// are sole owners that only the generic reclaim may take. A fetch
	// merges the two lists' indexes by stamp.
	a, b := &node.main.drop, &node.prot.drop
	node.main.compact()
	node.main.trimDead()
	if lvl == levelFetch {
		node.prot.compact()
		node.prot.trimDead()
	} else {
		var none []dropEntry
		b = &none
	}
	for i, j := 0, 0; i < len(*a) || j < len(*b); {
		var e dropEntry
		if j >= len(*b) || (i < len(*a) && (*a)[i].stamp < (*b)[j].stamp) {
			e, i = (*a)[i], i+1
		} else {
			e, j = (*b)[j], j+1
		}
		if !e.live() || e.r.h.size != size || !s.evictable(e.r, lvl) {
			continue
		}
		s.explainEviction(e.r, "drop", forH, lvl)
		r.slot = e.r.slot
		s.evict(e.r, false) // leaves a dead entry: the indexes keep their positions
		return true
	}
	return s.startSyncReclaim(node, forH, 2*size, lvl)
}

// evictable says whether a reclaim of level lvl may take r now.
func (s *Simulator) evictable(r *replica, lvl level) bool {
	return r.refs == 0 && r.incoming == nil && !r.evicting && !(lvl >= levelTaskPrefetch && r.protect > 0)
}

// startSyncReclaim starts StarPU's generic reclaim of amount bytes on node
// for a request of level lvl: copies are taken in LRU order, a droppable
// one freed at once, a sole owner written back home first while the driver
// waits (transfer_subtree_to_node), one after the other. It reports false:
// the room comes when the reclaim ends.
func (s *Simulator) startSyncReclaim(node *memNode, forH *handleState, amount int64, lvl level) bool {
	if node.driverStalled {
		return false // the driver thread is in a kernel: retried when it returns
	}
	if s.lruVictim(node, lvl) == nil {
		node.noVictim[lvl] = node.evictGen + 1
		return false
	}
	node.reclaiming = true
	node.reclaimLeft = amount
	node.reclaimLvl = lvl
	node.reclaimFor = forH
	s.blockWorker(node.id, true)
	s.syncReclaimStep(node)
	return false
}

// syncReclaimStep frees the next victims of node's reclaim, or ends it.
func (s *Simulator) syncReclaimStep(node *memNode) {
	lvl := node.reclaimLvl
	for node.reclaimLeft > 0 {
		r := s.lruVictim(node, lvl)
		if r == nil {
			break
		}
		if r.state == invalid || s.validElsewhere(r) {
			s.explainEviction(r, "drop", node.reclaimFor, lvl)
			node.reclaimLeft -= r.h.size
			if s.free(r) {
				s.deviceFree(func() { s.syncReclaimStep(node) })
				return
			}
			continue
		}
		s.explainEviction(r, "write-back", node.reclaimFor, lvl)
		s.writeBack(r, func(freed, gaveBack bool) {
			if freed {
				node.reclaimLeft -= r.h.size
			}
			if gaveBack {
				s.deviceFree(func() { s.syncReclaimStep(node) })
				return
			}
			s.syncReclaimStep(node)
		})
		return
	}
	node.reclaiming = false
	node.reclaimFor = nil
	s.blockWorker(node.id, false)
	node.memoryFreed(s)
}

// lruVictim is the least recently used copy a reclaim of level lvl may
// take: one LRU order over both lists for a fetch, main only otherwise.
func (s *Simulator) lruVictim(node *memNode, lvl level) *replica {
	var a, b *replica
	for a = node.main.head; a != nil && !s.evictable(a, lvl); a = a.next {
	}
	if lvl == levelFetch {
		for b = node.prot.head; b != nil && !s.evictable(b, lvl); b = b.next {
		}
	}
	if a == nil || (b != nil && b.stamp < a.stamp) {
		return b
	}
	return a
}

// free evicts r and gives its buffer back. It reports whether device
// memory went back to a GPU (a direct buffer, or an emptied chunk): a
// cudaFree.
func (s *Simulator) free(r *replica) bool { return s.evict(r, true) }

// evict evicts r; its buffer is given back to the allocator, or, with
// giveBack false, kept for a copy that reuses it. It reports whether device
// memory went back to a GPU.
func (s *Simulator) evict(r *replica, giveBack bool) bool {
	node := s.nodes[r.node]
	node.remove(r)
	node.used -= r.h.size
	freed := false
	if !giveBack {
		// The reusing copy takes the buffer as it is.
	} else if suballocated(r.node, r.h.size) {
		if node.sub.release(r.slot, subBlocks(r.h.size)) {
			node.devUsed -= subChunkBytes
			freed = true
		}
	} else {
		node.devUsed -= r.h.size
		node.direct -= r.h.size
		freed = r.node != 0
	}
	r.slot = subSlot{}
	s.setState(r.h, r.node, invalid)
	r.setAllocated(false)
	node.nalloc--
	if r.h.reps[0].state == invalid {
		node.ndirty--
	}
	r.wontUse = false
	s.stats.Evictions++
	s.obs.Memory(s.eng.NowS(), node.name, "evict", r.h.h)
	return freed
}

// validElsewhere reports whether another node holds a valid copy of r's data.
func (s *Simulator) validElsewhere(r *replica) bool {
	n := r.h.nvalid()
	if r.state != invalid && r.allocated {
		n--
	}
	return n > 0
}

// writeBack copies an owned replica home, frees it unless a task took it
// meanwhile, then calls then with whether it was freed, and whether device
// memory went back (see free).
func (s *Simulator) writeBack(r *replica, then func(freed, gaveBack bool)) {
	r.evicting = true
	s.stats.WriteBacks++
	h := r.h
	home := &h.reps[0]
	done := waiter{fn: func() {
		r.evicting = false
		freed, gave := false, false
		if r.refs == 0 && r.incoming == nil && s.validElsewhere(r) {
			gave = s.free(r)
			freed = true
		}
		then(freed, gave)
	}}
	if req := home.incoming; req != nil {
		// A copy home is already pending (an idle write-back from tidy or
		// wont_use): the eviction waits for it, raised to fetch level, as
		// StarPU's request creation finds and upgrades the existing request
		// rather than issuing a second copy of the same data.
		req.waiters = append(req.waiters, done)
		if req.level > levelFetch && !req.started {
			s.upgrade(req, levelFetch)
		}
		return
	}
	req := s.newRequest(h, r.node, 0, levelFetch, 0, done)
	req.wb = true
	home.setIncoming(req)
	s.enqueue(req)
}

// enqueue queues a request on its direction and starts what can start.
func (s *Simulator) enqueue(req *request) {
	s.queuedBytes += float64(req.h.size)
	d := s.dir(req.src, req.dst)
	d.insert(req)
	s.kick(d)
}

// kind names the request for traces.
func (req *request) kind() string {
	if req.wb {
		return KindWriteBack
	}
	return [...]string{KindFetch, KindTaskPrefetch, KindPrefetch, KindIdleFetch}[req.level]
}

// before orders a direction's queue: most urgent level, then highest
// priority, then oldest (StarPU's per-level request lists are priority
// lists, popped highest first: _starpu_data_request_prio_list).
func before(a, b *request) bool {
	if a.level != b.level {
		return a.level < b.level
	}
	if a.prio != b.prio {
		return a.prio > b.prio
	}
	return a.seq < b.seq
}

// insert keeps d.queue sorted by before.
func (d *direction) insert(req *request) {
	i := sort.Search(len(d.queue), func(i int) bool { return before(req, d.queue[i]) })
	d.queue = append(d.queue, nil)
	copy(d.queue[i+1:], d.queue[i:])
	d.queue[i] = req
}

// upgrade raises a queued request's level (a fetch joining a prefetch),
// moving it to its new place in its direction's queue.
func (s *Simulator) upgrade(req *request, lvl level) {
	d := s.dir(req.src, req.dst)
	for i, q := range d.queue {
		if q == req {
			d.queue = append(d.queue[:i], d.queue[i+1:]...)
			req.level = lvl
			d.insert(req)
			s.kick(d)
			return
		}
	}
	req.level = lvl // not queued yet (first hop of a two-hop copy pending)
}

// kick wakes the driver that handles d's requests: it issues them in its
// next progress pass.
func (s *Simulator) kick(d *direction) { s.wakeDriver(d.handler) }

// wakeDriver posts one progress pass of node n's driver, progressDelayS
// from now (passes asked for meanwhile are the same pass).
func (s *Simulator) wakeDriver(n int) {
	node := s.nodes[n]
	if node.progressPosted || node.driverStalled {
		return
	}
	node.progressPosted = true
	node.progressAtS = s.eng.NowS() + progressDelayS
	s.eng.PostCallAfter(progressDelayS, s.progressCall, n)
}

// progress is a pass of node n's driver over the requests it handles
// (StarPU's ___starpu_datawizard_progress): the incoming ones, peer by
// peer in node order, fetches first, then prefetches, then idle requests
// if none of the group's issued requests is pending; then the outgoing
// ones, per peer, the same way. Running out of memory ends a group's pass.
func (s *Simulator) progress(n int) {
	node := s.nodes[n]
	node.progressPosted = false
	if node.driverStalled {
		return
	}
	s.issueGroup(node.handledIn)
	for _, d := range node.handledOut {
		s.issueGroup([]*direction{d})
	}
}

// issueGroup is one group's part of a pass: fetches of every direction in
// ds, then prefetches, then, when none of them has a request pending, idle
// requests (_starpu_check_that_no_data_request_is_pending).
func (s *Simulator) issueGroup(ds []*direction) {
	for _, lvl := range [...]level{levelFetch, levelPrefetch} {
		for _, d := range ds {
			if !s.issue(d, lvl) {
				return
			}
		}
	}
	for _, d := range ds {
		if d.issued > 0 {
			return
		}
	}
	for _, d := range ds {
		if !s.issue(d, levelIdle) {
			return
		}
	}
}

// issue issues d's queued requests of level lvl or more urgent while its
// pending limits allow: the queue is sorted by level, and a more urgent
// level has the higher limit, so the first request that cannot go stops the
// rest. It reports false when memory ran out.
func (s *Simulator) issue(d *direction, lvl level) bool {
	for len(d.queue) > 0 {
		req := d.queue[0]
		if req.level > lvl || d.issued >= maxIssued(req.level) {
			return true
		}
		costS, ok := s.reserve(req.h, req.dst, req.level)
		if !ok {
			// Later requests are no more urgent: wait for memory.
			s.nodes[req.dst].stalled = true
			return false
		}
		d.queue = d.queue[1:]
		s.start(d, req, costS)
	}
	return true
}

// start issues a copy. The handling driver allocates the destination
// buffer (device allocations hold one lock shared by every device, as
// StarPU's cuda_alloc_mutex), then spends the transfer queue cost; it
// issues its copies one after the other.
func (s *Simulator) start(d *direction, req *request, allocS float64) {
	d.issued++
	req.started = true
	bytes := float64(req.h.size)
	route := s.route(req.src, req.dst)
	payload := s.pitchedPayload(req, route, bytes)
	s.xferID++
	req.xferID, req.payload = s.xferID, payload
	if s.chk != nil {
		s.checkCopyIssued(req)
	}
	now := s.eng.NowS()
	drv := s.nodes[d.handler]
	t := max(now, drv.issueFreeS)
	if allocS > 0 {
		t = max(t, s.allocFreeS) + allocS
		s.allocFreeS = t
	}
	t += s.m.Costs.TransferQueueS
	drv.issueFreeS = t
	s.eng.PostObjAfter(t-now, s.sendCall, req)
}

// send submits an issued copy to the network: its flow waits for the
// copies issued before it on its direction and on the serial ones.
func (s *Simulator) send(o any) {
	req := o.(*request)
	d := s.dir(req.src, req.dst)
	s.waitFor(req, d)
	for _, o := range d.serial {
		s.waitFor(req, o)
	}
	d.pend = append(d.pend, req)
	if req.nwait == 0 {
		s.flow(req)
	}
}

// waitFor makes req's flow wait for the pending copies of o.
func (s *Simulator) waitFor(req *request, o *direction) {
	for _, p := range o.pend {
		p.wake = append(p.wake, req)
		req.nwait++
	}
}

// flow starts a copy's bytes on the network.
func (s *Simulator) flow(req *request) {
	s.obs.TransferStart(s.eng.NowS(), req.xferID, s.nodes[req.src].name, s.nodes[req.dst].name, req.h.size, req.kind(), req.h.h)
	s.net.SendRecycled(s.route(req.src, req.dst), req.payload, s.sentCall, req)
}

// sent: a copy's flow completed. The copies waiting for it may flow; the
// request itself completes when its driver notices.
func (s *Simulator) sent(f *emulator.Flow) {
	req := f.Tag().(*request)
	s.obs.TransferEnd(s.eng.NowS(), req.xferID)
	d := s.dir(req.src, req.dst)
	for i, p := range d.pend {
		if p == req {
			d.pend = append(d.pend[:i], d.pend[i+1:]...)
			break
		}
	}
	for _, w := range req.wake {
		if w.nwait--; w.nwait == 0 {
			s.flow(w)
		}
	}
	clear(req.wake)
	req.wake = req.wake[:0]
	for _, g := range req.syncs {
		if g.n--; g.n == 0 {
			s.eng.PostAfter(0, g.then)
		}
	}
	clear(req.syncs)
	req.syncs = req.syncs[:0]
	if h := s.nodes[d.handler]; h.driverStalled {
		h.deferred = append(h.deferred, req) // noticed when the driver returns
		return
	}
	s.finish(req)
}

// handlingNode is the node whose driver thread handles copies from src to
// dst, as StarPU's link_supports_direct_transfers picks it: the
// destination when it is a GPU (from RAM, or from a peer GPU), the source
// GPU for a copy to RAM (a CUDA node is not directly accessible from RAM's
// workers: _starpu_cuda_is_direct_access_supported).
func (s *Simulator) handlingNode(src, dst int) int {
	if dst != 0 {
		return dst
	}
	return src
}

// stallDriver marks node n's driver as waiting on a synchronous kernel.
func (s *Simulator) stallDriver(n int) {
	if !s.opts.NoDriverStall {
		s.nodes[n].driverStalled = true
	}
}

// resumeDriver: node n's driver returned from a synchronous kernel. It
// completes the copies whose flows ended meanwhile, then starts what its
// directions have queued.
func (s *Simulator) resumeDriver(n int) {
	node := s.nodes[n]
	if !node.driverStalled {
		return
	}
	node.driverStalled = false
	done := node.deferred
	node.deferred = nil
	for _, req := range done {
		s.finish(req)
	}
	for i := range s.dirs {
		for _, d := range s.dirs[i] {
			if d != nil && d.handler == n {
				s.kick(d)
			}
		}
	}
}

// finish ends a copy: states, waiters, and the next copies it lets start.
func (s *Simulator) finish(req *request) {
	d := s.dir(req.src, req.dst)
	d.issued--
	d.bytes += float64(req.h.size)
	d.count++
	h := req.h
	src, dst := &h.reps[req.src], &h.reps[req.dst]
	if req.wb {
		// Home is valid again (unless a task wrote the data meanwhile); the
		// device copy is freed by the write-back's waiter unless a task
		// took it.
		if req.version == h.version {
			s.setState(h, req.dst, shared)
			s.setState(h, req.src, shared)
		}
	} else {
		// A read on a non-owner makes every valid copy shared.
		if src.state == owner {
			s.setState(h, req.src, shared)
		}
		s.setState(h, req.dst, shared)
	}
	if s.chk != nil {
		s.checkCopyDone(req)
	}
	dst.setIncoming(nil)
	s.nodes[req.dst].evictGen++
	for _, w := range req.waiters {
		s.notify(w)
	}
	s.kick(d)
	// The new copy is no longer incoming, hence evictable, and the source's
	// may have become droppable: retry what waits for memory on either
	// node (a stalled direction is not necessarily d or its serial ones).
	for _, n := range [2]int{req.src, req.dst} {
		if node := s.nodes[n]; node.stalled || len(node.waiting) > 0 {
			node.memoryFreed(s)
		}
	}
	// Nothing refers to req any more (its waiters were posted by value):
	// newRequest reuses it, with its lists' room.
	clear(req.waiters)
	req.waiters = req.waiters[:0]
	s.freeReqs = append(s.freeReqs, req)
}

// memoryFreed retries allocations and stalled transfers into n after some of
// its copies may have become evictable or were freed.
func (n *memNode) memoryFreed(s *Simulator) {
	n.evictGen++
	if len(n.waiting) > 0 {
		w := n.waiting
		n.waiting = nil
		for i, try := range w {
			if !try() {
				n.waiting = append(n.waiting, w[i])
			}
		}
	}
	if n.stalled {
		n.stalled = false
		for j := range s.nodes {
			if d := s.dir(j, n.id); d != nil {
				s.kick(d)
			}
		}
	}
}

// wontUse records starpu_data_wont_use: once after (the last task
// submitted before it that writes h) has ended, h's copies are evicted
// first.
func (s *Simulator) wontUse(h *handleState, after *TaskState) {
	h.wontUseAfter = after
	h.wontUseArmed = true
	if after == nil || after.done {
		s.applyWontUse(h)
	}
}

func (s *Simulator) wontUseDone(h *handleState, t *TaskState) {
	if h.wontUseArmed && h.wontUseAfter == t {
		s.applyWontUse(h)
	}
}

// applyWontUse marks h's device copies evict-first and, as StarPU does,
// queues an idle-level copy home so that a later eviction is clean.
func (s *Simulator) applyWontUse(h *handleState) {
	h.wontUseArmed = false
	for n := 1; n < len(h.reps); n++ {
		r := &h.reps[n]
		if r.allocated && r.list != nil {
			r.wontUse = true
			s.nodes[n].moveHead(r)
			s.nodes[n].evictGen++
		}
	}
	if h.reps[0].state == invalid && !s.opts.NoWontUseWriteBack {
		s.fetch(h, 0, levelIdle, 0, waiter{})
	}
}

// LRU lists. A node keeps its allocated copies in two lists, least
// recently used first: main, and prot for copies protected by a pending
// task prefetch (prefetches never evict those, so their reclaims need not
// look at them). Stamps give one LRU order over both, which a fetch's
// reclaim follows, as StarPU's single mc_list.

type lruList struct {
	head, tail *replica
	// drop indexes the list's copies that are invalid or valid on another
	// node (what a reclaim may drop without a write-back), sorted by
	// stamp. Removal only marks an entry dead, so that removing stays O(1)
	// and a reclaim can free copies while it walks the index.
	drop []dropEntry
	dead int // dead entries in drop
	// dropArr is drop's whole array: trimDead leaves its front unused.
	dropArr []dropEntry
}

// dropEntry is r as indexed at stamp; it is dead once r left the index
// or got a new stamp.
type dropEntry struct {
	stamp int64
	r     *replica
	l     *lruList
}

func (e dropEntry) live() bool { return e.r.droppable && e.r.stamp == e.stamp && e.r.list == e.l }

// compact removes dead entries once they are the majority.
func (l *lruList) compact() {
	if l.dead < 64 || 2*l.dead < len(l.drop) {
		return
	}
	k := 0
	for _, e := range l.drop {
		if e.live() {
			l.drop[k] = e
			k++
		}
	}
	clear(l.drop[k:])
	l.drop, l.dead = l.drop[:k], 0
}

// trimDead drops the dead entries at the front of l's index: the copies
// a reclaim frees there would otherwise be walked again by every later
// one until a compaction. A copy whose dead entry goes and that becomes
// droppable again with the same stamp gets a new entry (reindexChange).
func (l *lruList) trimDead() {
	k := 0
	for k < len(l.drop) && !l.drop[k].live() {
		k++
	}
	l.drop, l.dead = l.drop[k:], l.dead-k
}

// appendDrop appends e to l's index. A full index moves to the front of
// its array when trimDead's reslicing left half of it or more unused there;
// else to an array with room for as many entries again plus 64.
func (l *lruList) appendDrop(e dropEntry) {
	if n := len(l.drop); n == cap(l.drop) {
		if len(l.dropArr) > 0 && 2*n <= len(l.dropArr) {
			copy(l.dropArr, l.drop)
			clear(l.dropArr[n:])
			l.drop = l.dropArr[:n]
		} else {
			d := make([]dropEntry, n, 2*n+64)
			copy(d, l.drop)
			l.drop, l.dropArr = d, d[:cap(d)]
		}
	}
	l.drop = append(l.drop, e)
}

// A copy whose list, state or sharing changed may have to enter or leave its
// list's droppable index: callers then run
//
//	if n.needsReindex(r) { n.reindexChange(r) }
//
// The test, which most calls stop at, inlines (a call did not: ~885k calls
// in an attila dmda run at N=76800).

// needsReindex reports whether r's place in the droppable index is stale.
func (n *memNode) needsReindex(r *replica) bool {
	return n.indexed && r.list != nil && (r.state == invalid || r.shared) != r.droppable
}

// reindexChange puts r in, or takes it out of, its list's droppable index.
func (n *memNode) reindexChange(r *replica) {
	l := r.list
	if r.droppable {
		r.droppable = false
		l.dead++
		return
	}
	l.compact() // before r counts as droppable: its dead entry must stay dead
	r.droppable = true
	d := l.drop
	if len(d) == 0 || d[len(d)-1].stamp < r.stamp { // pushTail: the usual case
		l.appendDrop(dropEntry{r.stamp, r, l})
		return
	}
	i := sort.Search(len(d), func(i int) bool { return d[i].stamp >= r.stamp })
	if i < len(d) && d[i].stamp == r.stamp && d[i].r == r { // r's own dead entry: revive it
		l.dead--
		return
	}
	l.appendDrop(dropEntry{})
	d = l.drop
	copy(d[i+1:], d[i:])
	d[i] = dropEntry{r.stamp, r, l}
}

// buildIndex starts keeping the droppable indexes, from the lists as they
// are (their stamps already increase from head to tail).
func (n *memNode) buildIndex() {
	n.indexed = true
	for _, l := range []*lruList{&n.main, &n.prot} {
		for r := l.head; r != nil; r = r.next {
			if r.state == invalid || r.shared {
				r.droppable = true
				l.appendDrop(dropEntry{r.stamp, r, l})
			}
		}
	}
}

// checkLRU verifies that each list's stamps increase from head to tail and
// that its droppable index is exactly its invalid or shared copies, in order.
func (n *memNode) checkLRU() error {
	for _, l := range []*lruList{&n.main, &n.prot} {
		var want []*replica
		for r := l.head; r != nil; r = r.next {
			if r.next != nil && r.next.stamp <= r.stamp {
				return fmt.Errorf("check: LRU list of %s out of order at %s", n.name, r.h.h.Name)
			}
			if n.indexed && (r.state == invalid || r.shared) {
				want = append(want, r)
			}
		}
		var live []*replica
		for i, e := range l.drop {
			if i > 0 && e.stamp <= l.drop[i-1].stamp {
				return fmt.Errorf("check: droppable index of %s out of order at position %d", n.name, i)
			}
			if e.live() {
				if e.r.list != l {
					return fmt.Errorf("check: droppable index of %s holds %s from another list", n.name, e.r.h.h.Name)
				}
				live = append(live, e.r)
			}
		}
		if len(l.drop)-len(live) != l.dead {
			return fmt.Errorf("check: droppable index of %s counts %d dead entries, holds %d", n.name, l.dead, len(l.drop)-len(live))
		}
		if len(want) != len(live) {
			return fmt.Errorf("check: %s indexes %d droppable copies, its list has %d", n.name, len(live), len(want))
		}
		for i := range want {
			if want[i] != live[i] {
				return fmt.Errorf("check: droppable index of %s differs from its list at position %d", n.name, i)
			}
		}
	}
	return nil
}

func (l *lruList) pushTail(r *replica) {
	r.prev, r.next, r.list = l.tail, nil, l
	if l.tail != nil {
		l.tail.next = r
	} else {
		l.head = r
	}
	l.tail = r
}

func (l *lruList) pushHead(r *replica) {
	r.prev, r.next, r.list = nil, l.head, l
	if l.head != nil {
		l.head.prev = r
	} else {
		l.tail = r
	}
	l.head = r
}

func (l *lruList) remove(r *replica) {
	if r.prev != nil {
		r.prev.next = r.next
	} else {
		l.head = r.next
	}
	if r.next != nil {
		r.next.prev = r.prev
	} else {
		l.tail = r.prev
	}
	r.prev, r.next, r.list = nil, nil, nil
}

// listFor is the list r belongs in.
func (n *memNode) listFor(r *replica) *lruList {
	if r.protect > 0 {
		return &n.prot
	}
	return &n.main
}

func (n *memNode) pushTail(r *replica) {
	n.tailStamp++
	r.stamp = n.tailStamp
	n.listFor(r).pushTail(r)
	if n.needsReindex(r) {
		n.reindexChange(r)
	}
}

func (n *memNode) remove(r *replica) {
	if r.list != nil {
		if r.droppable {
			r.droppable = false
			r.list.dead++
		}
		r.list.remove(r)
	}
}

// touch marks r as just used (tail of its list) and clears wont_use.
func (n *memNode) touch(r *replica) {
	if r.list == nil {
		return
	}
	r.wontUse = false
	n.remove(r)
	n.pushTail(r)
}

// relist moves r to the list its protection says, at its place in LRU
// order: StarPU's protection count does not move a copy in its one list.
func (n *memNode) relist(r *replica) {
	if r.list == nil || r.list == n.listFor(r) {
		return
	}
	n.remove(r)
	l := n.listFor(r)
	// r goes after p (nil: first), found from the nearer end by stamp.
	var p *replica
	if l.head != nil && r.stamp-l.head.stamp < l.tail.stamp-r.stamp {
		for q := l.head; q != nil && q.stamp < r.stamp; q = q.next {
			p = q
		}
	} else {
		for p = l.tail; p != nil && p.stamp > r.stamp; p = p.prev {
		}
	}
	switch {
	case p == nil:
		l.pushHead(r)
	case p == l.tail:
		l.pushTail(r)
	default:
		r.prev, r.next, r.list = p, p.next, l
		p.next.prev = r
		p.next = r
	}
	if n.needsReindex(r) {
		n.reindexChange(r)
	}
}

func (n *memNode) moveHead(r *replica) {
	if r.list == nil {
		return
	}
	n.remove(r)
	n.headStamp--
	r.stamp = n.headStamp
	n.listFor(r).pushHead(r)
	if n.needsReindex(r) {
		n.reindexChange(r)
	}
}

// pitchedPayload returns the bytes to send on route so that, alone, the copy
// takes the time the direction's pitch model gives: the model's time minus
// the route latency, times the route's narrowest bandwidth. The copy still
// shares links fluidly with concurrent ones. Without a model: the bytes.
func (s *Simulator) pitchedPayload(req *request, route *emulator.Route, bytes float64) float64 {
	models := s.pitch[[2]int{req.src, req.dst}]
	if len(models) == 0 || req.h.h.PitchBytes == 0 {
		return bytes
	}
	t, ok := evalPitch(models, bytes, float64(req.h.h.PitchBytes))
	if !ok {
		return bytes
	}
	p := (t - route.LatencyS()) * s.minBw[route]
	if !(p > 0) {
		return 0
	}
	return p
}

// evalPitch evaluates the model of the pitch range containing pitch, else of
// the nearest range.
func evalPitch(models []machine.PitchModel, bytes, pitch float64) (float64, bool) {
	best, bestD := -1, math.Inf(1)
	for i, m := range models {
		d := 0.0
		if pitch < m.PitchLoBytes {
			d = m.PitchLoBytes - pitch
		} else if pitch > m.PitchHiBytes {
			d = pitch - m.PitchHiBytes
		}
		if d < bestD {
			best, bestD = i, d
		}
	}
	if best < 0 {
		return 0, false
	}
	for _, seg := range models[best].Segments {
		if bytes >= seg.LoBytes && bytes < seg.HiBytes {
			return seg.InterceptS + seg.SlopeSPerByte*bytes, true
		}
	}
	return 0, false
}

// predictUS is the scheduler's expected time of copying size bytes from src
// to dst (starpu_transfer_predict): latency + size/bandwidth, the second
// term multiplied by 2 x the bus's GPU count (busGPUs) when the parity
// option is on.
func (s *Simulator) predictUS(src, dst int, size int64) float64 {
	p := s.predict[src][dst]
	if !(p.BandwidthBps > 0) {
		return 0
	}
	factor := 1.0
	if s.opts.StarPUTransferFactor {
		factor = 2 * float64(s.predictGPUs[src][dst])
	}
	return p.LatencyS*1e6 + float64(size)/p.BandwidthBps*1e6*factor
}

// setState changes h's state on node n, keeping the nodes' dirty counts: a
// device copy is dirty while the home (RAM) copy is invalid.
func (s *Simulator) setState(h *handleState, n int, st msi) {
	r := &h.reps[n]
	if r.allocated {
		was := h.nvalid() >= 2
		setBit(&h.valid, n, st != invalid)
		if now := h.nvalid() >= 2; now != was {
			for m := range h.reps {
				h.reps[m].shared = now
				if m != n {
					if nm := s.nodes[m]; nm.needsReindex(&h.reps[m]) {
						nm.reindexChange(&h.reps[m])
					}
				}
			}
		}
	}
	if n == 0 && (r.state == invalid) != (st == invalid) {
		delta := 1 // home becomes invalid: every device copy turns dirty
		if st != invalid {
			delta = -1
		}
		for m := 1; m < len(h.reps); m++ {
			if h.reps[m].allocated {
				s.nodes[m].ndirty += delta
			}
		}
	}
	r.state = st
	setBit(&h.valid, n, st != invalid)
	if nn := s.nodes[n]; nn.needsReindex(r) {
		nn.reindexChange(r)
	}
}

// Clean-buffer targets of StarPU's memchunk tidy (STARPU_MINIMUM_CLEAN_BUFFERS
// and STARPU_TARGET_CLEAN_BUFFERS, in %).
const minCleanPct, targetCleanPct = 5, 10

// tidyScan bounds the copies one tidy call examines.
const tidyScan = 64

// tidy keeps some device copies clean, as StarPU's starpu_memchunk_tidy:
// when fewer than 5 % of the allocated copies are clean, idle-level
// write-backs of dirty ones (least recently used first) are queued until 10 %
// would be.
func (s *Simulator) tidy(n int) {
	node := s.nodes[n]
	if n == 0 || node.nalloc == 0 || s.opts.NoTidy {
		return
	}
	clean := node.nalloc - node.ndirty - node.tidying
	if clean*100 >= minCleanPct*node.nalloc || node.tidyGen == node.evictGen+1 {
		return
	}
	node.tidyGen = node.evictGen + 1 // nothing new to write back until copies change
	want := (targetCleanPct*node.nalloc + 99) / 100
	// Look at a bounded number of copies from the LRU head per call, as
	// StarPU resumes from its dirty-list head rather than rescanning.
	scanned := 0
	for r := node.main.head; r != nil && clean < want && scanned < tidyScan; r = r.next {
		scanned++
		h := r.h
		if h.reps[0].state != invalid || h.reps[0].incoming != nil || r.state == invalid || r.refs > 0 || r.evicting {
			continue
		}
		node.tidying++
		clean++
		s.fetch(h, 0, levelIdle, 0, waiter{})
		h.reps[0].incoming.waiters = append(h.reps[0].incoming.waiters, waiter{fn: func() { node.tidying-- }})
	}
}

// progressDelayS is how long a woken driver takes to reach its node's
// requests: StarPU's datawizard progress sleeps 1 µs per call in simulation,
// and a CUDA driver's loop makes progress on RAM before its own node.
const progressDelayS = 2e-6

// gpuSync is a device free waiting for the copies in flight to end.
type gpuSync struct {
	n    int
	then func()
}

// deviceFree charges a cudaFree to the thread that frees, then calls then:
// StarPU's simulated free sleeps DeviceFreeS under the allocation lock all
// GPUs share, then waits until every copy in flight has ended, "as CUDA
// synchronizes roughly everything on cudaFree" (_starpu_simgrid_sync_gpus).
func (s *Simulator) deviceFree(then func()) {
	now := s.eng.NowS()
	t := max(now, s.allocFreeS) + s.m.Costs.DeviceFreeS
	s.allocFreeS = t
	s.eng.PostAfter(t-now, func() {
		g := &gpuSync{then: then}
		for _, row := range s.dirs {
			for _, d := range row {
				if d == nil {
					continue
				}
				for _, req := range d.pend {
					req.syncs = append(req.syncs, g)
					g.n++
				}
			}
		}
		if g.n == 0 {
			then()
		}
	})
}
