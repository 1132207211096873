package dag

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"

	"github.com/starsim/starsim/calibrate/starpu"
	"github.com/starsim/starsim/internal/jsonpos"
	"github.com/starsim/starsim/internal/srcerr"
	"github.com/starsim/starsim/runtime/graph"
)

// WfCommons' WfFormat (github.com/wfcommons/WfFormat): workflow instances,
// versions 1.4 (tasks with their files and runtimes under "workflow") and
// 1.5/1.6 ("workflow.specification" for the structure, "workflow.execution"
// for the runtimes). Tasks become tasks, files data (read by the tasks
// that take them as input, written by those that produce them), parents
// dependencies, and recorded runtimes durations on CPU workers (WfCommons
// records runs on CPU hosts; a task runs on one worker whatever its
// recorded core count). Unknown properties are allowed, as WfFormat
// allows them.

type wfInstance struct {
	Name          string          `json:"name"`
	SchemaVersion string          `json:"schemaVersion"`
	Workflow      json.RawMessage `json:"workflow"`
}

type wfWorkflow15 struct {
	Specification *struct {
		Tasks []struct {
			Name        string   `json:"name"`
			ID          string   `json:"id"`
			Parents     []string `json:"parents"`
			Children    []string `json:"children"`
			InputFiles  []string `json:"inputFiles"`
			OutputFiles []string `json:"outputFiles"`
		} `json:"tasks"`
		Files []wfFile `json:"files"`
	} `json:"specification"`
	Execution *struct {
		Tasks []struct {
			ID       string   `json:"id"`
			Runtime  *float64 `json:"runtimeInSeconds"`
			Priority *float64 `json:"priority"`
			Command  *struct {
				Program string `json:"program"`
			} `json:"command"`
		} `json:"tasks"`
	} `json:"execution"`
}

type wfFile struct {
	ID        string `json:"id"`
	SizeBytes *int64 `json:"sizeInBytes"`
}

type wfWorkflow14 struct {
	Tasks []struct {
		Name     string   `json:"name"`
		ID       string   `json:"id"`
		Category string   `json:"category"`
		Parents  []string `json:"parents"`
		Children []string `json:"children"`
		Runtime  *float64 `json:"runtimeInSeconds"`
		Priority *float64 `json:"priority"`
		Files    []struct {
			Link      string `json:"link"`
			Name      string `json:"name"`
			Path      string `json:"path"`
			SizeBytes *int64 `json:"sizeInBytes"`
		} `json:"files"`
	} `json:"tasks"`
}

// wfTask is a task of either version, before ordering.
type wfTask struct {
	ref      string // how parents name it: the ID (1.5+) or the name (1.4)
	kernel   string
	runtimeS float64
	priority int
	parents  []string
	children []string
	in, out  []string
	path     []any // JSON path, for lines
}

// wfIDSuffix is WfCommons' unique suffix of task names ("individuals_ID0000001").
var wfIDSuffix = regexp.MustCompile(`_(ID)?[0-9]+$`)

