package sim

import (
	"fmt"
	"math"

	"github.com/starsim/starsim/runtime/graph"
	"github.com/starsim/starsim/runtime/memory"
)

// checker holds what Options.Check verifies beyond the simulator's own
// state: kernels running per worker, starts and ends per task, and the
// data version each copy holds (nil without Check).
//
// Invariants, each failing the run at once or at the end:
//   - a worker runs one kernel at a time (a GPU's device included);
//   - each task starts once and ends once, after its dependencies;
//   - a task reads the last written version of each input (a copy holds
//     the version of its source when it was issued; a write makes the
//     writer's copy the new version);
//   - at the end, every task ran exactly once, each data was written by as
//     many tasks as write it, every valid copy holds its last version (so
//     the data StarPU writes back to RAM at unregistration is the last
//     written), and no worker was busy longer than the makespan.
type checker struct {
	running     []int    // kernels running, per worker
	starts      []uint8  // per task
	ends        []uint8  // per task
	ver         []uint64 // [handle*nodes+node]: version of that copy
	writes      []uint64 // [handle]: tasks that write it
	nodes       int
	copyVersion map[*request]uint64 // version a copy carries, from its issue
}

func newChecker(s *Simulator) *checker {
	c := &checker{running: make([]int, len(s.workers)), starts: make([]uint8, len(s.tasks)),
		ends: make([]uint8, len(s.tasks)), ver: make([]uint64, s.mem.NumHandles()*len(s.nodes)),
		writes: make([]uint64, s.mem.NumHandles()), nodes: len(s.nodes), copyVersion: map[*request]uint64{}}
	for i := range s.g.Tasks {
		seen := map[int]bool{}
		for _, a := range s.g.Tasks[i].Buffers {
			if a.Mode&graph.W != 0 && !seen[a.Handle] {
				seen[a.Handle] = true
				c.writes[a.Handle]++
			}
		}
	}
	return c
}

func (c *checker) version(h *memory.Handle, node int) *uint64 { return &c.ver[h.ID()*c.nodes+node] }

// kernelStart checks a kernel's start on w.
func (s *Simulator) checkKernelStart(w *worker, t *TaskState) {
	c := s.chk
	if c.running[w.ID]++; c.running[w.ID] > 1 {
		s.fail(fmt.Errorf("check: %s starts task %d (%s) while %d other kernel(s) run on it: one kernel at a time per worker", w.Name, t.ID(), t.Spec().Name, c.running[w.ID]-1))
	}
	if c.starts[t.ID()]++; c.starts[t.ID()] > 1 {
		s.fail(fmt.Errorf("check: task %d (%s) starts a second time, on %s", t.ID(), t.Spec().Name, w.Name))
	}
	for _, b := range t.Buffers() {
		if b.Mode&graph.R != 0 && b.H.Rep(w.Node).State() != memory.Invalid {
			if v := *c.version(b.H, w.Node); v != b.H.Version() {
				s.fail(fmt.Errorf("check: task %d (%s) reads version %d of %s on %s, the last written is %d", t.ID(), t.Spec().Name, v, b.H.Spec().Name, w.Name, b.H.Version()))
			}
		}
	}
}

// checkKernelEnd checks a kernel's end on w.
func (s *Simulator) checkKernelEnd(w *worker, t *TaskState) {
	c := s.chk
	c.running[w.ID]--
	if c.ends[t.ID()]++; c.ends[t.ID()] > 1 {
		s.fail(fmt.Errorf("check: task %d (%s) ends a second time", t.ID(), t.Spec().Name))
	}
}

// checkWrite records that t's write made w's node hold h's new version.
func (s *Simulator) checkWrite(h *memory.Handle, node int) { *s.chk.version(h, node) = h.Version() }

// checkCopyIssued records the version a copy carries: its source's now.
func (s *Simulator) checkCopyIssued(req *request) {
	s.chk.copyVersion[req] = *s.chk.version(req.h, req.src)
}

