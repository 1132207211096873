// Package agent runs a scheduler written in any language as a separate
// process (--sched external:COMMAND): starsim speaks the starsim-sched
// protocol, version 1, on the agent's stdin and stdout, one JSON object
// per line (docs/agent/protocol.md; the messages' JSON Schemas are
// docs/agent/messages.schema.json and replies.schema.json).
//
// A hello describes the machine (memory nodes, workers, archs); then, at
// each scheduling event, starsim asks and waits: a push gives a ready task
// and what StarPU's dmda computes for it on every worker that can run it
// (expected start, queued work, length, transfer penalty, end, energy),
// and the agent places it on a worker (optionally prefetching its inputs
// there) or defers it; a pop asks which deferred task an idle worker
// takes. Simulated time stands still while the agent thinks, so a
// deterministic agent gives deterministic runs. A reply that is not the
// protocol's, a reply too late (wall clock) or the agent's exit is the
// run's error, naming the message.
//
// Key types: Scheduler (a sched.Scheduler), Config, Process; the
// message types mirror the schemas.
package agent
