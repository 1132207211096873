// Package models holds the applications: the task graphs of StarPU's dense
// linear-algebra examples (cholesky_implicit.c, xlu_implicit.c) exactly as
// StarPU submits them, and what else starsim knows of each.
//
// Key concepts:
//   - The registry: each application is one App value in a file of its own
//     (cholesky.go, lu.go) and one line of apps (app.go). An App gives its
//     graph for Options, its size without building it, its kernels' model
//     symbols in each StarPU generation (and whether they carry BLAS
//     suffixes), the renames between generations a replay maps, the
//     kernels' flop formulas, which kernels are synchronous on a GPU, and
//     the symbol-to-kernel mapping traces need. New, Size, KernelFlops,
//     SyncGPUModel and ResolveModel look through the registry.
//   - A graph is data, not behaviour: graph.Graph lists the matrix tiles
//     (handles) and the tasks in submission order, with their buffers and
//     access modes, perf-model symbols, footprints, flops, priorities and
//     starpu_data_wont_use hints. Dependencies are left implicit: the
//     runtime derives them from the submission order (sequential
//     consistency), as StarPU does.
//   - The output depends only on Options; there is no randomness.
//   - Priorities depend on the scheduler, because cholesky_implicit.c reads
//     the scheduler's priority range (STARPU_MIN_PRIO/STARPU_MAX_PRIO) at
//     submission time: Options.Prio carries it (the scheduler registry
//     gives it, sched.PriorityRange).
//
// Key types and functions: App, Lookup, Names, Options, Precision, New,
// Size, CholeskyFlops, LUFlops.
//
// Matrix layout. Both examples register one N×N column-major matrix with
// ld = N (StarPU's matrix interface: nx = N contiguous elements per
// "row" of the interface, ny = N such rows, i.e. an interface row is a
// mathematical column). A tile is Block×Block elements: Block runs of
// Block×elem contiguous bytes (one mathematical column of the tile each),
// successive runs N×elem bytes apart. In graph.Handle terms: Rows = Block,
// RowBytes = Block×elem, PitchBytes = N×elem, SizeBytes = Block²×elem.
//
// Handle names and order. Handles are named "A[r][c]" with r the block row
// and c the block column of the tile in the mathematical (column-major)
// matrix. They are listed column by column, top to bottom: for c, for r.
// Cholesky registers only the tiles its tasks touch (the lower triangle,
// r >= c); LU touches, and lists, all of them.
package models
