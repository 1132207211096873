package models

import (
	"testing"

	"github.com/starsim/starsim/models/generation"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The generation package's vocabulary, for the tests below.
type (
	Gen          = generation.Gen
	Status       = generation.Status
	KernelSymbol = generation.KernelSymbol
)

const (
	Auto       = generation.Auto
	V13        = generation.V13
	V14        = generation.V14
	Readable   = generation.Readable
	Unreadable = generation.Unreadable
)

var BLASSuffixes = generation.BLASSuffixes

// TestKernels: the symbols of both generations, as the examples declare
// them (cholesky_implicit.c: chol_model_11/21/22; xlu_kernels.c:
// STARPU_LU_STR(lu_model_11) etc.; the 1.4 tarball's potrf/trsm/syrk/gemm
// and getrf/trsm_ll/trsm_ru/gemm).
func TestKernels(t *testing.T) {
	chol, ok := Lookup("Cholesky")
	require.True(t, ok)
	assert.Equal(t, []KernelSymbol{{Kernel: "POTRF", Symbol: "chol_model_11"}, {Kernel: "TRSM", Symbol: "chol_model_21"}, {Kernel: "GEMM", Symbol: "chol_model_22"}}, chol.Kernels(V13, false))
	assert.Equal(t, []KernelSymbol{{Kernel: "POTRF", Symbol: "chol_model_potrf"}, {Kernel: "TRSM", Symbol: "chol_model_trsm"}, {Kernel: "SYRK", Symbol: "chol_model_syrk"}, {Kernel: "GEMM", Symbol: "chol_model_gemm"}}, chol.Kernels(V14, true))
	luApp, ok := Lookup("lu")
	require.True(t, ok)
	assert.Equal(t, []KernelSymbol{{Kernel: "GETRF", Symbol: "starpu_dlu_lu_model_11"}, {Kernel: "TRSM_LL", Symbol: "starpu_dlu_lu_model_12"}, {Kernel: "TRSM_RU", Symbol: "starpu_dlu_lu_model_21"}, {Kernel: "GEMM", Symbol: "starpu_dlu_lu_model_22"}}, luApp.Kernels(V13, true))
	assert.Equal(t, []KernelSymbol{{Kernel: "GETRF", Symbol: "starpu_slu_lu_model_getrf"}, {Kernel: "TRSM_LL", Symbol: "starpu_slu_lu_model_trsm_ll"}, {Kernel: "TRSM_RU", Symbol: "starpu_slu_lu_model_trsm_ru"}, {Kernel: "GEMM", Symbol: "starpu_slu_lu_model_gemm"}}, luApp.Kernels(V14, false))
	qr, ok := Lookup("QR")
	require.True(t, ok)
	assert.Equal(t, []KernelSymbol{{Kernel: "GEQRT", Symbol: "dgeqrt"}, {Kernel: "LACPY", Symbol: "dlacpy"}, {Kernel: "LASET", Symbol: "dlaset"},
		{Kernel: "ORMQR", Symbol: "dormqr"}, {Kernel: "TPQRT", Symbol: "dtpqrt"}, {Kernel: "TPMQRT", Symbol: "dtpmqrt"}}, qr.Kernels(V13, true))
	assert.Equal(t, qr.Kernels(V13, false), qr.Kernels(V14, false), "Chameleon's names in both generations")
	_, ok = Lookup("svd")
	assert.False(t, ok)
	assert.Equal(t, []string{"cholesky", "lu", "qr"}, Names())
}

// Resolve is App.Resolve for an application named.
func Resolve(app string, double bool, want Gen, status func(string) Status) (*generation.Resolution, error) {
	a, ok := Lookup(app)
	if !ok {
		panic("unknown application " + app)
	}
	return a.Resolve(double, want, status)
}

// cal is a calibration's symbols: readable unless listed in bad.
func cal(readable []string, bad ...string) func(string) Status {
	st := map[string]Status{}
	for _, s := range readable {
		st[s] = Readable
	}
	for _, s := range bad {
		st[s] = Unreadable
	}
	return func(s string) Status { return st[s] }
}

var (
	chol14 = []string{"chol_model_potrf", "chol_model_trsm", "chol_model_syrk", "chol_model_gemm"}
	chol13 = []string{"chol_model_11", "chol_model_21", "chol_model_22"}
)

func luSyms(prec, suffix string, names ...string) []string {
	var out []string
	for _, n := range names {
		out = append(out, "starpu_"+prec+"lu_lu_model_"+n+suffix)
	}
	return out
}

func TestResolve(t *testing.T) {
	t.Run("1.4 Cholesky", func(t *testing.T) {
		r, err := Resolve("cholesky", false, Auto, cal(chol14))
		require.NoError(t, err)
		assert.Equal(t, V14, r.Gen)
		assert.Equal(t, "auto: the calibration has StarPU 1.4's chol_model_potrf, chol_model_trsm, chol_model_syrk, chol_model_gemm", r.Why)
		assert.Equal(t, "chol_model_syrk", r.Symbol("SYRK"))
		assert.Empty(t, r.Variant)
		assert.Empty(t, r.Unreadable)
	})
	t.Run("1.3 Cholesky", func(t *testing.T) {
		r, err := Resolve("cholesky", true, Auto, cal(chol13))
		require.NoError(t, err)
		assert.Equal(t, V13, r.Gen)
		assert.Equal(t, "auto: the calibration has StarPU 1.3's chol_model_11, chol_model_21, chol_model_22, none of 1.4's", r.Why)
		assert.Equal(t, map[string]string{"POTRF": "chol_model_11", "TRSM": "chol_model_21", "GEMM": "chol_model_22"}, r.Symbols())
	})
	t.Run("1.3 names with a stray 1.4 one", func(t *testing.T) {
		r, err := Resolve("cholesky", false, Auto, cal(append(chol13, "chol_model_gemm")))
		require.NoError(t, err)
		assert.Equal(t, V13, r.Gen)
		assert.Contains(t, r.Why, "and only part of 1.4's (no chol_model_potrf, chol_model_trsm, chol_model_syrk)")
	})
	t.Run("both generations: 1.4 unless asked", func(t *testing.T) {
		r, err := Resolve("cholesky", false, Auto, cal(append(chol13, chol14...)))
		require.NoError(t, err)
		assert.Equal(t, V14, r.Gen)
		assert.Contains(t, r.Why, "both generations' names")
		r, err = Resolve("cholesky", false, V13, cal(append(chol13, chol14...)))
		require.NoError(t, err)
		assert.Equal(t, V13, r.Gen)
		assert.Equal(t, "asked", r.Why)
		// The readable set wins over one with an unreadable file.
		r, err = Resolve("cholesky", false, Auto, cal(append(chol13, chol14[:3]...), "chol_model_gemm"))
		require.NoError(t, err)
		assert.Equal(t, V13, r.Gen)
	})
	t.Run("asked generation missing", func(t *testing.T) {
		_, err := Resolve("cholesky", false, V13, cal(chol14))
		assert.EqualError(t, err, "the calibration has no model for cholesky's POTRF (chol_model_11), TRSM (chol_model_21), GEMM (chol_model_22) in StarPU 1.3's names")
	})
	t.Run("nothing", func(t *testing.T) {
		_, err := Resolve("lu", false, Auto, cal(chol14))
		assert.EqualError(t, err, "the calibration has no model for lu's GETRF (starpu_slu_lu_model_getrf[_atlas|_goto|_openblas]), TRSM_LL (starpu_slu_lu_model_trsm_ll[_atlas|_goto|_openblas]), TRSM_RU (starpu_slu_lu_model_trsm_ru[_atlas|_goto|_openblas]), GEMM (starpu_slu_lu_model_gemm[_atlas|_goto|_openblas]) in StarPU 1.4's names, nor any of StarPU 1.3's")
	})
	t.Run("LU: unsuffixed first, others named", func(t *testing.T) {
		var syms []string
		for _, s := range BLASSuffixes {
			syms = append(syms, luSyms("s", s, "getrf", "trsm_ll", "trsm_ru", "gemm")...)
		}
		r, err := Resolve("lu", false, Auto, cal(syms))
		require.NoError(t, err)
		assert.Equal(t, "starpu_slu_lu_model_gemm", r.Symbol("GEMM"))
		assert.Equal(t, "", r.Suffix)
		assert.Equal(t, "no BLAS suffix (the calibration also has _atlas, _goto, _openblas)", r.Variant)
	})
	t.Run("LU: only _openblas (the native trace's calibration)", func(t *testing.T) {
		r, err := Resolve("lu", false, Auto, cal(luSyms("s", "_openblas", "getrf", "trsm_ll", "trsm_ru", "gemm")))
		require.NoError(t, err)
		assert.Equal(t, V14, r.Gen)
		assert.Equal(t, "_openblas", r.Suffix)
		assert.Equal(t, "_openblas", r.Variant)
		assert.Equal(t, "starpu_slu_lu_model_trsm_ll_openblas", r.Symbol("TRSM_LL"))
	})
	t.Run("LU 1.3 double, goto", func(t *testing.T) {
		r, err := Resolve("lu", true, Auto, cal(luSyms("d", "_goto", "11", "12", "21", "22")))
		require.NoError(t, err)
		assert.Equal(t, V13, r.Gen)
		assert.Equal(t, "starpu_dlu_lu_model_22_goto", r.Symbol("GEMM"))
	})
	t.Run("LU: an unreadable unsuffixed model, a readable variant", func(t *testing.T) {
		syms := append(luSyms("d", "", "getrf", "trsm_ll", "trsm_ru"), luSyms("d", "_atlas", "getrf", "trsm_ll", "trsm_ru", "gemm")...)
		r, err := Resolve("lu", true, Auto, cal(syms, "starpu_dlu_lu_model_gemm"))
		require.NoError(t, err)
		assert.Equal(t, "_atlas", r.Suffix)
		assert.Empty(t, r.Unreadable)
	})
	t.Run("LU: the needed model unreadable", func(t *testing.T) {
		r, err := Resolve("lu", true, Auto, cal(luSyms("d", "", "getrf", "trsm_ll", "trsm_ru"), "starpu_dlu_lu_model_gemm"))
		require.NoError(t, err)
		assert.Equal(t, []KernelSymbol{{Kernel: "GEMM", Symbol: "starpu_dlu_lu_model_gemm"}}, r.Unreadable)
		assert.Equal(t, "", r.Suffix)
	})
	t.Run("LU: mixed suffixes", func(t *testing.T) {
		syms := append(luSyms("s", "", "getrf", "trsm_ll"), luSyms("s", "_goto", "trsm_ru", "gemm")...)
		r, err := Resolve("lu", false, Auto, cal(syms))
		require.NoError(t, err)
		assert.Equal(t, "mixed", r.Suffix)
		assert.Equal(t, "BLAS variants mixed: starpu_slu_lu_model_getrf, starpu_slu_lu_model_trsm_ll, starpu_slu_lu_model_trsm_ru_goto, starpu_slu_lu_model_gemm_goto", r.Variant)
	})
}

func TestResolveModel(t *testing.T) {
	known := map[string]bool{"chol_model_potrf": true, "chol_model_22": true, "starpu_slu_lu_model_gemm_openblas": true,
		"starpu_dlu_lu_model_trsm_ll": true}
	has := func(s string) bool { return known[s] }
	cases := []struct{ in, want string }{
		{"chol_model_potrf", "chol_model_potrf"},
		{"chol_model_11", "chol_model_potrf"},                           // old name, new calibration
		{"chol_model_gemm", "chol_model_22"},                            // new name, old calibration
		{"starpu_slu_lu_model_22", "starpu_slu_lu_model_gemm_openblas"}, // generation and BLAS suffix
		{"starpu_slu_lu_model_gemm", "starpu_slu_lu_model_gemm_openblas"},
		{"starpu_dlu_lu_model_12_goto", "starpu_dlu_lu_model_trsm_ll"},
	}
	for _, c := range cases {
		got, ok := ResolveModel(c.in, has)
		assert.True(t, ok, c.in)
		assert.Equal(t, c.want, got, c.in)
	}
	_, ok := ResolveModel("unknown_model", has)
	assert.False(t, ok)
	got, ok := ResolveModel("anything", nil)
	assert.True(t, ok)
	assert.Equal(t, "anything", got)
}

func TestSyncGPUModel(t *testing.T) {
	for sym, want := range map[string]bool{
		"chol_model_potrf": true, "chol_model_11": true, "chol_model_11_openblas": true,
		"starpu_slu_lu_model_getrf": true, "starpu_dlu_lu_model_11_atlas": true,
		"chol_model_gemm": false, "chol_model_21": false, "starpu_slu_lu_model_trsm_ll": false, "": false,
	} {
		assert.Equal(t, want, SyncGPUModel(sym), sym)
	}
}
