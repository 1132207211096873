// Package generation knows the two generations of StarPU's dense linear
// algebra examples as calibrations see them: StarPU 1.3 (the version
// Debian and Ubuntu package) and 1.4 name the examples' kernel models
// differently (chol_model_11 against chol_model_potrf, ...), and a StarPU
// build may append its BLAS's suffix (_atlas, _goto, _openblas) to some.
// Given an application's kernels in both generations (the models package's
// registry declares them) and what a calibration holds, Resolve decides
// which generation's graph runs and under which symbols; ResolveModel
// finds a calibration's name for a symbol a trace recorded.
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

// BLASSuffixes are the suffixes StarPU's LU example appends to its model
// symbols for the BLAS it was built with, in the order its #ifdef chain
// tries them (xlu_kernels.c). "" (none) comes first.
var BLASSuffixes = []string{"", "_atlas", "_goto", "_openblas"}

// replaySuffixes are the suffixes a recorded symbol may carry.
var replaySuffixes = []string{"_openblas", "_atlas", "_goto", "_mkl", "_cublas"}

// TrimBLAS drops the BLAS suffixes a recorded symbol may carry.
func TrimBLAS(sym string) string {
	for _, s := range replaySuffixes {
		sym = strings.TrimSuffix(sym, s)
	}
	return sym
}

// ResolveModel finds a calibration's name for a recorded model symbol (a
// trace's Model field): the symbol itself, else its other generation's
// name (renames pairs the endings of a kernel's 1.3 and 1.4 symbols), each
// with the recorded BLAS suffix, without, or with another one. Without has,
// the symbol is kept.
func ResolveModel(sym string, renames [][2]string, has func(string) bool) (string, bool) {
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
	for _, p := range renames {
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
