package main

import (
	"io"
	"strings"
	"time"

	"github.com/starsim/starsim/runtime"
	"github.com/starsim/starsim/runtime/agent"
)

// isExternal says whether a --sched value names an agent process.
func isExternal(sched string) bool { return strings.HasPrefix(sched, agent.Prefix) }

// externalScheduler checks an external:COMMAND value and returns what
// makes its scheduler, one agent process per run (its stderr goes to
// stderr; timeout bounds each exchange, wall clock).
func externalScheduler(src, sched string, stderr io.Writer, timeout time.Duration) (func() runtime.Scheduler, error) {
	cfg, err := agent.ParseName(sched)
	if err != nil {
		return nil, sourceError(src, sched, "%s", strings.TrimPrefix(err.Error(), sched+": "))
	}
	cfg.Stderr, cfg.Timeout = stderr, timeout
	return func() runtime.Scheduler { return agent.New(cfg) }, nil
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
	return strings.Join(runtime.SchedulerNames(), ", ") + ", or " + agent.Prefix + "COMMAND (an agent process: docs/agent/protocol.md)"
}

// unknownScheduler is the error for an --sched value of neither kind.
func unknownScheduler(src, sched string) error {
	return sourceError(src, sched, "unknown scheduler (known: %s; or %sCOMMAND)", strings.Join(runtime.SchedulerNames(), ", "), agent.Prefix)
}
