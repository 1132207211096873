// Package calibrate reads, validates and writes starsim calibration files
// (*.calib.json), builds them from StarPU sampling directories (import) and
// from raw measurements (fit, in package fit), and turns them into SimGrid
// platforms.
//
// A calibration file describes one machine: its CPU cores and accelerators,
// its network (the SimGrid links and routes transfers really take), what the
// scheduler believes of each transfer direction (StarPU's bus matrices) with
// optional pitch-dependent piece-wise linear models, the runtime's costs, and
// per (kernel model, arch, footprint) duration statistics with an optional
// irregular histogram. The schema is calibrate/calibration.schema.json; the
// format is documented in docs/calibration.md.
package calibrate
