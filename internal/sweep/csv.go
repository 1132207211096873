package sweep

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/starsim/starsim/internal/inputfile"
	"github.com/starsim/starsim/internal/srcerr"
	"github.com/starsim/starsim/runtime/sim"
)

// Header is the CSV header of sweep output.
var Header = []string{"index", "jobs", "machine", "machine_source", "starpu_generation", "app", "sched", "n", "block", "ncpu", "ncuda", "ntasks",
	"gflops", "makespan_s", "slr", "speedup", "efficiency", "energy_j", "busy_pct", "price", "gflops_per_price"}

func num(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// WriteCSV writes rows (already in index order) with full float precision,
// so that merged shards give the same bytes as one sweep.
func WriteCSV(w io.Writer, rows []Row) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(Header); err != nil {
		return err
	}
	for _, r := range rows {
		rec := []string{strconv.Itoa(r.Index), strconv.Itoa(r.Jobs), r.Machine, r.MachineSource, r.Generation, r.App, r.Sched, strconv.Itoa(r.N),
			strconv.Itoa(r.Block), strconv.Itoa(r.NCPU), strconv.Itoa(r.NCUDA), strconv.Itoa(r.NTasks),
			num(r.GFlops), num(r.MakespanS), num(r.SLR), num(r.Speedup), num(r.Eff), num(r.EnergyJ), num(r.BusyPct),
			num(r.PriceUnits), num(r.GFlopsPerPrice())}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// jsonRow is a row as --json writes it.
type jsonRow struct {
	Index          int              `json:"index"`
	Machine        string           `json:"machine"`
	MachineSource  string           `json:"machine_source"`
	Generation     string           `json:"starpu_generation"`
	App            string           `json:"app"`
	Sched          string           `json:"sched"`
	N              int              `json:"n"`
	Block          int              `json:"block"`
	NCPU           int              `json:"ncpu"`
	NCUDA          int              `json:"ncuda"`
	NTasks         int              `json:"ntasks"`
	GFlops         float64          `json:"gflops"`
	MakespanS      float64          `json:"makespan_s"`
	SLR            float64          `json:"slr"`
	Speedup        float64          `json:"speedup"`
	Efficiency     float64          `json:"efficiency"`
	EnergyJ        float64          `json:"energy_j,omitempty"`
	BusyPct        float64          `json:"busy_pct"`
	Price          float64          `json:"price,omitempty"`
	GFlopsPerPrice float64          `json:"gflops_per_price,omitempty"`
	Utilization    *sim.Utilization `json:"utilization,omitempty"`
}

// WriteJSON writes rows as a JSON array.
func WriteJSON(w io.Writer, rows []Row) error {
	out := make([]jsonRow, 0, len(rows))
	for _, r := range rows {
		out = append(out, jsonRow{r.Index, r.Machine, r.MachineSource, r.Generation, r.App, r.Sched, r.N, r.Block, r.NCPU, r.NCUDA, r.NTasks,
			r.GFlops, r.MakespanS, r.SLR, r.Speedup, r.Eff, r.EnergyJ, r.BusyPct, r.PriceUnits, r.GFlopsPerPrice(), r.Utilization})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// ReadCSV reads sweep output written by WriteCSV (see ParseCSV).
func ReadCSV(path string) ([]Row, error) {
	sh, err := ReadCSVFile(path)
	return sh.Rows, err
}

// CSVFile is the rows of one sweep CSV, with the line each was read from.
type CSVFile struct {
	File  string
	Rows  []Row
	Lines []int
}

// ReadCSVFile reads a sweep CSV file (see ParseCSV).
func ReadCSVFile(path string) (CSVFile, error) {
	data, err := inputfile.ReadFile(path)
	if err != nil {
		return CSVFile{}, err
	}
	return ParseCSV(data, path)
}

// ParseCSV reads sweep CSV; name labels errors ("name:LINE: reason"). It
// wants the header, then at least one row; integers where WriteCSV writes
// them (index in [0, jobs), n, block > 0, ncpu and ncuda >= -1, ntasks >=
// 0), non-empty names, and finite, non-negative numbers.
func ParseCSV(data []byte, name string) (CSVFile, error) {
	sh := CSVFile{File: name}
	if len(bytes.TrimSpace(data)) == 0 {
		return sh, srcerr.Errorf(name, 0, "empty file: want sweep CSV (header %s, then rows)", strings.Join(Header, ","))
	}
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = len(Header)
	r.ReuseRecord = true
	for first := true; ; first = false {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return sh, srcerr.Errorf(name, pe.Line, "not sweep CSV: %v", pe.Err)
			}
			return sh, srcerr.Errorf(name, 0, "%v", err)
		}
		line, _ := r.FieldPos(0)
		if first {
			for i, h := range Header {
				if rec[i] != h {
					return sh, srcerr.Errorf(name, line, "header column %d is %q, want %q", i+1, clip(rec[i]), h)
				}
			}
			continue
		}
		row, err := parseRow(rec)
		if err != nil {
			return sh, srcerr.Errorf(name, line, "%v", err)
		}
		sh.Rows = append(sh.Rows, row)
		sh.Lines = append(sh.Lines, line)
	}
	if len(sh.Rows) == 0 {
		return sh, srcerr.Errorf(name, 0, "no rows after the header")
	}
	return sh, nil
}

// MaxJobs bounds the jobs column of a sweep CSV.
const MaxJobs = 1 << 30

func parseRow(rec []string) (Row, error) {
	var r Row
	ints := []struct {
		p   *int
		min int
	}{{&r.Index, 0}, {&r.Jobs, 1}, {nil, 0}, {nil, 0}, {nil, 0}, {nil, 0}, {nil, 0}, {&r.N, 0}, {&r.Block, 0}, {&r.NCPU, -1}, {&r.NCUDA, -1}, {&r.NTasks, 0}}
	for i, c := range ints {
		if c.p == nil {
			continue
		}
		v, err := strconv.Atoi(rec[i])
		if err != nil {
			return r, fmt.Errorf("column %s: %q is not an integer", Header[i], clip(rec[i]))
		}
		if v < c.min {
			return r, fmt.Errorf("column %s: %d is below %d", Header[i], v, c.min)
		}
		*c.p = v
	}
	r.Machine, r.MachineSource, r.Generation, r.App, r.Sched = rec[2], rec[3], rec[4], rec[5], rec[6]
	for _, c := range []int{2, 5, 6} {
		if rec[c] == "" {
			return r, fmt.Errorf("column %s is empty", Header[c])
		}
	}
	floats := []*float64{&r.GFlops, &r.MakespanS, &r.SLR, &r.Speedup, &r.Eff, &r.EnergyJ, &r.BusyPct, &r.PriceUnits, nil}
	for i, p := range floats {
		v, err := strconv.ParseFloat(rec[12+i], 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return r, fmt.Errorf("column %s: %q is not a finite number >= 0", Header[12+i], clip(rec[12+i]))
		}
		if p != nil {
			*p = v
		}
	}
	if r.Jobs > MaxJobs {
		return r, fmt.Errorf("column jobs: %d is beyond %d", r.Jobs, MaxJobs)
	}
	// A built-in application's row has N and block; a task graph from a
	// file (no StarPU generation) has neither: 0.
	if (r.N == 0) != (r.Block == 0) || r.N == 0 && r.Generation != "" {
		return r, fmt.Errorf("n %d, block %d: want both > 0 (a built-in application) or both 0 with no starpu_generation (a task graph from a file)", r.N, r.Block)
	}
	if r.Index >= r.Jobs {
		return r, fmt.Errorf("index %d out of [0, %d)", r.Index, r.Jobs)
	}
	return r, nil
}

// clip shortens a value quoted in an error message.
func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// Merge joins the rows of shards into the rows of the whole sweep: same
// job count everywhere, every index exactly once.
func Merge(parts ...[]Row) ([]Row, error) {
	shards := make([]CSVFile, len(parts))
	for i, p := range parts {
		shards[i] = CSVFile{Rows: p}
	}
	return MergeFiles(shards...)
}

// MergeFiles is Merge with each row's place named in its errors.
func MergeFiles(shards ...CSVFile) ([]Row, error) {
	type located struct {
		row   Row
		where string
	}
	var all []located
	for _, sh := range shards {
		for i, r := range sh.Rows {
			w := fmt.Sprintf("row %d", r.Index)
			if sh.File != "" && i < len(sh.Lines) {
				w = fmt.Sprintf("%s:%d", sh.File, sh.Lines[i])
			}
			if len(all) > 0 && r.Jobs != all[0].row.Jobs {
				return nil, fmt.Errorf("%s: row of a sweep of %d jobs, but %s of one of %d: not shards of one sweep", w, r.Jobs, all[0].where, all[0].row.Jobs)
			}
			all = append(all, located{r, w})
		}
	}
	sort.SliceStable(all, func(a, b int) bool { return all[a].row.Index < all[b].row.Index })
	rows := make([]Row, len(all))
	for i, l := range all {
		if l.row.Index != i {
			if i > 0 && all[i-1].row.Index == l.row.Index {
				return nil, fmt.Errorf("%s: job %d appears twice (also %s)", l.where, l.row.Index, all[i-1].where)
			}
			return nil, fmt.Errorf("job %d is missing (a shard not given?)", i)
		}
		rows[i] = l.row
	}
	if len(all) > 0 && len(all) != all[0].row.Jobs {
		return nil, fmt.Errorf("%d of %d jobs present (a shard not given?)", len(all), all[0].row.Jobs)
	}
	return rows, nil
}
