package traces

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

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
}

// TestGraphFromNative rebuilds the native trace's graph: 120 tasks, the
// recorded priorities and wont_use calls, handles with their sizes.
func TestGraphFromNative(t *testing.T) {
	recs, err := ReadTasksRec(openNative(t, "tasks.rec"), "tasks.rec")
	if err != nil {
		t.Fatal(err)
	}
	g, warn, err := Graph(recs, ReplayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	assert.Empty(t, warn)
	assert.Len(t, g.Tasks, 120)
	nwu := 0
	for _, tk := range g.Tasks {
		nwu += len(tk.WontUse)
	}
	assert.Equal(t, 36, nwu)
	for _, h := range g.Handles {
		assert.Equal(t, int64(3686400), h.SizeBytes)
	}
	// Unknown models pin their tasks to the recorded worker for the
	// recorded length.
	g, warn, err = Graph(recs, ReplayOptions{HasModel: func(string) bool { return false }})
	if err != nil {
		t.Fatal(err)
	}
	assert.NotEmpty(t, warn)
	assert.True(t, g.Tasks[0].Pinned)
	assert.Greater(t, g.Tasks[0].FixedUS, 0.0)
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
