package rec

// Readers of StarPU's recutils trace files, tasks.rec and data.rec, as
// starpu_fxt_tool writes them (src/debug/traces/starpu_fxt.c, task_dump and
// data_dump).
//
// The recutils subset read here:
//
//   - a field is a line "Name: value": the name is [A-Za-z%][A-Za-z0-9_]*,
//     then ':', then one optional blank (space or tab) that is not part of the
//     value; "Name:" alone is a field with an empty value (StarPU writes
//     "DependsOn:" with no job). Only that one blank is dropped, so the value
//     keeps StarPU's spacing (see traces.TaskRecord.Parameters);
//   - a line starting with '+' continues the previous field's value: the '+'
//     and one optional blank are dropped and the rest is appended after a
//     newline ("Name: a" + "+ b" = "a\nb");
//   - a line starting with '#' is a comment, ignored wherever it appears (it
//     neither starts nor ends a record);
//   - records are separated by one or more blank (or whitespace-only) lines;
//     a trailing '\r' (CRLF files) is dropped from every line.
//
// A field appears at most once per record (StarPU never repeats one).
// Every field is optional: a record holds what the file gives and the reader
// checks only what it can check locally (see ReadTasks).

import (
	"bufio"
	"errors"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/starsim/starsim/internal/srcerr"
	"github.com/starsim/starsim/traces"
)

// ReadTasks reads a tasks.rec file; name labels errors. It fails, with
// "name:LINE: reason", on a line that is neither a field, a continuation, a
// comment nor blank, on a repeated field, on a numeric field that does not
// parse (decimal integers; Footprint and Handles hexadecimal; times and
// GFlop finite decimals), on a time beyond MaxTimeMs, a GFlop beyond
// MaxGFlop or a size beyond MaxSizeByte, on a negative time, size, GFlop, JobId,
// SubmitOrder, DependsOn, WorkerId or MemoryNode, on Handles, Modes, Sizes
// and NumaNodes (those present) of different lengths, on DepLabels and
// DependsOn of different lengths, and on EndTime before StartTime.
func ReadTasks(r io.Reader, name string) ([]traces.TaskRecord, error) {
	var out []traces.TaskRecord
	err := readRec(r, name, func(rec []recField) error {
		t, err := parseTask(rec, name)
		if err != nil {
			return err
		}
		out = append(out, t)
		return nil
	})
	return out, err
}

// ReadData reads a data.rec file; name labels errors. It fails, with
// "name:LINE: reason", on malformed lines (as ReadTasks), on a repeated
// field, on a number that does not parse (Handle and ParentHandle must be
// hexadecimal), and on a negative Size, MaxSize or coordinate.
func ReadData(r io.Reader, name string) ([]traces.DataRecord, error) {
	var out []traces.DataRecord
	err := readRec(r, name, func(rec []recField) error {
		d, err := parseData(rec, name)
		if err != nil {
			return err
		}
		out = append(out, d)
		return nil
	})
	return out, err
}

// recField is one field of a record, with the line it starts on.
type recField struct {
	name, value string
	line        int
}

// readRec splits r into records and hands each (non-empty) to fn.
func readRec(r io.Reader, file string, fn func([]recField) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var rec []recField
	flush := func() error {
		if len(rec) == 0 {
			return nil
		}
		err := fn(rec)
		rec = rec[:0:0]
		return err
	}
	for lineno := 1; ; lineno++ {
		line, err := br.ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return srcerr.Errorf(file, lineno, "read: %v", err)
		}
		if line == "" && err != nil {
			break
		}
		line = strings.TrimSuffix(line, "\n")
		line = strings.TrimSuffix(line, "\r")
		switch {
		case strings.TrimLeft(line, " \t") == "":
			if e := flush(); e != nil {
				return e
			}
		case line[0] == '#':
		case line[0] == '+':
			if len(rec) == 0 {
				return srcerr.Errorf(file, lineno, "continuation line %q with no field before it", traces.Clip(line))
			}
			rest := line[1:]
			if rest != "" && (rest[0] == ' ' || rest[0] == '\t') {
				rest = rest[1:]
			}
			rec[len(rec)-1].value += "\n" + rest
		default:
			f, ok := splitField(line)
			if !ok {
				return srcerr.Errorf(file, lineno, "expected \"Field: value\", got %q", traces.Clip(line))
			}
			for _, g := range rec {
				if g.name == f.name {
					return srcerr.Errorf(file, lineno, "field %s repeated (first on line %d)", f.name, g.line)
				}
			}
			f.line = lineno
			rec = append(rec, f)
		}
		if err != nil {
			break
		}
	}
	return flush()
}

// splitField parses "Name: value" (recutils field name, one optional blank).
func splitField(line string) (recField, bool) {
	i := strings.IndexByte(line, ':')
	if i <= 0 {
		return recField{}, false
	}
	name := line[:i]
	for k := 0; k < len(name); k++ {
		c := name[k]
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		switch {
		case letter:
		case k == 0 && c == '%':
		case k > 0 && (c >= '0' && c <= '9' || c == '_'):
		default:
			return recField{}, false
		}
	}
	v := line[i+1:]
	if v != "" && (v[0] == ' ' || v[0] == '\t') {
		v = v[1:]
	}
	return recField{name: name, value: v}, true
}

