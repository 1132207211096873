package dag

import (
	"container/heap"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/starsim/starsim/calibrate/starpu"
	"github.com/starsim/starsim/internal/srcerr"
	"github.com/starsim/starsim/runtime/graph"
)

// DOT attributes read. Nodes are tasks: size (DAGGEN's computation cost
// and SimGrid's, in flops) or flops, kernel (the task's kernel name,
// default "task"), model (its perf-model symbol, default the kernel),
// footprint (hex), priority, and duration_us_<arch> per arch or kind
// (duration_us_cpu, duration_us_cuda0). Edges are dependencies: size (in
// bytes, DAGGEN's and SimGrid's communication) makes the edge a data the
// source writes and the target reads.
const durationAttr = "duration_us_"

// ReadDOT reads a task graph from a DOT digraph; name labels errors. The
// tasks are submitted in a topological order of the edges, ties to the
// node whose statement comes first in the file (a node named by edges
// only: where it first appears). It also returns notes on what was
// read and ignored (attributes starsim has no use for, such as DAGGEN's
// alpha).
func ReadDOT(data []byte, name string) (*graph.Graph, []string, error) {
	dg, err := parseDOT(data, name, MaxTasks)
	if err != nil {
		return nil, nil, err
	}
	n := len(dg.nodes)
	if n == 0 {
		return nil, nil, srcerr.Errorf(name, 0, "no node: a task graph needs tasks")
	}
	es := make([]edge, len(dg.edges))
	for i, e := range dg.edges {
		es[i] = edge{e.from, e.to, e.line}
	}
	rank := make([]int, n) // a node's place: its statement's line, else where it first appears
	for i, nd := range dg.nodes {
		rank[i] = nd.line
	}
	order, err := topoOrder(n, rank, es, name, func(v int) (string, int) { return "node " + dg.nodes[v].id, dg.nodes[v].line })
	if err != nil {
		return nil, nil, err
	}
	pos := make([]int, n) // node index -> task index
	for i, v := range order {
		pos[v] = i
	}
	g := &graph.Graph{Name: dg.name, Tasks: make([]graph.Task, n)}
	if g.Name == "" {
		g.Name = fmt.Sprintf("task graph of %d tasks", n)
	}
	ignored := map[string]bool{}
	for i, v := range order {
		t, err := dotTask(dg.nodes[v], i, name, ignored)
		if err != nil {
			return nil, nil, err
		}
		g.Tasks[i] = t
	}
	// Edges, in file order: dependencies, and data when they carry bytes.
	for _, e := range dg.edges {
		from, to := pos[e.from], pos[e.to]
		var size int64
		for _, k := range sortedKeys(e.attrs) {
			a := e.attrs[k]
			if k != "size" {
				ignored["edge "+k] = true
				continue
			}
			v, err := strconv.ParseFloat(strings.TrimSpace(a.val), 64)
			if err != nil || !finiteIn(v, 0, MaxSizeBytes) {
				return nil, nil, srcerr.Errorf(name, a.line, "edge %s -> %s: size %q: want bytes, 0 to 2^50", dg.nodes[e.from].id, dg.nodes[e.to].id, a.val)
			}
			size = int64(math.Round(v))
		}
		tt := &g.Tasks[to]
		tt.Deps = append(tt.Deps, from)
		if size == 0 {
			continue
		}
		if len(g.Handles) >= MaxData {
			return nil, nil, srcerr.Errorf(name, e.line, "more than %d data", MaxData)
		}
		h := len(g.Handles)
		g.Handles = append(g.Handles, graph.Handle{ID: h, Name: dg.nodes[e.from].id + "->" + dg.nodes[e.to].id,
			SizeBytes: size, Footprint: starpu.SizeFootprint(uint64(size)), NoSeqConsistency: true})
		g.Tasks[from].Buffers = append(g.Tasks[from].Buffers, graph.Access{Handle: h, Mode: graph.W})
		tt.Buffers = append(tt.Buffers, graph.Access{Handle: h, Mode: graph.R})
	}
	for i := range g.Tasks {
		t := &g.Tasks[i]
		sort.Ints(t.Deps)
		// Inputs first, then outputs, each in edge order.
		sort.SliceStable(t.Buffers, func(a, b int) bool { return t.Buffers[a].Mode == graph.R && t.Buffers[b].Mode != graph.R })
		if len(t.Buffers) > MaxAccesses {
			return nil, nil, srcerr.Errorf(name, dg.nodes[order[i]].line, "node %s: %d data edges, at most %d", dg.nodes[order[i]].id, len(t.Buffers), MaxAccesses)
		}
		if t.Footprint == 0 && !hasAttr(dg.nodes[order[i]], "footprint") {
			fps := make([]uint32, len(t.Buffers))
			for j, b := range t.Buffers {
				fps[j] = g.Handles[b.Handle].Footprint
			}
			t.Footprint = starpu.TaskFootprint(fps)
		}
		g.TotalFlops += t.Flops
	}
	var notes []string
	if len(ignored) > 0 {
		notes = append(notes, "attributes read and ignored: "+strings.Join(sortedKeys(ignored), ", ")+
			" (a task runs on one worker: DAGGEN's alpha, Amdahl's fraction of a moldable task, does not apply)")
	}
	return g, notes, nil
}

