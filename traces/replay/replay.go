package replay

import (
	"fmt"
	"sort"
	"strings"

	"github.com/starsim/starsim/internal/srcerr"
	"github.com/starsim/starsim/models"
	"github.com/starsim/starsim/runtime/graph"
	"github.com/starsim/starsim/traces"
)

// Executed returns the executed records of recs (not Control records, and
// with WorkerId, StartTime and EndTime) in the order Graph submits them,
// its tasks' order: by SubmitOrder, else JobId, else place in recs.
func Executed(recs []traces.TaskRecord) []*traces.TaskRecord {
	rs, _ := executed(recs)
	return rs
}

// executed is Executed, with each record's submission key (SubmitOrder,
// else JobId, else place), non-decreasing.
func executed(recs []traces.TaskRecord) (rs []*traces.TaskRecord, keys []int64) {
	type exec struct {
		r     *traces.TaskRecord
		order int64
	}
	var ex []exec
	for i := range recs {
		r := &recs[i]
		if r.Control != "" || r.WorkerID == nil || r.StartTime == nil || r.EndTime == nil {
			continue
		}
		order := int64(i)
		if r.SubmitOrder != nil {
			order = *r.SubmitOrder
		} else if r.JobID != nil {
			order = *r.JobID
		}
		ex = append(ex, exec{r, order})
	}
	sort.SliceStable(ex, func(a, b int) bool { return ex[a].order < ex[b].order })
	rs, keys = make([]*traces.TaskRecord, len(ex)), make([]int64, len(ex))
	for i, e := range ex {
		rs[i], keys[i] = e.r, e.order
	}
	return rs, keys
}

// Options control how a recorded trace becomes a task graph.
type Options struct {
	// StaticWorkerID pins every task to the worker that ran it.
	StaticWorkerID bool
	// HasModel reports whether the calibration knows a model symbol (any
	// arch); it picks among the names of both StarPU generations.
	HasModel func(symbol string) bool
	// TotalFlops, when > 0, is the flop count GFlop/s is computed from
	// (default: the sum of the records' GFlop).
	TotalFlops float64
	// File names the trace in errors ("FILE:LINE: reason").
	File string
	// IgnoreMissingDeps drops DependsOn entries naming a JobId that no
	// record of the trace has (a warning says how many), instead of
	// failing.
	IgnoreMissingDeps bool
}