// ReadWfFormat reads a WfCommons workflow instance; name labels errors.
// It returns notes on what was assumed.
func ReadWfFormat(data []byte, name string) (*graph.Graph, []string, error) {
	var inst wfInstance
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&inst); err != nil {
		return nil, nil, jsonpos.DecodeError(data, name, "", err, -1)
	}
	line := func(path ...any) int { return jsonpos.Line(data, path...) }
	if len(inst.Workflow) == 0 {
		return nil, nil, srcerr.Errorf(name, 1, "no workflow: not a WfFormat instance")
	}
	var tasks []wfTask
	files := map[string]int64{}
	var fileOrder []string
	addFile := func(id string, size *int64, path []any) error {
		if size == nil {
			return srcerr.Errorf(name, line(path...), "file %q has no sizeInBytes", id)
		}
		if *size < 0 || *size > MaxSizeBytes {
			return srcerr.Errorf(name, line(path...), "file %q: sizeInBytes %d: want 0 to 2^50", id, *size)
		}
		if old, ok := files[id]; ok {
			if old != *size {
				return srcerr.Errorf(name, line(path...), "file %q: sizeInBytes %d, but %d elsewhere", id, *size, old)
			}
			return nil
		}
		files[id] = *size
		fileOrder = append(fileOrder, id)
		return nil
	}
	switch v := inst.SchemaVersion; v {
	case "1.5", "1.6":
		var wf wfWorkflow15
		if err := json.Unmarshal(inst.Workflow, &wf); err != nil {
			return nil, nil, jsonpos.DecodeError(data, name, "workflow", err, -1)
		}
		if wf.Specification == nil {
			return nil, nil, srcerr.Errorf(name, line("workflow"), "workflow has no specification")
		}
		for i, f := range wf.Specification.Files {
			if err := addFile(f.ID, f.SizeBytes, []any{"workflow", "specification", "files", i}); err != nil {
				return nil, nil, err
			}
		}
		type exec struct {
			runtime  *float64
			priority *float64
			program  string
			i        int
		}
		execs := map[string]exec{}
		if wf.Execution != nil {
			for i, e := range wf.Execution.Tasks {
				x := exec{runtime: e.Runtime, priority: e.Priority, i: i}
				if e.Command != nil {
					x.program = e.Command.Program
				}
				execs[e.ID] = x
			}
		}
		for i, st := range wf.Specification.Tasks {
			path := []any{"workflow", "specification", "tasks", i}
			if st.ID == "" {
				return nil, nil, srcerr.Errorf(name, line(path...), "task %d has no id", i)
			}
			t := wfTask{ref: st.ID, kernel: wfIDSuffix.ReplaceAllString(st.Name, ""), parents: st.Parents, children: st.Children, in: st.InputFiles, out: st.OutputFiles, path: path}
			x, ok := execs[st.ID]
			if !ok || x.runtime == nil {
				return nil, nil, srcerr.Errorf(name, line(path...), "task %s has no runtimeInSeconds in workflow.execution: its duration is unknown", st.ID)
			}
			t.runtimeS = *x.runtime
			if x.program != "" {
				t.kernel = x.program
			}
			if x.priority != nil {
				t.priority = int(*x.priority)
				if *x.priority != math.Trunc(*x.priority) || t.priority != int(int32(t.priority)) {
					return nil, nil, srcerr.Errorf(name, line("workflow", "execution", "tasks", x.i, "priority"), "task %s: priority %v: want a 32-bit integer", st.ID, *x.priority)
				}
			}
			tasks = append(tasks, t)
		}
	case "1.4":
		var wf wfWorkflow14
		if err := json.Unmarshal(inst.Workflow, &wf); err != nil {
			return nil, nil, jsonpos.DecodeError(data, name, "workflow", err, -1)
		}
		for i, wt := range wf.Tasks {
			path := []any{"workflow", "tasks", i}
			if wt.Name == "" {
				return nil, nil, srcerr.Errorf(name, line(path...), "task %d has no name", i)
			}
			kernel := wt.Category
			if kernel == "" {
				kernel = wfIDSuffix.ReplaceAllString(wt.Name, "")
			}
			if wt.Runtime == nil {
				return nil, nil, srcerr.Errorf(name, line(path...), "task %s has no runtimeInSeconds: its duration is unknown", wt.Name)
			}
			t := wfTask{ref: wt.Name, kernel: kernel, runtimeS: *wt.Runtime, parents: wt.Parents, children: wt.Children, path: path}
			if wt.Priority != nil {
				t.priority = int(*wt.Priority)
				if *wt.Priority != math.Trunc(*wt.Priority) || t.priority != int(int32(t.priority)) {
					return nil, nil, srcerr.Errorf(name, line(append(path, "priority")...), "task %s: priority %v: want a 32-bit integer", wt.Name, *wt.Priority)
				}
			}
			for j, f := range wt.Files {
				id := f.Path + f.Name
				if err := addFile(id, f.SizeBytes, append(path, "files", j)); err != nil {
					return nil, nil, err
				}
				switch strings.ToLower(f.Link) {
				case "input":
					t.in = append(t.in, id)
				case "output":
					t.out = append(t.out, id)
				default:
					return nil, nil, srcerr.Errorf(name, line(append(path, "files", j)...), "file %q: link %q: want input or output", id, f.Link)
				}
			}
			tasks = append(tasks, t)
		}
	default:
		return nil, nil, srcerr.Errorf(name, line("schemaVersion"), "schemaVersion %q: starsim reads WfFormat 1.4, 1.5 and 1.6", v)
	}
	return wfGraph(inst.Name, tasks, files, fileOrder, name, line)
}

