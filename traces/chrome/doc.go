// Package chrome writes and reads starsim's Chrome/Perfetto traces (the
// Trace Event Format, JSON): Writer writes a run's trace (an observer of
// the run); Read reads one back as a traces.Trace (tasks, workers, copies,
// and the panel's states and counters). Format is the pair, as
// traces/formats lists it.
package chrome
