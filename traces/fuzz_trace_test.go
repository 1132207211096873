package traces

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/starsim/starsim/calibrate"
	"github.com/starsim/starsim/internal/srcerr"
	"github.com/starsim/starsim/models"
	"github.com/starsim/starsim/runtime/sim"
)

// smallRun simulates a 3x3-tile Cholesky (10 tasks) on the default
// machine and returns its tasks.rec, data.rec and Chrome trace: seeds
// written by the tool, small enough for the fuzzer to minimize.
func smallRun(tb testing.TB) (tasks, data, chrome []byte) {
	g, err := models.New("cholesky", models.Options{N: 960 * 3, Block: 960})
	if err != nil {
		tb.Fatal(err)
	}
	var tb1, db, cb bytes.Buffer
	rw := NewRecWriter(&tb1, &db, Header{Tool: "fuzz seed"})
	if err := rw.WriteData(g.Handles); err != nil {
		tb.Fatal(err)
	}
	ch := NewChrome(&cb, Header{Tool: "fuzz seed"})
	o := sim.DefaultOptions()
	o.NCPU, o.NCUDA, o.Observer = 2, 1, Multi(rw, ch)
	s, err := sim.New(calibrate.Default().RuntimeMachine(), g, o)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := s.Run(); err != nil {
		tb.Fatal(err)
	}
	if err := errors.Join(rw.Close(), ch.Close()); err != nil {
		tb.Fatal(err)
	}
	return tb1.Bytes(), db.Bytes(), cb.Bytes()
}

// checkLocated fails unless err is a *srcerr.Error naming file.
func checkLocated(t *testing.T, err error, file string) {
	t.Helper()
	var se *srcerr.Error
	if !errors.As(err, &se) || se.File != file {
		t.Fatalf("error %v (%T) does not name %s", err, err, file)
	}
}

// checkReport: comparing a trace with itself gives finite numbers, no
// difference, and a text report.
func checkReport(t *testing.T, tr *Trace) {
	t.Helper()
	rep := Compare(tr, tr)
	for _, v := range []float64{rep.MakespanA, rep.GFlopsA, rep.MakespanErrPct} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Fatalf("non-finite number in the report: %+v", rep)
		}
	}
	for _, d := range rep.Distributions {
		if d.KS != 0 {
			t.Fatalf("KS distance %v of a sample with itself", d.KS)
		}
	}
	var buf bytes.Buffer
	if err := rep.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
}

// FuzzReadChrome: compare's Chrome JSON reader never panics or hangs,
// locates its errors, and what it accepts compares.
func FuzzReadChrome(f *testing.F) {
	_, _, chrome := smallRun(f)
	f.Add(chrome)
	f.Add([]byte(`[{"ph":"X","pid":1,"tid":1,"ts":1,"dur":2,"name":"GEMM","cat":"kernel","args":{"task":0}}]`))
	f.Add([]byte(`{"traceEvents":[{"ph":"X","pid":1,"tid":1,"ts":1e306,"dur":1,"name":"K","cat":"kernel"}]}`))
	f.Add([]byte(`{"traceEvents":[{"ph":"b","pid":2,"tid":1,"ts":1,"name":"RAM->CUDA0","cat":"transfer","args":{"bytes":5}}],"metadata":{"memory_nodes":["RAM"]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := readChromeTrace(data, "f.json", "f.json")
		if err != nil {
			checkLocated(t, err, "f.json")
			return
		}
		checkReport(t, tr)
	})
}

// FuzzLoadTraceDir: a directory of tasks.rec and data.rec, as compare
// reads it (transfers inferred from data.rec): no panic, no hang, errors
// located, and what is accepted compares.
func FuzzLoadTraceDir(f *testing.F) {
	tasks, data, _ := smallRun(f)
	f.Add(tasks, data)
	f.Add([]byte("Name: T\nWorkerId: 0\nStartTime: 1e308\nEndTime: 1e308\n"), []byte{})
	f.Add([]byte("Name: T\nWorkerId: 0\nMemoryNode: 1\nStartTime: 1\nEndTime: 2\nHandles: a\nModes: R\nSizes: 9\n"), []byte("Handle: a\nHomeNode: 0\n"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, tasks, data []byte) {
		d, err := os.MkdirTemp(dir, "t")
		if err != nil {
			t.Skip()
		}
		defer os.RemoveAll(d)
		if os.WriteFile(filepath.Join(d, "tasks.rec"), tasks, 0o644) != nil || os.WriteFile(filepath.Join(d, "data.rec"), data, 0o644) != nil {
			t.Skip()
		}
		tr, err := LoadTrace(d)
		if err != nil {
			var se *srcerr.Error
			if !errors.As(err, &se) || !strings.HasPrefix(se.File, d) {
				t.Fatalf("error %v does not name a file of %s", err, d)
			}
			return
		}
		checkReport(t, tr)
	})
}

// FuzzReplayGraph: replay's graph from a tasks.rec (duplicates, cycles,
// missing and later dependencies are located errors); an accepted small
// graph runs under --check on the default machine, or New refuses it.
func FuzzReplayGraph(f *testing.F) {
	tasks, _, _ := smallRun(f)
	f.Add(string(tasks), false)
	f.Add(recSeeds[1]+"\n"+recSeeds[1], true)
	f.Add("JobId: 1\nDependsOn: 2\nWorkerId: 0\nStartTime: 0\nEndTime: 1\n\nJobId: 2\nDependsOn: 1\nWorkerId: 0\nStartTime: 0\nEndTime: 1\n", false)
	f.Add("JobId: 1\nDependsOn: 7\nWorkerId: 0\nStartTime: 0\nEndTime: 1\nHandles: a\nModes: RW\nSizes: 8\n", true)
	cal := calibrate.Default()
	m := cal.RuntimeMachine()
	symbols := map[string]bool{}
	for _, k := range cal.Kernels {
		symbols[k.Model] = true
	}
	f.Fuzz(func(t *testing.T, in string, ignore bool) {
		recs, err := ReadTasksRec(strings.NewReader(in), "f.rec")
		if err != nil {
			return // FuzzReadTasksRec checks the reader
		}
		g, _, err := Graph(recs, ReplayOptions{File: "f.rec", IgnoreMissingDeps: ignore, HasModel: func(s string) bool { return symbols[s] }})
		if err != nil {
			checkLocated(t, err, "f.rec")
			return
		}
		for i, tk := range g.Tasks {
			for _, d := range tk.Deps {
				if d < 0 || d >= i {
					t.Fatalf("task %d depends on %d", i, d)
				}
			}
		}
		if len(g.Tasks) > 40 {
			return
		}
		o := sim.DefaultOptions()
		o.Check = true
		s, err := sim.New(m, g, o)
		if err != nil {
			return
		}
		if _, err := s.Run(); err != nil && !strings.Contains(err.Error(), "deadlock") {
			t.Fatalf("run of an accepted replay graph: %v", err)
		}
	})
}