// Graph rebuilds the task graph of a recorded run, as starpu_replay does:
// every record with a WorkerId and times is a task, in SubmitOrder
// (WontUse control records are honoured); each
// distinct handle becomes a data of the recorded size (home RAM);
// dependencies are DependsOn plus the implicit data ones (the runtime adds
// those from the access modes); priorities, footprints and GFlop are kept.
// A model the calibration lacks under every StarPU name pins its task to the
// recorded worker for its recorded length (StarPU's replay does the same,
// but mixes up ms and µs; here the length is converted). It returns the
// graph and a warning per such model.
//
// The dependency graph must be sound: a JobId repeated, a SubmitOrder
// repeated among executed tasks, a self-dependency, a cycle, or a task
// depending on one submitted after it (the replay submits in SubmitOrder,
// and a task can only wait for one submitted before it) is an error at the
// record's line. A DependsOn naming a JobId no record has is an error
// unless IgnoreMissingDeps. A dependency on a record that did not execute
// (a StarPU-internal task) stands for that record's own dependencies.
func Graph(recs []traces.TaskRecord, o Options) (*graph.Graph, []string, error) {
	var wontUse []*traces.TaskRecord
	for i := range recs {
		if r := &recs[i]; r.Control == "WontUse" && r.SubmitOrder != nil {
			wontUse = append(wontUse, r)
		}
	}
	order, keys := executed(recs)
	if len(order) == 0 {
		return nil, nil, srcerr.Errorf(o.File, 0, "no executed task (records with WorkerId, StartTime and EndTime)")
	}
	deps, dropped, err := resolveDeps(recs, order, o)
	if err != nil {
		return nil, nil, err
	}
	g := &graph.Graph{Name: fmt.Sprintf("replay of %d tasks", len(order))}
	handles := map[string]int{}
	var warn []string
	if dropped > 0 {
		warn = append(warn, fmt.Sprintf("%d DependsOn entries name a JobId absent from the trace: dropped (--ignore-missing-deps)", dropped))
	}
	warned := map[string]bool{}
	gflops := 0.0
	for i, r := range order {
		task := graph.Task{ID: i, Name: r.Name, Model: r.Model, SyncGPU: models.SyncGPUModel(r.Model)}
		if task.Name == "" {
			task.Name = r.Model
		}
		if r.Priority != nil {
			task.Priority = *r.Priority
		}
		if r.Footprint != nil {
			task.Footprint = *r.Footprint
		}
		if r.GFlop != nil {
			task.Flops = *r.GFlop * 1e9
			gflops += *r.GFlop
		}
		if len(r.Modes) != len(r.Handles) {
			return nil, nil, srcerr.Errorf(o.File, r.Line, "%d handles but %d modes", len(r.Handles), len(r.Modes))
		}
		for k, hx := range r.Handles {
			id, ok := handles[hx]
			if !ok {
				id = len(g.Handles)
				handles[hx] = id
				size := int64(0)
				if k < len(r.Sizes) {
					size = r.Sizes[k]
				}
				g.Handles = append(g.Handles, graph.Handle{ID: id, Name: "h" + hx, SizeBytes: size})
			}
			mode, err := parseMode(r.Modes[k])
			if err != nil {
				return nil, nil, srcerr.Errorf(o.File, r.Line, "%v", err)
			}
			task.Buffers = append(task.Buffers, graph.Access{Handle: id, Mode: mode})
		}
		task.Deps = deps[i]
		if o.StaticWorkerID {
			task.Pinned, task.Worker = true, *r.WorkerID
		}
		if sym, ok := models.ResolveModel(task.Model, o.HasModel); ok {
			task.Model = sym
		} else {
			task.Pinned, task.Worker = true, *r.WorkerID
			task.FixedUS = (*r.EndTime - *r.StartTime) * 1e3
			if !warned[task.Model] {
				warned[task.Model] = true
				warn = append(warn, fmt.Sprintf("model %q not in the calibration under any StarPU name: its tasks run on their recorded worker for their recorded length", task.Model))
			}
		}
		g.Tasks = append(g.Tasks, task)
	}
	// A wont_use belongs to the last task submitted at or before it.
	for _, r := range wontUse {
		i := sort.Search(len(keys), func(i int) bool { return keys[i] > *r.SubmitOrder }) - 1
		if i < 0 {
			continue
		}
		for _, hx := range r.Handles {
			if id, ok := handles[hx]; ok {
				g.Tasks[i].WontUse = append(g.Tasks[i].WontUse, id)
			}
		}
	}
	g.TotalFlops = gflops * 1e9
	if o.TotalFlops > 0 {
		g.TotalFlops = o.TotalFlops
	}
	return g, warn, nil
}

