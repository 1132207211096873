package sched

import (
	"encoding/json"
	"io"
	"math/rand/v2"

	"github.com/starsim/starsim/emulator"
	"github.com/starsim/starsim/runtime/cost"
	"github.com/starsim/starsim/runtime/graph"
	"github.com/starsim/starsim/runtime/machine"
	"github.com/starsim/starsim/runtime/memory"
)

// View is what a scheduler may observe of the run: the clock, the
// workers, the tasks' model entries, where their data is, the predicted
// costs, the run's seeded generator and the decision log. It is a
// concrete, read-only value: its queries compile to direct calls, several
// per worker at every push.
type View struct {
	eng         *emulator.Engine
	workers     []*machine.Worker
	cost        *cost.Model
	rng         *rand.Rand
	g           *graph.Graph
	weights     DMWeights
	explain     io.Writer
	explainTask int
	fail        func(error)
	pusher      *machine.Worker
	nodes       []MemoryNode
	power       map[string]machine.Power
	enableCells func()
	check       bool
	pushRace    bool
}

// MemoryNode is a memory node as a scheduler may describe it.
type MemoryNode struct {
	Name          string // "RAM", "CUDA0"
	CapacityBytes int64  // what the run may use there; 0: unlimited
}

// ViewConfig is what NewView makes a view of.
type ViewConfig struct {
	Engine  *emulator.Engine // the clock
	Workers []*machine.Worker
	Cost    *cost.Model
	Rand    *rand.Rand
	Graph   *graph.Graph // the run's tasks
	// Weights are the dm family's fitness weights.
	Weights DMWeights
	// Explain, when set, receives the decision log, one JSON line per
	// record; ExplainTask >= 0 keeps one task's decisions. A write that
	// fails is passed to Fail.
	Explain     io.Writer
	ExplainTask int
	Fail        func(error)
	// Nodes are the run's memory nodes, by index (Worker.Node); Power
	// the machine's power per arch (none: no power figures).
	Nodes []MemoryNode
	Power map[string]machine.Power
	// EnableCells, when set, has the run keep the data's cells
	// (memory.Memory.EnableCells), for the schedulers that read them.
	EnableCells func()
	// Check has schedulers verify what they cache against what it caches
	// (the run's --check), and Fail on a difference.
	Check bool
	// PushRace: pushes made at the same simulated instant by different
	// threads race (see View.PushRace).
	PushRace bool
}

// NewView makes the view the runtime gives its scheduler.
func NewView(c ViewConfig) *View {
	return &View{eng: c.Engine, workers: c.Workers, cost: c.Cost, rng: c.Rand, g: c.Graph, weights: c.Weights,
		explain: c.Explain, explainTask: c.ExplainTask, fail: c.Fail, nodes: c.Nodes, power: c.Power, enableCells: c.EnableCells,
		check: c.Check, pushRace: c.PushRace}
}

// PushRace reports whether pushes made at the same simulated instant by
// different threads race, as in StarPU over SimGrid: each thread's dm
// decision reads the workers' expected ends before the others' pushes of
// that instant are queued (deque_modeling_policy_data_aware.c computes
// its predictions, then takes the chosen worker's lock to queue, and
// SimGrid runs the other threads of that instant in between). The
// runtime's Options.StarPUPushRace.
func (v *View) PushRace() bool { return v.pushRace }

// Checking reports whether the run verifies its invariants (--check): a
// scheduler then verifies what it caches, and calls Fail on a difference.
func (v *View) Checking() bool { return v.check }

// UseCells asks the run to keep the data's cells (memory.Handle.Cell: one
// dense word per copy, for scans of many tasks' data on one node). Their
// upkeep costs a little at each change of a copy's state, so they are
// kept only when a scheduler asks, in its Init. Without them
// (Handle.Cell returns nil) a scheduler reads the handles.
func (v *View) UseCells() {
	if v.enableCells != nil {
		v.enableCells()
	}
}

// NowUS is the simulated time in µs.
func (v *View) NowUS() float64 { return v.eng.NowS() * 1e6 }

// Workers lists the workers (CPU workers first, then GPUs).
func (v *View) Workers() []*machine.Worker { return v.workers }

// Pusher is the worker whose thread is pushing the task Push is given: the
// one that ended the task's last dependency (StarPU pushes in the
// releasing thread); nil for the application thread, which pushes the
// tasks that wait for nothing at their submission.
func (v *View) Pusher() *machine.Worker { return v.pusher }

// SetPusher records the pushing worker; the runtime calls it before each
// Push.
func (v *View) SetPusher(w *machine.Worker) { v.pusher = w }

// NumTasks is the number of tasks of the run (task ids are below it).
func (v *View) NumTasks() int { return len(v.g.Tasks) }

