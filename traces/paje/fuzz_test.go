package paje

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/starsim/starsim/internal/srcerr"
	"github.com/starsim/starsim/traces"
	"github.com/starsim/starsim/traces/internal/tracetest"
)

// FuzzReadPaje: the Paje reader never panics or hangs; it returns a trace
// whose tasks have ordered, finite times and whose timeline builds, or a
// located error (FILE, and LINE within the input when it names one).
// Seeds: the hand-written StarPU-format file, starsim's own Paje of a
// small run, a slice of StarPU's native paje.trace
// (read in place when ../shared is there, never copied).
func FuzzReadPaje(f *testing.F) {
	if data, err := os.ReadFile(filepath.Join("testdata", "starpu-quirks.paje")); err == nil {
		f.Add(data)
		f.Add(data[:len(data)/2])
	}
	var own bytes.Buffer
	p := NewWriter(&own, traces.Header{Tool: "fuzz"})
	tracetest.Tiny(f, p)
	_ = p.Close()
	f.Add(own.Bytes())
	if data, err := os.ReadFile(filepath.Join(tracetest.Native, "paje.trace")); err == nil {
		// Its event definitions (the first 160 lines), then 40 events
		// from its middle: small, as the fuzzer minimizes every
		// interesting input (a 100 kB one stalls it).
		lines := bytes.SplitAfter(data, []byte("\n"))
		if len(lines) > 1240 {
			f.Add(append(bytes.Join(lines[:160], nil), bytes.Join(lines[1200:1240], nil)...))
		}
	}
	f.Add([]byte("%EventDef PajeSetState 10\n% Time date\n%EndEventDef\n10 1e308\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := Read(data, "in.trace", "in.trace")
		if err != nil {
			var se *srcerr.Error
			if !errors.As(err, &se) || se.File != "in.trace" || se.Line < 0 || se.Line > bytes.Count(data, []byte("\n"))+1 {
				t.Fatalf("error %v is not located in the input", err)
			}
			return
		}
		for _, r := range tr.Tasks {
			if !(*r.EndTime >= *r.StartTime) {
				t.Fatalf("task %s: end %v before start %v", r.Name, *r.EndTime, *r.StartTime)
			}
		}
		tl, _ := tr.Timeline()
		if len(tl.Rows()) < len(tr.Workers) {
			t.Fatalf("%d rows for %d workers", len(tl.Rows()), len(tr.Workers))
		}
	})
}