// fieldParser converts the fields of one record, keeping the first error.
type fieldParser struct {
	file string
	err  error
}

func (p *fieldParser) fail(f recField, format string, args ...any) {
	if p.err == nil {
		p.err = srcerr.Errorf(p.file, f.line, format, args...)
	}
}

func (p *fieldParser) int64(f recField, min int64) *int64 {
	v, err := strconv.ParseInt(strings.TrimSpace(f.value), 10, 64)
	if err != nil {
		p.fail(f, "%s: %q is not an integer", f.name, traces.Clip(f.value))
		return nil
	}
	if v < min {
		p.fail(f, "%s: %d is negative", f.name, v)
		return nil
	}
	return &v
}

func (p *fieldParser) int(f recField, nonNeg bool) *int {
	v, err := strconv.ParseInt(strings.TrimSpace(f.value), 10, strconv.IntSize)
	if err != nil {
		p.fail(f, "%s: %q is not an integer", f.name, traces.Clip(f.value))
		return nil
	}
	if nonNeg && v < 0 {
		p.fail(f, "%s: %d is negative", f.name, v)
		return nil
	}
	n := int(v)
	return &n
}

// isNaNText reports whether v is how C's printf writes a NaN ("nan",
// "-nan", any case).
func isNaNText(v string) bool {
	v = strings.TrimPrefix(strings.TrimSpace(v), "-")
	return strings.EqualFold(v, "nan")
}

// float parses a finite decimal from 0 to max.
func (p *fieldParser) float(f recField, max float64) *float64 {
	v, err := strconv.ParseFloat(strings.TrimSpace(f.value), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		p.fail(f, "%s: %q is not a finite number", f.name, traces.Clip(f.value))
		return nil
	}
	if v < 0 {
		p.fail(f, "%s: %v is negative", f.name, v)
		return nil
	}
	if v > max {
		p.fail(f, "%s: %v is beyond %g", f.name, v, max)
		return nil
	}
	return &v
}

func (p *fieldParser) int64s(f recField, max int64) []int64 {
	words := strings.Fields(f.value)
	out := make([]int64, len(words))
	for i, w := range words {
		v, err := strconv.ParseInt(w, 10, 64)
		if err != nil {
			p.fail(f, "%s: entry %d, %q, is not an integer", f.name, i+1, traces.Clip(w))
			return nil
		}
		if v < 0 {
			p.fail(f, "%s: entry %d, %d, is negative", f.name, i+1, v)
			return nil
		}
		if v > max {
			p.fail(f, "%s: entry %d, %d, is beyond %d", f.name, i+1, v, max)
			return nil
		}
		out[i] = v
	}
	return out
}

func (p *fieldParser) ints(f recField, nonNeg bool) []int {
	words := strings.Fields(f.value)
	out := make([]int, len(words))
	for i, w := range words {
		v, err := strconv.ParseInt(w, 10, strconv.IntSize)
		if err != nil {
			p.fail(f, "%s: entry %d, %q, is not an integer", f.name, i+1, traces.Clip(w))
			return nil
		}
		if nonNeg && v < 0 {
			p.fail(f, "%s: entry %d, %d, is negative", f.name, i+1, v)
			return nil
		}
		out[i] = int(v)
	}
	return out
}

// hex checks one hexadecimal word (a handle address) and returns it.
func (p *fieldParser) hex(f recField, w string) bool {
	if _, err := strconv.ParseUint(w, 16, 64); err != nil {
		p.fail(f, "%s: %q is not a hexadecimal address", f.name, traces.Clip(w))
		return false
	}
	return true
}

func (p *fieldParser) extra(m *map[string]string, f recField) {
	if *m == nil {
		*m = map[string]string{}
	}
	(*m)[f.name] = f.value
}

