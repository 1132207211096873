package sweep

import (
	"bytes"
	"errors"
	"math"
	"reflect"
	"testing"

	"github.com/starsim/starsim/internal/srcerr"
)

func checkLocated(t *testing.T, err error, file string) {
	t.Helper()
	var se *srcerr.Error
	if !errors.As(err, &se) || se.File != file {
		t.Fatalf("error %v (%T) does not name %s", err, err, file)
	}
}

// FuzzParsePrices: the price reader never panics, locates its errors and
// accepts only prices in (0, MaxPrice].
func FuzzParsePrices(f *testing.F) {
	f.Add([]byte(`{"Tesla V100-PCIE-32GB": 9000, "cpu": 3000}`))
	f.Add([]byte("{\n\"a\": 1,\n\"a\": 2}\n"))
	f.Add([]byte(`{"a": 1e400} x`))
	f.Add([]byte(`{"a": [1], "b": {"c": null}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParsePrices(data, "p.json")
		if err != nil {
			checkLocated(t, err, "p.json")
			return
		}
		if len(p) == 0 {
			t.Fatal("no prices accepted")
		}
		for k, v := range p {
			if !(v > 0 && v <= MaxPrice) || math.IsNaN(v) {
				t.Fatalf("price %q = %v accepted", k, v)
			}
		}
	})
}

// FuzzParseCSV: sweep merge's reader never panics, locates its errors,
// and what it accepts writes back to CSV that reads the same rows.
func FuzzParseCSV(f *testing.F) {
	rows := []Row{
		{Index: 0, Jobs: 2, Machine: "m", App: "cholesky", Sched: "dmda", N: 1920, Block: 960, NCPU: -1, NCUDA: -1, NTasks: 4, GFlops: 100.5, MakespanS: 0.1, SLR: 1.2, Speedup: 3, Eff: 0.4, BusyPct: 50},
		{Index: 1, Jobs: 2, Machine: "m,\"x\"", App: "lu", Sched: "dmdas", N: 2880, Block: 960, NCPU: 0, NCUDA: 4, NTasks: 14, GFlops: 1e3, MakespanS: 2, PriceUnits: 9000},
	}
	var b bytes.Buffer
	if err := WriteCSV(&b, rows); err != nil {
		f.Fatal(err)
	}
	f.Add(b.Bytes())
	f.Add([]byte(""))
	f.Add(b.Bytes()[:bytes.IndexByte(b.Bytes(), '\n')+1])
	f.Add(bytes.Replace(b.Bytes(), []byte("100.5"), []byte("NaN"), 1))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := ParseCSV(data, "s.csv")
		if err != nil {
			checkLocated(t, err, "s.csv")
			return
		}
		if len(got.Rows) == 0 || len(got.Rows) != len(got.Lines) {
			t.Fatalf("%d rows, %d lines accepted", len(got.Rows), len(got.Lines))
		}
		var out bytes.Buffer
		if err := WriteCSV(&out, got.Rows); err != nil {
			t.Fatal(err)
		}
		back, err := ParseCSV(out.Bytes(), "back.csv")
		if err != nil {
			t.Fatalf("written rows do not read back: %v", err)
		}
		if !reflect.DeepEqual(got.Rows, back.Rows) {
			t.Fatalf("round trip changed the rows")
		}
		_, _ = MergeFiles(got, got) // an error (rows twice), never a panic
	})
}
