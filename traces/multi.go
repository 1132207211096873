package traces

import (
	"github.com/starsim/starsim/runtime/graph"
	"github.com/starsim/starsim/runtime/machine"
	"github.com/starsim/starsim/runtime/sim"
)

// Multi returns an Observer passing every event to each of obs in turn (nil
// ones are skipped), so one run can write several traces.
func Multi(obs ...sim.Observer) sim.Observer {
	var m multi
	for _, o := range obs {
		if o != nil {
			m = append(m, o)
		}
	}
	return m
}

type multi []sim.Observer

func (m multi) Start(workers []*machine.Worker, nodes []string) {
	for _, o := range m {
		o.Start(workers, nodes)
	}
}

func (m multi) WorkerState(tS float64, w *machine.Worker, state string, task *sim.TaskState) {
	for _, o := range m {
		o.WorkerState(tS, w, state, task)
	}
}

func (m multi) TransferStart(tS float64, id uint64, src, dst string, bytes int64, kind string, h *graph.Handle) {
	for _, o := range m {
		o.TransferStart(tS, id, src, dst, bytes, kind, h)
	}
}

func (m multi) TransferEnd(tS float64, id uint64) {
	for _, o := range m {
		o.TransferEnd(tS, id)
	}
}

func (m multi) Memory(tS float64, node, event string, h *graph.Handle) {
	for _, o := range m {
		o.Memory(tS, node, event, h)
	}
}

func (m multi) Push(tS float64, t *sim.TaskState) {
	for _, o := range m {
		o.Push(tS, t)
	}
}

func (m multi) Pop(tS float64, w *machine.Worker, t *sim.TaskState) {
	for _, o := range m {
		o.Pop(tS, w, t)
	}
}

func (m multi) TaskDone(t *sim.TaskState) {
	for _, o := range m {
		o.TaskDone(t)
	}
}

func (m multi) End(makespanS float64) {
	for _, o := range m {
		o.End(makespanS)
	}
}
