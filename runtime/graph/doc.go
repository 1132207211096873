// Package graph is an application's task graph as data: the handles
// (matrix tiles, homed in RAM), the tasks in submission order with their
// buffers and access modes, and the dependencies StarPU derives from them.
//
// Key types:
//   - Handle: a registered piece of data, with its size and 2D layout.
//   - Task: one task as the application submits it (kernel name, model
//     symbol and footprint, flops, priority, buffers, explicit
//     dependencies, starpu_data_wont_use hints, optional pinning).
//   - Graph: the handles and the tasks of one application, and the flop
//     count its GFlop/s is computed from.
//   - Deps: the dependencies DeriveDeps derives by sequential consistency
//     (a task waits for the last writer of each of its data and, when it
//     writes, for the data's readers since then), plus the explicit ones.
//
// A graph has no behaviour: models build them, traces read them from
// StarPU's tasks.rec, and the runtime runs them.
package graph
