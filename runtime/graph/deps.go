package graph

import "fmt"

// Deps is the dependency graph of a Graph's tasks, derived before a run:
// StarPU's sequential consistency depends on the submission order alone.
// Lists are flat int32 arrays indexed by offsets (dense, cache-friendly,
// and three allocations for any number of tasks).
type Deps struct {
	// Task i depends on PredIDs[PredOff[i]:PredOff[i+1]], in the order
	// found; its successors are Succ[SuccOff[i]:SuccOff[i+1]], in
	// submission order.
	PredIDs, PredOff, SuccOff, Succ []int32
	// NPending[i] counts task i's dependencies plus one (its submission).
	NPending []int32
	// WontUseAfter holds, for each wont_use hint in submission order, the
	// last task that wrote the data before it (-1: none).
	WontUseAfter []int32
}

// Preds are the ids of task i's dependencies.
func (d *Deps) Preds(i int) []int32 { return d.PredIDs[d.PredOff[i]:d.PredOff[i+1]] }

// Succs are the ids of the tasks that depend on task i.
func (d *Deps) Succs(i int) []int32 { return d.Succ[d.SuccOff[i]:d.SuccOff[i+1]] }

// DeriveDeps derives the dependencies as StarPU's sequential consistency
// does at submission: a task depends on its explicit dependencies, on the
// last task that wrote each of its data and, when it writes, on the data's
// readers since then, except on data whose sequential consistency is off
// (Handle.NoSeqConsistency). It works on task indices, not pointers (reading a
// task's id through a pointer costs a cache miss per dependency). An
// explicit dependency not submitted before its task, or a handle out of
// range, is an error.
func DeriveDeps(g *Graph) (*Deps, error) {
	n, nh := len(g.Tasks), len(g.Handles)
	nbuf := 0
	for i := range g.Tasks {
		nbuf += len(g.Tasks[i].Buffers)
	}
	lastWriter := make([]int32, nh) // -1: none
	for i := range lastWriter {
		lastWriter[i] = -1
	}
	// The readers of each handle since its last write: a list, in the
	// order they read it, through one slab (slices per handle would grow
	// again and again). head and tail are -1 when the list is empty.
	type reader struct{ task, next int32 }
	readers := make([]reader, 0, nbuf)
	head, tail := make([]int32, nh), make([]int32, nh)
	for i := range head {
		head[i] = -1
	}
	d := &Deps{PredIDs: make([]int32, 0, nbuf), PredOff: make([]int32, n+1), NPending: make([]int32, n)}
	nsucc := make([]int32, n+1)
	for i := range g.Tasks {
		t := &g.Tasks[i]
		p0 := len(d.PredIDs)
		add := func(p int32) {
			if p < 0 || p == int32(i) {
				return
			}
			for _, q := range d.PredIDs[p0:] {
				if q == p {
					return
				}
			}
			if len(d.PredIDs) == cap(d.PredIDs) {
				d.PredIDs = growPreds(d.PredIDs, i, n)
			}
			d.PredIDs = append(d.PredIDs, p)
		}
		for _, dep := range t.Deps {
			if dep < 0 || dep >= i {
				return nil, fmt.Errorf("task %d (%s) depends on task %d, not submitted before it", i, t.Name, dep)
			}
			add(int32(dep))
		}
		for _, a := range t.Buffers {
			id := a.Handle
			if id < 0 || id >= nh {
				return nil, fmt.Errorf("task %d (%s): unknown handle %d", i, t.Name, id)
			}
			if g.Handles[id].NoSeqConsistency {
				if a.Mode&W != 0 {
					lastWriter[id] = int32(i) // for wont_use only
				}
				continue
			}
			add(lastWriter[id])
			if a.Mode&W != 0 {
				for r := head[id]; r >= 0; r = readers[r].next {
					add(readers[r].task)
				}
				lastWriter[id], head[id] = int32(i), -1
			} else {
				r := int32(len(readers))
				readers = append(readers, reader{int32(i), -1})
				if head[id] < 0 {
					head[id] = r
				} else {
					readers[tail[id]].next = r
				}
				tail[id] = r
			}
		}
		for _, hid := range t.WontUse {
			if hid < 0 || hid >= nh {
				return nil, fmt.Errorf("task %d (%s): wont_use of unknown handle %d", i, t.Name, hid)
			}
			d.WontUseAfter = append(d.WontUseAfter, lastWriter[hid])
		}
		d.PredOff[i+1] = int32(len(d.PredIDs))
		for _, p := range d.PredIDs[p0:] {
			nsucc[p+1]++
		}
		// Every dependency counts, plus one until the task is submitted:
		// one that ends before the submission is counted off at its end.
		d.NPending[i] = int32(1 + len(d.PredIDs) - p0)
	}
	for i := 0; i < n; i++ {
		nsucc[i+1] += nsucc[i]
	}
	d.SuccOff = nsucc
	d.Succ = make([]int32, nsucc[n])
	next := append([]int32(nil), nsucc[:n]...)
	for i := 0; i < n; i++ {
		for _, p := range d.Preds(i) {
			d.Succ[next[p]] = int32(i)
			next[p]++
		}
	}
	return d, nil
}

// growPreds gives the full dependency list of the tasks before task i (of
// n) room for the rest at the rate so far, plus an eighth: a graph with
// more dependencies than buffers (writers after many readers) then grows
// its list about once, where append's steps of a quarter for large slices
// would copy it several times (a million-task graph's list is tens of MB).
func growPreds(p []int32, i, n int) []int32 {
	c := len(p) + len(p)/8 + 64
	if i > 0 {
		c = max(c, int(int64(len(p))*int64(n)/int64(i)*9/8)+64)
	}
	q := make([]int32, len(p), c)
	copy(q, p)
	return q
}
