package traces

import (
	"github.com/starsim/starsim/internal/timeline"
	"github.com/starsim/starsim/runtime/graph"
	"github.com/starsim/starsim/runtime/machine"
	"github.com/starsim/starsim/runtime/sim"
)

// PanelRecorder is a sim.Observer that records what a run panel shows
// (internal/plot.Panel): each worker's state — the kernel it runs,
// fetching inputs, idle — and the counters the Chrome writer writes (ready
// tasks, memory used per GPU, bytes in flight per direction), in a
// timeline.Timeline of a fixed number of time bins: its memory does not
// grow with the number of tasks. Times are seconds of simulated time.
type PanelRecorder struct {
	tl     *timeline.Timeline
	rc     *Counters
	rows   []int // timeline row per worker ID (-1: none)
	ready  int
	memory []int // timeline series per node index (-1: RAM, not shown)
	flight []int // timeline series per direction index
	kernel map[string]int
	fetch  int
	idle   int
	other  int
	ended  bool
}

// NewPanelRecorder returns an empty recorder; pass it to the run (alone or
// with traces.Multi), then read Timeline.
func NewPanelRecorder() *PanelRecorder {
	tl := timeline.New()
	p := &PanelRecorder{tl: tl, rc: NewCounters(), kernel: map[string]int{}}
	p.fetch, p.idle, p.other = tl.State(timeline.StateFetch), tl.State(timeline.StateIdle), tl.State(timeline.StateRuntime)
	p.ready = tl.AddSeries("ready tasks", timeline.GroupReady)
	p.rc.OnNode = func(_ int, n string) {
		s := -1
		if n != "RAM" {
			s = tl.AddSeries(n, timeline.GroupMemory)
		}
		p.memory = append(p.memory, s)
	}
	p.rc.OnDir = func(_ int, name, _, _ string) {
		s := tl.AddSeries(name, timeline.GroupInFlight)
		tl.Set(s, 0, 0) // nothing in flight before the first copy
		p.flight = append(p.flight, s)
	}
	return p
}

// Timeline is what the run recorded (complete once the run has ended).
func (p *PanelRecorder) Timeline() *timeline.Timeline { return p.tl }

// Start adds a row per worker and a memory series per GPU.
func (p *PanelRecorder) Start(workers []*machine.Worker, nodes []string) {
	for _, n := range nodes {
		p.rc.Node(n)
	}
	for _, w := range workers {
		for len(p.rows) <= w.ID {
			p.rows = append(p.rows, -1)
		}
		kind := "cpu"
		if w.Node != 0 {
			kind = "cuda"
		}
		p.rows[w.ID] = p.tl.AddRow(w.Name, kind)
	}
	p.tl.Set(p.ready, 0, 0)
	for i, s := range p.memory {
		if s >= 0 {
			p.tl.Set(s, float64(p.rc.Used[i]), 0)
		}
	}
}

// WorkerState: executing a kernel (by name), fetching inputs, idle, or
// another state of the runtime.
func (p *PanelRecorder) WorkerState(tS float64, w *machine.Worker, state string, task *sim.TaskState) {
	if w.ID < 0 || w.ID >= len(p.rows) || p.rows[w.ID] < 0 {
		return
	}
	id := p.other
	switch {
	case state == "Executing" && task != nil:
		name := task.Spec().Name
		k, ok := p.kernel[name]
		if !ok {
			k = p.tl.State(name)
			p.kernel[name] = k
		}
		id = k
	case state == "FetchingInput":
		id = p.fetch
	case state == "Idle":
		id = p.idle
	}
	p.tl.Enter(p.rows[w.ID], id, tS)
}

// TransferStart adds the copy's bytes to its direction's bytes in flight.
func (p *PanelRecorder) TransferStart(tS float64, id uint64, src, dst string, bytes int64, _ string, _ *graph.Handle) {
	d := p.rc.TransferStart(id, src, dst, bytes)
	p.tl.Set(p.flight[d], float64(p.rc.InFlight[d]), tS)
}

// TransferEnd takes them off.
func (p *PanelRecorder) TransferEnd(tS float64, id uint64) {
	if d, ok := p.rc.TransferEnd(id); ok {
		p.tl.Set(p.flight[d], float64(p.rc.InFlight[d]), tS)
	}
}

// Memory follows the bytes allocated on each GPU.
func (p *PanelRecorder) Memory(tS float64, node, event string, h *graph.Handle) {
	if i, ok := p.rc.Memory(node, event, h); ok && p.memory[i] >= 0 {
		p.tl.Set(p.memory[i], float64(p.rc.Used[i]), tS)
	}
}

// Push counts a ready task.
func (p *PanelRecorder) Push(tS float64, _ *sim.TaskState) {
	p.rc.Push()
	p.tl.Set(p.ready, float64(p.rc.Ready), tS)
}

// Pop is a worker taking one.
func (p *PanelRecorder) Pop(tS float64, _ *machine.Worker, _ *sim.TaskState) {
	p.rc.Pop()
	p.tl.Set(p.ready, float64(p.rc.Ready), tS)
}

// TaskDone: the worker states carry the kernels.
func (p *PanelRecorder) TaskDone(*sim.TaskState) {}

// End closes every state and counter at the makespan.
func (p *PanelRecorder) End(makespanS float64) {
	if !p.ended {
		p.ended = true
		p.tl.Close(makespanS)
	}
}
