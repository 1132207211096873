// Package compare compares two traces (traces.Trace, read by
// traces/formats): Compare makes the Report (makespan, GFlop/s, kernels per
// worker type, workers, copies per direction, duration distributions with
// their Kolmogorov–Smirnov distance; starsim compare prints it); SaveGantt
// draws both traces on one time axis.
package compare
