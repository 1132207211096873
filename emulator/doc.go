// Package emulator is starsim's simulation core: a deterministic discrete-event
// engine in simulated time and a fluid network model built on it.
//
// Key concepts
//
//   - Engine: a clock plus a queue of events ordered by (time, insertion
//     sequence). Events at equal times run in the order they were scheduled, so a
//     run is a pure function of its inputs. Scheduling in the past, or at NaN,
//     panics: it is always a bug in the caller.
//   - Time: float64 seconds of simulated time. SimGrid, whose results the network
//     must reproduce to 1e-9, computes in double seconds too; an integer tick
//     would round every latency and transfer time and break that agreement.
//     Simulated time is never mixed with wall time.
//   - Network: links (bandwidth B/s, latency s, SHARED or FATPIPE), routes and
//     flows, sharing bandwidth by SimGrid's weighted max-min fairness (package
//     maxmin). Only the connected component a change touches is re-solved.
//
// The engine knows nothing about GPUs, StarPU or XML.
package emulator
