//go:build unix

package inputfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	ok := filepath.Join(dir, "ok")
	require.NoError(t, os.WriteFile(ok, []byte("data"), 0o644))
	data, err := ReadFile(ok)
	require.NoError(t, err)
	assert.Equal(t, "data", string(data))

	_, err = ReadFile(filepath.Join(dir, "none"))
	assert.EqualError(t, err, filepath.Join(dir, "none")+": no such file or directory")
	assert.True(t, errors.Is(err, fs.ErrNotExist), "the os error is wrapped")

	_, err = ReadFile(dir)
	assert.EqualError(t, err, dir+": is a directory, want a file")

	_, err = ReadFile("/dev/zero")
	assert.EqualError(t, err, "/dev/zero: not a regular file (a device, pipe or socket)")

	fifo := filepath.Join(dir, "fifo")
	if syscall.Mkfifo(fifo, 0o644) == nil {
		_, err = ReadFile(fifo)
		assert.EqualError(t, err, fifo+": not a regular file (a device, pipe or socket)", "refused without blocking")
	}

	huge := filepath.Join(dir, "huge")
	require.NoError(t, os.WriteFile(huge, nil, 0o644))
	require.NoError(t, os.Truncate(huge, MaxBytes+1)) // sparse: no disk used
	_, err = ReadFile(huge)
	assert.EqualError(t, err, huge+": 2147483649 bytes, more than 2147483648 (2 GiB), the most an input may hold")
}
