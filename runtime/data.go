package runtime

import (
	"fmt"
	"math"
	"sort"

	"github.com/starsim/starsim/emulator"
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
	// LRU list of the node's allocated replicas (head: evicted first).
	prev, next *replica
	inLRU      bool
}

type handleState struct {
	h          *Handle
	reps       []replica
	lastWriter *TaskState
	readers    []*TaskState
	// wont_use: pending until the last writer submitted before it ends.
	wontUseAfter *TaskState
	wontUseArmed bool
	// version counts writes; a write-back that started before a write
	// must not make its stale copy valid.
	version uint64
}

type memNode struct {
	id       int
	name     string
	arch     string
	capacity int64 // 0: unlimited
	used     int64
	peak     int64
	head     *replica
	tail     *replica
	// Suballocator: tiles <= 4 MiB come out of 32 MiB chunks (StarPU's
	// malloc.h); a new chunk costs one device allocation.
	subCap, subUsed int64
	obtained        int64         // high-water mark of direct (non-suballocated) buffers
	pendingFree     int64         // bytes whose write-back is under way
	waiting         []func() bool // allocations waiting for memory
	stalled         bool
	// evictGen changes whenever a copy may have become evictable; a reclaim
	// that found nothing to evict is not retried until it changes.
	evictGen uint64
	noVictim [4]uint64 // evictGen+1 at the last fruitless reclaim, per level
}

// direction is the FIFO of copies from one node to another: StarPU's
// simulator runs one transfer per (src, dst) at a time.
type direction struct {
	src, dst int
	busy     bool
	queue    []*request
	bytes    float64
	count    int
	serial   []*direction // directions whose copies never overlap with these
}

type request struct {
	h        *handleState
	src, dst int
	level    level
	seq      uint64
	waiters  []func()
	started  bool
	wb       bool // eviction write-back
	version  uint64
}

