// Package emulator is starsim's simulation engine: a deterministic
// discrete-event engine in simulated time. The fluid network built on it
// is package emulator/network, its max-min solver package emulator/maxmin.
//
// Key concepts
//
//   - Engine: a clock plus a queue of events ordered by (time, insertion
//     sequence). Events at equal times run in the order they were posted,
//     so a run is a pure function of its inputs. Posting in the past, or at
//     NaN, panics: it is always a bug in the caller.
//   - Post: the one way to schedule work: call(arg) delayS from now. Hot
//     paths bind call once and pass what varies as arg, so posting
//     allocates nothing (events are recycled).
//   - Timer: an event that can be set to another time or stopped (a
//     flow's completion, which every change of rates moves).
//   - Time: float64 seconds of simulated time. SimGrid, whose results the
//     network must reproduce to 1e-9, computes in double seconds too; an
//     integer tick would round every latency and transfer time and break
//     that agreement. Simulated time is never mixed with wall time.
//
// The engine knows nothing about GPUs, StarPU or XML.
package emulator
