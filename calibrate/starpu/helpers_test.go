package starpu

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/starsim/starsim/internal/srcerr"
	"github.com/stretchr/testify/require"
)

// sharedDir is the LGPL StarPU sampling data shipped next to the repository,
// read in place (never copied into the repository).
const sharedDir = "../../../shared/calibrations/starpu-sampling"

// needShared skips the test when the shared sampling directory is absent.
func needShared(t testing.TB) string {
	t.Helper()
	if st, err := os.Stat(filepath.Join(sharedDir, "codelets", "45")); err != nil || !st.IsDir() {
		t.Skipf("shared StarPU sampling data not found at %s", sharedDir)
	}
	return sharedDir
}

// sharedModelFiles lists codelets/45 of the shared directory.
func sharedModelFiles(t testing.TB) []string {
	dir := filepath.Join(needShared(t), "codelets", "45")
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	var files []string
	for _, e := range ents {
		files = append(files, filepath.Join(dir, e.Name()))
	}
	require.NotEmpty(t, files)
	return files
}

// nanSentinel stands for NaN in canonical models (a collision with a real
// value could only hide a difference, never invent one).
var nanSentinel = -math.MaxFloat64

func canonF(v float64) float64 {
	if math.IsNaN(v) {
		return nanSentinel
	}
	return v
}

// canon copies m with the Line fields zeroed and NaN replaced by a
// sentinel, so that reflect.DeepEqual compares models the way a reader
// would (NaN equal to NaN, lines ignored).
func canon(m *PerfModel) *PerfModel {
	out := &PerfModel{Symbol: m.Symbol, File: m.File}
	for _, c := range m.Combs {
		nc := Comb{Devices: append([]Device(nil), c.Devices...)}
		for _, im := range c.Impls {
			r := im.Regression
			ni := Impl{
				Regression: Regression{
					SumLnX: canonF(r.SumLnX), SumLnX2: canonF(r.SumLnX2), SumLnY: canonF(r.SumLnY), SumLnXLnY: canonF(r.SumLnXLnY),
					Alpha: canonF(r.Alpha), Beta: canonF(r.Beta), N: r.N, MinX: r.MinX, MaxX: r.MaxX,
				},
				NLRegression: NLRegression{canonF(im.NLRegression.A), canonF(im.NLRegression.B), canonF(im.NLRegression.C)},
			}
			if im.MultiRegression != nil {
				mr := &MultiRegression{}
				for _, v := range im.MultiRegression.Coeffs {
					mr.Coeffs = append(mr.Coeffs, canonF(v))
				}
				ni.MultiRegression = mr
			}
			for _, e := range im.Entries {
				ni.Entries = append(ni.Entries, Entry{
					Footprint: e.Footprint, Size: e.Size, Flops: canonF(e.Flops), MeanUS: canonF(e.MeanUS),
					DevUS: canonF(e.DevUS), Sum: canonF(e.Sum), Sum2: canonF(e.Sum2), N: e.N,
				})
			}
			nc.Impls = append(nc.Impls, ni)
		}
		out.Combs = append(out.Combs, nc)
	}
	return out
}

// roundTrip writes m and parses it back under the same file name.
func roundTrip(t testing.TB, m *PerfModel) *PerfModel {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, m.Write(&buf))
	m2, err := ParsePerfModel(buf.Bytes(), m.File)
	require.NoError(t, err, "re-parsing written model:\n%s", buf.String())
	return m2
}

// requireSrcErr checks that err is a *srcerr.Error whose text starts with
// prefix ("file:LINE:") and contains phrase.
func requireSrcErr(t testing.TB, err error, prefix, phrase string) {
	t.Helper()
	require.Error(t, err)
	var se *srcerr.Error
	require.True(t, errors.As(err, &se), "error %q is not a *srcerr.Error", err)
	require.True(t, strings.HasPrefix(err.Error(), prefix), "error %q does not start with %q", err, prefix)
	require.Contains(t, err.Error(), phrase)
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return data
}
