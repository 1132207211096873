package compare

import (
	"math"
	"sort"
	"strconv"

	"gonum.org/v1/gonum/stat"

	"github.com/starsim/starsim/traces"
)

// Report is the comparison of trace A (the reference, e.g. native) with
// trace B (e.g. simulated). Times in ms. Relative errors are signed,
// (B - A) / A in %, and 0 where A is 0.
type Report struct {
	A TraceSummary `json:"a"`
	B TraceSummary `json:"b"`

	MakespanA      float64 `json:"makespan_a_ms"`
	MakespanB      float64 `json:"makespan_b_ms"`
	MakespanErrPct float64 `json:"makespan_err_pct"`

	// GFlops: the summed GFlop fields over the makespan, GFlop/s; 0 when
	// the trace has none (Chrome traces), and then GFlopsErrPct is 0.
	GFlopsA      float64 `json:"gflops_a"`
	GFlopsB      float64 `json:"gflops_b"`
	GFlopsErrPct float64 `json:"gflops_err_pct"`

	Kernels       []KernelRow   `json:"kernels"`
	Workers       []WorkerRow   `json:"workers"`
	Transfers     []TransferRow `json:"transfers"`
	Distributions []DistRow     `json:"distributions"`
}

// TraceSummary describes one side of a Report.
type TraceSummary struct {
	Name    string `json:"name"`
	Format  string `json:"format"`
	Tasks   int    `json:"tasks"`
	Workers int    `json:"workers"`
	// TransferSource is the Trace's: "chrome", "data.rec" or "".
	TransferSource string `json:"transfer_source"`
}

// KernelRow compares one kernel on one worker type.
type KernelRow struct {
	Kernel     string  `json:"kernel"`
	WorkerType string  `json:"worker_type"`
	CountA     int     `json:"count_a"`
	CountB     int     `json:"count_b"`
	TotalMsA   float64 `json:"total_a_ms"`
	TotalMsB   float64 `json:"total_b_ms"`
	MeanMsA    float64 `json:"mean_a_ms"`
	MeanMsB    float64 `json:"mean_b_ms"`
	MeanErrPct float64 `json:"mean_err_pct"`
}

// WorkerRow compares one worker (by ID). Busy is the union of its tasks'
// [StartTime, EndTime) intervals; percentages are of the trace's makespan,
// idle = 100 - busy.
type WorkerRow struct {
	ID       int     `json:"id"`
	NameA    string  `json:"name_a"`
	NameB    string  `json:"name_b"`
	TasksA   int     `json:"tasks_a"`
	TasksB   int     `json:"tasks_b"`
	BusyMsA  float64 `json:"busy_a_ms"`
	BusyMsB  float64 `json:"busy_b_ms"`
	BusyPctA float64 `json:"busy_a_pct"`
	BusyPctB float64 `json:"busy_b_pct"`
	IdlePctA float64 `json:"idle_a_pct"`
	IdlePctB float64 `json:"idle_b_pct"`
}

// TransferRow compares the copies in one direction.
type TransferRow struct {
	Src    string `json:"src"`
	Dst    string `json:"dst"`
	CountA int    `json:"count_a"`
	CountB int    `json:"count_b"`
	BytesA int64  `json:"bytes_a"`
	BytesB int64  `json:"bytes_b"`
}

// Quantiles of a duration sample, ms (stat.Empirical: the smallest sample
// value whose empirical CDF reaches p). All 0 for an empty sample.
type Quantiles struct {
	P10 float64 `json:"p10_ms"`
	P50 float64 `json:"p50_ms"`
	P90 float64 `json:"p90_ms"`
	P99 float64 `json:"p99_ms"`
}

// DistRow compares the duration distributions of one kernel on one worker
// type. KS is the two-sample Kolmogorov–Smirnov distance, sup |F_A - F_B|
// over the empirical CDFs: 0 for identical samples, 1 when one side has no
// sample.
type DistRow struct {
	Kernel     string    `json:"kernel"`
	WorkerType string    `json:"worker_type"`
	NA         int       `json:"n_a"`
	NB         int       `json:"n_b"`
	A          Quantiles `json:"a"`
	B          Quantiles `json:"b"`
	KS         float64   `json:"ks"`
}

