package main

import (
	"io"
	"strings"
	"time"

	"github.com/starsim/starsim/runtime/agent"
	"github.com/starsim/starsim/runtime/graph"
	"github.com/starsim/starsim/runtime/sched"
)

// isExternal says whether a --sched value names an agent process.
func isExternal(name string) bool { return strings.HasPrefix(name, agent.Prefix) }

// externalScheduler checks an external:COMMAND value and returns what
// makes its scheduler, one agent process per run (its stderr goes to
// stderr; timeout bounds each exchange, wall clock).
func externalScheduler(src, name string, stderr io.Writer, timeout time.Duration) (func() sched.Scheduler, error) {
	cfg, err := agent.ParseName(name)
	if err != nil {
		return nil, sourceError(src, name, "%s", strings.TrimPrefix(err.Error(), name+": "))
	}
	cfg.Stderr, cfg.Timeout = stderr, timeout
	return func() sched.Scheduler { return agent.New(cfg) }, nil
}

// checkTimeout checks --sched-timeout (seconds).
func checkTimeout(s float64) (time.Duration, error) {
	if !(s > 0) || s > 86400 {
		return 0, flagError("sched-timeout", s, "want 0 < seconds <= 86400")
	}
	return time.Duration(s * float64(time.Second)), nil
}

// schedulerChoices is the --sched help's list.
func schedulerChoices() string {
	return strings.Join(sched.Names(), ", ") + ", or " + agent.Prefix + "COMMAND (an agent process: docs/agent/protocol.md)"
}

// unknownScheduler is the error for an --sched value of neither kind.
func unknownScheduler(src, name string) error {
	return sourceError(src, name, "unknown scheduler (known: %s; or %sCOMMAND)", strings.Join(sched.Names(), ", "), agent.Prefix)
}

// prioRange is the priority range a --sched value sets: the registry's, or
// for an agent StarPU's default for a policy that sets none, 0..0.
func prioRange(s string) (graph.PrioRange, bool) {
	if isExternal(s) {
		return graph.PrioRange{}, true
	}
	return sched.PriorityRange(s)
}
