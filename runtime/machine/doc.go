// Package machine is the machine as the runtime sees it: CPU cores, GPUs
// and their memory, the network's links and routes between memory nodes,
// what the scheduler predicts of each transfer direction (StarPU's bus
// matrices) and, optionally, pitch-dependent copy models, the runtime's
// costs, and the kernels' measured durations per (model, arch, footprint).
//
// Key types: Machine, Dir (a transfer direction between memory nodes,
// written "SRC->DST" in calibrations), Prediction, PitchModel, Costs,
// KernelKey, KernelStats. Units are in the names: seconds (S), µs (US),
// bytes, B/s (Bps), watts (W).
//
// The calibrate package builds a Machine from a calibration file; nothing
// here reads files.
package machine
