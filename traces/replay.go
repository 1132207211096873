package traces

import (
	"fmt"
	"sort"
	"strings"

	"github.com/starsim/starsim/models/generation"
	"github.com/starsim/starsim/runtime"
)

// ReplayOptions control how a recorded trace becomes a task graph.
type ReplayOptions struct {
	// StaticWorkerID pins every task to the worker that ran it.
	StaticWorkerID bool
	// HasModel reports whether the calibration knows a model symbol (any
	// arch); it picks among the names of both StarPU generations.
	HasModel func(symbol string) bool
	// TotalFlops, when > 0, is the flop count GFlop/s is computed from
	// (default: the sum of the records' GFlop).
	TotalFlops float64
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
func Graph(recs []TaskRecord, o ReplayOptions) (*runtime.Graph, []string, error) {
	type exec struct {
		r     *TaskRecord
		order int64
	}
	var tasks []exec
	var wontUse []*TaskRecord
	for i := range recs {
		r := &recs[i]
		if r.Control == "WontUse" && r.SubmitOrder != nil {
			wontUse = append(wontUse, r)
			continue
		}
		if r.Control != "" || r.WorkerID == nil || r.StartTime == nil || r.EndTime == nil {
			continue
		}
		order := int64(i)
		if r.SubmitOrder != nil {
			order = *r.SubmitOrder
		} else if r.JobID != nil {
			order = *r.JobID
		}
		tasks = append(tasks, exec{r, order})
	}
	if len(tasks) == 0 {
		return nil, nil, fmt.Errorf("no executed task (records with WorkerId, StartTime and EndTime)")
	}
	sort.SliceStable(tasks, func(a, b int) bool { return tasks[a].order < tasks[b].order })
	g := &runtime.Graph{Name: fmt.Sprintf("replay of %d tasks", len(tasks))}
	handles := map[string]int{}
	byJob := map[int64]int{}
	var warn []string
	warned := map[string]bool{}
	gflops := 0.0
	for i, t := range tasks {
		r := t.r
		if r.JobID != nil {
			byJob[*r.JobID] = i
		}
		task := runtime.Task{ID: i, Name: r.Name, Model: r.Model, SyncGPU: generation.SyncGPUModel(r.Model)}
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
			return nil, nil, fmt.Errorf("record at line %d: %d handles but %d modes", r.Line, len(r.Handles), len(r.Modes))
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
				g.Handles = append(g.Handles, runtime.Handle{ID: id, Name: "h" + hx, SizeBytes: size})
			}
			mode, err := parseMode(r.Modes[k])
			if err != nil {
				return nil, nil, fmt.Errorf("record at line %d: %v", r.Line, err)
			}
			task.Buffers = append(task.Buffers, runtime.Access{Handle: id, Mode: mode})
		}
		for _, d := range r.DependsOn {
			if j, ok := byJob[d]; ok && j < i {
				task.Deps = append(task.Deps, j)
			}
		}
		if o.StaticWorkerID {
			task.Pinned, task.Worker = true, *r.WorkerID
		}
		if sym, ok := generation.ResolveModel(task.Model, o.HasModel); ok {
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
		i := sort.Search(len(tasks), func(i int) bool { return tasks[i].order > *r.SubmitOrder }) - 1
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

func parseMode(m string) (runtime.Mode, error) {
	switch strings.ToUpper(m) {
	case "R":
		return runtime.R, nil
	case "W":
		return runtime.W, nil
	case "RW":
		return runtime.RW, nil
	}
	return 0, fmt.Errorf("access mode %q not supported in replay (want R, W or RW)", m)
}
