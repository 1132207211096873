// Package generation knows the two generations of StarPU's dense linear
// algebra examples as calibrations see them: the model symbols each names
// its kernels with, their BLAS-suffixed variants, and how to tell from a
// calibration's symbols which generation wrote it.
//
//	kernel    StarPU 1.3 (Debian, Ubuntu)       StarPU 1.4
//	POTRF     chol_model_11                     chol_model_potrf
//	TRSM      chol_model_21                     chol_model_trsm
//	SYRK      (none: a GEMM of chol_model_22)   chol_model_syrk
//	GEMM      chol_model_22                     chol_model_gemm
//	GETRF     starpu_Xlu_lu_model_11            starpu_Xlu_lu_model_getrf
//	TRSM_LL   starpu_Xlu_lu_model_12            starpu_Xlu_lu_model_trsm_ll
//	TRSM_RU   starpu_Xlu_lu_model_21            starpu_Xlu_lu_model_trsm_ru
//	GEMM      starpu_Xlu_lu_model_22            starpu_Xlu_lu_model_gemm
//
// X is s (float) or d (double). The LU symbols may carry the suffix of the
// BLAS StarPU was built with (_atlas, _goto, _openblas: xlu_kernels.c of
// both generations); the Cholesky ones never do. Cholesky in double is a
// starsim extension with the float symbols (element sizes are not hashed
// into footprints).
package generation

import (
	"fmt"
	"strings"
)

// Gen is a StarPU generation. The zero value, Auto, means "detect it".
type Gen int

// The generations.
const (
	Auto Gen = 0
	V13  Gen = 13
	V14  Gen = 14
)

// String is "1.3", "1.4" or "auto".
func (g Gen) String() string {
	switch g {
	case V13:
		return "1.3"
	case V14:
		return "1.4"
	case Auto:
		return "auto"
	}
	return fmt.Sprintf("Gen(%d)", int(g))
}

// Parse reads "1.3", "1.4" or "auto" ("" is auto).
func Parse(s string) (Gen, error) {
	switch strings.TrimSpace(s) {
	case "", "auto":
		return Auto, nil
	case "1.3":
		return V13, nil
	case "1.4":
		return V14, nil
	}
	return Auto, fmt.Errorf("unknown StarPU generation %q (want 1.3, 1.4 or auto)", s)
}

// KernelSymbol is one kernel of an application and its model symbol, without
// BLAS suffix.
type KernelSymbol struct{ Kernel, Symbol string }

// Kernels lists app's kernels ("cholesky" or "lu") in generation g (V13 or
// V14) with their model symbols, in submission order of first use.
func Kernels(app string, g Gen, double bool) ([]KernelSymbol, error) {
	if g != V13 && g != V14 {
		return nil, fmt.Errorf("generation: no kernels for generation %s", g)
	}
	old := g == V13
	switch strings.ToLower(app) {
	case "cholesky":
		if old {
			return []KernelSymbol{{"POTRF", "chol_model_11"}, {"TRSM", "chol_model_21"}, {"GEMM", "chol_model_22"}}, nil
		}
		return []KernelSymbol{{"POTRF", "chol_model_potrf"}, {"TRSM", "chol_model_trsm"}, {"SYRK", "chol_model_syrk"}, {"GEMM", "chol_model_gemm"}}, nil
	case "lu":
		p := "starpu_slu_lu_model_"
		if double {
			p = "starpu_dlu_lu_model_"
		}
		if old {
			return []KernelSymbol{{"GETRF", p + "11"}, {"TRSM_LL", p + "12"}, {"TRSM_RU", p + "21"}, {"GEMM", p + "22"}}, nil
		}
		return []KernelSymbol{{"GETRF", p + "getrf"}, {"TRSM_LL", p + "trsm_ll"}, {"TRSM_RU", p + "trsm_ru"}, {"GEMM", p + "gemm"}}, nil
	}
	return nil, fmt.Errorf("generation: unknown application %q (want cholesky or lu)", app)
}

// BLASSuffixes are the suffixes StarPU's LU example appends to its model
// symbols for the BLAS it was built with, in the order its #ifdef chain
// tries them (xlu_kernels.c). "" (none) comes first.
var BLASSuffixes = []string{"", "_atlas", "_goto", "_openblas"}

// replaySuffixes are the suffixes a recorded symbol may carry.
var replaySuffixes = []string{"_openblas", "_atlas", "_goto", "_mkl", "_cublas"}

// pairs are the kernels' names in the two generations: Cholesky's
// 11/21/22 and LU's 11/12/21/22 against the 1.4 names.
var pairs = [][2]string{
	{"chol_model_11", "chol_model_potrf"}, {"chol_model_21", "chol_model_trsm"},
	{"chol_model_22", "chol_model_gemm"},
	{"_lu_model_11", "_lu_model_getrf"}, {"_lu_model_12", "_lu_model_trsm_ll"},
	{"_lu_model_21", "_lu_model_trsm_ru"}, {"_lu_model_22", "_lu_model_gemm"},
}

// SyncGPUModel says whether a model symbol is one of the panel
// factorisations StarPU's examples declare without STARPU_CUDA_ASYNC
// (Cholesky's POTRF, LU's GETRF, either generation's name, any BLAS
// suffix): their GPU kernel is synchronous.
func SyncGPUModel(sym string) bool {
	for _, s := range replaySuffixes {
		sym = strings.TrimSuffix(sym, s)
	}
	for _, k := range []string{"chol_model_11", "chol_model_potrf", "_lu_model_11", "_lu_model_getrf"} {
		if strings.HasSuffix(sym, k) {
			return true
		}
	}
	return false
}

// ResolveModel finds a calibration's name for a recorded model symbol (a
// trace's Model field): the symbol itself, else its other generation's
// name, each with the recorded BLAS suffix, without, or with another one.
// Without has, the symbol is kept.
func ResolveModel(sym string, has func(string) bool) (string, bool) {
	if has == nil {
		return sym, true
	}
	base, suffix := sym, ""
	for _, s := range replaySuffixes {
		if strings.HasSuffix(sym, s) {
			base, suffix = strings.TrimSuffix(sym, s), s
		}
	}
	cands := []string{base}
	for _, p := range pairs {
		for _, pair := range [][2]string{{p[0], p[1]}, {p[1], p[0]}} {
			if strings.HasSuffix(base, pair[0]) {
				cands = append(cands, strings.TrimSuffix(base, pair[0])+pair[1])
			}
		}
	}
	var tries []string
	for _, c := range cands {
		tries = append(tries, c+suffix, c)
		for _, s := range replaySuffixes {
			tries = append(tries, c+s)
		}
	}
	for _, t := range tries {
		if has(t) {
			return t, true
		}
	}
	return sym, false
}
