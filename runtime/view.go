package runtime

import (
	"math/rand/v2"

	"github.com/starsim/starsim/runtime/graph"
	"github.com/starsim/starsim/runtime/memory"
)

// The Simulator is the View its scheduler sees.

// NowUS is the simulated time in µs.
func (s *Simulator) NowUS() float64 { return s.eng.NowS() * 1e6 }

// Workers lists the workers (CPU workers first, then GPUs).
func (s *Simulator) Workers() []*Worker { return s.workers }

// CanExecute reports whether t's kernel is calibrated for w's arch.
func (s *Simulator) CanExecute(t *TaskState, w *Worker) bool {
	return s.kernelStats(t, w) != nil
}

// ExpectedLengthUS is the model's mean of t on w, in µs.
func (s *Simulator) ExpectedLengthUS(t *TaskState, w *Worker) float64 {
	if k := s.kernelStats(t, w); k != nil {
		return k.MeanUS
	}
	return 0
}

// ExpectedTransferUS predicts the time to bring t's inputs on w's node
// (starpu_task_expected_data_transfer_time_for).
func (s *Simulator) ExpectedTransferUS(t *TaskState, w *Worker) float64 {
	total := 0.0
	bit := uint64(1) << uint(w.Node)
	for _, b := range t.bufs {
		h := b.H
		if b.Mode&graph.R == 0 || h.Size() == 0 {
			continue
		}
		if (h.Ready()|h.Loading())&bit != 0 {
			continue
		}
		total += s.cost.FetchUS(h.Ready(), w.Node, h.Size())
	}
	return total
}

// Prefetch issues task-prefetch requests of t's read inputs on w's node; the
// copies are protected from eviction by other prefetches until t fetches.
func (s *Simulator) Prefetch(t *TaskState, w *Worker) {
	if s.opts.NoPrefetch || t.prefetched {
		return
	}
	t.prefetched = true
	t.prefetchNode = int32(w.Node)
	for _, b := range t.bufs {
		h := b.H
		s.mem.Protect(h, w.Node) // (evictable reads it: the list move may wait)
		if b.Mode&graph.R != 0 {
			s.fetch(h, w.Node, memory.TaskPrefetch, int(t.prio), waiter{})
		}
		s.mem.Relist(h, w.Node) // a hit moved it already
	}
}

// NonReadyBytes sizes t's inputs that are not ready on w's node.
func (s *Simulator) NonReadyBytes(t *TaskState, w *Worker) (nonReady, nonLoading, nonAllocated int64) {
	return memory.NonReadyBytes(t.bufs, w.Node)
}

// Rand is the run's seeded generator.
func (s *Simulator) Rand() *rand.Rand { return s.rng }
