// Package starpu reads (and writes back) what StarPU's calibration leaves in a
// sampling directory: format-45 performance models, bus files and footprints.
//
// A sampling directory is what starpu_calibrate_bus and calibrating runs
// write under $STARPU_PERF_MODEL_DIR (or $STARPU_HOME/.starpu/sampling):
//
//	bus/HOST.config            CPU and device counts
//	bus/HOST.bandwidth         [src][dst] MB/s (= bytes/µs), padded with nan
//	bus/HOST.latency           [src][dst] µs, padded with nan
//	bus/HOST.affinity          per GPU, the CPUs or NUMA nodes nearest first
//	bus/HOST.platform.xml      SimGrid v3 platform (path only)
//	bus/HOST.platform.v4.xml   SimGrid v4 platform (path only)
//	codelets/45/SYMBOL.HOST    one performance model per codelet symbol
//
// The parsers never panic: bad input gives a *srcerr.Error naming the file,
// the line and what was expected. PerfModel.Write writes format 45 again,
// with full float precision, so that a written model parses back equal.
//
// The footprint functions reproduce StarPU's hashes bit for bit, so that a
// simulated task finds its history entry: MatrixFootprint and TaskFootprint
// for tiled codes, SizeFootprint for models keyed by size_base.
package starpu