// resolveDeps checks the records' dependency graph (see Graph) and returns
// each executed task's dependencies as indexes into the submission order
// (exec, the executed records in that order), and how many DependsOn
// entries were dropped for naming no record.
func resolveDeps(recs []traces.TaskRecord, exec []*traces.TaskRecord, o Options) ([][]int, int, error) {
	pos := make(map[*traces.TaskRecord]int, len(exec))
	for i, r := range exec {
		pos[r] = i
	}
	byJob := make(map[int64]*traces.TaskRecord, len(recs))
	for i := range recs {
		r := &recs[i]
		if r.JobID == nil {
			continue
		}
		if first, ok := byJob[*r.JobID]; ok {
			return nil, 0, srcerr.Errorf(o.File, r.Line, "JobId %d repeated (first on line %d): each JobId names one task", *r.JobID, first.Line)
		}
		byJob[*r.JobID] = r
	}
	for i := 1; i < len(exec); i++ {
		a, b := exec[i-1], exec[i]
		if a.SubmitOrder != nil && b.SubmitOrder != nil && *a.SubmitOrder == *b.SubmitOrder {
			if b.Line < a.Line {
				a, b = b, a
			}
			return nil, 0, srcerr.Errorf(o.File, b.Line, "SubmitOrder %d repeated (first on line %d): each task is submitted once", *b.SubmitOrder, a.Line)
		}
	}
	dropped := 0
	// The edges of every record, missing JobIds checked.
	edges := make(map[*traces.TaskRecord][]*traces.TaskRecord, len(recs))
	for i := range recs {
		r := &recs[i]
		for _, d := range r.DependsOn {
			if r.JobID != nil && d == *r.JobID {
				return nil, 0, srcerr.Errorf(o.File, r.Line, "job %d depends on itself", d)
			}
			q, ok := byJob[d]
			if !ok {
				if o.IgnoreMissingDeps {
					dropped++
					continue
				}
				return nil, 0, srcerr.Errorf(o.File, r.Line, "%s depends on job %d, which no record of the trace has (--ignore-missing-deps drops such dependencies)", traces.TaskLabel(*r), d)
			}
			edges[r] = append(edges[r], q)
		}
	}
	// Cycles: a depth-first search over every record (iterative: a long
	// chain must not exhaust the stack).
	const (
		unseen = iota
		open
		closed
	)
	state := make(map[*traces.TaskRecord]int, len(recs))
	type frame struct {
		r    *traces.TaskRecord
		next int
	}
	for i := range recs {
		if state[&recs[i]] != unseen {
			continue
		}
		stack := []frame{{&recs[i], 0}}
		state[&recs[i]] = open
		for len(stack) > 0 {
			top := &stack[len(stack)-1]
			if top.next == len(edges[top.r]) {
				state[top.r] = closed
				stack = stack[:len(stack)-1]
				continue
			}
			q := edges[top.r][top.next]
			top.next++
			switch state[q] {
			case open:
				// stack[k] depends on stack[k+1], and the top on q.
				k := len(stack) - 1
				for stack[k].r != q {
					k--
				}
				var path []string
				for ; k < len(stack); k++ {
					path = append(path, fmt.Sprintf("%s (line %d)", traces.TaskLabel(*stack[k].r), stack[k].r.Line))
				}
				return nil, 0, srcerr.Errorf(o.File, top.r.Line, "dependency cycle: %s, which depends on %s", strings.Join(path, ", which depends on "), traces.TaskLabel(*q))
			case unseen:
				state[q] = open
				stack = append(stack, frame{q, 0})
			}
		}
	}
	// Each executed task's dependencies: executed records directly, the
	// others through their own dependencies (memoized; the graph is
	// acyclic now).
	through := map[*traces.TaskRecord][]*traces.TaskRecord{}
	var executedDeps func(r *traces.TaskRecord) []*traces.TaskRecord
	executedDeps = func(r *traces.TaskRecord) []*traces.TaskRecord {
		if ds, ok := through[r]; ok {
			return ds
		}
		var out []*traces.TaskRecord
		for _, q := range edges[r] {
			if _, ok := pos[q]; ok {
				out = append(out, q)
			} else {
				out = append(out, executedDeps(q)...)
			}
		}
		through[r] = out
		return out
	}
	deps := make([][]int, len(exec))
	for i, r := range exec {
		seen := map[int]bool{}
		for _, q := range edges[r] {
			cands := []*traces.TaskRecord{q}
			if _, ok := pos[q]; !ok {
				cands = executedDeps(q)
			}
			for _, c := range cands {
				j := pos[c]
				if j >= i {
					return nil, 0, srcerr.Errorf(o.File, r.Line, "%s depends on %s (line %d), submitted after it: the replay submits tasks in SubmitOrder, and a task can only wait for one submitted before it",
						traces.TaskLabel(*r), traces.TaskLabel(*c), c.Line)
				}
				if !seen[j] {
					seen[j] = true
					deps[i] = append(deps[i], j)
				}
			}
		}
	}
	return deps, dropped, nil
}

func parseMode(m string) (graph.Mode, error) {
	switch strings.ToUpper(m) {
	case "R":
		return graph.R, nil
	case "W":
		return graph.W, nil
	case "RW":
		return graph.RW, nil
	}
	return 0, fmt.Errorf("access mode %q not supported in replay (want R, W or RW)", m)
}
