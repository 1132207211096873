package generation

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	for in, want := range map[string]Gen{"": Auto, "auto": Auto, "1.3": V13, "1.4": V14, " 1.4 ": V14} {
		g, err := Parse(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, g, in)
	}
	_, err := Parse("1.2")
	assert.ErrorContains(t, err, `unknown StarPU generation "1.2" (want 1.3, 1.4 or auto)`)
	assert.Equal(t, "1.3", V13.String())
	assert.Equal(t, "1.4", V14.String())
	assert.Equal(t, "auto", Auto.String())
}

// TestKernels: the symbols of both generations, as the examples declare
// them (cholesky_implicit.c: chol_model_11/21/22; xlu_kernels.c:
// STARPU_LU_STR(lu_model_11) etc.; the 1.4 tarball's potrf/trsm/syrk/gemm
// and getrf/trsm_ll/trsm_ru/gemm).
func TestKernels(t *testing.T) {
	ks, err := Kernels("cholesky", V13, false)
	require.NoError(t, err)
	assert.Equal(t, []KernelSymbol{{"POTRF", "chol_model_11"}, {"TRSM", "chol_model_21"}, {"GEMM", "chol_model_22"}}, ks)
	ks, err = Kernels("Cholesky", V14, true)
	require.NoError(t, err)
	assert.Equal(t, []KernelSymbol{{"POTRF", "chol_model_potrf"}, {"TRSM", "chol_model_trsm"}, {"SYRK", "chol_model_syrk"}, {"GEMM", "chol_model_gemm"}}, ks)
	ks, err = Kernels("lu", V13, true)
	require.NoError(t, err)
	assert.Equal(t, []KernelSymbol{{"GETRF", "starpu_dlu_lu_model_11"}, {"TRSM_LL", "starpu_dlu_lu_model_12"}, {"TRSM_RU", "starpu_dlu_lu_model_21"}, {"GEMM", "starpu_dlu_lu_model_22"}}, ks)
	ks, err = Kernels("lu", V14, false)
	require.NoError(t, err)
	assert.Equal(t, []KernelSymbol{{"GETRF", "starpu_slu_lu_model_getrf"}, {"TRSM_LL", "starpu_slu_lu_model_trsm_ll"}, {"TRSM_RU", "starpu_slu_lu_model_trsm_ru"}, {"GEMM", "starpu_slu_lu_model_gemm"}}, ks)
	_, err = Kernels("qr", V14, false)
	assert.Error(t, err)
	_, err = Kernels("lu", Auto, false)
	assert.Error(t, err)
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

func lu(prec, suffix string, names ...string) []string {
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
			syms = append(syms, lu("s", s, "getrf", "trsm_ll", "trsm_ru", "gemm")...)
		}
		r, err := Resolve("lu", false, Auto, cal(syms))
		require.NoError(t, err)
		assert.Equal(t, "starpu_slu_lu_model_gemm", r.Symbol("GEMM"))
		assert.Equal(t, "", r.Suffix)
		assert.Equal(t, "no BLAS suffix (the calibration also has _atlas, _goto, _openblas)", r.Variant)
	})
	t.Run("LU: only _openblas (the native trace's calibration)", func(t *testing.T) {
		r, err := Resolve("lu", false, Auto, cal(lu("s", "_openblas", "getrf", "trsm_ll", "trsm_ru", "gemm")))
		require.NoError(t, err)
		assert.Equal(t, V14, r.Gen)
		assert.Equal(t, "_openblas", r.Suffix)
		assert.Equal(t, "_openblas", r.Variant)
		assert.Equal(t, "starpu_slu_lu_model_trsm_ll_openblas", r.Symbol("TRSM_LL"))
	})
	t.Run("LU 1.3 double, goto", func(t *testing.T) {
		r, err := Resolve("lu", true, Auto, cal(lu("d", "_goto", "11", "12", "21", "22")))
		require.NoError(t, err)
		assert.Equal(t, V13, r.Gen)
		assert.Equal(t, "starpu_dlu_lu_model_22_goto", r.Symbol("GEMM"))
	})
	t.Run("LU: an unreadable unsuffixed model, a readable variant", func(t *testing.T) {
		syms := append(lu("d", "", "getrf", "trsm_ll", "trsm_ru"), lu("d", "_atlas", "getrf", "trsm_ll", "trsm_ru", "gemm")...)
		r, err := Resolve("lu", true, Auto, cal(syms, "starpu_dlu_lu_model_gemm"))
		require.NoError(t, err)
		assert.Equal(t, "_atlas", r.Suffix)
		assert.Empty(t, r.Unreadable)
	})
	t.Run("LU: the needed model unreadable", func(t *testing.T) {
		r, err := Resolve("lu", true, Auto, cal(lu("d", "", "getrf", "trsm_ll", "trsm_ru"), "starpu_dlu_lu_model_gemm"))
		require.NoError(t, err)
		assert.Equal(t, []KernelSymbol{{"GEMM", "starpu_dlu_lu_model_gemm"}}, r.Unreadable)
		assert.Equal(t, "", r.Suffix)
	})
	t.Run("LU: mixed suffixes", func(t *testing.T) {
		syms := append(lu("s", "", "getrf", "trsm_ll"), lu("s", "_goto", "trsm_ru", "gemm")...)
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
