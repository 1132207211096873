// Package traces is the vocabulary shared by starsim's trace formats: what
// a run's trace records and what a trace read back holds.
//
//   - Header: the run a trace comes from (tool, version, command, seed,
//     machine), which every writer puts first.
//   - TaskRecord, DataRecord: StarPU's tasks.rec and data.rec records, the
//     form every reader gives its tasks in (times in ms).
//   - Trace: the comparable content of a trace (executed tasks, workers,
//     copies per direction) and its Panel (other worker states, counters);
//     Timeline draws it.
//   - Format: one format's writer (a run's observer, made by Open) and
//     reader (Detect, Read); traces/formats lists them.
//   - Counters, PanelRecorder, Multi: the counters a run's traces show
//     (ready tasks, bytes allocated, bytes in flight), a run's panel, and
//     several observers as one.
//
// The formats live beneath: traces/paje (Paje: ViTE, pajeng, StarVZ),
// traces/chrome (Chrome/Perfetto JSON), traces/rec (StarPU's tasks.rec and
// data.rec), each with its writer and its reader; traces/formats, the list
// of formats and Load; traces/compare, the report comparing two traces and
// their Gantt charts; traces/replay, the task graph of a recorded trace.
package traces