// wfGraph orders the tasks by their parents and builds the graph.
func wfGraph(wfName string, tasks []wfTask, files map[string]int64, fileOrder []string, name string, line func(...any) int) (*graph.Graph, []string, error) {
	n := len(tasks)
	if n == 0 {
		return nil, nil, srcerr.Errorf(name, 0, "no task")
	}
	if n > MaxTasks {
		return nil, nil, srcerr.Errorf(name, 0, "%d tasks: at most %d", n, MaxTasks)
	}
	index := make(map[string]int, n)
	for i, t := range tasks {
		if _, dup := index[t.ref]; dup {
			return nil, nil, srcerr.Errorf(name, line(t.path...), "task %s named twice", t.ref)
		}
		index[t.ref] = i
	}
	// Dependencies are declared at either end, or both: each counts once.
	var edges []edge
	seen := map[[2]int]bool{}
	preds := make([][]int, n)
	add := func(from, to int) {
		if !seen[[2]int{from, to}] {
			seen[[2]int{from, to}] = true
			edges = append(edges, edge{from, to, 0})
			preds[to] = append(preds[to], from)
		}
	}
	for i, t := range tasks {
		for _, p := range t.parents {
			j, ok := index[p]
			if !ok {
				return nil, nil, srcerr.Errorf(name, line(t.path...), "task %s: parent %q is no task of the workflow", t.ref, p)
			}
			add(j, i)
		}
		for _, c := range t.children {
			j, ok := index[c]
			if !ok {
				return nil, nil, srcerr.Errorf(name, line(t.path...), "task %s: child %q is no task of the workflow", t.ref, c)
			}
			add(i, j)
		}
	}
	order, err := topoOrder(n, make([]int, n), edges, name, func(v int) (string, int) { return "task " + tasks[v].ref, line(tasks[v].path...) })
	if err != nil {
		return nil, nil, err
	}
	pos := make([]int, n)
	for i, v := range order {
		pos[v] = i
	}
	g := &graph.Graph{Name: wfName, Tasks: make([]graph.Task, n)}
	if g.Name == "" {
		g.Name = fmt.Sprintf("workflow of %d tasks", n)
	}
	fileID := make(map[string]int, len(fileOrder))
	for _, f := range fileOrder {
		fileID[f] = len(g.Handles)
		g.Handles = append(g.Handles, graph.Handle{ID: len(g.Handles), Name: f, SizeBytes: files[f],
			Footprint: starpu.SizeFootprint(uint64(files[f])), NoSeqConsistency: true})
	}
	zero := 0
	for i, v := range order {
		wt := &tasks[v]
		if !finiteIn(wt.runtimeS, 0, MaxDurationUS/1e6) {
			return nil, nil, srcerr.Errorf(name, line(wt.path...), "task %s: runtimeInSeconds %v: want 0 to 1e6 s", wt.ref, wt.runtimeS)
		}
		us := wt.runtimeS * 1e6
		if us == 0 {
			us, zero = 1e-3, zero+1
		}
		kernel := wt.kernel
		if kernel == "" {
			kernel = "task"
		}
		t := graph.Task{ID: i, Name: kernel, Model: kernel, Priority: wt.priority, DurationsUS: map[string]float64{"cpu": us}}
		modes := map[int]graph.Mode{}
		var hs []int
		for _, lst := range []struct {
			ids  []string
			mode graph.Mode
		}{{wt.in, graph.R}, {wt.out, graph.W}} {
			for _, f := range lst.ids {
				h, ok := fileID[f]
				if !ok {
					return nil, nil, srcerr.Errorf(name, line(wt.path...), "task %s: file %q is not among the workflow's files", wt.ref, f)
				}
				if _, seen := modes[h]; !seen {
					hs = append(hs, h)
				}
				modes[h] |= lst.mode
			}
		}
		if len(hs) > MaxAccesses {
			return nil, nil, srcerr.Errorf(name, line(wt.path...), "task %s: %d files, at most %d", wt.ref, len(hs), MaxAccesses)
		}
		fps := make([]uint32, len(hs))
		for j, h := range hs {
			t.Buffers = append(t.Buffers, graph.Access{Handle: h, Mode: modes[h]})
			fps[j] = g.Handles[h].Footprint
		}
		t.Footprint = starpu.TaskFootprint(fps)
		for _, p := range preds[v] {
			t.Deps = append(t.Deps, pos[p])
		}
		sort.Ints(t.Deps)
		g.Tasks[i] = t
	}
	notes := []string{"workflow tasks run on CPU workers for their recorded runtimes (durations_us cpu), one worker each"}
	if zero > 0 {
		notes = append(notes, fmt.Sprintf("%d tasks of runtime 0 run for 1 ns (the runtime needs a duration > 0)", zero))
	}
	return g, notes, nil
}
