package sweep

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"

	"github.com/starsim/starsim/internal/srcerr"
	"github.com/starsim/starsim/runtime"
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
	Index          int                  `json:"index"`
	Machine        string               `json:"machine"`
	MachineSource  string               `json:"machine_source"`
	Generation     string               `json:"starpu_generation"`
	App            string               `json:"app"`
	Sched          string               `json:"sched"`
	N              int                  `json:"n"`
	Block          int                  `json:"block"`
	NCPU           int                  `json:"ncpu"`
	NCUDA          int                  `json:"ncuda"`
	NTasks         int                  `json:"ntasks"`
	GFlops         float64              `json:"gflops"`
	MakespanS      float64              `json:"makespan_s"`
	SLR            float64              `json:"slr"`
	Speedup        float64              `json:"speedup"`
	Efficiency     float64              `json:"efficiency"`
	EnergyJ        float64              `json:"energy_j,omitempty"`
	BusyPct        float64              `json:"busy_pct"`
	Price          float64              `json:"price,omitempty"`
	GFlopsPerPrice float64              `json:"gflops_per_price,omitempty"`
	Utilization    *runtime.Utilization `json:"utilization,omitempty"`
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

// ReadCSV reads sweep output written by WriteCSV.
func ReadCSV(path string) ([]Row, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = len(Header)
	var rows []Row
	for first := true; ; first = false {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return nil, srcerr.Errorf(path, pe.Line, "not sweep CSV: %v", pe.Err)
			}
			return nil, srcerr.Errorf(path, 0, "%v", err)
		}
		line, _ := r.FieldPos(0)
		if first {
			for i, h := range Header {
				if rec[i] != h {
					return nil, srcerr.Errorf(path, line, "header column %d is %q, want %q", i+1, rec[i], h)
				}
			}
			continue
		}
		row, err := parseRow(rec)
		if err != nil {
			return nil, srcerr.Errorf(path, line, "%v", err)
		}
		rows = append(rows, row)
	}
	return rows, nil
}

func parseRow(rec []string) (Row, error) {
	var r Row
	ints := []*int{&r.Index, &r.Jobs, nil, nil, nil, nil, nil, &r.N, &r.Block, &r.NCPU, &r.NCUDA, &r.NTasks}
	for i, p := range ints {
		if p == nil {
			continue
		}
		v, err := strconv.Atoi(rec[i])
		if err != nil {
			return r, fmt.Errorf("column %s: %q is not an integer", Header[i], rec[i])
		}
		*p = v
	}
	r.Machine, r.MachineSource, r.Generation, r.App, r.Sched = rec[2], rec[3], rec[4], rec[5], rec[6]
	floats := []*float64{&r.GFlops, &r.MakespanS, &r.SLR, &r.Speedup, &r.Eff, &r.EnergyJ, &r.BusyPct, &r.PriceUnits}
	for i, p := range floats {
		v, err := strconv.ParseFloat(rec[12+i], 64)
		if err != nil {
			return r, fmt.Errorf("column %s: %q is not a number", Header[12+i], rec[12+i])
		}
		*p = v
	}
	if r.Index < 0 || r.Index >= r.Jobs {
		return r, fmt.Errorf("index %d out of [0, %d)", r.Index, r.Jobs)
	}
	return r, nil
}

// Merge joins the rows of shards into the rows of the whole sweep: same
// job count everywhere, every index exactly once.
func Merge(parts ...[]Row) ([]Row, error) {
	var all []Row
	jobs := -1
	for _, p := range parts {
		for _, r := range p {
			if jobs >= 0 && r.Jobs != jobs {
				return nil, fmt.Errorf("row %d belongs to a sweep of %d jobs, others to %d: not shards of one sweep", r.Index, r.Jobs, jobs)
			}
			jobs = r.Jobs
			all = append(all, r)
		}
	}
	sort.Slice(all, func(a, b int) bool { return all[a].Index < all[b].Index })
	for i, r := range all {
		if r.Index != i {
			if i > 0 && all[i-1].Index == r.Index {
				return nil, fmt.Errorf("job %d appears twice", r.Index)
			}
			return nil, fmt.Errorf("job %d is missing (a shard not given?)", i)
		}
	}
	if len(all) != jobs && jobs >= 0 {
		return nil, fmt.Errorf("%d of %d jobs present (a shard not given?)", len(all), jobs)
	}
	return all, nil
}
