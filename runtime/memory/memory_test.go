package memory

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/starsim/starsim/runtime/graph"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	tileBytes = 960 * 960 * 4 // suballocated: 225 blocks, nine per chunk
	bigBytes  = 8 << 20       // over 4 MiB: a direct buffer
)

// newMem makes RAM and one GPU of capacity gpuBytes (0: unlimited), and
// handles of the given sizes.
func newMem(t *testing.T, gpuBytes int64, sizes ...int64) *Memory {
	t.Helper()
	m, err := New([]NodeSpec{{Name: "RAM"}, {Name: "CUDA0", CapacityBytes: gpuBytes}}, false)
	require.NoError(t, err)
	var hs []graph.Handle
	for i, s := range sizes {
		hs = append(hs, graph.Handle{ID: i, Name: fmt.Sprint("H", i), SizeBytes: s})
	}
	require.NoError(t, m.SetHandles(hs))
	return m
}

// load allocates handle id on the GPU and makes it a copy of RAM's
// (shared: valid elsewhere) or, with dirty, the only valid copy (a task
// wrote it there).
func load(t *testing.T, m *Memory, id int, dirty bool) *Replica {
	t.Helper()
	h := m.Handle(id)
	a := m.Allocate(h, 1, Fetch)
	require.Contains(t, []AllocKind{Allocated, NewBuffer}, a.Kind, "handle %d", id)
	m.CopyDone(h, 0, 1)
	if dirty {
		m.Write(h, 1)
	}
	return h.Rep(1)
}

func TestAllocateOutcomes(t *testing.T) {
	t.Run("RAM: no cost", func(t *testing.T) {
		m := newMem(t, 0, tileBytes)
		h := m.Handle(0)
		m.Evict(h.Rep(0), true)
		assert.Equal(t, Alloc{Kind: Allocated}, m.Allocate(h, 0, Fetch))
		assert.Zero(t, m.Allocations)
	})
	t.Run("a new chunk, then its free slots", func(t *testing.T) {
		m := newMem(t, 0, tileBytes, tileBytes)
		assert.Equal(t, NewBuffer, m.Allocate(m.Handle(0), 1, Fetch).Kind)
		assert.Equal(t, Allocated, m.Allocate(m.Handle(1), 1, Fetch).Kind)
		assert.Equal(t, 1, m.Allocations)
		assert.Equal(t, int64(subChunkBytes), m.Nodes[1].DevUsed(), "whole chunks count")
		assert.Equal(t, int64(2*tileBytes), m.Nodes[1].Used())
	})
	t.Run("a direct buffer", func(t *testing.T) {
		m := newMem(t, 0, bigBytes)
		assert.Equal(t, NewBuffer, m.Allocate(m.Handle(0), 1, Fetch).Kind)
		assert.Equal(t, int64(bigBytes), m.Nodes[1].DevUsed())
	})
	t.Run("no room for a chunk", func(t *testing.T) {
		m := newMem(t, subChunkBytes-1, tileBytes)
		assert.Equal(t, NeedReclaim, m.Allocate(m.Handle(0), 1, Fetch).Kind)
		assert.Equal(t, NoRoom, m.Allocate(m.Handle(0), 1, Idle).Kind, "idle requests never evict")
	})
}

// fullGPU is a GPU holding one chunk, full of nine tiles (0-8), and a
// tenth tile (9) to allocate.
func fullGPU(t *testing.T) *Memory {
	sizes := make([]int64, 10)
	for i := range sizes {
		sizes[i] = tileBytes
	}
	m := newMem(t, subChunkBytes, sizes...)
	return m
}

