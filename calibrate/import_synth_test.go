package calibrate

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/starsim/starsim/internal/synthsampling"
	"github.com/starsim/starsim/models/generation"
)

// An unreadable model (the MR count is "x") and a model with data after its
// declared combination (StarPU reads it, ignoring the rest).
const (
	brokenModel   = "45\n1\n1\n0\n0\n1\n1\n0\n0 0 0 0 nan nan 0 0 0\nnan nan nan\nx\n"
	trailingModel = "45\n1\n1\n0\n0\n1\n1\n0\n0 0 0 0 nan nan 0 0 0\nnan nan nan\n0\n1\n1\n0\n"
)

func synthDir(t *testing.T, o synthsampling.Options) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, synthsampling.Write(dir, o))
	return dir
}

// TestImportSkipsUnreadableModels: both generations import with the
// readable models kept, the unreadable ones listed (FILE:LINE), the odd
// one read as StarPU reads it (a warning naming it); --strict fails.
func TestImportSkipsUnreadableModels(t *testing.T) {
	for _, g := range []generation.Gen{generation.V13, generation.V14} {
		t.Run(g.String(), func(t *testing.T) {
			dir := synthDir(t, synthsampling.Options{Host: "h", Gen: g, CPUs: 4, GPUs: 2, Double: true,
				Files: map[string]string{"starpu_dlu_lu_model_unused.h": brokenModel, "overlap_sleep_1024_24.h": trailingModel}})
			f, warn, err := Import(dir, "h")
			require.NoError(t, err)
			require.Len(t, f.Unreadable, 1)
			u := f.Unreadable[0]
			assert.Equal(t, "starpu_dlu_lu_model_unused", u.Model)
			assert.Equal(t, filepath.Join(dir, "codelets", "45", "starpu_dlu_lu_model_unused.h"), u.File)
			assert.Equal(t, 11, u.Line)
			assert.Contains(t, u.Reason, "multiple-regression coefficient count")
			require.Len(t, warn, 1)
			assert.Equal(t, "overlap_sleep_1024_24", warn[0].Model)
			assert.Contains(t, warn[0].Msg, "overlap_sleep_1024_24.h:12: data after the 1 declared combination(s)")
			assert.Equal(t, generation.Readable, f.ModelStatus("overlap_sleep_1024_24"))
			assert.Equal(t, generation.Unreadable, f.ModelStatus("starpu_dlu_lu_model_unused"))
			assert.Equal(t, generation.Absent, f.ModelStatus("nothing"))
			gen, why := f.Generation()
			assert.Equal(t, g, gen, why)

			// The list survives a write and a read, and the schema takes it.
			var buf bytes.Buffer
			require.NoError(t, f.Write(&buf))
			schemaValidate(t, buf.Bytes())
			assert.Contains(t, buf.String(), `"unreadable_models"`)
			back, err := Parse(buf.Bytes(), "x.calib.json")
			require.NoError(t, err)
			assert.Equal(t, f.Unreadable, back.Unreadable)
			var text bytes.Buffer
			require.NoError(t, back.WriteText(&text))
			assert.Contains(t, text.String(), "starpu_dlu_lu_model_unused.h:11: expected multiple-regression coefficient count")

			_, _, err = ImportWith(dir, "h", ImportOptions{Strict: true})
			assert.ErrorContains(t, err, "starpu_dlu_lu_model_unused.h:11:")
		})
	}
}

// TestResolveAppNeedsReadableModels: the work's models resolve by the
// calibration's generation; a needed model that could not be read is an
// error with its FILE:LINE, an unneeded one is not.
func TestResolveAppNeedsReadableModels(t *testing.T) {
	dir := synthDir(t, synthsampling.Options{Host: "h", Gen: generation.V13, CPUs: 2, GPUs: 1, LUSuffixes: []string{"_openblas"}, Double: true})
	gemm := filepath.Join(dir, "codelets", "45", "starpu_dlu_lu_model_22_openblas.h")
	require.NoError(t, os.WriteFile(gemm, []byte(brokenModel), 0o644))
	f, _, err := Import(dir, "h")
	require.NoError(t, err)
	r, err := f.ResolveApp("cholesky", false, generation.Auto)
	require.NoError(t, err)
	assert.Equal(t, generation.V13, r.Gen)
	assert.Equal(t, "chol_model_22", r.Symbol("GEMM"))
	r, err = f.ResolveApp("lu", false, generation.Auto)
	require.NoError(t, err, "the float LU does not need the double GEMM")
	assert.Equal(t, "starpu_slu_lu_model_22_openblas", r.Symbol("GEMM"))
	assert.Equal(t, "_openblas", r.Variant)
	_, err = f.ResolveApp("lu", true, generation.Auto)
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), gemm+":11: "), err.Error())
	assert.Contains(t, err.Error(), "(model starpu_dlu_lu_model_22_openblas, needed by lu's GEMM tasks, could not be read)")
	_, err = f.ResolveApp("cholesky", false, generation.V14)
	assert.ErrorContains(t, err, "calibration h: the calibration has no model for cholesky's POTRF (chol_model_potrf)")
}

// TestImportWithoutReadableModel: a machine none of whose models reads is
// not usable.
func TestImportWithoutReadableModel(t *testing.T) {
	dir := synthDir(t, synthsampling.Options{Host: "h", Gen: generation.V14, CPUs: 2, GPUs: 1})
	ents, err := os.ReadDir(filepath.Join(dir, "codelets", "45"))
	require.NoError(t, err)
	for _, e := range ents {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "codelets", "45", e.Name()), []byte(brokenModel), 0o644))
	}
	_, _, err = Import(dir, "h")
	assert.ErrorContains(t, err, "no model file could be read, the first: ")
}
