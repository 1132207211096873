// Package atomicfile writes output files all or nothing. Each file is
// written to a temporary in its own directory (so the final rename never
// crosses file systems) and renamed into place by Commit; Abort, or
// RemovePending from a signal handler, removes the temporary. A failed,
// interrupted or killed-by-signal command therefore leaves neither a partial
// output nor a temporary behind (a SIGKILL can leave a ".NAME.*.tmp").
//
// The package keeps a registry of the temporaries not yet committed and of
// the outputs given up, so a command can say what it did not write.
package atomicfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
)

// File is an output being written: the embedded *os.File is the temporary
// (or, for a device or pipe, the path itself).
type File struct {
	*os.File
	path   string // the final path
	done   bool   // committed or aborted
	direct bool   // written in place: a device or a pipe (/dev/null, /dev/stdout)
}

// registry holds the pending temporaries and dirs, in creation order.
var registry struct {
	sync.Mutex
	files       []*File
	dirs        []*Dir
	interrupted bool
	notWritten  []string
}

// ErrInterrupted is returned by Commit after RemovePending ran.
var ErrInterrupted = errors.New("interrupted")

// Create starts writing path: it creates a temporary beside it, with the
// permissions os.Create would give path (0666 less the umask). A symbolic
// link is followed (the file it names is replaced, the link kept). A path
// that is a device or a pipe (/dev/null, /dev/stdout) is written in place:
// renaming over it would replace the device.
func Create(path string) (*File, error) {
	if _, base := filepath.Split(path); base == "" {
		return nil, fmt.Errorf("%s: is a directory, want a file name", path)
	}
	target := path
	if st, err := os.Stat(path); err == nil {
		switch {
		case st.IsDir():
			return nil, fmt.Errorf("%s: is a directory, want a file name", path)
		case !st.Mode().IsRegular():
			return createDirect(path)
		}
		if t, err := filepath.EvalSymlinks(path); err == nil {
			target = t
		}
	}
	dir, base := filepath.Split(target)
	if dir == "" {
		dir = "."
	}
	registry.Lock()
	defer registry.Unlock()
	if registry.interrupted {
		return nil, ErrInterrupted
	}
	tmp, err := os.CreateTemp(dir, "."+base+".*.tmp")
	if err != nil {
		// CreateTemp names the pattern, not the file asked for.
		return nil, fmt.Errorf("%s: cannot create: %v", path, unwrapPath(err))
	}
	if err := tmp.Chmod(os.FileMode(0o666 &^ umask)); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	f := &File{File: tmp, path: path}
	registry.files = append(registry.files, f)
	return f, nil
}

// createDirect opens a device or pipe for writing in place.
func createDirect(path string) (*File, error) {
	out, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("%s: cannot open: %v", path, unwrapPath(err))
	}
	return &File{File: out, path: path, direct: true}, nil
}

// target is the file a committed output ends up in (a link's target).
func (f *File) target() string {
	if t, err := filepath.EvalSymlinks(f.path); err == nil {
		return t
	}
	return f.path
}

// Path is the final path of f.
func (f *File) Path() string { return f.path }

// Commit closes the temporary and renames it to the final path. On error
// the temporary is removed and the output counts as not written.
func (f *File) Commit() error {
	registry.Lock()
	defer registry.Unlock()
	if f.done {
		return nil
	}
	if f.direct {
		f.done = true
		if err := f.File.Close(); err != nil {
			return fmt.Errorf("%s: %v", f.path, err)
		}
		return nil
	}
	if registry.interrupted {
		f.abortLocked()
		return ErrInterrupted
	}
	if err := f.File.Close(); err != nil {
		f.abortLocked()
		return fmt.Errorf("%s: %v", f.path, err)
	}
	if err := os.Rename(f.File.Name(), f.target()); err != nil {
		f.abortLocked()
		return fmt.Errorf("%s: %v", f.path, unwrapPath(err))
	}
	f.done = true
	registry.files = without(registry.files, f)
	return nil
}

// Abort closes and removes the temporary (a no-op once committed or aborted).
func (f *File) Abort() {
	registry.Lock()
	defer registry.Unlock()
	f.abortLocked()
}

