// Package srcerr is the one error type that every starsim reader returns for bad
// input: it names the file, the line (when the format has lines) and what was
// expected, so the CLI can print "FILE:LINE: reason" and exit non-zero.
package srcerr

import (
	"errors"
	"fmt"
)

// Error is a located input error. Line is 1-based; 0 means the format (or the
// fault) has no line, and the message then reads "FILE: reason".
type Error struct {
	File string
	Line int
	Msg  string
	// Err, when set, is the error behind Msg (errors.Is and As see it).
	Err error
}

// Unwrap returns the error behind the message, if any.
func (e *Error) Unwrap() error { return e.Err }

// Error formats the error as FILE:LINE: reason.
func (e *Error) Error() string {
	switch {
	case e.File == "" && e.Line == 0:
		return e.Msg
	case e.Line == 0:
		return e.File + ": " + e.Msg
	case e.File == "":
		return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
	default:
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
}

// Wrap locates err at file:line, unless err already carries a location (an
// *Error with a file): a location is said once, never "f: f:3: reason".
func Wrap(file string, line int, err error) error {
	var e *Error
	if errors.As(err, &e) && e.File != "" {
		return err
	}
	return &Error{File: file, Line: line, Msg: err.Error()}
}

// Errorf builds an *Error with a formatted message.
func Errorf(file string, line int, format string, args ...any) *Error {
	return &Error{File: file, Line: line, Msg: fmt.Sprintf(format, args...)}
}

// LineOf returns the 1-based line of byte offset off in data (clamped to data).
func LineOf(data []byte, off int64) int {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	line := 1
	for _, b := range data[:off] {
		if b == '\n' {
			line++
		}
	}
	return line
}
