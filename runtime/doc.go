// Package runtime is the emulated StarPU-style runtime, in packages of one
// job each (this one holds only this overview):
//
//	graph    the task graph as data: handles, tasks, access modes, and the
//	         dependencies StarPU derives by sequential consistency
//	machine  the machine as the runtime sees it: devices, links, routes,
//	         predictions per transfer direction (Dir), costs, kernel
//	         statistics, workers
//	cost     pure functions of the machine: predicted copy times (with
//	         StarPU's bus factor), source choice, pitched payloads,
//	         kernel duration draws
//	memory   the data's copies on the memory nodes: MSI states, LRU lists,
//	         the suballocator, and the victim rules; returns decisions
//	sched    the Scheduler interface, its read-only View, the registry
//	         (with each scheduler's priority range) and StarPU's policies
//	sim      the orchestrator: builds a run, derives its dependencies,
//	         drives each task's life cycle and each copy's, the drivers'
//	         progress passes, the observer, and the result
//
// Imports go one way: sim → sched → memory, cost → machine, graph, and sim
// → emulator (the engine and the fluid network); sched reads the
// engine's clock only. Nothing here reads files: the CLI converts a
// calibration into a machine.Machine.
package runtime
