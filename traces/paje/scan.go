package paje

// Scanner of Paje files: event definitions and event lines.
//
// The Paje subset read here, with StarPU's quirks:
//
//   - "%EventDef NAME ID" ... "% FIELD TYPE" lines ... "%EndEventDef"
//     define an event; blanks are tabs or spaces, in any number (StarPU
//     writes "%EventDef PajeSetState 10" with spaces, the rest with tabs),
//     and several IDs may share a name (StarPU's PajeSetState 10, 20, 21,
//     26 with more fields);
//   - an event line is its ID, then one value per field, separated by
//     blanks; a value in double quotes may hold blanks, and "" is an empty
//     value (pajeng's pj_dump rejects those; StarPU writes them); an
//     unquoted '#' starts a comment to the end of the line (StarPU writes
//     "12 t w0 WS # handle_worker_scheduling_pop"); blank lines and lines
//     starting with '#' are skipped; a trailing '\r' is dropped;
//   - events need not come in time order (starpu_fxt_tool writes some
//     variables late): each container's states and each variable are
//     sorted by time, stably, before use.

import (
	"bytes"
	"strings"

	"github.com/starsim/starsim/internal/srcerr"
	"github.com/starsim/starsim/traces"
)

// Is says whether data starts like a Paje trace: its first line that
// is neither blank nor a '#' comment starts with "%EventDef".
func Is(data []byte) bool {
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		return bytes.HasPrefix(line, []byte("%EventDef"))
	}
	return false
}

// pajeDef is one %EventDef.
type pajeDef struct {
	name   string         // "PajeSetState"
	fields []string       // field names, in order
	idx    map[string]int // field name -> position
}

// pajeEvent is one event line.
type pajeEvent struct {
	def  *pajeDef
	vals []string
	line int
}

// get returns the value of a field ("" and false when the event has none).
func (e *pajeEvent) get(field string) (string, bool) {
	i, ok := e.def.idx[field]
	if !ok {
		return "", false
	}
	return e.vals[i], true
}

// scanPaje reads the event definitions and calls fn for each event line.
func scanPaje(data []byte, file string, fn func(e *pajeEvent) error) error {
	defs := map[string]*pajeDef{}
	var cur *pajeDef // definition being read
	var curID string
	var vals []string
	line := 0
	for len(data) > 0 {
		var raw []byte
		cut := false // the last line, without its end of line
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			raw, data = data[:i], data[i+1:]
		} else {
			raw, data, cut = data, nil, true
		}
		line++
		raw = bytes.TrimSuffix(raw, []byte{'\r'})
		text := strings.TrimSpace(string(raw))
		if text == "" || text[0] == '#' {
			continue
		}
		if cut {
			// Paje writers end every line: this one was cut short (a
			// copy or a run interrupted), and may parse as another value.
			return srcerr.Errorf(file, line, "the file ends in the middle of this line (no end of line): a truncated trace?")
		}
		if text[0] == '%' {
			words := strings.Fields(text[1:])
			switch {
			case len(words) > 0 && words[0] == "EventDef":
				if cur != nil {
					return srcerr.Errorf(file, line, "%%EventDef inside the definition of event %s (missing %%EndEventDef)", curID)
				}
				if len(words) != 3 {
					return srcerr.Errorf(file, line, "expected \"%%EventDef NAME ID\"")
				}
				if _, dup := defs[words[2]]; dup {
					return srcerr.Errorf(file, line, "event id %s defined twice", words[2])
				}
				if len(defs) >= pajeMaxDefs {
					return srcerr.Errorf(file, line, "more than %d event definitions", pajeMaxDefs)
				}
				cur, curID = &pajeDef{name: words[1], idx: map[string]int{}}, words[2]
			case len(words) > 0 && words[0] == "EndEventDef":
				if cur == nil {
					return srcerr.Errorf(file, line, "%%EndEventDef without %%EventDef")
				}
				defs[curID] = cur
				cur = nil
			case cur == nil:
				return srcerr.Errorf(file, line, "expected \"%%EventDef NAME ID\", got %q", traces.Clip(text))
			case len(words) == 0:
				// a bare "%" line inside a definition: nothing
			default:
				if _, dup := cur.idx[words[0]]; dup {
					return srcerr.Errorf(file, line, "field %s defined twice in event %s", words[0], curID)
				}
				if len(cur.fields) >= pajeMaxFields {
					return srcerr.Errorf(file, line, "more than %d fields in event %s", pajeMaxFields, curID)
				}
				cur.idx[words[0]] = len(cur.fields)
				cur.fields = append(cur.fields, words[0])
			}
			continue
		}
		if cur != nil {
			return srcerr.Errorf(file, line, "event line inside the definition of event %s (missing %%EndEventDef)", curID)
		}
		var err error
		vals, err = splitPaje(text, vals[:0])
		if err != nil {
			return srcerr.Errorf(file, line, "%v", err)
		}
		if len(vals) == 0 {
			continue // only a comment
		}
		def, ok := defs[vals[0]]
		if !ok {
			return srcerr.Errorf(file, line, "event id %q is not defined by a %%EventDef", traces.Clip(vals[0]))
		}
		if got := len(vals) - 1; got != len(def.fields) {
			return srcerr.Errorf(file, line, "event %s (%s) wants %d fields (%s), got %d", vals[0], def.name,
				len(def.fields), strings.Join(def.fields, " "), got)
		}
		if err := fn(&pajeEvent{def: def, vals: vals[1:], line: line}); err != nil {
			return err
		}
	}
	if cur != nil {
		return srcerr.Errorf(file, line, "the definition of event %s has no %%EndEventDef", curID)
	}
	return nil
}

// splitPaje splits an event line into its values: blank-separated, double
// quotes around a value that holds blanks (or is empty), an unquoted '#'
// starting a comment.
func splitPaje(s string, out []string) ([]string, error) {
	for i := 0; i < len(s); {
		switch c := s[i]; {
		case c == ' ' || c == '\t':
			i++
		case c == '#':
			return out, nil
		case c == '"':
			j := strings.IndexByte(s[i+1:], '"')
			if j < 0 {
				return nil, errorString("unterminated quoted value")
			}
			out = append(out, s[i+1:i+1+j])
			i += j + 2
			if i < len(s) && s[i] != ' ' && s[i] != '\t' {
				return nil, errorString("a quoted value must be followed by a blank")
			}
		default:
			j := i
			for j < len(s) && s[j] != ' ' && s[j] != '\t' {
				j++
			}
			out = append(out, s[i:j])
			i = j
		}
	}
	return out, nil
}

type errorString string

func (e errorString) Error() string { return string(e) }

func mustGet(e *pajeEvent, f string) string {
	v, _ := e.get(f)
	return v
}
