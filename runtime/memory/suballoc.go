package memory

import "fmt"

// StarPU's suballocator (src/datawizard/malloc.c, 1.4): device buffers of at
// most 4 MiB are cut out of 32 MiB chunks, in 16 KiB blocks, first fit. Only
// whole chunks count against the device's memory, so a GPU holds fewer
// tiles than its capacity divided by the tile size (nine 960×960 float
// tiles per chunk, where 9.1 would fit).
const (
	subChunkBytes  = 32 << 20
	subBlockBytes  = 16 << 10
	subMaxBytes    = subChunkBytes / 8 // CHUNK_ALLOC_MAX
	subChunkBlocks = subChunkBytes / subBlockBytes
	subKeepFree    = 4 // CHUNKS_NFREE: empty chunks kept rather than freed
)

// subSeg is a free run of blocks in a chunk.
type subSeg struct{ start, length int32 }

// subChunk is one 32 MiB device buffer of the suballocator.
type subChunk struct {
	free      []subSeg // free runs, by start
	available int32    // free blocks
}

// subAllocator is one node's suballocator: its chunks in StarPU's list
// order (searched front first).
type subAllocator struct {
	chunks []*subChunk
	// maxes[i] is chunks[i]'s available_max, which bounds its longest free
	// run as StarPU keeps it: lowered when a search finds no room, raised
	// only when a free merges runs (see staleMax). Kept beside the list, in
	// its order, so that a search skips full chunks without touching them
	// (a dmdas run at attila N=76800 searches ~40 chunks per allocation).
	maxes []int32
	// maxAll bounds every maxes[i] from above; it is exact after a search
	// that failed. A full device fails search after search (228k per dmdas
	// run at attila N=76800): they need not scan the list until a free or a
	// new chunk raises a bound.
	maxAll int32
	nfree  int // empty chunks kept
	// staleMax reproduces an accident of StarPU 1.4: freeing a block run
	// that merges with no free neighbour does not raise the chunk's
	// available_max, so a full chunk whose tiles are freed one by one hides
	// those holes from later searches until a neighbour is freed too. Such
	// a device fills new chunks (or reclaims) while room is left: in an
	// attila run at N=28800 with 400 MiB, StarPU failed allocations with 4
	// to 26 hidden free tile slots out of 108.
	staleMax bool
}

// subSlot is where a suballocated buffer lives.
type subSlot struct {
	c     *subChunk
	start int32
}

// subBlocks is the number of blocks a buffer of size bytes takes.
func subBlocks(size int64) int32 {
	return int32(max(1, (size+subBlockBytes-1)/subBlockBytes))
}

// alloc finds room for nb blocks in the existing chunks, as
// starpu_malloc_on_node_flags searches them.
func (a *subAllocator) alloc(nb int32) (subSlot, bool) {
	if a.maxAll < nb {
		return subSlot{}, false
	}
	var maxAll int32
	for i := 0; i < len(a.maxes); i++ {
		if a.maxes[i] < nb {
			maxAll = max(maxAll, a.maxes[i])
			continue
		}
		c := a.chunks[i]
		var longest int32
		for k, seg := range c.free {
			if seg.length < nb {
				longest = max(longest, seg.length)
				continue
			}
			if seg.length >= 2*nb {
				// Much room left: StarPU moves the chunk first.
				a.toFront(i)
			}
			if c.available == subChunkBlocks {
				a.nfree--
			}
			return a.take(c, k, nb), true
		}
		a.maxes[i] = longest
		maxAll = max(maxAll, longest)
	}
	a.maxAll = maxAll
	return subSlot{}, false
}

// grow adds a new chunk (the caller has obtained its 32 MiB from the
// device) and allocates nb blocks from it.
func (a *subAllocator) grow(nb int32) subSlot {
	c := &subChunk{free: []subSeg{{0, subChunkBlocks}}, available: subChunkBlocks}
	a.chunks = append(a.chunks, nil)
	copy(a.chunks[1:], a.chunks)
	a.chunks[0] = c
	a.maxes = append(a.maxes, 0)
	copy(a.maxes[1:], a.maxes)
	a.maxes[0] = subChunkBlocks
	a.maxAll = subChunkBlocks
	return a.take(c, 0, nb)
}

// take allocates nb blocks at the start of c's free run k.
func (a *subAllocator) take(c *subChunk, k int, nb int32) subSlot {
	seg := c.free[k]
	c.available -= nb
	if seg.length == nb {
		c.free = append(c.free[:k], c.free[k+1:]...)
	} else {
		c.free[k] = subSeg{seg.start + nb, seg.length - nb}
	}
	return subSlot{c: c, start: seg.start}
}

// release frees the nb blocks at s. It reports whether the chunk itself was
// given back to the device (it became empty with enough empty ones kept).
func (a *subAllocator) release(s subSlot, nb int32) bool {
	c := s.c
	k := 0
	for k < len(c.free) && c.free[k].start < s.start {
		k++
	}
	c.free = append(c.free, subSeg{})
	copy(c.free[k+1:], c.free[k:])
	c.free[k] = subSeg{s.start, nb}
	c.available += nb
	i := a.index(c)
	merged := false
	if k+1 < len(c.free) && c.free[k+1].start == s.start+nb {
		c.free[k].length += c.free[k+1].length
		c.free = append(c.free[:k+1], c.free[k+2:]...)
		merged = true
		a.maxes[i] = max(a.maxes[i], c.free[k].length)
	}
	if k > 0 && c.free[k-1].start+c.free[k-1].length == s.start {
		c.free[k-1].length += c.free[k].length
		c.free = append(c.free[:k], c.free[k+1:]...)
		merged = true
		a.maxes[i] = max(a.maxes[i], c.free[k-1].length)
	}
	if !merged && !a.staleMax {
		a.maxes[i] = max(a.maxes[i], nb)
	}
	a.maxAll = max(a.maxAll, a.maxes[i])
	if c.available == subChunkBlocks {
		if a.nfree >= subKeepFree {
			a.chunks = append(a.chunks[:i], a.chunks[i+1:]...)
			a.maxes = append(a.maxes[:i], a.maxes[i+1:]...)
			return true
		}
		a.nfree++
		return false
	}
	a.toFront(i)
	return false
}

// check verifies the bounds beside the list: one per chunk, each at least
// the chunk's longest free run (unless staleMax hides runs), maxAll at
// least each.
func (a *subAllocator) check() error {
	if len(a.maxes) != len(a.chunks) {
		return fmt.Errorf("suballocator keeps %d bounds for %d chunks", len(a.maxes), len(a.chunks))
	}
	for i, c := range a.chunks {
		for _, seg := range c.free {
			if seg.length > a.maxes[i] && !a.staleMax {
				return fmt.Errorf("suballocator chunk %d has a free run of %d blocks over its available_max %d", i, seg.length, a.maxes[i])
			}
		}
		if a.maxes[i] > a.maxAll {
			return fmt.Errorf("suballocator chunk %d's available_max %d is over the bound %d", i, a.maxes[i], a.maxAll)
		}
	}
	return nil
}

func (a *subAllocator) index(c *subChunk) int {
	for i, x := range a.chunks {
		if x == c {
			return i
		}
	}
	panic("memory: suballocator chunk not in its list")
}

// toFront moves chunk i to the front of the list.
func (a *subAllocator) toFront(i int) {
	c, m := a.chunks[i], a.maxes[i]
	copy(a.chunks[1:i+1], a.chunks[:i])
	copy(a.maxes[1:i+1], a.maxes[:i])
	a.chunks[0], a.maxes[0] = c, m
}
