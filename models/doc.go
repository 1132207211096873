// Package models generates the task graphs of StarPU's dense linear-algebra
// examples (cholesky_implicit.c, xlu_implicit.c) exactly as StarPU submits them.
//
// Key concepts:
//   - A graph is data, not behaviour: runtime.Graph lists the matrix tiles
//     (handles) and the tasks in submission order, with their buffers and
//     access modes, perf-model symbols, footprints, flops, priorities and
//     starpu_data_wont_use hints. Dependencies are left implicit: the
//     runtime derives them from the submission order (sequential
//     consistency), as StarPU does.
//   - The output depends only on Options; there is no randomness.
//   - Priorities depend on the scheduler, because cholesky_implicit.c reads
//     the scheduler's priority range (STARPU_MIN_PRIO/STARPU_MAX_PRIO) at
//     submission time; see PriorityRange.
//
// Key types and functions: Options, Precision, Cholesky, LU, New,
// CholeskyFlops, LUFlops, PriorityRange.
//
// Matrix layout. Both examples register one N×N column-major matrix with
// ld = N (StarPU's matrix interface: nx = N contiguous elements per
// "row" of the interface, ny = N such rows, i.e. an interface row is a
// mathematical column). A tile is Block×Block elements: Block runs of
// Block×elem contiguous bytes (one mathematical column of the tile each),
// successive runs N×elem bytes apart. In runtime.Handle terms: Rows = Block,
// RowBytes = Block×elem, PitchBytes = N×elem, SizeBytes = Block²×elem.
//
// Handle names and order. Handles are named "A[r][c]" with r the block row
// and c the block column of the tile in the mathematical (column-major)
// matrix. They are listed column by column, top to bottom: for c, for r.
// Cholesky registers only the tiles its tasks touch (the lower triangle,
// r >= c); LU touches, and lists, all of them.
package models
