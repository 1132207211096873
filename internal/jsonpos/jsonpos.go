// Package jsonpos finds where a value sits in a JSON document, so readers
// that validate decoded structs can still report FILE:LINE.
package jsonpos

import (
	"bytes"
	"encoding/json"

	"github.com/starsim/starsim/internal/srcerr"
)

// Line returns the 1-based line where the value at path starts; path elements
// are object keys (string) and array indexes (int). It returns the line of
// the deepest element of path that exists (1 for the document itself), so a
// missing field points at its enclosing object.
func Line(data []byte, path ...any) int {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	off := walk(data, dec, path)
	return srcerr.LineOf(data, off)
}

// KeyLine returns the line of the first object key equal to key anywhere in
// the document, or 0. It serves errors that carry a key but no position
// (encoding/json's unknown-field error).
func KeyLine(data []byte, key string) int {
	dec := json.NewDecoder(bytes.NewReader(data))
	for {
		start := TokenStart(data, dec.InputOffset())
		tok, err := dec.Token()
		if err != nil {
			return 0
		}
		if s, ok := tok.(string); ok && s == key && isKey(data, dec.InputOffset()) {
			return srcerr.LineOf(data, start)
		}
	}
}

// isKey reports whether the string token that ended at off is followed by ':'.
func isKey(data []byte, off int64) bool {
	for off < int64(len(data)) {
		switch data[off] {
		case ' ', '\t', '\n', '\r':
			off++
		case ':':
			return true
		default:
			return false
		}
	}
	return false
}

// walk descends along path and returns the offset of the deepest value found.
func walk(data []byte, dec *json.Decoder, path []any) int64 {
	start := TokenStart(data, dec.InputOffset())
	if len(path) == 0 {
		return start
	}
	tok, err := dec.Token()
	if err != nil {
		return start
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return start
	}
	switch d {
	case '{':
		key, ok := path[0].(string)
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return start
			}
			if ok && kt == key {
				return walk(data, dec, path[1:])
			}
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return start
			}
		}
	case '[':
		idx, ok := path[0].(int)
		for i := 0; dec.More(); i++ {
			if ok && i == idx {
				return walk(data, dec, path[1:])
			}
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return start
			}
		}
	}
	return start
}

// TokenStart returns the offset of the first byte at or after off that is
// not JSON whitespace or a separator (',' ':'): where the token that a
// json.Decoder reads next starts, off being its InputOffset.
func TokenStart(data []byte, off int64) int64 {
	for off < int64(len(data)) {
		switch data[off] {
		case ' ', '\t', '\n', '\r', ',', ':':
			off++
		default:
			return off
		}
	}
	return off
}
