package traces

import (
	"encoding/json"
	"math"
	"sort"
	"strings"

	"github.com/starsim/starsim/internal/srcerr"
	"github.com/starsim/starsim/internal/timeline"
)

// panelData is what a trace holds for a panel besides its tasks: the
// workers' other states, the counters, and why some are missing. Times are
// ms of the trace.
type panelData struct {
	spans  []stateSpan
	levels []levelSeries
	// absent: counter group -> why the trace lacks it.
	absent map[string]string
}

// stateSpan is a worker (by ID) in a non-kernel state (a timeline.State*
// name) during [s, e) ms.
type stateSpan struct {
	worker int
	state  string
	s, e   float64
}

// levelSeries is a step function: v[i] from t[i] (ms) to t[i+1].
type levelSeries struct {
	name, group string
	t, v        []float64
}

// add appends a step, replacing the last one when at the same instant.
func (l *levelSeries) add(t, v float64) {
	if n := len(l.t); n > 0 && l.t[n-1] == t {
		l.v[n-1] = v
		return
	}
	l.t, l.v = append(l.t, t), append(l.v, v)
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
	if t.panel != nil {
		for _, s := range t.panel.spans {
			tl.AddState(row(s.worker), tl.State(s.state), sec(s.s), sec(s.e))
		}
	}
	for i := range t.Tasks {
		r := &t.Tasks[i]
		s, e := sec(*r.StartTime), sec(*r.EndTime)
		tl.AddState(row(*r.WorkerID), tl.State(kernelName(r)), s, e)
		end = math.Max(end, e)
	}
	if t.panel == nil {
		return tl, nil
	}
	for _, l := range t.panel.levels {
		id := tl.AddSeries(l.name, l.group)
		for i := range l.t {
			tl.Set(id, l.v[i], sec(l.t[i]))
		}
	}
	tl.Close(end)
	return tl, t.panel.absent
}

// sortLevels orders each series' steps by time (stably: the file's order
// among equal times).
func (p *panelData) sortLevels() {
	for i := range p.levels {
		l := &p.levels[i]
		idx := make([]int, len(l.t))
		for k := range idx {
			idx[k] = k
		}
		sort.SliceStable(idx, func(a, b int) bool { return l.t[idx[a]] < l.t[idx[b]] })
		t, v := make([]float64, len(idx)), make([]float64, len(idx))
		for k, j := range idx {
			t[k], v[k] = l.t[j], l.v[j]
		}
		l.t, l.v = t, v
	}
}

// chromeCounterSample reads a counter sample ("ph":"C") of starsim's
// Chrome trace into p: "ready tasks" {"tasks"}, "used NODE" {"bytes"}
// (GPUs only) and "in flight SRC->DST" {"bytes"}; other counters are
// skipped.
func chromeCounterSample(p *panelData, series map[string]int, ev *cmpChromeEvent, file string, line int) error {
	var group, name, key string
	switch {
	case ev.Pid == chromeSched && ev.Name == "ready tasks":
		group, name, key = timeline.GroupReady, ev.Name, "tasks"
	case ev.Pid == chromeMemory && strings.HasPrefix(ev.Name, "used "):
		name = strings.TrimPrefix(ev.Name, "used ")
		if name == "RAM" {
			return nil
		}
		group, key = timeline.GroupMemory, "bytes"
	case ev.Pid == chromeTransfers && strings.HasPrefix(ev.Name, "in flight "):
		group, name, key = timeline.GroupInFlight, strings.TrimPrefix(ev.Name, "in flight "), "bytes"
	default:
		return nil
	}
	var args map[string]float64
	if err := json.Unmarshal(ev.Args, &args); err != nil {
		return srcerr.Errorf(file, line, "counter %q: args: %v", ev.Name, err)
	}
	v, ok := args[key]
	if !ok || math.IsNaN(v) || math.IsInf(v, 0) || !(ev.Ts >= 0) || math.IsInf(ev.Ts, 0) {
		return srcerr.Errorf(file, line, "counter %q without a finite %q and a non-negative \"ts\"", ev.Name, key)
	}
	k := group + "\x00" + name
	i, seen := series[k]
	if !seen {
		i = len(p.levels)
		series[k] = i
		p.levels = append(p.levels, levelSeries{name: name, group: group})
	}
	l := &p.levels[i]
	l.t, l.v = append(l.t, ev.Ts/1e3), append(l.v, v)
	return nil
}
