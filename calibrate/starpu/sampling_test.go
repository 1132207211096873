package starpu

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadSamplingSynthetic(t *testing.T) {
	dir := filepath.Join("testdata", "sampling")
	s, err := ReadSampling(dir, "synth")
	require.NoError(t, err)
	assert.Equal(t, dir, s.Dir)
	assert.Equal(t, "synth", s.Host)
	assert.Equal(t, filepath.Join(dir, "bus", "synth.platform.xml"), s.PlatformV3)
	assert.Equal(t, "", s.PlatformV4)
	require.NotNil(t, s.Bus)
	assert.Equal(t, []string{"RAM", "CUDA0", "CUDA1", "OpenCL0"}, s.Bus.Nodes)

	// Sorted by symbol; "kern.b" keeps its dot; the symlink is followed;
	// kern_a.otherhost (not a model at all) is not read.
	var symbols []string
	for _, m := range s.Models {
		symbols = append(symbols, m.Symbol)
	}
	assert.Equal(t, []string{"alias", "kern.b", "kern_a"}, symbols)
	a, k := s.Model("alias"), s.Model("kern_a")
	require.NotNil(t, a)
	require.NotNil(t, k)
	assert.Equal(t, filepath.Join(dir, "codelets", "45", "kern_a.synth"), k.File)
	assert.True(t, reflect.DeepEqual(canon(k).Combs, canon(a).Combs))
	assert.Equal(t, "cuda0", s.Model("kern.b").Combs[0].Arch())
	assert.Nil(t, s.Model("nope"))
	assert.Nil(t, s.Model("zzz"))

	e := k.Combs[0].Impls[0].Entries[0]
	assert.Equal(t, TaskFootprint([]uint32{MatrixFootprint(320, 320)}), e.Footprint)
	assert.Equal(t, uint64(320*320*4), e.Size)
}

func TestReadSamplingShared(t *testing.T) {
	dir := needShared(t)
	cases := []struct {
		host    string
		nmodels int
	}{{"attila", 42}, {"mirage", 53}, {"hannibal", 20}, {"hannibal-pitch", 20}}
	for _, c := range cases {
		t.Run(c.host, func(t *testing.T) {
			s, err := ReadSampling(dir, c.host)
			require.NoError(t, err)
			assert.Len(t, s.Models, c.nmodels)
			assert.Equal(t, filepath.Join(dir, "bus", c.host+".platform.v4.xml"), s.PlatformV4)
			assert.Equal(t, filepath.Join(dir, "bus", c.host+".platform.xml"), s.PlatformV3)
			for i := 1; i < len(s.Models); i++ {
				assert.Less(t, s.Models[i-1].Symbol, s.Models[i].Symbol)
			}
			gemm := s.Model("chol_model_gemm")
			require.NotNil(t, gemm)
			assert.Equal(t, filepath.Join(dir, "codelets", "45", "chol_model_gemm."+c.host), gemm.File)
			assert.NotNil(t, gemm.CombByArch("cuda0"))
		})
	}
	// hannibal-pitch differs from hannibal only in its platform files.
	h, err := ReadSampling(dir, "hannibal")
	require.NoError(t, err)
	hp, err := ReadSampling(dir, "hannibal-pitch")
	require.NoError(t, err)
	assert.Equal(t, h.Bus, hp.Bus)
	for i := range h.Models {
		assert.Equal(t, h.Models[i].Symbol, hp.Models[i].Symbol)
		assert.True(t, reflect.DeepEqual(canon(h.Models[i]).Combs, canon(hp.Models[i]).Combs), h.Models[i].Symbol)
	}
}

