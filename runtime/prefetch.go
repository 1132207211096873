package runtime

import (
	"github.com/starsim/starsim/runtime/graph"
	"github.com/starsim/starsim/runtime/memory"
)

// prefetch issues task-prefetch requests of t's read inputs on w's node; the
// copies are protected from eviction by other prefetches until t fetches.
func (s *Simulator) prefetch(t *TaskState, w *worker) {
	if s.opts.NoPrefetch || t.prefetched {
		return
	}
	t.prefetched = true
	t.prefetchNode = int32(w.Node)
	for _, b := range t.Buffers() {
		h := b.H
		s.mem.Protect(h, w.Node) // (evictable reads it: the list move may wait)
		if b.Mode&graph.R != 0 {
			s.fetch(h, w.Node, memory.TaskPrefetch, t.Priority(), waiter{})
		}
		s.mem.Relist(h, w.Node) // a hit moved it already
	}
}
