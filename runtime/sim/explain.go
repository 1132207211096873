package sim

import "github.com/starsim/starsim/runtime/memory"

// Eviction is one eviction decision, as the decision log (Options.Explain)
// writes it: which copy left which node, why (the copy it made room for)
// and how (dropped, or written back home first). Scheduling decisions are
// the scheduler's (sched.ScheduleRecord).
type Eviction struct {
	Event  string  `json:"event"` // "evict"
	TimeUS float64 `json:"t_us"`
	Node   string  `json:"node"`
	Handle string  `json:"handle"`
	Action string  `json:"action"` // "drop" or "write-back"
	For    string  `json:"for"`    // the handle that needed room
	Level  string  `json:"level"`  // fetch, task-prefetch, prefetch, idle
}

// explainEviction logs an eviction when every decision is being logged.
func (s *Simulator) explainEviction(r *memory.Replica, action string, forH *memory.Handle, lvl memory.Level) {
	if s.opts.Explain == nil || s.opts.ExplainTask >= 0 {
		return
	}
	forName := ""
	if forH != nil {
		forName = forH.Spec().Name
	}
	s.view.Explain(Eviction{Event: "evict", TimeUS: s.view.NowUS(), Node: s.nodes[r.Node()].Name, Handle: r.Handle().Spec().Name,
		Action: action, For: forName, Level: lvl.String()})
}
