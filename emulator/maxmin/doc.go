// Package maxmin solves weighted max-min fair sharing (progressive filling) the
// way SimGrid's LMM solver does: it knows constraints (capacity, SHARED or
// FATPIPE), variables (a sharing penalty) and their coefficients, and returns
// rates. It knows nothing of links, routes, flows, StarPU or XML.
//
// Semantics. Every unfixed variable v runs at level t/penalty(v). A SHARED
// constraint c saturates when Σ coef·rate = capacity, i.e. at level
// t_c = remaining_c / Σ_{unfixed v on c} coef/penalty(v); a FATPIPE constraint
// saturates when max coef·rate = capacity, i.e. t_c = capacity / max coef/penalty.
// Each round takes the smallest t_c, fixes every unfixed variable of the
// constraints saturating at that level to t/penalty, removes their consumption
// and repeats until no constraint with unfixed variables is left. Variables on
// no constraint get rate +Inf (unbounded); the caller decides what that means.
//
// Precision: levels within RelTol of the minimum saturate in the same round,
// and a remaining capacity below RelTol·capacity counts as exhausted. SimGrid
// uses exact ties and snaps at 1e-5·capacity (maxmin/precision); the two agree
// except on systems built to sit within 1e-5 of a tie.
package maxmin
