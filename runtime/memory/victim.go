package memory

// Victim choice: which copy a full node gives up, and how.

// evictable says whether a reclaim of level lvl may take r now: no task
// holds it, no copy into it or out of it (a write-back) is under way, and
// a prefetch never takes a copy protected by a pending task prefetch
// (starpu_data_can_evict).
func evictable(r *Replica, lvl Level) bool {
	return r.refs == 0 && !r.incoming && !r.evicting && !(lvl >= TaskPrefetch && r.protect > 0)
}

// reuseVictim is the least recently used copy of size bytes on node that a
// reclaim of level lvl may drop without a write-back (Allocate's Reuse),
// nil if none. It walks the droppable indexes (copies that are invalid or
// valid elsewhere, in LRU order), not the whole lists: most of a full
// device's copies are sole owners that only the generic reclaim may take.
// A fetch merges the two lists' indexes by stamp.
func (m *Memory) reuseVictim(node *Node, size int64, lvl Level) *Replica {
	if !node.indexed {
		node.buildIndex()
	}
	if m.CheckLRU && m.err == nil {
		m.err = node.checkLRU()
	}
	a, b := &node.main.drop, &node.prot.drop
	node.main.compact()
	node.main.trimDead()
	if lvl == Fetch {
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
		if !e.live() || e.r.h.size != size || !evictable(e.r, lvl) {
			continue
		}
		return e.r
	}
	return nil
}

// Action is what the generic reclaim does with a victim.
type Action uint8

// Reclaim actions.
const (
	// Drop: the copy is invalid or valid elsewhere; free it at once.
	Drop Action = iota
	// WriteBack: the copy is the only valid one; copy it home, then free
	// it (if no task took it meanwhile: Freeable).
	WriteBack
)

// String is the action's name in decision logs.
func (a Action) String() string {
	if a == WriteBack {
		return "write-back"
	}
	return "drop"
}

// NextVictim is the next copy the generic reclaim of level lvl takes on
// node n (StarPU's _starpu_memory_reclaim_generic: the least recently used
// evictable copy, in one LRU order over both lists for a fetch, the main
// list only otherwise) and what to do with it; nil when none may be taken.
func (m *Memory) NextVictim(n int, lvl Level) (*Replica, Action) {
	r := m.lruVictim(m.Nodes[n], lvl)
	if r == nil {
		return nil, Drop
	}
	if r.state == Invalid || validElsewhere(r) {
		return r, Drop
	}
	return r, WriteBack
}

// CanReclaim reports whether the generic reclaim of level lvl would find a
// victim on node n. When it would not, the node's reclaims of that level
// give up at once (Allocate's NoRoom) until a copy there may have become
// evictable (Node.Changed).
func (m *Memory) CanReclaim(n int, lvl Level) bool {
	node := m.Nodes[n]
	if m.lruVictim(node, lvl) == nil {
		node.noVictim[lvl] = node.evictGen + 1
		return false
	}
	return true
}

// lruVictim is the least recently used copy a reclaim of level lvl may
// take: one LRU order over both lists for a fetch, main only otherwise.
func (m *Memory) lruVictim(node *Node, lvl Level) *Replica {
	var a, b *Replica
	for a = node.main.head; a != nil && !evictable(a, lvl); a = a.next {
	}
	if lvl == Fetch {
		for b = node.prot.head; b != nil && !evictable(b, lvl); b = b.next {
		}
	}
	if a == nil || (b != nil && b.stamp < a.stamp) {
		return b
	}
	return a
}

// validElsewhere reports whether another node holds a valid copy of r's data.
func validElsewhere(r *Replica) bool {
	n := r.h.NValid()
	if r.state != Invalid && r.allocated {
		n--
	}
	return n > 0
}

// StartWriteBack marks r as being written back home before its eviction:
// no reclaim takes it meanwhile.
func (m *Memory) StartWriteBack(r *Replica) { r.evicting = true }

// EndWriteBack ends r's write-back and reports whether r may be freed now:
// no task took it and no copy into it started meanwhile, and the data is
// valid elsewhere (home, unless a task wrote it meanwhile).
func (m *Memory) EndWriteBack(r *Replica) (freeable bool) {
	r.evicting = false
	return r.refs == 0 && !r.incoming && validElsewhere(r)
}

// Clean-buffer targets of StarPU's memchunk tidy (STARPU_MINIMUM_CLEAN_BUFFERS
// and STARPU_TARGET_CLEAN_BUFFERS, in %).
const minCleanPct, targetCleanPct = 5, 10

// tidyScan bounds the copies one tidy call examines.
const tidyScan = 64

// Tidy chooses the device copies on node n to write back so that some stay
// clean, as StarPU's starpu_memchunk_tidy: when fewer than 5 % of the
// allocated copies are clean, dirty ones (least recently used first) until
// 10 % would be. It counts them as tidying until TidyDone; the caller
// queues their idle-level copies home. The slice is reused by the next
// call.
func (m *Memory) Tidy(n int) []*Handle {
	node := m.Nodes[n]
	m.tidy = m.tidy[:0]
	if n == 0 || node.nalloc == 0 {
		return m.tidy
	}
	// A copy whose write-back is queued counts as clean already, as
	// StarPU marks its chunk clean when it queues the write-back.
	clean := node.nalloc - node.ndirty + node.tidying
	if clean*100 >= minCleanPct*node.nalloc || node.tidyGen == node.evictGen+1 {
		return m.tidy
	}
	node.tidyGen = node.evictGen + 1 // nothing new to write back until copies change
	want := (targetCleanPct*node.nalloc + 99) / 100
	// Look at a bounded number of copies from the LRU head per call, as
	// StarPU resumes from its dirty-list head rather than rescanning.
	scanned := 0
	for r := node.main.head; r != nil && clean < want && scanned < tidyScan; r = r.next {
		scanned++
		h := r.h
		if h.reps[0].state != Invalid || h.reps[0].incoming || r.state == Invalid || r.refs > 0 || r.evicting {
			continue
		}
		node.tidying++
		clean++
		m.tidy = append(m.tidy, h)
	}
	return m.tidy
}

// TidyDone ends one of node n's tidy write-backs.
func (m *Memory) TidyDone(n int) { m.Nodes[n].tidying-- }
