package models

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestKernelFlops: the per-task counts of the graphs, under every name a
// trace may give; the native trace's GFlop column at n = 960.
func TestKernelFlopsBySymbol(t *testing.T) {
	for _, c := range []struct {
		sym  string
		want float64
	}{
		{"chol_model_potrf", 0.295372e9}, {"chol_model_11", 0.295372e9},
		{"chol_model_trsm", 0.885657e9}, {"chol_model_21", 0.885657e9},
		{"chol_model_syrk", 0.885657e9}, {"chol_model_gemm", 1.769472e9}, {"chol_model_22", 1.769472e9},
		{"starpu_slu_lu_model_gemm_openblas", 1.769472e9}, {"starpu_dlu_lu_model_22", 1.769472e9},
		{"starpu_slu_lu_model_trsm_ll", 960 * 960 * 960}, {"starpu_slu_lu_model_12", 960 * 960 * 960},
		{"starpu_slu_lu_model_trsm_ru", 960 * 960 * 960}, {"starpu_slu_lu_model_21_atlas", 960 * 960 * 960},
	} {
		got, ok := KernelFlops(c.sym, 960)
		assert.True(t, ok, c.sym)
		assert.InDelta(t, c.want, got, 1e3, c.sym)
	}
	g, ok := KernelFlops("starpu_slu_lu_model_getrf", 960)
	assert.True(t, ok)
	assert.Equal(t, getrfFlops(960), g)
	_, ok = KernelFlops("my_codelet", 960)
	assert.False(t, ok)

	for sym, want := range map[string]int64{"starpu_dlu_lu_model_getrf": 8, "starpu_slu_lu_model_11_goto": 4, "chol_model_gemm": 4} {
		e, ok := SymbolElemBytes(sym)
		assert.True(t, ok, sym)
		assert.Equal(t, want, e, sym)
	}
	_, ok = SymbolElemBytes("my_codelet")
	assert.False(t, ok)
}
