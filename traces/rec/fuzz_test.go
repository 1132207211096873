package rec

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/starsim/starsim/internal/srcerr"
	"github.com/starsim/starsim/traces/internal/tracetest"
)

// recSeeds are small inputs covering the syntax and each error.
var recSeeds = []string{
	"",
	"# c\n\nName: K\nJobId: 1\nStartTime: 1\nEndTime: 2\n",
	"Control: WontUse\nJobId: 27\nSubmitOrder: 9\nSubmitTime: 234.376331\nHandles: 55c470657ae0\nMPIRank: -1\n",
	"Name: TRSM\nDependsOn: 19\nDepLabels: task\nParameters:  M960x960x4\nHandles: a b\nModes: R RW\nSizes: 1 2\nNumaNodes: -1 -1\nIteration: 1 2\n",
	"Model: a\n+ b\n+\nFootprint: 617e5fe6\nGFlop: 0.3\r\n\r\nJobId:2\n",
	"Handles: a b\nModes: R\n",
	"StartTime: 5\nEndTime: 4\n",
	"StartTime: NaN\n",
	"+ x\n",
	"no field\n",
	"Handle: 55c4706533d0\nHomeNode: 0\nName: A\nSize: 235929600\nDescription: M7680x7680x4\nParentHandle: 0\n\nCoordinates: 0 0\nMPITag: -1\n",
}

// addNative seeds the corpus with a few records of each kind from the
// native trace when it is there (read in place, never copied into
// testdata). Not the whole file: the fuzzer minimizes every interesting
// input, which for a 100 kB one stalls it.
func addNative(f *testing.F, file string) {
	data, err := os.ReadFile(filepath.Join(tracetest.Native, file))
	if err != nil {
		return
	}
	recs := bytes.SplitAfter(data, []byte("\n\n"))
	for _, at := range []int{0, 20, 40, 60, 100, 160, 240} {
		if at+3 <= len(recs) {
			f.Add(string(bytes.Join(recs[at:at+3], nil)))
		}
	}
}

// checkRecErr: a failure is a located srcerr.Error on a line of the input.
func checkRecErr(t *testing.T, err error, name, in string) {
	t.Helper()
	var se *srcerr.Error
	if !errors.As(err, &se) {
		t.Fatalf("error %v (%T) is not a *srcerr.Error", err, err)
	}
	lines := strings.Count(in, "\n") + 1
	if se.File != name || se.Line < 1 || se.Line > lines {
		t.Fatalf("error %q: file %q line %d, input has %d lines", err, se.File, se.Line, lines)
	}
	if !strings.HasPrefix(err.Error(), fmt.Sprintf("%s:%d: ", name, se.Line)) {
		t.Fatalf("error %q is not FILE:LINE: reason", err)
	}
}

func FuzzReadTasksRec(f *testing.F) {
	for _, s := range recSeeds {
		f.Add(s)
	}
	addNative(f, "tasks.rec")
	f.Fuzz(func(t *testing.T, in string) {
		recs, err := ReadTasks(strings.NewReader(in), "f.rec")
		if err != nil {
			checkRecErr(t, err, "f.rec", in)
			return
		}
		prev := 0
		for _, r := range recs {
			if r.Line <= prev {
				t.Fatalf("record lines not increasing: %d after %d", r.Line, prev)
			}
			prev = r.Line
			n := -1
			for _, l := range []int{len(r.Handles), len(r.Modes), len(r.Sizes), len(r.NumaNodes)} {
				if l == 0 {
					continue // absent (or empty)
				}
				if n >= 0 && l != n {
					t.Fatalf("line %d: lists of lengths %d and %d accepted", r.Line, n, l)
				}
				n = l
			}
			for _, p := range []*float64{r.SubmitTime, r.ReadyTime, r.StartTime, r.EndTime, r.GFlop} {
				if p != nil && !(*p >= 0) {
					t.Fatalf("line %d: value %v accepted", r.Line, *p)
				}
			}
			if r.StartTime != nil && r.EndTime != nil && *r.EndTime < *r.StartTime {
				t.Fatalf("line %d: EndTime before StartTime accepted", r.Line)
			}
			for _, s := range r.Sizes {
				if s < 0 {
					t.Fatalf("line %d: negative size accepted", r.Line)
				}
			}
		}
	})
}

func FuzzReadDataRec(f *testing.F) {
	for _, s := range recSeeds {
		f.Add(s)
	}
	addNative(f, "data.rec")
	f.Fuzz(func(t *testing.T, in string) {
		recs, err := ReadData(strings.NewReader(in), "f.rec")
		if err != nil {
			checkRecErr(t, err, "f.rec", in)
			return
		}
		for _, d := range recs {
			if d.Line < 1 {
				t.Fatalf("record line %d", d.Line)
			}
			for _, p := range []*int64{d.Size, d.MaxSize} {
				if p != nil && *p < 0 {
					t.Fatalf("line %d: negative size accepted", d.Line)
				}
			}
			for _, c := range d.Coordinates {
				if c < 0 {
					t.Fatalf("line %d: negative coordinate accepted", d.Line)
				}
			}
		}
	})
}