// Reuse takes the least recently used copy of the same size that needs
// no write-back and that the request's level may evict.
func TestReuseVictim(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(m *Memory) // tiles 0-8 loaded, 0 least recently used
		lvl   Level
		want  AllocKind
		vict  int
	}{
		{"shared copies: the LRU one", func(m *Memory) {}, Fetch, Reuse, 0},
		{"an invalid copy", func(m *Memory) {
			for i := 0; i < 9; i++ {
				m.Write(m.Handle(i), 1) // all dirty
			}
			m.Write(m.Handle(4), 0) // written in RAM: the GPU copy is invalid
		}, Fetch, Reuse, 4},
		{"sole owners need the generic reclaim", func(m *Memory) {
			for i := 0; i < 9; i++ {
				m.Write(m.Handle(i), 1)
			}
		}, Fetch, NeedReclaim, -1},
		{"a copy in use is skipped", func(m *Memory) { m.Pin(m.Handle(0), 1) }, Fetch, Reuse, 1},
		{"a copy being loaded is skipped", func(m *Memory) { m.SetLoading(m.Handle(0), 1, true) }, Fetch, Reuse, 1},
		{"a copy being written back is skipped", func(m *Memory) { m.StartWriteBack(m.Handle(0).Rep(1)) }, Fetch, Reuse, 1},
		{"a touched copy goes last", func(m *Memory) { m.Touch(m.Handle(0), 1) }, Fetch, Reuse, 1},
		{"wont_use puts a copy first", func(m *Memory) { m.WontUse(m.Handle(5)) }, Fetch, Reuse, 5},
		{"prefetches spare protected copies", func(m *Memory) {
			m.Protect(m.Handle(0), 1)
			m.Relist(m.Handle(0), 1)
		}, Prefetch, Reuse, 1},
		{"task prefetches too", func(m *Memory) {
			m.Protect(m.Handle(0), 1)
			m.Relist(m.Handle(0), 1)
		}, TaskPrefetch, Reuse, 1},
		{"a fetch takes them, in one LRU order", func(m *Memory) {
			m.Protect(m.Handle(0), 1)
			m.Relist(m.Handle(0), 1)
		}, Fetch, Reuse, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := fullGPU(t)
			for i := 0; i < 9; i++ {
				load(t, m, i, false)
			}
			tc.setup(m)
			a := m.Allocate(m.Handle(9), 1, tc.lvl)
			require.Equal(t, tc.want, a.Kind)
			if tc.vict < 0 {
				assert.Nil(t, a.Victim)
				return
			}
			require.NotNil(t, a.Victim)
			assert.Equal(t, tc.vict, a.Victim.Handle().ID())
			m.Reuse(m.Handle(9), a.Victim)
			assert.False(t, a.Victim.Allocated())
			assert.True(t, m.Handle(9).Rep(1).Allocated())
			assert.Equal(t, int64(subChunkBytes), m.Nodes[1].DevUsed(), "the buffer changed hands")
			assert.Equal(t, 1, m.Evictions)
			require.NoError(t, m.Nodes[1].checkLRU())
		})
	}
	t.Run("another size is not reused", func(t *testing.T) {
		// A tile (225 blocks) and 16 half tiles (113 blocks) fill a chunk
		// of 2048 blocks; only the tile may be dropped.
		sizes := []int64{tileBytes}
		for range 17 {
			sizes = append(sizes, tileBytes/2)
		}
		m := newMem(t, subChunkBytes, sizes...)
		load(t, m, 0, false)
		for i := 1; i <= 16; i++ {
			load(t, m, i, true)
		}
		assert.Equal(t, NeedReclaim, m.Allocate(m.Handle(17), 1, Fetch).Kind)
	})
}

// The generic reclaim takes copies in LRU order: droppable ones are
// dropped, sole owners written back first.
func TestNextVictim(t *testing.T) {
	m := fullGPU(t)
	for i := 0; i < 9; i++ {
		load(t, m, i, i%2 == 0) // even tiles dirty
	}
	m.Pin(m.Handle(1), 1) // in use
	r, a := m.NextVictim(1, Fetch)
	require.NotNil(t, r)
	assert.Equal(t, 0, r.Handle().ID())
	assert.Equal(t, WriteBack, a)
	m.StartWriteBack(r)
	r, a = m.NextVictim(1, Fetch)
	assert.Equal(t, 2, r.Handle().ID(), "0 is being written back, 1 is in use")
	assert.Equal(t, WriteBack, a)
	m.Touch(m.Handle(2), 1)
	m.Touch(m.Handle(4), 1)
	m.Touch(m.Handle(6), 1)
	m.Touch(m.Handle(8), 1)
	r, a = m.NextVictim(1, Fetch)
	assert.Equal(t, 3, r.Handle().ID())
	assert.Equal(t, Drop, a, "valid in RAM too")
	assert.Equal(t, "drop", a.String())
	assert.Equal(t, "write-back", WriteBack.String())

	// The write-back of 0 ends: home is valid again, the copy freeable.
	h0 := m.Handle(0)
	m.WriteBackDone(h0, 1, 0, h0.Version())
	assert.True(t, m.EndWriteBack(h0.Rep(1)))
	// A write-back overtaken by a write leaves home invalid.
	h2 := m.Handle(2)
	v := h2.Version()
	m.StartWriteBack(h2.Rep(1))
	m.Write(h2, 1)
	m.WriteBackDone(h2, 1, 0, v)
	assert.Equal(t, Invalid, h2.Rep(0).State())
	assert.False(t, m.EndWriteBack(h2.Rep(1)), "the only valid copy")
	// A copy a task took meanwhile is kept.
	h4 := m.Handle(4)
	m.StartWriteBack(h4.Rep(1))
	m.WriteBackDone(h4, 1, 0, h4.Version())
	m.Pin(h4, 1)
	assert.False(t, m.EndWriteBack(h4.Rep(1)))
}

