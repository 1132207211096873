package jsonpos

import (
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"

	"github.com/starsim/starsim/internal/srcerr"
)

// DecodeError turns an encoding/json decoding error into FILE:LINE: reason.
// what names the part being read ("" for the whole document); other errors
// are blamed on byte offset fallback (-1: no line).
func DecodeError(data []byte, file, what string, err error, fallback int64) error {
	in := ""
	if what != "" {
		in = " in " + what
	}
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return srcerr.Errorf(file, srcerr.LineOf(data, syn.Offset), "invalid JSON%s: %v", in, syn)
	case errors.As(err, &typ):
		field := typ.Field
		if field == "" {
			field = what
		}
		return srcerr.Errorf(file, srcerr.LineOf(data, typ.Offset), "%s: expected %s, got JSON %s", field, typ.Type, typ.Value)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return srcerr.Errorf(file, srcerr.LineOf(data, int64(len(data))), "truncated JSON%s", in)
	}
	msg := strings.TrimPrefix(err.Error(), "json: ")
	if k, ok := strings.CutPrefix(msg, "unknown field "); ok {
		if key, uerr := strconv.Unquote(k); uerr == nil {
			return srcerr.Errorf(file, KeyLine(data, key), "unknown key %q", key)
		}
	}
	line := 0
	if fallback >= 0 {
		line = srcerr.LineOf(data, fallback)
	}
	if what != "" {
		msg = what + ": " + msg
	}
	return srcerr.Errorf(file, line, "%s", msg)
}
