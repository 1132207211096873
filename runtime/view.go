package runtime

import (
	"math"
	"math/bits"
	"math/rand/v2"

	"github.com/starsim/starsim/runtime/graph"
	"github.com/starsim/starsim/runtime/machine"
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
		h := b.h
		if b.mode&graph.R == 0 || h.size == 0 {
			continue
		}
		if (h.ready()|h.loading)&bit != 0 {
			continue
		}
		total += s.predictFetchUS(h, w.Node)
	}
	return total
}

// predictFetchUS: the cheapest valid source over a direct route, else the
// path through RAM.
func (s *Simulator) predictFetchUS(h *handleState, dst int) float64 {
	best := math.Inf(1)
	size := h.size
	for set := h.ready() &^ (1 << uint(dst)); set != 0; set &= set - 1 {
		n := bits.TrailingZeros64(set)
		if s.route(n, dst) != nil {
			best = min(best, s.predictUS(n, dst, size))
		} else {
			best = min(best, s.predictUS(n, 0, size)+s.predictUS(0, dst, size))
		}
	}
	if math.IsInf(best, 1) {
		return 0
	}
	return best
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
		h := b.h
		r := &h.reps[w.Node]
		r.protect++ // (evictable reads it: the list move may wait)
		if b.mode&graph.R != 0 {
			s.fetch(h, w.Node, levelTaskPrefetch, int(t.prio), waiter{})
		}
		s.nodes[w.Node].relist(r) // a hit moved it already
	}
}

// NonReadyBytes sizes t's inputs that are not ready on w's node.
func (s *Simulator) NonReadyBytes(t *TaskState, w *Worker) (nonReady, nonLoading, nonAllocated int64) {
	return nonReadyBytes(t.bufs, w.Node)
}

// nonReadyBytes is NonReadyBytes of the buffers bufs on node.
func nonReadyBytes(bufs []taskBuf, node int) (nonReady, nonLoading, nonAllocated int64) {
	bit := uint64(1) << uint(node)
	for _, b := range bufs {
		r, l, a := b.h.nonReady(b.mode&graph.R != 0, bit)
		nonReady, nonLoading, nonAllocated = nonReady+r, nonLoading+l, nonAllocated+a
	}
	return
}

// nonReady is what h adds to a task's NonReadyBytes on the node of bit:
// its size if read and not valid there (and if not being loaded there
// either), and if not allocated there.
func (h *handleState) nonReady(read bool, bit uint64) (nonReady, nonLoading, nonAllocated int64) {
	if read && h.ready()&bit == 0 {
		nonReady = h.size
		if h.loading&bit == 0 {
			nonLoading = h.size
		}
	}
	if h.allocated&bit == 0 {
		nonAllocated = h.size
	}
	return
}

// Rand is the run's seeded generator.
func (s *Simulator) Rand() *rand.Rand { return s.rng }

// Graph is the task graph the run runs (read-only).
func (s *Simulator) Graph() *graph.Graph { return s.g }

// Machine is the machine the run simulates (read-only: schedulers that
// describe it to others, such as an external agent, read it).
func (s *Simulator) Machine() *machine.Machine { return s.m }

// MemoryNode is a memory node as a scheduler may describe it.
type MemoryNode struct {
	Name          string // "RAM", "CUDA0"
	CapacityBytes int64  // what the run may use there; 0: unlimited
}

// MemoryNodes lists the run's memory nodes, by index (Worker.Node).
func (s *Simulator) MemoryNodes() []MemoryNode {
	out := make([]MemoryNode, len(s.nodes))
	for i, n := range s.nodes {
		out[i] = MemoryNode{Name: n.name, CapacityBytes: n.capacity}
	}
	return out
}
