package models

// Flop counts. The Cholesky kernels use the MAGMA macros that
// examples/cholesky/cholesky.h copies and cholesky_implicit.c passes as
// STARPU_FLOPS; they are evaluated here in the same order as the C
// expressions, each product rounded on its own (the float64 conversions
// stop Go from fusing a multiply and an add, as an x86-64 build of StarPU
// without FMA does not), so the doubles match StarPU's (the native trace's
// GFlop column: POTRF 0.295372, TRSM/SYRK 0.885657, GEMM 1.769472 at
// n = 960).
//
//	FLOPS_SPOTRF(n)      = n(((1/6)n + 0.5)n + 1/3) + n(((1/6)n)n - 1/6)
//	                     = n³/3 + n²/2 + n/6
//	FLOPS_STRSM(n, n)    = FMULS_TRSM + FADDS_TRSM = 2 · 0.5·n·n·(n+1)
//	                     = n²(n+1)
//	FLOPS_SSYRK(n, n)    = 2 · 0.5·n·n·(n+1) = n²(n+1)
//	FLOPS_SGEMM(n, n, n) = n·n·n + n·n·n = 2n³
//
// FLOPS_STRSM is n²(n+1), not LAWN 41's n³, because MAGMA's macro file
// defines FADDS_TRSM as FMULS_TRMM (the multiplications, n(n+1)/2 per
// column) where LAWN 41 counts n(n-1)/2 additions. This is the whole
// difference between the sum of Cholesky's task flops and the closed
// formula CholeskyFlops(N) (TestTaskFlopsVsClosedFormula states by how much).

// potrfFlops is FLOPS_SPOTRF(n) (= FLOPS_DPOTRF).
func potrfFlops(n float64) float64 {
	fmuls := float64(n * (float64(float64(float64((1./6.)*n)+0.5)*n) + (1. / 3.)))
	fadds := float64(n * (float64(((1./6.)*n)*n) - (1. / 6.)))
	return fmuls + fadds
}

// cholTrsmFlops is FLOPS_STRSM(n, n) as cholesky.h defines it.
func cholTrsmFlops(n float64) float64 {
	fmuls := float64(0.5 * n * n * (n + 1.))
	fadds := float64(0.5 * n * n * (n + 1.)) // FADDS_TRSM is FMULS_TRMM in MAGMA's macros
	return fmuls + fadds
}

// syrkFlops is FLOPS_SSYRK(k, n).
func syrkFlops(k, n float64) float64 {
	return float64(0.5*k*n*(n+1.)) + float64(0.5*k*n*(n+1.))
}

// gemmFlops is FLOPS_SGEMM(m, n, k).
func gemmFlops(m, n, k float64) float64 {
	return float64(m*n*k) + float64(m*n*k)
}

// CholeskyFlops is the flop count cholesky_implicit.c divides by to print
// GFlop/s: FLOPS_SPOTRF(N) = N³/3 + N²/2 + N/6 (evaluated as the MAGMA
// macro does).
func CholeskyFlops(n float64) float64 { return potrfFlops(n) }

// LUFlops is the flop count xlu_implicit.c divides by: 2N³/3, which the C
// code computes as (2.0f*n*n*n)/3.0f with n unsigned, i.e. in single
// precision. LUFlops reproduces that rounding; for the usual sizes (N a
// multiple of 960 up to 10^5) every intermediate is exact and the result is
// exactly 2N³/3.
func LUFlops(n float64) float64 {
	f := float32(n)
	x := float32(2.0) * f
	x *= f
	x *= f
	return float64(x / float32(3.0))
}

// LU kernel flops. StarPU's LU example sets no flops on its tasks (the
// sampled starpu_?lu_lu_model_* files carry flops 0); starsim uses the
// LAWN 41 operation counts of the kernels xlu_kernels.c calls, for a square
// tile of order n:
//
//	GETRF (unblocked LU, no pivoting) FMULS_GETRF(n,n)+FADDS_GETRF(n,n)
//	                                  = 2n³/3 - n²/2 + 5n/6
//	TRSM_LL (left, lower)             n·n(n+1)/2 + n·n(n-1)/2 = n³
//	TRSM_RU (right, upper, unit)      n³
//	GEMM                              2n³
//
// Unlike Cholesky's TRSM these are the exact LAWN 41 counts (there is no
// STARPU_FLOPS in the LU example to be faithful to). Summed over the graph
// they give 2N³/3 - N·Block/2 + 5N/6 (TestTaskFlopsVsClosedFormula): less than the
// example's closed formula LUFlops(N) = 2N³/3 by N·Block/2 - 5N/6, the
// lower-order terms that formula ignores.

// getrfFlops is LAWN 41's FMULS_GETRF(n, n) + FADDS_GETRF(n, n).
func getrfFlops(n float64) float64 {
	m := n
	fmuls := float64(0.5*n*(float64(n*(m-float64((1./3.)*n)-1.))+m)) + float64((2./3.)*n)
	fadds := float64(0.5*n*(float64(n*(m-float64((1./3.)*n)))-m)) + float64((1./6.)*n)
	return fmuls + fadds
}

// luTrsmFlops is LAWN 41's FMULS_TRSM + FADDS_TRSM for an n×n solve.
func luTrsmFlops(n float64) float64 {
	return float64(0.5*n*n*(n+1.)) + float64(0.5*n*n*(n-1.))
}
