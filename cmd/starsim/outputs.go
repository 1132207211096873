package main

import (
	"errors"

	"github.com/starsim/starsim/internal/atomicfile"
)

// outputSet is the files (and directories) a command writes while it runs:
// all are committed at the end, or all given up, so a failure leaves none
// of them, partial or whole.
type outputSet struct {
	files   []*atomicfile.File
	dirs    []*atomicfile.Dir
	closers []func() error // writers to close before the files are committed
}

// create starts writing path.
func (o *outputSet) create(path string) (*atomicfile.File, error) {
	f, err := atomicfile.Create(path)
	if err != nil {
		return nil, err
	}
	o.files = append(o.files, f)
	return f, nil
}

// mkdir makes an output directory (removed again on abort if it was made).
func (o *outputSet) mkdir(path string) error {
	d, err := atomicfile.MkdirAll(path)
	if err != nil {
		return err
	}
	o.dirs = append(o.dirs, d)
	return nil
}

// onClose adds a writer's close, run (last added first) before the commit.
func (o *outputSet) onClose(c func() error) { o.closers = append(o.closers, c) }

// finish closes the writers, then commits every file when ok and no close
// failed, else gives them all up. It returns the first error.
func (o *outputSet) finish(ok bool) error {
	if o == nil {
		return nil
	}
	var first error
	for i := len(o.closers) - 1; i >= 0; i-- {
		if err := o.closers[i](); err != nil && first == nil {
			first = err
		}
	}
	o.closers = nil
	if !ok || first != nil {
		o.abort()
		return first
	}
	for i, f := range o.files {
		if err := f.Commit(); err != nil {
			for _, g := range o.files[i+1:] {
				g.Abort()
			}
			for _, d := range o.dirs {
				d.Abort()
			}
			return err
		}
	}
	for _, d := range o.dirs {
		d.Commit()
	}
	return nil
}

// abort gives every output up.
func (o *outputSet) abort() {
	if o == nil {
		return
	}
	for _, f := range o.files {
		f.Abort()
	}
	for i := len(o.dirs) - 1; i >= 0; i-- {
		o.dirs[i].Abort()
	}
}

// joinErr is errors.Join keeping nil when both are nil.
func joinErr(a, b error) error {
	if a == nil {
		return b
	}
	if b == nil {
		return a
	}
	return errors.Join(a, b)
}
