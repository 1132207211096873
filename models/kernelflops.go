package models

import "strings"

// KernelFlops is the flop count of one task of a Cholesky or LU model
// symbol on n×n tiles, from the formulas the graphs use (flops.go): either
// StarPU generation's names (chol_model_potrf or chol_model_11, ...;
// starpu_slu_lu_model_getrf or _11, ...), any precision letter, with or
// without a BLAS suffix. ok is false for any other symbol.
func KernelFlops(symbol string, n float64) (flops float64, ok bool) {
	sym := trimBLAS(symbol)
	for _, k := range []struct {
		suffixes []string
		f        func(float64) float64
	}{
		{[]string{"chol_model_potrf", "chol_model_11"}, potrfFlops},
		{[]string{"chol_model_trsm", "chol_model_21"}, cholTrsmFlops},
		{[]string{"chol_model_syrk"}, func(n float64) float64 { return syrkFlops(n, n) }},
		{[]string{"chol_model_gemm", "chol_model_22"}, func(n float64) float64 { return gemmFlops(n, n, n) }},
		{[]string{"lu_model_getrf", "lu_model_11"}, getrfFlops},
		{[]string{"lu_model_trsm_ll", "lu_model_12", "lu_model_trsm_ru", "lu_model_21"}, luTrsmFlops},
		{[]string{"lu_model_gemm", "lu_model_22"}, func(n float64) float64 { return gemmFlops(n, n, n) }},
	} {
		for _, s := range k.suffixes {
			if strings.HasSuffix(sym, s) {
				return k.f(n), true
			}
		}
	}
	return 0, false
}

// SymbolElemBytes is the element size a Cholesky or LU model symbol
// implies: 8 for StarPU's double LU (starpu_dlu_...), 4 for its float LU
// (starpu_slu_...) and for Cholesky, whose StarPU example is float only.
func SymbolElemBytes(symbol string) (int64, bool) {
	sym := trimBLAS(symbol)
	switch {
	case strings.Contains(sym, "dlu_lu_model_"):
		return 8, true
	case strings.Contains(sym, "slu_lu_model_"), strings.Contains(sym, "chol_model_"):
		return 4, true
	}
	return 0, false
}

// trimBLAS drops the BLAS suffix a StarPU build may add to LU symbols.
func trimBLAS(sym string) string {
	for _, s := range []string{"_openblas", "_atlas", "_goto", "_mkl", "_cublas"} {
		sym = strings.TrimSuffix(sym, s)
	}
	return sym
}
