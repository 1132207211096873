// Package rec writes and reads StarPU's recutils trace files, tasks.rec and
// data.rec: ReadTasks and ReadData parse them into traces.TaskRecord and
// traces.DataRecord; Writer writes a run's (an observer of the run); Read
// makes a traces.Trace of a tasks.rec, inferring the copies from a
// data.rec beside it. Format is the pair, as traces/formats lists it.
package rec
