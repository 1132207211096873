package starpu

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/starsim/starsim/internal/srcerr"
)

// addFileSeeds adds every regular file matching pattern as a seed.
func addFileSeeds(f *testing.F, add func([]byte), patterns ...string) {
	for _, p := range patterns {
		paths, _ := filepath.Glob(p)
		for _, path := range paths {
			if data, err := os.ReadFile(path); err == nil {
				add(data)
			}
		}
	}
}

// checkSrcErr fails unless err is a *srcerr.Error naming file.
func checkSrcErr(t *testing.T, err error, file string) {
	t.Helper()
	var se *srcerr.Error
	if !errors.As(err, &se) {
		t.Fatalf("error %v (%T) is not a *srcerr.Error", err, err)
	}
	if se.File != file {
		t.Fatalf("error %v names file %q, want %q", err, se.File, file)
	}
}

// FuzzParsePerfModel checks that the parser never panics, that every error
// is located, and that an accepted model writes and parses back equal.
func FuzzParsePerfModel(f *testing.F) {
	add := func(b []byte) { f.Add(b) }
	addFileSeeds(f, add,
		filepath.Join("testdata", "models", "*"),
		filepath.Join("testdata", "sampling", "codelets", "45", "*"),
		filepath.Join(sharedDir, "codelets", "45", "chol_model_*.attila"),
		filepath.Join(sharedDir, "codelets", "45", "func.mirage"),
		filepath.Join(sharedDir, "codelets", "45", "overlap_sleep_1024_24.mirage"))
	f.Add([]byte(goodModel))
	f.Add([]byte(twoCombs))
	f.Add([]byte(withLine(11, "3\t1.0\t2.0e-3\tnan")))
	f.Fuzz(func(t *testing.T, data []byte) {
		const file = "fuzz.model"
		m, err := ParsePerfModel(data, file)
		if err != nil {
			if m != nil {
				t.Fatal("model returned with an error")
			}
			checkSrcErr(t, err, file)
			return
		}
		var buf bytes.Buffer
		if err := m.Write(&buf); err != nil {
			t.Fatalf("Write of a parsed model: %v", err)
		}
		m2, err := ParsePerfModel(buf.Bytes(), file)
		if err != nil {
			t.Fatalf("re-parse: %v\n%s", err, buf.String())
		}
		if !reflect.DeepEqual(canon(m), canon(m2)) {
			t.Fatalf("round trip changed the model:\n%s", buf.String())
		}
	})
}

// FuzzParseBus runs the four bus parsers (kind selects which) and checks
// that they never panic, that errors are located and that accepted data
// keeps its invariants.
func FuzzParseBus(f *testing.F) {
	for kind, ext := range []string{"bandwidth", "latency", "config", "affinity"} {
		add := func(b []byte) { f.Add(uint8(kind), b) }
		addFileSeeds(f, add,
			filepath.Join("testdata", "*", "bus", "*."+ext),
			filepath.Join(sharedDir, "bus", "*."+ext))
	}
	f.Fuzz(func(t *testing.T, kind uint8, data []byte) {
		const file = "fuzz.bus"
		switch kind % 4 {
		case 0, 1:
			parse, what := ParseBandwidth, "bandwidth"
			if kind%4 == 1 {
				parse, what = ParseLatency, "latency"
			}
			m, err := parse(data, file)
			if err != nil {
				checkSrcErr(t, err, file)
				return
			}
			if len(m) == 0 {
				t.Fatalf("%s: empty matrix without error", what)
			}
			for _, row := range m {
				if len(row) != len(m) {
					t.Fatalf("%s: matrix not square", what)
				}
				for _, v := range row {
					if v < 0 || math.IsInf(v, 0) {
						t.Fatalf("%s: value %v accepted", what, v)
					}
				}
			}
		case 2:
			c, err := ParseConfig(data, file)
			if err != nil {
				checkSrcErr(t, err, file)
				return
			}
			for _, n := range []int{c.NCPU, c.NNUMA, c.NCUDA, c.NOpenCL, c.NMIC, c.NMPI} {
				if n < 0 {
					t.Fatalf("negative count %d accepted", n)
				}
			}
			_ = c.NodeNames()
		case 3:
			a, err := ParseAffinity(data, file)
			if err != nil {
				checkSrcErr(t, err, file)
				return
			}
			for _, r := range a.Rows {
				if r.Dev < 0 || len(r.Order) != len(a.Rows[0].Order) {
					t.Fatalf("bad row %+v accepted", r)
				}
				for _, id := range r.Order {
					if id < 0 || id >= len(r.Order) {
						t.Fatalf("id %d out of range accepted", id)
					}
				}
			}
		}
	})
}