// checkCopyDone gives a completed copy's destination the version it
// carried, when the copy made it valid.
func (s *Simulator) checkCopyDone(req *request) {
	c := s.chk
	v, ok := c.copyVersion[req]
	delete(c.copyVersion, req)
	if !ok {
		s.fail(fmt.Errorf("check: a copy of %s to %s completes without having been issued", req.h.Spec().Name, s.nodes[req.dst].Name))
		return
	}
	if req.version != req.h.Version() {
		return // written meanwhile: the copy left its destination invalid
	}
	*c.version(req.h, req.dst) = v
}

// checkEnd verifies the end state's tasks, data versions and busy times.
func (s *Simulator) checkEnd() error {
	c := s.chk
	for i := range s.tasks {
		if c.starts[i] != 1 || c.ends[i] != 1 {
			t := &s.tasks[i]
			return fmt.Errorf("check: task %d (%s) started %d and ended %d times: each task runs exactly once", i, t.Spec().Name, c.starts[i], c.ends[i])
		}
	}
	for i := 0; i < s.mem.NumHandles(); i++ {
		h := s.mem.Handle(i)
		if h.Version() != c.writes[h.ID()] {
			return fmt.Errorf("check: %s was written %d times, by %d tasks that write it", h.Spec().Name, h.Version(), c.writes[h.ID()])
		}
		for n := range s.nodes {
			if h.Rep(n).State() != memory.Invalid && *c.version(h, n) != h.Version() {
				return fmt.Errorf("check: at the end, the valid copy of %s on %s holds version %d, the last written is %d: the data written back to RAM would be stale",
					h.Spec().Name, s.nodes[n].Name, *c.version(h, n), h.Version())
			}
		}
	}
	mk := s.lastEndS
	for _, w := range s.workers {
		if w.busyS > mk*(1+1e-9) {
			return fmt.Errorf("check: %s was busy %v s, longer than the %v s makespan", w.Name, w.busyS, mk)
		}
	}
	if math.IsNaN(mk) || math.IsInf(mk, 0) || mk < 0 {
		return fmt.Errorf("check: makespan %v s", mk)
	}
	return nil
}

// fault is a bug planted by tests (export_test.go) to show that Check
// catches it; always faultNone otherwise.
type fault uint8

const (
	faultNone fault = iota
	// faultOverlapKernels lets a GPU start a kernel while one runs.
	faultOverlapKernels
	// faultKernelBeforeData starts kernels without fetching what they read.
	faultKernelBeforeData
	// faultOverCapacity lets a GPU allocate beyond its memory.
	faultOverCapacity
	// faultNoInvalidate leaves other copies valid when a task writes.
	faultNoInvalidate
)

var plantedFault fault

// finalCheck verifies the end state: no copy queued, pinned or protected;
// each node's used memory is the sum of its allocated copies; every handle
// has a valid copy; every byte queued for a copy was copied exactly once.
func (s *Simulator) finalCheck() error {
	if err := s.checkEnd(); err != nil {
		return err
	}
	for i := range s.dirs {
		for _, d := range s.dirs[i] {
			if d != nil && (len(d.queue) > 0 || d.issued > 0 || len(d.pend) > 0) {
				return fmt.Errorf("check: %d copies %s->%s left queued at the end", len(d.queue), s.nodes[d.src].Name, s.nodes[d.dst].Name)
			}
		}
	}
	if err := s.mem.CheckEnd(); err != nil {
		return err
	}
	for i := 0; i < s.mem.NumHandles(); i++ {
		h := s.mem.Handle(i)
		for n := range s.nodes {
			if (h.Loading()&(1<<uint(n)) != 0) != (s.incoming[i*len(s.nodes)+n] != nil) {
				return fmt.Errorf("check: %s on %s: loading bit and incoming copy disagree", h.Spec().Name, s.nodes[n].Name)
			}
		}
	}
	var counted float64
	for i := range s.dirs {
		for _, d := range s.dirs[i] {
			if d != nil {
				counted += d.bytes
			}
		}
	}
	if counted != s.queuedBytes {
		return fmt.Errorf("check: %v bytes queued for copies, %v copied", s.queuedBytes, counted)
	}
	return nil
}
