package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// entries lists dir's names (temporaries included).
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	require.NoError(t, err)
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

func TestCommitRenames(t *testing.T) {
	Reset()
	dir := t.TempDir()
	p := filepath.Join(dir, "out.json")
	f, err := Create(p)
	require.NoError(t, err)
	_, err = f.WriteString("{}\n")
	require.NoError(t, err)
	assert.NoFileExists(t, p, "nothing at the final path before Commit")
	require.NoError(t, f.Commit())
	data, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, "{}\n", string(data))
	assert.Equal(t, []string{"out.json"}, entries(t, dir))
	st, err := os.Stat(p)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o666&^umask), st.Mode().Perm())
	assert.Empty(t, NotWritten())
}

func TestAbortLeavesNothingAndKeepsOldFile(t *testing.T) {
	Reset()
	dir := t.TempDir()
	p := filepath.Join(dir, "out.csv")
	require.NoError(t, os.WriteFile(p, []byte("old"), 0o644))
	err := Write(p, func(w io.Writer) error {
		w.Write([]byte("partial"))
		return errors.New("boom")
	})
	require.EqualError(t, err, "boom")
	data, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, "old", string(data), "a failed write keeps the previous file")
	assert.Equal(t, []string{"out.csv"}, entries(t, dir))
	assert.Equal(t, []string{p}, NotWritten())
}

func TestCreateRefusesDirAndMissingDir(t *testing.T) {
	Reset()
	dir := t.TempDir()
	_, err := Create(dir)
	assert.ErrorContains(t, err, "is a directory")
	_, err = Create(dir + "/")
	assert.ErrorContains(t, err, "is a directory")
	_, err = Create(filepath.Join(dir, "missing", "x.csv"))
	assert.ErrorContains(t, err, filepath.Join(dir, "missing", "x.csv")+": cannot create")
	assert.Empty(t, entries(t, dir))
}

func TestRemovePending(t *testing.T) {
	Reset()
	defer Reset()
	dir := t.TempDir()
	a, err := Create(filepath.Join(dir, "a"))
	require.NoError(t, err)
	d, err := MkdirAll(filepath.Join(dir, "r", "s"))
	require.NoError(t, err)
	b, err := Create(filepath.Join(dir, "r", "s", "b"))
	require.NoError(t, err)
	done, err := Create(filepath.Join(dir, "done"))
	require.NoError(t, err)
	require.NoError(t, done.Commit())
	got := RemovePending()
	assert.Equal(t, []string{filepath.Join(dir, "a"), filepath.Join(dir, "r", "s", "b")}, got)
	assert.Equal(t, []string{"done"}, entries(t, dir), "temporaries and the dirs made for them are gone")
	assert.ErrorIs(t, a.Commit(), nil, "already aborted: a no-op")
	assert.ErrorIs(t, b.Commit(), nil)
	d.Abort()
	_, err = Create(filepath.Join(dir, "late"))
	assert.ErrorIs(t, err, ErrInterrupted)
}

func TestMkdirAllKeepsExisting(t *testing.T) {
	Reset()
	dir := t.TempDir()
	d, err := MkdirAll(dir)
	require.NoError(t, err)
	d.Abort()
	assert.DirExists(t, dir, "an existing directory is never removed")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "f"), nil, 0o644))
	_, err = MkdirAll(filepath.Join(dir, "f", "g"))
	assert.ErrorContains(t, err, "not a directory")
}

// TestSymlinkAndDevice: a link is followed (the link kept, its target
// replaced); a device is written in place, never renamed over.
func TestSymlinkAndDevice(t *testing.T) {
	Reset()
	dir := t.TempDir()
	real := filepath.Join(dir, "real.csv")
	link := filepath.Join(dir, "link.csv")
	require.NoError(t, os.WriteFile(real, []byte("old"), 0o644))
	require.NoError(t, os.Symlink(real, link))
	require.NoError(t, WriteFile(link, []byte("new")))
	st, err := os.Lstat(link)
	require.NoError(t, err)
	assert.True(t, st.Mode()&os.ModeSymlink != 0, "the link is kept")
	data, err := os.ReadFile(real)
	require.NoError(t, err)
	assert.Equal(t, "new", string(data))

	before, err := os.Stat("/dev/null")
	require.NoError(t, err)
	require.NoError(t, WriteFile("/dev/null", []byte("discarded")))
	after, err := os.Stat("/dev/null")
	require.NoError(t, err)
	assert.Equal(t, before.Mode(), after.Mode(), "/dev/null is still a device")
	assert.True(t, after.Mode()&os.ModeCharDevice != 0)
}