// errPct is (b - a) / a in %, 0 when a is 0.
func errPct(a, b float64) float64 {
	if a == 0 {
		return 0
	}
	return (b - a) / a * 100
}

type kernelKey struct{ name, wtype string }

// durations groups the tasks' durations (ms) by kernel and worker type.
func durations(t *traces.Trace) map[kernelKey][]float64 {
	m := map[kernelKey][]float64{}
	for i := range t.Tasks {
		r := &t.Tasks[i]
		k := kernelKey{r.Name, traces.WorkerType(r)}
		m[k] = append(m[k], *r.EndTime-*r.StartTime)
	}
	return m
}

// Compare compares trace a (the reference) with trace b.
func Compare(a, b *traces.Trace) *Report {
	r := &Report{A: summary(a), B: summary(b)}
	r.MakespanA, r.MakespanB = a.Makespan(), b.Makespan()
	r.MakespanErrPct = errPct(r.MakespanA, r.MakespanB)
	gflops := func(t *traces.Trace, ms float64) float64 {
		g, ok := t.GFlop()
		if !ok || ms <= 0 {
			return 0
		}
		return g / (ms / 1e3)
	}
	r.GFlopsA, r.GFlopsB = gflops(a, r.MakespanA), gflops(b, r.MakespanB)
	if r.GFlopsA > 0 && r.GFlopsB > 0 {
		r.GFlopsErrPct = errPct(r.GFlopsA, r.GFlopsB)
	}

	da, db := durations(a), durations(b)
	keys := make([]kernelKey, 0, len(da)+len(db))
	for k := range da {
		keys = append(keys, k)
	}
	for k := range db {
		if _, ok := da[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].name != keys[j].name {
			return keys[i].name < keys[j].name
		}
		return keys[i].wtype < keys[j].wtype
	})
	for _, k := range keys {
		xa, xb := da[k], db[k]
		kr := KernelRow{Kernel: k.name, WorkerType: k.wtype, CountA: len(xa), CountB: len(xb),
			TotalMsA: sum(xa), TotalMsB: sum(xb)}
		if kr.CountA > 0 {
			kr.MeanMsA = kr.TotalMsA / float64(kr.CountA)
		}
		if kr.CountB > 0 {
			kr.MeanMsB = kr.TotalMsB / float64(kr.CountB)
		}
		kr.MeanErrPct = errPct(kr.MeanMsA, kr.MeanMsB)
		r.Kernels = append(r.Kernels, kr)

		sa, sb := sorted(xa), sorted(xb)
		r.Distributions = append(r.Distributions, DistRow{Kernel: k.name, WorkerType: k.wtype,
			NA: len(sa), NB: len(sb), A: quantiles(sa), B: quantiles(sb), KS: KSDistance(sa, sb)})
	}

	r.Workers = compareWorkers(a, b, r.MakespanA, r.MakespanB)
	r.Transfers = compareTransfers(a, b)
	return r
}

func summary(t *traces.Trace) TraceSummary {
	return TraceSummary{Name: t.Name, Format: t.Format, Tasks: len(t.Tasks), Workers: len(t.Workers), TransferSource: t.TransferSource}
}

func sum(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s
}

func sorted(xs []float64) []float64 {
	out := append([]float64(nil), xs...)
	sort.Float64s(out)
	return out
}

func quantiles(sorted []float64) Quantiles {
	if len(sorted) == 0 {
		return Quantiles{}
	}
	q := func(p float64) float64 { return stat.Quantile(p, stat.Empirical, sorted, nil) }
	return Quantiles{P10: q(0.10), P50: q(0.50), P90: q(0.90), P99: q(0.99)}
}