func hasAttr(n *dotNode, k string) bool { _, ok := n.attrs[k]; return ok }

// dotTask is the task of node nd, submitted i-th.
func dotTask(nd *dotNode, i int, file string, ignored map[string]bool) (graph.Task, error) {
	t := graph.Task{ID: i, Name: "task"}
	bad := func(a dotAttr, k, want string) error {
		return srcerr.Errorf(file, a.line, "node %s: %s %q: want %s", nd.id, k, a.val, want)
	}
	flopsSet := ""
	for _, k := range sortedKeys(nd.attrs) {
		a := nd.attrs[k]
		v := strings.TrimSpace(a.val)
		switch {
		case k == "size" || k == "flops":
			if flopsSet != "" {
				return t, srcerr.Errorf(file, a.line, "node %s: both %s and %s give its flops", nd.id, flopsSet, k)
			}
			flopsSet = k
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || !finiteIn(f, 0, MaxFlops) {
				return t, bad(a, k, "flops, 0 to 1e18")
			}
			t.Flops = f
		case k == "kernel":
			if v == "" {
				return t, bad(a, k, "a kernel name")
			}
			t.Name = v
		case k == "model":
			if v == "" {
				return t, bad(a, k, "a perf-model symbol")
			}
			t.Model = v
		case k == "footprint":
			fp, ok := parseHex(v)
			if !ok {
				return t, bad(a, k, "1 to 8 hexadecimal digits")
			}
			t.Footprint = fp
		case k == "priority":
			p, err := strconv.ParseInt(v, 10, 32)
			if err != nil {
				return t, bad(a, k, "a 32-bit integer")
			}
			t.Priority = int(p)
		case strings.HasPrefix(k, durationAttr):
			arch := strings.TrimPrefix(k, durationAttr)
			if !archName(arch) {
				return t, srcerr.Errorf(file, a.line, "node %s: %s: want %s<arch>, the arch (cuda0) or kind (cuda) in lower case", nd.id, k, durationAttr)
			}
			us, err := strconv.ParseFloat(v, 64)
			if err != nil || !finiteIn(us, 0, MaxDurationUS) || us == 0 {
				return t, bad(a, k, "a duration in µs, > 0 and <= 1e12")
			}
			if t.DurationsUS == nil {
				t.DurationsUS = map[string]float64{}
			}
			t.DurationsUS[arch] = us
		default:
			ignored[k] = true
		}
	}
	if t.Model == "" {
		t.Model = t.Name
	}
	return t, nil
}

// topoOrder orders n nodes so that every edge goes forward, taking among
// the nodes ready the one of lowest rank (then index). A self-edge or a
// cycle is an error naming a node on it (at: its name and line).
func topoOrder(n int, rank []int, edges []edge, file string, at func(v int) (string, int)) ([]int, error) {
	indeg := make([]int, n)
	out := make([][]int, n)
	for _, e := range edges {
		if e.from == e.to {
			id, line := at(e.from)
			if e.line > 0 {
				line = e.line
			}
			return nil, srcerr.Errorf(file, line, "%s depends on itself", id)
		}
		out[e.from] = append(out[e.from], e.to)
		indeg[e.to]++
	}
	ready := &rankHeap{rank: rank}
	for v := 0; v < n; v++ {
		if indeg[v] == 0 {
			heap.Push(ready, v)
		}
	}
	order := make([]int, 0, n)
	for ready.Len() > 0 {
		v := heap.Pop(ready).(int)
		order = append(order, v)
		for _, w := range out[v] {
			if indeg[w]--; indeg[w] == 0 {
				heap.Push(ready, w)
			}
		}
	}
	if len(order) < n {
		// Every node left has a predecessor left: walking back from one
		// reaches a node twice, which is on a cycle.
		in := make([][]int, n)
		for _, e := range edges {
			in[e.to] = append(in[e.to], e.from)
		}
		v := 0
		for indeg[v] == 0 {
			v++
		}
		seen := map[int]bool{}
		for !seen[v] {
			seen[v] = true
			for _, u := range in[v] {
				if indeg[u] > 0 {
					v = u
					break
				}
			}
		}
		id, line := at(v)
		return nil, srcerr.Errorf(file, line, "%s is on a cycle of dependencies: a task graph has none", id)
	}
	return order, nil
}

// edge is a dependency from -> to, written at line (0: at the node's).
type edge struct{ from, to, line int }

// rankHeap holds node indexes, lowest (rank, index) first.
type rankHeap struct {
	v    []int
	rank []int
}

func (h *rankHeap) Len() int { return len(h.v) }
func (h *rankHeap) Less(i, j int) bool {
	a, b := h.v[i], h.v[j]
	if h.rank[a] != h.rank[b] {
		return h.rank[a] < h.rank[b]
	}
	return a < b
}
func (h *rankHeap) Swap(i, j int) { h.v[i], h.v[j] = h.v[j], h.v[i] }
func (h *rankHeap) Push(x any)    { h.v = append(h.v, x.(int)) }
func (h *rankHeap) Pop() any {
	x := h.v[len(h.v)-1]
	h.v = h.v[:len(h.v)-1]
	return x
}
