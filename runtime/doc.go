// Package runtime emulates a StarPU-style task runtime in simulated time:
// data handles with MSI coherency over memory nodes of real capacity (LRU
// eviction, write-back, prefetch), workers (CPU cores and GPUs driven by a
// CPU thread), StarPU's schedulers (eager, prio, random, ws, dm, dmda,
// dmdap, dmdar, dmdas, dmdasd) and transfers on the emulator's fluid network.
//
// Key types: machine.Machine (what the calibration says of the hardware,
// package runtime/machine), graph.Graph (the application's tasks in
// submission order, package runtime/graph), Options, Run → Result.
// Schedulers implement the small Scheduler interface; RegisterScheduler adds
// one. The runtime knows nothing about XML or files: the CLI converts a
// calibration into a machine.Machine.
package runtime
