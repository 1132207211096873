// Package paje writes and reads Paje traces in StarPU's vocabulary: Writer
// writes a run's trace (an observer of the run) that pajeng's pj_dump, ViTE
// and StarVZ read; Read reads StarPU's paje.trace or starsim's own as a
// traces.Trace (tasks, workers, copies, and the panel's states and
// counters). Format is the pair, as traces/formats lists it.
package paje
