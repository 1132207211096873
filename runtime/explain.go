package runtime

import (
	"encoding/json"
)

// Decision is one scheduling decision of a dm-family scheduler, as
// --explain writes it: every candidate worker's expected start, the work
// queued before the task, the task's expected length, transfer penalty and
// end, its fitness (lower wins), and the worker chosen. Times in µs.
type Decision struct {
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

// Eviction is one eviction decision: which copy left which node, why (the
// copy it made room for) and how (dropped, or written back home first).
type Eviction struct {
	Event  string  `json:"event"` // "evict"
	TimeUS float64 `json:"t_us"`
	Node   string  `json:"node"`
	Handle string  `json:"handle"`
	Action string  `json:"action"` // "drop" or "write-back"
	For    string  `json:"for"`    // the handle that needed room
	Level  string  `json:"level"`  // fetch, task-prefetch, prefetch, idle
}

// Explaining reports whether decisions about t are being logged.
func (s *Simulator) Explaining(t *TaskState) bool {
	return s.opts.Explain != nil && (s.opts.ExplainTask < 0 || (t != nil && int(t.id) == s.opts.ExplainTask))
}

// Explain writes one decision record as a JSON line.
func (s *Simulator) Explain(rec any) {
	if s.opts.Explain == nil {
		return
	}
	if d, ok := rec.(Decision); ok && d.Event == "" {
		d.Event = "schedule"
		rec = d
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return
	}
	b = append(b, '\n')
	if _, err := s.opts.Explain.Write(b); err != nil {
		s.fail(err)
	}
}

var levelNames = [...]string{"fetch", "task-prefetch", "prefetch", "idle"}

// explainEviction logs an eviction when every decision is being logged.
func (s *Simulator) explainEviction(r *replica, action string, forH *handleState, lvl level) {
	if s.opts.Explain == nil || s.opts.ExplainTask >= 0 {
		return
	}
	forName := ""
	if forH != nil {
		forName = forH.h.Name
	}
	s.Explain(Eviction{Event: "evict", TimeUS: s.NowUS(), Node: s.nodes[r.node].name, Handle: r.h.h.Name,
		Action: action, For: forName, Level: levelNames[lvl]})
}