// copyTree copies the synthetic sampling directory (symlinks resolved).
func copyTree(t *testing.T) string {
	t.Helper()
	dst := t.TempDir()
	src := filepath.Join("testdata", "sampling")
	err := filepath.Walk(src, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if info.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	require.NoError(t, err)
	return dst
}

func TestReadSamplingErrors(t *testing.T) {
	t.Run("no such directory", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "nope")
		_, err := ReadSampling(dir, "synth")
		requireSrcErr(t, err, dir+": ", "not a StarPU sampling directory")
	})
	t.Run("bad host", func(t *testing.T) {
		_, err := ReadSampling("testdata/sampling", "../synth")
		requireSrcErr(t, err, "testdata/sampling: ", "invalid host name")
		_, err = ReadSampling("testdata/sampling", "")
		requireSrcErr(t, err, "testdata/sampling: ", "invalid host name")
	})
	t.Run("missing bus", func(t *testing.T) {
		dir := copyTree(t)
		require.NoError(t, os.RemoveAll(filepath.Join(dir, "bus")))
		_, err := ReadSampling(dir, "synth")
		requireSrcErr(t, err, dir+": ", "no calibration for host \"synth\": the directory has no bus/HOST.config for any host")
	})
	t.Run("unknown host lists the hosts", func(t *testing.T) {
		dir := copyTree(t)
		require.NoError(t, os.WriteFile(filepath.Join(dir, "bus", "other.config"), []byte("x"), 0o644))
		_, err := ReadSampling(dir, "nosuch")
		requireSrcErr(t, err, dir+": ", "no calibration for host \"nosuch\" (no bus/nosuch.config); hosts here: other, synth")
		assert.Equal(t, []string{"other", "synth"}, Hosts(dir))
		assert.Empty(t, Hosts(filepath.Join(dir, "nope")))
	})
	t.Run("missing latency", func(t *testing.T) {
		dir := copyTree(t)
		require.NoError(t, os.Remove(filepath.Join(dir, "bus", "synth.latency")))
		_, err := ReadSampling(dir, "synth")
		requireSrcErr(t, err, filepath.Join(dir, "bus", "synth.latency")+": ", "missing bus latency file")
	})
	t.Run("missing codelets", func(t *testing.T) {
		dir := copyTree(t)
		require.NoError(t, os.RemoveAll(filepath.Join(dir, "codelets")))
		_, err := ReadSampling(dir, "synth")
		requireSrcErr(t, err, filepath.Join(dir, "codelets", "45")+": ", "missing performance model directory codelets/45")
	})
	t.Run("no model for the host", func(t *testing.T) {
		dir := copyTree(t)
		for _, f := range []string{"kern_a.synth", "kern.b.synth", "alias.synth"} {
			require.NoError(t, os.Remove(filepath.Join(dir, "codelets", "45", f)))
		}
		_, err := ReadSampling(dir, "synth")
		requireSrcErr(t, err, filepath.Join(dir, "codelets", "45")+": ", "no performance model for host synth")
	})
	t.Run("bad model", func(t *testing.T) {
		dir := copyTree(t)
		bad := filepath.Join(dir, "codelets", "45", "broken.synth")
		require.NoError(t, os.WriteFile(bad, []byte("45\n1\n1\n0\n0\n1\n1\n1\n0 0 0 0 nan nan 0 0 0\nnan nan nan\n0\nzz 1 1 1 1 1 1 1\n"), 0o644))
		s, err := ReadSampling(dir, "synth")
		require.NoError(t, err, "an unreadable model is listed, not an error")
		require.Len(t, s.Unreadable, 1)
		assert.Equal(t, "broken", s.Unreadable[0].Symbol)
		requireSrcErr(t, s.Unreadable[0].Err, bad+":12: ", "malformed footprint \"zz\"")
		assert.Nil(t, s.Model("broken"))
		assert.NotNil(t, s.Model("kern_a"), "the readable models are kept")
		// Only unreadable models: still a sampling, with no model.
		for _, f := range []string{"kern_a.synth", "kern.b.synth", "alias.synth"} {
			require.NoError(t, os.Remove(filepath.Join(dir, "codelets", "45", f)))
		}
		s, err = ReadSampling(dir, "synth")
		require.NoError(t, err)
		assert.Empty(t, s.Models)
		assert.Len(t, s.Unreadable, 1)
	})
	t.Run("bad bus", func(t *testing.T) {
		dir := copyTree(t)
		path := filepath.Join(dir, "bus", "synth.bandwidth")
		require.NoError(t, os.WriteFile(path, []byte("0 1 1 1\n1 0 1 1\n1 1 zero 1\n"), 0o644))
		_, err := ReadSampling(dir, "synth")
		requireSrcErr(t, err, path+":3: ", "expected a number or nan, found \"zero\"")
	})
}