// Spec is t as the application submitted it.
func (v *View) Spec(t *Task) *graph.Task { return &v.g.Tasks[t.id] }

// CanExecute reports whether t's kernel is calibrated for w's arch (and,
// for a pinned task, whether w is its worker).
func (v *View) CanExecute(t *Task, w *machine.Worker) bool { return (*t.stats)[w.ID] != nil }

// ExpectedLengthUS is the model's mean duration of t on w (0 when t
// cannot run there).
func (v *View) ExpectedLengthUS(t *Task, w *machine.Worker) float64 {
	if k := (*t.stats)[w.ID]; k != nil {
		return k.MeanUS
	}
	return 0
}

// ExpectedTransferUS predicts the time to bring t's inputs to w's node
// (starpu_task_expected_data_transfer_time_for): the sum over the data it
// reads that is neither valid there nor already being copied there.
func (v *View) ExpectedTransferUS(t *Task, w *machine.Worker) float64 {
	total := 0.0
	bit := uint64(1) << uint(w.Node)
	for _, b := range t.bufs {
		h := b.H
		if b.Mode&graph.R == 0 || h.Size() == 0 {
			continue
		}
		if (h.Ready()|h.Loading())&bit != 0 {
			continue
		}
		total += v.cost.FetchUS(h.Ready(), w.Node, h.Size())
	}
	return total
}

// NonReadyBytes sizes t's inputs on w's node: not valid, not valid and not
// being loaded, not allocated (dmdar's ready-first pop).
func (v *View) NonReadyBytes(t *Task, w *machine.Worker) (nonReady, nonLoading, nonAllocated int64) {
	return memory.NonReadyBytes(t.bufs, w.Node)
}

// MemoryNodes lists the run's memory nodes, by index (do not modify).
func (v *View) MemoryNodes() []MemoryNode { return v.nodes }

// Power is an arch's power draw (W), idle and running a kernel; ok is
// false when the calibration has no power figures for it.
func (v *View) Power(arch string) (p machine.Power, ok bool) {
	p, ok = v.power[arch]
	return p, ok
}

// Fail stops the run with err: a scheduler that cannot go on (an external
// agent that failed) calls it; the run returns err, and no result.
func (v *View) Fail(err error) {
	if v.fail != nil {
		v.fail(err)
	}
}

// Rand is the run's seeded generator.
func (v *View) Rand() *rand.Rand { return v.rng }

// DMWeights are the dm family's fitness weights of the run.
func (v *View) DMWeights() DMWeights { return v.weights }

// Explaining reports whether decisions about t are being logged.
func (v *View) Explaining(t *Task) bool {
	return v.explain != nil && (v.explainTask < 0 || (t != nil && t.ID() == v.explainTask))
}

// Explain writes one decision record as a JSON line (a ScheduleRecord is
// given its event name).
func (v *View) Explain(rec any) {
	if v.explain == nil {
		return
	}
	if d, ok := rec.(ScheduleRecord); ok && d.Event == "" {
		d.Event = "schedule"
		rec = d
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return
	}
	b = append(b, '\n')
	if _, err := v.explain.Write(b); err != nil && v.fail != nil {
		v.fail(err)
	}
}

// ScheduleRecord is one scheduling decision of a dm-family scheduler, as
// the decision log writes it: every candidate worker's expected start, the
// work queued before the task, the task's expected length, transfer
// penalty and end, its fitness (lower wins), and the worker chosen. Times
// in µs.
type ScheduleRecord struct {
	Event      string      `json:"event"` // "schedule"
	TimeUS     float64     `json:"t_us"`
	Task       int         `json:"task"`
	Kernel     string      `json:"kernel"`
	Priority   int         `json:"priority"`
	Candidates []Candidate `json:"candidates"`
	Chosen     string      `json:"chosen"`
}

// Candidate is one worker considered for a task. EnergyTerm is γ × the
// task's energy (0: the calibrations hold no energy models).
type Candidate struct {
	Worker     string  `json:"worker"`
	StartUS    float64 `json:"start_us"`
	QueuedUS   float64 `json:"queued_us"`
	LengthUS   float64 `json:"length_us"`
	PenaltyUS  float64 `json:"penalty_us"`
	EnergyTerm float64 `json:"energy_term"`
	EndUS      float64 `json:"end_us"`
	Fitness    float64 `json:"fitness"`
}

// DMWeights weigh the terms of the dm family's fitness: Alpha the expected
// end, Beta the transfer penalty, Gamma (µs per joule) the energy.
type DMWeights struct{ Alpha, Beta, Gamma float64 }

// DefaultDMWeights are StarPU's: STARPU_SCHED_ALPHA=1, _BETA=1, _GAMMA=1000.
var DefaultDMWeights = DMWeights{Alpha: 1, Beta: 1, Gamma: 1000}