// A reclaim that finds no victim is not retried until the node changes.
func TestNoVictimMemo(t *testing.T) {
	m := fullGPU(t)
	for i := 0; i < 9; i++ {
		load(t, m, i, true)
		m.Pin(m.Handle(i), 1)
	}
	h := m.Handle(9)
	assert.Equal(t, NeedReclaim, m.Allocate(h, 1, Fetch).Kind)
	assert.False(t, m.CanReclaim(1, Fetch))
	assert.Equal(t, NoRoom, m.Allocate(h, 1, Fetch).Kind, "memo")
	assert.Equal(t, NeedReclaim, m.Allocate(h, 1, Prefetch).Kind, "per level")
	m.Unpin(m.Handle(3), 1)
	m.Nodes[1].Changed()
	assert.Equal(t, NeedReclaim, m.Allocate(h, 1, Fetch).Kind)
	assert.True(t, m.CanReclaim(1, Fetch))
}

// MSI: a write leaves one owner; a copy makes both ends shared; the dirty
// count follows home's validity.
func TestCoherence(t *testing.T) {
	m := newMem(t, 0, tileBytes)
	h := m.Handle(0)
	m.Allocate(h, 1, Fetch)
	assert.Equal(t, []State{Owner, Invalid}, []State{h.Rep(0).State(), h.Rep(1).State()})
	m.CopyDone(h, 0, 1)
	assert.Equal(t, []State{Shared, Shared}, []State{h.Rep(0).State(), h.Rep(1).State()})
	assert.Equal(t, uint64(3), h.Ready())
	assert.Zero(t, m.Nodes[1].ndirty)
	m.Write(h, 1)
	assert.Equal(t, []State{Invalid, Owner}, []State{h.Rep(0).State(), h.Rep(1).State()})
	assert.Equal(t, uint64(1), h.Version())
	assert.Equal(t, 1, m.Nodes[1].ndirty)
	m.CopyDone(h, 1, 0)
	assert.Equal(t, []State{Shared, Shared}, []State{h.Rep(0).State(), h.Rep(1).State()})
	assert.Zero(t, m.Nodes[1].ndirty)
	require.NoError(t, h.checkBits())
	m.NoInvalidate = true
	m.Write(h, 1)
	assert.Equal(t, Shared, h.Rep(0).State(), "the planted fault leaves home valid")
}

// A device copy is dirty while it is valid and home is not: one that
// another device's write invalidated counts as clean (StarPU's chunk keeps
// its clean flag), and ownership taken without a write dirties it too.
func TestDirtyCount(t *testing.T) {
	m, err := New([]NodeSpec{{Name: "RAM"}, {Name: "CUDA0", CapacityBytes: 0}, {Name: "CUDA1", CapacityBytes: 0}}, false)
	require.NoError(t, err)
	require.NoError(t, m.SetHandles([]graph.Handle{{ID: 0, Name: "H0", SizeBytes: tileBytes}}))
	h := m.Handle(0)
	for _, n := range []int{1, 2} {
		m.Allocate(h, n, Fetch)
		m.CopyDone(h, 0, n)
	}
	dirty := func() [3]int { return [3]int{m.Nodes[0].ndirty, m.Nodes[1].ndirty, m.Nodes[2].ndirty} }
	assert.Equal(t, [3]int{0, 0, 0}, dirty(), "copies of a valid home")
	m.Own(h, 1)
	assert.Equal(t, uint64(0), h.Version(), "ownership is no write")
	assert.Equal(t, [3]int{0, 1, 0}, dirty(), "CUDA1's invalid copy is clean")
	m.CopyDone(h, 1, 2)
	assert.Equal(t, [3]int{0, 1, 1}, dirty(), "both valid, home not")
	m.Write(h, 2)
	assert.Equal(t, [3]int{0, 0, 1}, dirty(), "CUDA0's copy invalid again")
	m.Evict(&h.reps[1], true)
	m.Evict(&h.reps[2], true)
	assert.Equal(t, [3]int{0, 0, 0}, dirty(), "evicted")
}