// fetch makes h valid on node n, then calls done. A valid copy is a hit; a
// pending request to n is joined (and upgraded); otherwise the copy comes
// from the best source, through RAM when there is no direct route.
func (s *Simulator) fetch(h *handleState, n int, lvl level, done func()) {
	r := &h.reps[n]
	if r.state != invalid && r.allocated {
		if done != nil {
			s.eng.After(0, done)
		}
		return
	}
	if r.incoming != nil {
		req := r.incoming
		if done != nil {
			req.waiters = append(req.waiters, done)
		}
		if lvl < req.level && !req.started {
			req.level = lvl
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
		req := s.newRequest(h, 0, n, lvl, done) // placeholder, started after the first hop
		r.incoming = req
		s.fetch(h, 0, lvl, func() {
			req.src = 0
			s.enqueue(req)
		})
		return
	}
	req := s.newRequest(h, src, n, lvl, done)
	r.incoming = req
	s.enqueue(req)
}

func (s *Simulator) newRequest(h *handleState, src, dst int, lvl level, done func()) *request {
	s.seq++
	req := &request{h: h, src: src, dst: dst, level: lvl, seq: s.seq, version: h.version}
	if done != nil {
		req.waiters = append(req.waiters, done)
	}
	return req
}

// bestSource picks the valid copy with the smallest predicted transfer time
// over a direct route; RAM otherwise (StarPU's _starpu_select_src_node).
func (s *Simulator) bestSource(h *handleState, dst int) (int, bool) {
	best, bestT := -1, math.Inf(1)
	for n := range h.reps {
		r := &h.reps[n]
		if n == dst || r.state == invalid || !r.allocated {
			continue
		}
		if s.route(n, dst) == nil {
			continue
		}
		if t := s.predictUS(n, dst, h.h.SizeBytes); t < bestT {
			best, bestT = n, t
		}
	}
	if best >= 0 {
		return best, true
	}
	for n := range h.reps {
		if h.reps[n].state != invalid && h.reps[n].allocated {
			return n, true
		}
	}
	return 0, false
}

// allocate reserves room for h on n (no transfer: W-only access).
func (s *Simulator) allocate(h *handleState, n int, lvl level, done func()) {
	r := &h.reps[n]
	if r.allocated {
		s.eng.After(0, done)
		return
	}
	try := func() bool {
		costS, ok := s.reserve(h, n, lvl)
		if !ok {
			return false
		}
		s.eng.After(costS, done)
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
	size := h.h.SizeBytes
	if node.capacity > 0 && node.used+size > node.capacity {
		if lvl == levelIdle || !s.reclaim(node, size, lvl) {
			return 0, false
		}
	}
	node.used += size
	node.peak = max(node.peak, node.used)
	if s.opts.Check && node.capacity > 0 && node.used > node.capacity {
		s.fail(fmt.Errorf("node %s over capacity: %d > %d bytes", node.name, node.used, node.capacity))
	}
	r.allocated = true
	node.pushTail(r)
	cost := 0.0
	if n != 0 {
		const sub, chunk = 4 << 20, 32 << 20
		if size <= sub {
			node.subUsed += size
			for node.subUsed > node.subCap {
				node.subCap += chunk
				cost += s.m.Costs.DeviceAllocS
				s.stats.Allocations++
			}
		} else if node.used > node.obtained {
			// A buffer beyond what the device already gave: cudaMalloc.
			// Freed buffers stay in StarPU's allocation cache, so memory
			// reused below the high-water mark costs nothing.
			node.obtained = node.used
			cost += s.m.Costs.DeviceAllocS
			s.stats.Allocations++
		}
	}
	return cost, true
}

// reclaim evicts least-recently-used replicas of node until size bytes fit.
// Shared copies are dropped; an owned copy is first written back home, and
// the room it frees arrives when the write-back ends. Prefetches do not
// evict copies protected by a pending task prefetch. It reports whether the
// room is available now.
func (s *Simulator) reclaim(node *memNode, size int64, lvl level) bool {
	need := node.used + size - node.capacity - node.pendingFree
	if node.noVictim[lvl] == node.evictGen+1 {
		return false
	}
	found := false
	for r := node.head; r != nil && need > 0; {
		next := r.next
		if r.refs == 0 && r.incoming == nil && !r.evicting && !(lvl >= levelTaskPrefetch && r.protect > 0) {
			if r.state != invalid && !s.validElsewhere(r) {
				if lvl == levelFetch {
					s.writeBack(r)
					need -= r.h.h.SizeBytes
					found = true
				}
			} else {
				need -= r.h.h.SizeBytes
				s.free(r)
				found = true
			}
		}
		r = next
	}
	if !found {
		node.noVictim[lvl] = node.evictGen + 1
	}
	return node.used+size <= node.capacity
}

func (s *Simulator) validElsewhere(r *replica) bool {
	for n := range r.h.reps {
		if n != r.node && r.h.reps[n].state != invalid && r.h.reps[n].allocated {
			return true
		}
	}
	return false
}

func (s *Simulator) free(r *replica) {
	node := s.nodes[r.node]
	node.remove(r)
	node.used -= r.h.h.SizeBytes
	if r.h.h.SizeBytes <= 4<<20 {
		node.subUsed -= r.h.h.SizeBytes
	}
	r.allocated = false
	r.state = invalid
	r.wontUse = false
	s.stats.Evictions++
}

// writeBack copies an owned replica home before freeing it.
func (s *Simulator) writeBack(r *replica) {
	r.evicting = true
	s.stats.WriteBacks++
	h := r.h
	home := &h.reps[0]
	node := s.nodes[r.node]
	node.pendingFree += h.h.SizeBytes
	req := s.newRequest(h, r.node, 0, levelFetch, func() {
		r.evicting = false
		node.pendingFree -= h.h.SizeBytes
		if r.refs == 0 && r.incoming == nil && s.validElsewhere(r) {
			s.free(r)
		}
		node.memoryFreed(s)
	})
	req.wb = true
	home.incoming = req
	s.enqueue(req)
}

// enqueue queues a request on its direction and starts what can start.
func (s *Simulator) enqueue(req *request) {
	d := s.dir(req.src, req.dst)
	d.queue = append(d.queue, req)
	s.kick(d)
}

// kick starts the most urgent startable request of d if d is free.
func (s *Simulator) kick(d *direction) {
	if d.busy || len(d.queue) == 0 {
		return
	}
	for _, o := range d.serial {
		if o.busy {
			return
		}
	}
	sort.SliceStable(d.queue, func(i, j int) bool {
		if d.queue[i].level != d.queue[j].level {
			return d.queue[i].level < d.queue[j].level
		}
		return d.queue[i].seq < d.queue[j].seq
	})
	for i, req := range d.queue {
		costS, ok := s.reserve(req.h, req.dst, req.level)
		if !ok {
			// Later requests are no more urgent: they would fail too
			// unless smaller; wait for memory.
			s.nodes[req.dst].stalled = true
			if s.nodes[req.dst].used+req.h.h.SizeBytes > s.nodes[req.dst].capacity {
				continue
			}
			return
		}
		d.queue = append(d.queue[:i:i], d.queue[i+1:]...)
		s.start(d, req, costS)
		return
	}
}

func (s *Simulator) start(d *direction, req *request, allocS float64) {
	d.busy = true
	req.started = true
	bytes := float64(req.h.h.SizeBytes)
	route := s.route(req.src, req.dst)
	payload := s.pitchedPayload(req, route, bytes)
	s.eng.After(s.m.Costs.TransferQueueS+allocS, func() {
		s.net.Send(route, payload, func(*emulator.Flow) { s.finish(d, req, bytes) })
	})
}

func (s *Simulator) finish(d *direction, req *request, bytes float64) {
	d.busy = false
	d.bytes += bytes
	d.count++
	h := req.h
	src, dst := &h.reps[req.src], &h.reps[req.dst]
	if req.wb {
		// Home is valid again (unless a task wrote the data meanwhile); the
		// device copy is freed by the write-back's waiter unless a task
		// took it.
		if req.version == h.version {
			dst.state, src.state = shared, shared
		}
	} else {
		// A read on a non-owner makes every valid copy shared.
		if src.state == owner {
			src.state = shared
		}
		dst.state = shared
	}
	dst.incoming = nil
	s.nodes[req.dst].evictGen++
	for _, w := range req.waiters {
		s.eng.After(0, w)
	}
	s.kick(d)
	for _, o := range d.serial {
		s.kick(o)
	}
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

// wontUse records starpu_data_wont_use: once every task submitted before it
// that writes h has ended, h's copies are evicted first.
func (s *Simulator) wontUse(h *handleState) {
	h.wontUseAfter = h.lastWriter
	h.wontUseArmed = true
	if h.lastWriter == nil || h.lastWriter.done {
		s.applyWontUse(h)
	}
}

func (s *Simulator) wontUseDone(h *handleState, t *TaskState) {
	if h.wontUseArmed && h.wontUseAfter == t {
		s.applyWontUse(h)
	}
}

func (s *Simulator) applyWontUse(h *handleState) {
	h.wontUseArmed = false
	for n := 1; n < len(h.reps); n++ {
		r := &h.reps[n]
		if r.allocated && r.inLRU {
			r.wontUse = true
			s.nodes[n].moveHead(r)
			s.nodes[n].evictGen++
		}
	}
}

// LRU list helpers.

func (n *memNode) pushTail(r *replica) {
	r.prev, r.next = n.tail, nil
	if n.tail != nil {
		n.tail.next = r
	} else {
		n.head = r
	}
	n.tail = r
	r.inLRU = true
}

func (n *memNode) remove(r *replica) {
	if !r.inLRU {
		return
	}
	if r.prev != nil {
		r.prev.next = r.next
	} else {
		n.head = r.next
	}
	if r.next != nil {
		r.next.prev = r.prev
	} else {
		n.tail = r.prev
	}
	r.prev, r.next, r.inLRU = nil, nil, false
}

// touch marks r as just used (LRU tail) unless it is marked wont_use.
func (n *memNode) touch(r *replica) {
	if !r.inLRU {
		return
	}
	r.wontUse = false
	n.remove(r)
	n.pushTail(r)
}

func (n *memNode) moveHead(r *replica) {
	n.remove(r)
	r.prev, r.next = nil, n.head
	if n.head != nil {
		n.head.prev = r
	} else {
		n.tail = r
	}
	n.head = r
	r.inLRU = true
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
func evalPitch(models []PitchModel, bytes, pitch float64) (float64, bool) {
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
// term multiplied by 2 x the GPU count on non-peer buses when the parity
// option is on.
func (s *Simulator) predictUS(src, dst int, size int64) float64 {
	p := s.predict[src][dst]
	if !(p.BandwidthBps > 0) {
		return 0
	}
	factor := 1.0
	if s.opts.StarPUTransferFactor {
		ngpu := s.ngpus
		if src != 0 && dst != 0 {
			ngpu = 1 // direct (peer) bus
		}
		factor = 2 * float64(ngpu)
	}
	return p.LatencyS*1e6 + float64(size)/p.BandwidthBps*1e6*factor
}