func parseTask(fields []recField, file string) (traces.TaskRecord, error) {
	p := &fieldParser{file: file}
	t := traces.TaskRecord{Line: fields[0].line}
	// Fields whose lengths must agree, and where they are.
	var lists []recField
	var deps, labels, start, end *recField
	for i := range fields {
		f := fields[i]
		v := f.value
		switch f.name {
		case "Control":
			t.Control = strings.TrimSpace(v)
		case "Name":
			t.Name = v
		case "Model":
			t.Model = v
		case "File":
			t.File = v
		case "Line":
			t.SrcLine = p.int(f, false)
		case "JobId":
			t.JobID = p.int64(f, 0)
		case "SubmitOrder":
			t.SubmitOrder = p.int64(f, 0)
		case "Priority":
			t.Priority = p.int(f, false)
		case "DependsOn":
			t.DependsOn = p.int64s(f, math.MaxInt64)
			deps = &fields[i]
		case "DepLabels":
			t.DepLabels = strings.Fields(v)
			labels = &fields[i]
		case "Tag":
			t.Tag = strings.TrimSpace(v)
		case "WorkerId":
			t.WorkerID = p.int(f, true)
		case "MemoryNode":
			t.MemoryNode = p.int(f, true)
		case "SubmitTime":
			t.SubmitTime = p.float(f, traces.MaxTimeMs)
		case "ReadyTime":
			// starpu_fxt_tool prints a task's ready time even when it never
			// got one (StarPU 1.3's data acquisitions: "-nan"); it is then
			// unknown, not an error.
			if !isNaNText(v) {
				t.ReadyTime = p.float(f, traces.MaxTimeMs)
			}
		case "StartTime":
			t.StartTime = p.float(f, traces.MaxTimeMs)
			start = &fields[i]
		case "EndTime":
			t.EndTime = p.float(f, traces.MaxTimeMs)
			end = &fields[i]
		case "Footprint":
			x, err := strconv.ParseUint(strings.TrimSpace(v), 16, 32)
			if err != nil {
				p.fail(f, "Footprint: %q is not a 32-bit hexadecimal number", traces.Clip(v))
				break
			}
			fp := uint32(x)
			t.Footprint = &fp
		case "GFlop":
			t.GFlop = p.float(f, traces.MaxGFlop)
		case "Iteration":
			its := p.ints(f, false)
			switch {
			case p.err != nil:
			case len(its) == 0 || len(its) > 2:
				p.fail(f, "Iteration: want 1 or 2 integers, got %q", traces.Clip(v))
			default:
				t.Iteration = &its[0]
				if len(its) == 2 {
					t.Subiteration = &its[1]
				}
			}
		case "Parameters":
			t.Parameters = strings.Split(strings.ReplaceAll(v, "\n", " "), " ")
		case "Handles":
			t.Handles = strings.Fields(v)
			for _, h := range t.Handles {
				if !p.hex(f, h) {
					break
				}
			}
			lists = append(lists, f)
		case "Modes":
			t.Modes = strings.Fields(v)
			lists = append(lists, f)
		case "Sizes":
			t.Sizes = p.int64s(f, traces.MaxSizeByte)
			lists = append(lists, f)
		case "NumaNodes":
			t.NumaNodes = p.ints(f, false)
			lists = append(lists, f)
		case "MPIRank":
			t.MPIRank = p.int(f, false)
		default:
			p.extra(&t.Extra, f)
		}
		if p.err != nil {
			return traces.TaskRecord{}, p.err
		}
	}
	for _, f := range lists[min(1, len(lists)):] {
		a, b := len(strings.Fields(lists[0].value)), len(strings.Fields(f.value))
		if a != b {
			return traces.TaskRecord{}, srcerr.Errorf(file, f.line, "%s has %d entries but %s (line %d) has %d",
				f.name, b, lists[0].name, lists[0].line, a)
		}
	}
	if deps != nil && labels != nil && len(t.DependsOn) != len(t.DepLabels) {
		at := max(deps.line, labels.line)
		return traces.TaskRecord{}, srcerr.Errorf(file, at, "DepLabels has %d entries but DependsOn has %d",
			len(t.DepLabels), len(t.DependsOn))
	}
	if t.StartTime != nil && t.EndTime != nil && *t.EndTime < *t.StartTime {
		return traces.TaskRecord{}, srcerr.Errorf(file, max(start.line, end.line), "EndTime %v is before StartTime %v",
			*t.EndTime, *t.StartTime)
	}
	return t, nil
}

func parseData(fields []recField, file string) (traces.DataRecord, error) {
	p := &fieldParser{file: file}
	d := traces.DataRecord{Line: fields[0].line}
	for _, f := range fields {
		v := f.value
		switch f.name {
		case "Handle":
			d.Handle = strings.TrimSpace(v)
			p.hex(f, d.Handle)
		case "HomeNode":
			d.HomeNode = p.int(f, false)
		case "Name":
			d.Name = v
		case "Size":
			d.Size = p.int64(f, 0)
			if d.Size != nil && *d.Size > traces.MaxSizeByte {
				p.fail(f, "Size: %d is beyond %d", *d.Size, int64(traces.MaxSizeByte))
			}
		case "MaxSize":
			d.MaxSize = p.int64(f, 0)
		case "Description":
			d.Description = v
		case "ParentHandle":
			d.ParentHandle = strings.TrimSpace(v)
			p.hex(f, d.ParentHandle)
		case "Coordinates":
			d.Coordinates = p.ints(f, true)
		case "MPIRank":
			d.MPIRank = p.int(f, false)
		case "MPIOwner":
			d.MPIOwner = p.int(f, false)
		case "MPITag":
			d.MPITag = p.int64(f, math.MinInt64)
		default:
			p.extra(&d.Extra, f)
		}
		if p.err != nil {
			return traces.DataRecord{}, p.err
		}
	}
	return d, nil
}