func TestNonReady(t *testing.T) {
	m := newMem(t, 0, 100, 200)
	a, b := m.Handle(0), m.Handle(1)
	bufs := []Buf{{H: a, Mode: graph.R}, {H: b, Mode: graph.W}}
	nr, nl, na := NonReadyBytes(bufs, 1)
	assert.Equal(t, [3]int64{100, 100, 300}, [3]int64{nr, nl, na})
	m.SetLoading(a, 1, true)
	nr, nl, na = NonReadyBytes(bufs, 1)
	assert.Equal(t, [3]int64{100, 0, 300}, [3]int64{nr, nl, na})
	nr, nl, na = NonReadyBytes(bufs, 0)
	assert.Equal(t, [3]int64{0, 0, 0}, [3]int64{nr, nl, na})
}

// Tidy writes back the least recently used dirty copies when fewer than
// 5 % are clean, up to 10 %.
func TestTidy(t *testing.T) {
	sizes := make([]int64, 40)
	for i := range sizes {
		sizes[i] = 1 << 20
	}
	m := newMem(t, 0, sizes...)
	for i := range sizes {
		load(t, m, i, true)
	}
	m.Pin(m.Handle(0), 1)
	got := m.Tidy(1)
	var ids []int
	for _, h := range got {
		ids = append(ids, h.ID())
	}
	assert.Equal(t, []int{1, 2, 3, 4}, ids, "10 %% of 40, skipping the copy in use")
	assert.Empty(t, m.Tidy(1), "nothing new until the node changes")
	// The caller queues their copies home: they are skipped from then on.
	for _, id := range ids {
		m.SetLoading(m.Handle(id), 0, true)
	}
	m.Nodes[1].Changed()
	assert.Empty(t, m.Tidy(1), "the 4 queued count as clean: 10 %")
	// Written back: clean.
	for _, id := range ids {
		h := m.Handle(id)
		m.SetLoading(h, 0, false)
		m.WriteBackDone(h, 1, 0, h.Version())
	}
	assert.Equal(t, 36, m.Nodes[1].ndirty)
	assert.Empty(t, m.Tidy(0), "RAM is home")
}

func TestNeedBytes(t *testing.T) {
	m := newMem(t, 0, tileBytes, tileBytes, bigBytes)
	a, b, c := m.Handle(0), m.Handle(1), m.Handle(2)
	bufs := []Buf{{H: a}, {H: b}, {H: c}, {H: a}}
	assert.Equal(t, int64(3*subChunkBytes+bigBytes), NeedBytes(bufs, 1<<40), "the bound when it fits")
	assert.Equal(t, int64(subChunkBytes+bigBytes), NeedBytes(bufs, 0), "two tiles share a chunk; a repeated handle counts once")
}

func TestCheckEnd(t *testing.T) {
	m := newMem(t, 0, tileBytes)
	load(t, m, 0, false)
	require.NoError(t, m.CheckEnd())
	m.Pin(m.Handle(0), 1)
	assert.ErrorContains(t, m.CheckEnd(), "H0 on CUDA0 still pinned")
}

// TestRelistKeepsLRUOrder: protections, touches and wont_use hints in a
// seeded random order keep each list in stamp order, holding exactly the
// copies its protection says, with the stamp order links over both lists
// (checkLRU); relist's two racing walks must agree on every move.
func TestRelistKeepsLRUOrder(t *testing.T) {
	const n = 9
	m := fullGPU(t)
	for i := 0; i < n; i++ {
		load(t, m, i, false)
	}
	node := m.Nodes[1]
	rng := rand.New(rand.NewPCG(1, 2))
	relists := 0
	for step := 0; step < 5000; step++ {
		h := m.Handle(rng.IntN(n))
		r := h.Rep(1)
		switch rng.IntN(5) {
		case 0, 1:
			m.Protect(h, 1)
			m.Relist(h, 1)
			relists++
		case 2:
			if r.protect > 0 {
				m.Unprotect(h, 1)
				m.Relist(h, 1)
				relists++
			}
		case 3:
			m.Touch(h, 1)
		case 4:
			m.WontUse(h)
		}
		require.NoError(t, node.checkLRU(), "step %d", step)
		for i := 0; i < n; i++ {
			r := m.Handle(i).Rep(1)
			require.Equal(t, node.listFor(r), r.list, "step %d: handle %d in the list of its protection", step, i)
		}
	}
	assert.Greater(t, relists, 1000)
}
