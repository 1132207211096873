// Package cost holds the runtime's costs as pure functions of the machine:
// what the scheduler predicts of a copy (StarPU's starpu_transfer_predict,
// with its 2 × GPU-count bus factor), which valid copy a transfer comes
// from, what a copy carries on the network under a pitch-dependent copy
// model, and how long a kernel runs (its model's mean, or a draw from a
// normal law or its histogram).
//
// Where a transfer's duration comes from:
//   - predicted (by the schedulers, before the copy): Model.PredictUS and
//     Model.FetchUS, here;
//   - simulated: Model.Payload here gives the bytes the copy carries, and
//     the fluid network (package emulator) shares the links among the
//     copies in flight, which fixes when it ends.
//
// Key types: Model (New builds it once per run from a machine.Machine and
// the memory nodes in use), Durations, SampleUS.
package cost
