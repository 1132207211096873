// Package memory holds the data's copies over the memory nodes and decides
// what happens to them, as StarPU 1.4's memory manager does (memalloc.c,
// coherency.c, malloc.c). It knows nothing of time, events, transfers or
// tasks: it answers the runtime's questions and returns its decisions; the
// runtime carries them out (copies, device frees, waiting).
//
// # Key concepts
//
//   - Memory node: RAM (node 0, every handle's home, unlimited) or a GPU
//     of limited capacity (Node). Capacity bounds the device memory taken:
//     whole suballocator chunks plus direct buffers.
//   - Handle and Replica: a piece of data and its copy on one node. A copy
//     has an MSI state (Invalid, Shared, Owner), may be allocated, held by
//     tasks that fetched it (Pin), protected by a pending task prefetch
//     (Protect), loading (a copy into it under way) or being written back.
//     Bit sets on the Handle mirror the copies' validity, allocation and
//     loading for the schedulers' queries (NonReadyBytes, Ready).
//   - LRU lists: each node keeps its allocated copies least recently used
//     first, in two lists (main, and prot for protected copies) that share
//     one order by stamps; an index of each list's droppable copies (those
//     invalid or valid elsewhere) lets a full device find a victim without
//     walking its sole owners. Only allocations and request hits make a
//     copy recently used (Touch); wont_use makes it the first evicted.
//   - Suballocator: GPU buffers of at most 4 MiB are cut out of 32 MiB
//     chunks in 16 KiB blocks, first fit, in StarPU's chunk order, four
//     empty chunks kept (suballoc.go).
//
// # Decisions
//
//   - Allocate: a free slot, a new device buffer (a cudaMalloc's cost for
//     the caller), Reuse of a victim's buffer, NeedReclaim, or NoRoom.
//   - The victim rules (victim.go, one function each): what a level may
//     evict (evictable), which same-size copy a full device reuses
//     (reuseVictim), which copy the generic reclaim takes next and whether
//     it is dropped or written back first (NextVictim), which dirty copies
//     are written back to keep some clean (Tidy).
//   - Coherence: Write, CopyDone, WriteBackDone apply MSI's transitions.
//
// A run's end state is checked by CheckEnd (every handle valid somewhere,
// nothing held, accounts matching the copies).
package memory
