// Package inputfile reads the files starsim takes as input: regular files
// of at most MaxBytes, so that a device (/dev/zero), a FIFO or a huge
// (sparse) file is refused at once instead of exhausting the memory.
package inputfile

import (
	"errors"
	"io"
	"os"

	"github.com/starsim/starsim/internal/srcerr"
)

// MaxBytes bounds an input file: 2 GiB, beyond any trace, calibration or
// sample file the tool reads (a 1.35 M-task tasks.rec is about 500 MB).
const MaxBytes = 2 << 30

// ReadFile reads path, a regular file of at most MaxBytes. Its errors are
// *srcerr.Error, "PATH: reason", wrapping the os error when there is one.
func ReadFile(path string) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxBytes+1))
	if err != nil {
		return nil, osErr(path, err)
	}
	if len(data) > MaxBytes {
		return nil, srcerr.Errorf(path, 0, "more than %d bytes (2 GiB), the most an input may hold", MaxBytes)
	}
	return data, nil
}

// Open opens path for reading after the checks of ReadFile (its size as
// the file system reports it).
func Open(path string) (*os.File, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, osErr(path, err)
	}
	switch {
	case st.IsDir():
		return nil, srcerr.Errorf(path, 0, "is a directory, want a file")
	case !st.Mode().IsRegular():
		return nil, srcerr.Errorf(path, 0, "not a regular file (a device, pipe or socket)")
	case st.Size() > MaxBytes:
		return nil, srcerr.Errorf(path, 0, "%d bytes, more than %d (2 GiB), the most an input may hold", st.Size(), MaxBytes)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, osErr(path, err)
	}
	return f, nil
}

// osErr is an os error as "PATH: reason", wrapping it.
func osErr(path string, err error) error {
	msg := err.Error()
	var pe *os.PathError
	if errors.As(err, &pe) {
		msg = pe.Err.Error()
	}
	return &srcerr.Error{File: path, Msg: msg, Err: err}
}
