// Package dag reads task graphs from files and writes them: starsim's own
// JSON format (dag.schema.json, docs/dag.md), Graphviz DOT in the
// attribute styles of DAGGEN and SimGrid's DAG loader, and WfCommons'
// WfFormat workflow instances. Every reader returns a *graph.Graph the
// runtime runs as it runs a built-in application, or a FILE:LINE error.
//
// Key functions: Read (any of the three formats, told apart by content),
// ReadJSON, ReadDOT, ReadWfFormat, Write (the JSON format, from any
// graph: a built-in application's, a replayed trace's).
//
// Durations: a task names its kernel's perf-model symbol and footprint,
// which the calibration is asked first; its file may also give durations
// per arch (Task.DurationsUS), used where the calibration has no entry.
// DOT and WfFormat files name no model a calibration knows: their tasks
// run for the durations the file gives or that Options derive.
package dag
