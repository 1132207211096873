package memory

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// tile960 is the block count of a 960×960 float tile: 225 blocks of 16 KiB.
var tile960 = subBlocks(960 * 960 * 4)

// fill allocates n tiles, growing chunks as needed, and returns their slots.
func fill(a *subAllocator, n int, nb int32) []subSlot {
	var slots []subSlot
	for range n {
		s, ok := a.alloc(nb)
		if !ok {
			s = a.grow(nb)
		}
		slots = append(slots, s)
	}
	return slots
}

func TestSubBlocks(t *testing.T) {
	for _, c := range []struct {
		size int64
		want int32
	}{{0, 1}, {1, 1}, {16 << 10, 1}, {16<<10 + 1, 2}, {960 * 960 * 4, 225}, {4 << 20, 256}} {
		require.Equal(t, c.want, subBlocks(c.size), "size %d", c.size)
	}
	require.True(t, suballocated(1, 4<<20))
	require.False(t, suballocated(1, 4<<20+1))
	require.False(t, suballocated(0, 1024), "RAM is not suballocated")
}

func TestSuballocatorNineTilesPerChunk(t *testing.T) {
	var a subAllocator
	slots := fill(&a, 9, tile960)
	require.Len(t, a.chunks, 1, "nine 225-block tiles fit one 2048-block chunk")
	for i, s := range slots {
		require.Equal(t, int32(i)*tile960, s.start)
	}
	_, ok := a.alloc(tile960)
	require.False(t, ok, "a tenth tile needs a new chunk")
	require.Equal(t, subChunkBlocks-9*tile960, a.maxes[0], "the failed search lowers available_max to the tail")
}

func TestSuballocatorHiddenHoles(t *testing.T) {
	for _, c := range []struct {
		name     string
		staleMax bool
		free     []int // tiles freed, in order
		found    bool  // whether a tile then fits the chunk
		start    int32 // where it goes, if found
	}{
		{"isolated hole hidden", true, []int{4}, false, 0},
		{"isolated hole seen without the accident", false, []int{4}, true, 4 * tile960},
		{"two adjacent holes merge", true, []int{4, 5}, true, 4 * tile960},
		{"last tile merges with the tail", true, []int{8}, true, 8 * tile960},
		{"first of two isolated holes hidden", true, []int{2, 6}, false, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := subAllocator{staleMax: c.staleMax}
			slots := fill(&a, 9, tile960)
			_, ok := a.alloc(tile960) // lowers available_max
			require.False(t, ok)
			for _, i := range c.free {
				require.False(t, a.release(slots[i], tile960))
			}
			s, ok := a.alloc(tile960)
			require.Equal(t, c.found, ok)
			if ok {
				require.Equal(t, c.start, s.start)
			}
		})
	}
}

func TestSuballocatorKeepsFourEmptyChunks(t *testing.T) {
	var a subAllocator
	// Five chunks of one tile each: a chunk with room for more is searched
	// first, so each tile goes to a fresh chunk only when forced to.
	var slots []subSlot
	for range 5 {
		slots = append(slots, a.grow(tile960))
	}
	require.Len(t, a.chunks, 5)
	var released []bool
	for _, s := range slots {
		released = append(released, a.release(s, tile960))
	}
	require.Equal(t, []bool{false, false, false, false, true}, released, "CHUNKS_NFREE: four empty chunks are kept")
	require.Len(t, a.chunks, 4)
	require.Equal(t, 4, a.nfree)
	_, ok := a.alloc(tile960)
	require.True(t, ok)
	require.Equal(t, 3, a.nfree, "an empty chunk taken again is no longer free")
}

func TestSuballocatorFreedChunkGoesFirst(t *testing.T) {
	var a subAllocator
	slots := fill(&a, 18, tile960) // two full chunks; the second is first
	first, second := a.chunks[1], a.chunks[0]
	require.Same(t, first, slots[0].c)
	require.False(t, a.release(slots[8], tile960)) // last tile of the first chunk: merges with its tail
	require.Same(t, first, a.chunks[0], "a chunk with freed room moves to the front")
	require.Same(t, second, a.chunks[1])
	s, ok := a.alloc(tile960)
	require.True(t, ok)
	require.Same(t, first, s.c)
}

// TestSuballocatorFailFast checks the bound that lets a failed search skip
// the next ones: it must never skip room that a scan would find.
func TestSuballocatorFailFast(t *testing.T) {
	for _, staleMax := range []bool{false, true} {
		a := subAllocator{staleMax: staleMax}
		slots := fill(&a, 18, tile960) // two full chunks
		_, ok := a.alloc(tile960)
		require.False(t, ok)
		require.Equal(t, subChunkBlocks-9*tile960, a.maxAll, "exact after a failed search")
		_, ok = a.alloc(subChunkBlocks - 9*tile960)
		require.True(t, ok, "the tail still fits a run as long as the bound")
		require.NoError(t, a.check())
		// Freeing two neighbours merges them: the bound rises, a tile fits.
		a.release(slots[3], tile960)
		a.release(slots[4], tile960)
		require.NoError(t, a.check())
		s, ok := a.alloc(tile960)
		require.True(t, ok, "staleMax=%v", staleMax)
		require.Equal(t, slots[3], s)
		a.grow(tile960)
		require.Equal(t, int32(subChunkBlocks), a.maxAll, "a new chunk raises the bound")
		require.NoError(t, a.check())
	}
}
