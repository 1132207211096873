package traces

import (
	"math"
	"sort"

	"github.com/starsim/starsim/internal/timeline"
)

// Panel is what a trace holds for a panel besides its tasks: the
// workers' other states, the counters, and why some are missing. Times are
// ms of the trace. The readers fill it.
type Panel struct {
	Spans  []StateSpan
	Levels []Level
	// Absent: counter group -> why the trace lacks it.
	Absent map[string]string
}

// StateSpan is a worker (by ID) in a non-kernel state (a timeline.State*
// name) during [S, E) ms.
type StateSpan struct {
	Worker int
	State  string
	S, E   float64
}

// Level is a step function, a counter: V[i] from T[i] (ms) to T[i+1];
// Group is its timeline group (timeline.Group*).
type Level struct {
	Name, Group string
	T, V        []float64
}

// Add appends a step, replacing the last one when at the same instant.
func (l *Level) Add(t, v float64) {
	if n := len(l.T); n > 0 && l.T[n-1] == t {
		l.V[n-1] = v
		return
	}
	l.T, l.V = append(l.T, t), append(l.V, v)
}

// Timeline returns the trace as a panel's timeline: a row per worker
// (Trace.Workers, labelled with WorkerInfo.Label), its kernels (from the
// tasks) and, where the trace has them, its other states and counters, in
// seconds since the first task start (Start); what came before is left
// out. absent says, per counter group the trace does not record, why.
func (t *Trace) Timeline() (tl *timeline.Timeline, absent map[string]string) {
	tl = timeline.New()
	t0 := t.Start()
	rows := map[int]int{}
	for _, w := range t.Workers {
		rows[w.ID] = tl.AddRow(w.Label(), w.Type)
	}
	row := func(id int) int {
		r, ok := rows[id]
		if !ok {
			r = tl.AddRow(WorkerInfo{ID: id, Name: "w"}.Label(), "")
			rows[id] = r
		}
		return r
	}
	sec := func(ms float64) float64 { return (ms - t0) / 1e3 }
	end := 0.0
	if t.Panel != nil {
		for _, s := range t.Panel.Spans {
			tl.AddState(row(s.Worker), tl.State(s.State), sec(s.S), sec(s.E))
		}
	}
	for i := range t.Tasks {
		r := &t.Tasks[i]
		s, e := sec(*r.StartTime), sec(*r.EndTime)
		tl.AddState(row(*r.WorkerID), tl.State(r.Kernel()), s, e)
		end = math.Max(end, e)
	}
	if t.Panel == nil {
		return tl, nil
	}
	for _, l := range t.Panel.Levels {
		id := tl.AddSeries(l.Name, l.Group)
		for i := range l.T {
			tl.Set(id, l.V[i], sec(l.T[i]))
		}
	}
	tl.Close(end)
	return tl, t.Panel.Absent
}

// SortLevels orders each series' steps by time (stably: the file's order
// among equal times).
func (p *Panel) SortLevels() {
	for i := range p.Levels {
		l := &p.Levels[i]
		idx := make([]int, len(l.T))
		for k := range idx {
			idx[k] = k
		}
		sort.SliceStable(idx, func(a, b int) bool { return l.T[idx[a]] < l.T[idx[b]] })
		t, v := make([]float64, len(idx)), make([]float64, len(idx))
		for k, j := range idx {
			t[k], v[k] = l.T[j], l.V[j]
		}
		l.T, l.V = t, v
	}
}