func (f *File) abortLocked() {
	if f.done {
		return
	}
	f.File.Close()
	if !f.direct {
		os.Remove(f.File.Name())
	}
	f.done = true
	registry.files = without(registry.files, f)
	registry.notWritten = append(registry.notWritten, f.path)
}

// without returns s less its first element equal to x: a registry list
// once x is committed or aborted.
func without[T comparable](s []T, x T) []T {
	if i := slices.Index(s, x); i >= 0 {
		return slices.Delete(s, i, i+1)
	}
	return s
}

// Write writes path all or nothing with fn, through a buffer.
func Write(path string, fn func(w io.Writer) error) error {
	f, err := Create(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 64<<10)
	if err := fn(bw); err != nil {
		f.Abort()
		return err
	}
	if err := bw.Flush(); err != nil {
		f.Abort()
		return fmt.Errorf("%s: %v", path, err)
	}
	return f.Commit()
}

// WriteFile writes data to path all or nothing.
func WriteFile(path string, data []byte) error {
	return Write(path, func(w io.Writer) error {
		_, err := w.Write(data)
		if err != nil {
			return fmt.Errorf("%s: %v", path, err)
		}
		return nil
	})
}

// Dir is an output directory: Create makes the missing ones, Abort removes
// those it made if they are empty.
type Dir struct {
	path    string
	created []string // deepest last
	done    bool
}

// MkdirAll creates path and its missing parents (0777 less the umask), and
// remembers which it created.
func MkdirAll(path string) (*Dir, error) {
	registry.Lock()
	defer registry.Unlock()
	if registry.interrupted {
		return nil, ErrInterrupted
	}
	d := &Dir{path: path}
	var missing []string
	for p := filepath.Clean(path); ; p = filepath.Dir(p) {
		st, err := os.Stat(p)
		if err == nil {
			if !st.IsDir() {
				return nil, fmt.Errorf("%s: not a directory", p)
			}
			break
		}
		missing = append(missing, p)
		if filepath.Dir(p) == p {
			break
		}
	}
	for i := len(missing) - 1; i >= 0; i-- {
		if err := os.Mkdir(missing[i], 0o777); err != nil && !os.IsExist(err) {
			d.abortLocked()
			return nil, fmt.Errorf("%s: cannot create directory: %v", missing[i], unwrapPath(err))
		}
		d.created = append(d.created, missing[i])
	}
	registry.dirs = append(registry.dirs, d)
	return d, nil
}

// Commit keeps the directory.
func (d *Dir) Commit() {
	registry.Lock()
	defer registry.Unlock()
	d.done = true
	registry.dirs = without(registry.dirs, d)
}

// Abort removes the directories MkdirAll created, if empty.
func (d *Dir) Abort() {
	registry.Lock()
	defer registry.Unlock()
	d.abortLocked()
}

func (d *Dir) abortLocked() {
	if d.done {
		return
	}
	for i := len(d.created) - 1; i >= 0; i-- {
		os.Remove(d.created[i]) // fails, harmlessly, when not empty
	}
	d.done = true
	registry.dirs = without(registry.dirs, d)
}

// RemovePending removes every temporary not yet committed, and the
// directories made for them, for a signal handler: Create, MkdirAll and
// Commit fail from then on. It returns the outputs not written, as
// NotWritten does.
func RemovePending() []string {
	registry.Lock()
	defer registry.Unlock()
	registry.interrupted = true
	for len(registry.files) > 0 {
		registry.files[0].abortLocked()
	}
	for len(registry.dirs) > 0 {
		registry.dirs[0].abortLocked()
	}
	return append([]string(nil), registry.notWritten...)
}

// NotWritten lists the outputs given up (aborted) since the last Reset, in
// the order they were given up.
func NotWritten() []string {
	registry.Lock()
	defer registry.Unlock()
	return append([]string(nil), registry.notWritten...)
}

// Reset forgets the outputs given up (a new command starts). Pending
// temporaries are kept.
func Reset() {
	registry.Lock()
	defer registry.Unlock()
	registry.notWritten = nil
	registry.interrupted = false
}

// unwrapPath returns the cause of an *os.PathError or *os.LinkError
// without the paths they name (messages name the output asked for, not a
// temporary), or err itself.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}
