// Package replay makes the task graph of a recorded trace: Graph turns the
// records of a tasks.rec (traces.TaskRecord) into a graph.Graph that the
// runtime runs again, on any machine and scheduler.
package replay