// KSDistance is the two-sample Kolmogorov–Smirnov statistic of two sorted
// samples: the largest gap between their empirical CDFs, ties counted
// together (gonum's stat.KolmogorovSmirnov, unit weights). It is 0 when
// both are empty, 1 when only one is, and NaN when a sample holds a NaN
// (returned at once: nothing loops on it).
func KSDistance(a, b []float64) float64 {
	return stat.KolmogorovSmirnov(a, nil, b, nil)
}

type workerStat struct {
	name  string
	tasks int
	busy  float64
}

// workerStats sums each worker's busy time: the union of its tasks'
// intervals (a device worker's tasks may overlap).
func workerStats(t *traces.Trace) map[int]*workerStat {
	m := map[int]*workerStat{}
	for _, w := range t.Workers {
		m[w.ID] = &workerStat{name: w.Name}
	}
	last := map[int][2]float64{} // current merged interval per worker
	flush := func(id int) {
		if iv, ok := last[id]; ok {
			m[id].busy += iv[1] - iv[0]
		}
	}
	for i := range t.Tasks { // sorted by StartTime
		r := &t.Tasks[i]
		id := *r.WorkerID
		ws := m[id]
		if ws == nil {
			ws = &workerStat{name: "w" + strconv.Itoa(id)}
			m[id] = ws
		}
		ws.tasks++
		s, e := *r.StartTime, *r.EndTime
		iv, ok := last[id]
		switch {
		case !ok:
			last[id] = [2]float64{s, e}
		case s <= iv[1]:
			last[id] = [2]float64{iv[0], math.Max(iv[1], e)}
		default:
			flush(id)
			last[id] = [2]float64{s, e}
		}
	}
	ids := make([]int, 0, len(last))
	for id := range last {
		ids = append(ids, id)
	}
	sort.Ints(ids) // fixed summation order
	for _, id := range ids {
		flush(id)
	}
	return m
}

func compareWorkers(a, b *traces.Trace, msA, msB float64) []WorkerRow {
	sa, sb := workerStats(a), workerStats(b)
	idset := map[int]bool{}
	for id := range sa {
		idset[id] = true
	}
	for id := range sb {
		idset[id] = true
	}
	ids := make([]int, 0, len(idset))
	for id := range idset {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	pct := func(busy, ms float64) float64 {
		if ms <= 0 {
			return 0
		}
		return busy / ms * 100
	}
	rows := make([]WorkerRow, 0, len(ids))
	for _, id := range ids {
		row := WorkerRow{ID: id}
		if w := sa[id]; w != nil {
			row.NameA, row.TasksA, row.BusyMsA = w.name, w.tasks, w.busy
			row.BusyPctA = pct(w.busy, msA)
			row.IdlePctA = 100 - row.BusyPctA
		}
		if w := sb[id]; w != nil {
			row.NameB, row.TasksB, row.BusyMsB = w.name, w.tasks, w.busy
			row.BusyPctB = pct(w.busy, msB)
			row.IdlePctB = 100 - row.BusyPctB
		}
		rows = append(rows, row)
	}
	return rows
}

func compareTransfers(a, b *traces.Trace) []TransferRow {
	type dir struct{ src, dst string }
	m := map[dir]*TransferRow{}
	var keys []dir
	get := func(x traces.Transfer) *TransferRow {
		k := dir{x.Src, x.Dst}
		if m[k] == nil {
			m[k] = &TransferRow{Src: x.Src, Dst: x.Dst}
			keys = append(keys, k)
		}
		return m[k]
	}
	for _, x := range a.Transfers {
		r := get(x)
		r.CountA += x.Count
		r.BytesA += x.Bytes
	}
	for _, x := range b.Transfers {
		r := get(x)
		r.CountB += x.Count
		r.BytesB += x.Bytes
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].src != keys[j].src {
			return traces.NodeLess(keys[i].src, keys[j].src)
		}
		return traces.NodeLess(keys[i].dst, keys[j].dst)
	})
	rows := make([]TransferRow, 0, len(keys))
	for _, k := range keys {
		rows = append(rows, *m[k])
	}
	return rows
}
