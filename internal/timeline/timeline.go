// Package timeline accumulates what a run does over time — each worker's
// state (the kernel it runs, fetching, idle) and step-function counters
// (ready tasks, memory used, bytes in flight) — into a fixed number of time
// bins, so that its memory does not grow with the run's length or its
// number of tasks: a figure cannot show more than a few thousand instants
// across anyway.
//
// Bins cover [0, Bins·BinS()). The bin width starts at InitialBinS and
// doubles, pairs of bins merging, whenever an interval ends past the last
// bin; sums are kept exactly as they were added (no resampling), so the
// result does not depend on the order the intervals arrive in, only on the
// set of intervals (up to floating-point summation order, which is the
// arrival order: feed them in a fixed order for byte-identical figures).
//
// Memory: per row (at most MaxRows), Bins float32 per distinct state the
// row was in (at most MaxStates states are told apart; later ones count as
// Other); per series, 3·Bins float64. Times are seconds from the timeline's origin;
// what falls before 0 is dropped.
package timeline

import (
	"math"
)

const (
	// Bins is the number of time bins. With the width doubling, between
	// Bins/2 and Bins of them are in use: at least two per pixel of a
	// figure about 1000 pixels wide.
	Bins = 4096
	// InitialBinS is the first bin width: 1 µs.
	InitialBinS = 1e-6
	// MaxStates is the number of distinct state names told apart; a
	// further name is counted as Other.
	MaxStates = 16
	// Other is the state name that stands for states past MaxStates.
	Other = "(other)"
	// MaxRows is the most worker rows a timeline keeps (a figure cannot
	// show more); AddRow past it returns -1, which the other methods
	// ignore.
	MaxRows = 256
	// MaxSeries is the most counter series a timeline keeps; AddSeries
	// past it returns -1.
	MaxSeries = 256
)

// State names with a meaning of their own; any other state of a row is a
// kernel (named by the kernel).
const (
	// StateIdle is a worker with nothing to do.
	StateIdle = "Idle"
	// StateFetch is a worker waiting for a task's inputs (StarPU's
	// FetchingInput).
	StateFetch = "FetchingInput"
	// StateRuntime is any other state of the runtime (overhead,
	// scheduling, pushing output, callbacks, ...).
	StateRuntime = "runtime"
)

// Counter groups: the Series.Group values of the counters a run panel
// shows. Values are tasks for GroupReady, bytes for the others.
const (
	// GroupReady: tasks pushed to the scheduler and not yet popped.
	GroupReady = "ready"
	// GroupMemory: bytes allocated on a GPU's memory node, a series per node.
	GroupMemory = "memory"
	// GroupInFlight: bytes being copied, a series per direction ("RAM->CUDA0").
	GroupInFlight = "inflight"
)

// Timeline is the binned record of one run. The zero value is not usable:
// call New.
type Timeline struct {
	binS   float64
	endS   float64 // latest instant seen
	states []string
	stateN map[string]int
	rows   []*Row
	series []*Series
}

// Row is one worker's states over time.
type Row struct {
	// Name labels the row ("CUDA0").
	Name string
	// Kind is the worker type, "cpu" or "cuda" (or "" when unknown).
	Kind string
	occ  [][]float32 // by state id: seconds per bin (nil: never in it)
	// The state Set last entered, and since when (cur < 0: none).
	cur   int
	since float64
}

// Series is one step-function counter over time.
type Series struct {
	// Name labels the series ("CUDA0", "RAM->CUDA1").
	Name string
	// Group says which panel row the series belongs to (a caller's key,
	// e.g. "ready", "memory", "inflight").
	Group string
	sum   []float64 // per bin: ∫ value dt over the bin
	cov   []float64 // per bin: seconds with a value
	max   []float64 // per bin: the largest value held
	// The value Set last gave, and since when.
	has   bool
	value float64
	since float64
}

// New returns an empty timeline.
func New() *Timeline {
	return &Timeline{binS: InitialBinS, stateN: map[string]int{}}
}

// BinS is the current bin width in seconds.
func (t *Timeline) BinS() float64 { return t.binS }

// EndS is the latest instant an interval reached (seconds), 0 for none.
func (t *Timeline) EndS() float64 { return t.endS }

// States are the state names, by id.
func (t *Timeline) States() []string { return t.states }

// Rows are the worker rows, in the order they were added.
func (t *Timeline) Rows() []*Row { return t.rows }

// Series are the counters, in the order they were added.
func (t *Timeline) Series() []*Series { return t.series }

// AddRow adds a worker row and returns its index, or -1 past MaxRows.
func (t *Timeline) AddRow(name, kind string) int {
	if len(t.rows) >= MaxRows {
		return -1
	}
	t.rows = append(t.rows, &Row{Name: name, Kind: kind, cur: -1})
	return len(t.rows) - 1
}

// AddSeries adds a counter series and returns its index, or -1 past
// MaxSeries.
func (t *Timeline) AddSeries(name, group string) int {
	if len(t.series) >= MaxSeries {
		return -1
	}
	t.series = append(t.series, &Series{Name: name, Group: group})
	return len(t.series) - 1
}

// State returns the id of a state name, adding it when new (a name past
// MaxStates gets Other's id).
func (t *Timeline) State(name string) int {
	if id, ok := t.stateN[name]; ok {
		return id
	}
	if len(t.states) >= MaxStates-1 {
		if _, ok := t.stateN[Other]; !ok {
			t.stateN[Other] = len(t.states)
			t.states = append(t.states, Other)
		}
		return t.stateN[Other]
	}
	id := len(t.states)
	t.stateN[name] = id
	t.states = append(t.states, name)
	return id
}

// valid reports whether [s, e) is a usable interval, clipped to start at 0.
func valid(s, e float64) (float64, float64, bool) {
	if math.IsNaN(s) || math.IsNaN(e) || math.IsInf(s, 0) || math.IsInf(e, 0) {
		return 0, 0, false
	}
	s = math.Max(s, 0)
	return s, e, e > s
}

// maxEndS bounds the instants a timeline takes (about 32 years): past it,
// the bin width would need more doublings than a float64 run can mean.
const maxEndS = 1e9

// grow doubles the bin width until e fits, merging pairs of bins.
func (t *Timeline) grow(e float64) {
	t.endS = math.Max(t.endS, e)
	for e > t.binS*Bins {
		t.binS *= 2
		for _, r := range t.rows {
			for _, o := range r.occ {
				if o != nil {
					halve(o, add[float32])
				}
			}
		}
		for _, s := range t.series {
			if s.sum == nil {
				continue
			}
			halve(s.sum, add[float64])
			halve(s.cov, add[float64])
			halve(s.max, math.Max)
		}
	}
}

// halve merges the bins of o pairwise into its first half, with merge,
// and zeroes the second half: o at twice the bin width.
func halve[T float32 | float64](o []T, merge func(a, b T) T) {
	for i := 0; i < Bins/2; i++ {
		o[i] = merge(o[2*i], o[2*i+1])
	}
	clear(o[Bins/2:])
}

func add[T float32 | float64](a, b T) T { return a + b }

// bins returns the bins [b0, b1] that [s, e) overlaps; overlap gives the
// seconds of the overlap with bin b. (No callback: the recorder calls this
// for every event of a run, and a closure would allocate each time.)
func (t *Timeline) bins(s, e float64) (b0, b1 int) {
	return int(s / t.binS), min(int(e/t.binS), Bins-1)
}

func (t *Timeline) overlap(b int, s, e float64) float64 {
	lo := math.Max(s, float64(b)*t.binS)
	hi := math.Min(e, float64(b+1)*t.binS)
	if b == Bins-1 {
		hi = e
	}
	return hi - lo
}

// AddState records that row was in state (an id from State) during
// [startS, endS). Empty, reversed, non-finite or too late intervals are
// ignored.
func (t *Timeline) AddState(row, state int, startS, endS float64) {
	s, e, ok := valid(startS, endS)
	if !ok || e > maxEndS || row < 0 || row >= len(t.rows) || state < 0 || state >= len(t.states) {
		return
	}
	t.grow(e)
	r := t.rows[row]
	for len(r.occ) <= state {
		r.occ = append(r.occ, nil)
	}
	o := r.occ[state]
	if o == nil {
		o = make([]float32, Bins)
		r.occ[state] = o
	}
	b0, b1 := t.bins(s, e)
	for b := b0; b <= b1; b++ {
		if dt := t.overlap(b, s, e); dt > 0 {
			o[b] += float32(dt)
		}
	}
}

// AddLevel records that series held value during [startS, endS).
func (t *Timeline) AddLevel(series int, value, startS, endS float64) {
	s, e, ok := valid(startS, endS)
	if !ok || e > maxEndS || series < 0 || series >= len(t.series) || math.IsNaN(value) || math.IsInf(value, 0) {
		return
	}
	t.grow(e)
	sr := t.series[series]
	if sr.sum == nil {
		sr.sum, sr.cov, sr.max = make([]float64, Bins), make([]float64, Bins), make([]float64, Bins)
		for i := range sr.max {
			sr.max[i] = math.Inf(-1)
		}
	}
	b0, b1 := t.bins(s, e)
	for b := b0; b <= b1; b++ {
		if dt := t.overlap(b, s, e); dt > 0 {
			sr.sum[b] += value * dt
			sr.cov[b] += dt
			sr.max[b] = math.Max(sr.max[b], value)
		}
	}
}

// Used is the number of bins up to the last instant seen.
func (t *Timeline) Used() int {
	// The tolerance keeps 4e-3/1e-6 = 4000.0000000000005 at 4000 bins.
	return min(Bins, int(math.Ceil(t.endS/t.binS*(1-1e-12))))
}

// Dominant returns, per bin, the id of the state the row spent the most
// time in, or -1 for a bin it has no record of. Ties go to the lower id.
func (t *Timeline) Dominant(row int) []int {
	out := make([]int, t.Used())
	if row < 0 || row >= len(t.rows) {
		for b := range out {
			out[b] = -1
		}
		return out
	}
	r := t.rows[row]
	for b := range out {
		best, bestT := -1, float32(0)
		for id, o := range r.occ {
			if o != nil && o[b] > bestT {
				best, bestT = id, o[b]
			}
		}
		out[b] = best
	}
	return out
}

// Total is the seconds the row spent in state (an id).
func (t *Timeline) Total(row, state int) float64 {
	if row < 0 || row >= len(t.rows) {
		return 0
	}
	r := t.rows[row]
	if state < 0 || state >= len(r.occ) || r.occ[state] == nil {
		return 0
	}
	var s float64
	for _, v := range r.occ[state] {
		s += float64(v)
	}
	return s
}

// Mean returns, per bin, the series' time-weighted mean value over the
// part of the bin it has a value for, and whether it has one.
func (t *Timeline) Mean(series int) (mean []float64, ok []bool) {
	return t.perBin(series, func(s *Series, b int) float64 { return s.sum[b] / s.cov[b] })
}

// Max returns, per bin, the largest value the series held (and whether it
// held one).
func (t *Timeline) Max(series int) (mx []float64, ok []bool) {
	return t.perBin(series, func(s *Series, b int) float64 { return s.max[b] })
}

// perBin returns, per used bin, value(s, b) for the bins where series s
// held a value (and true), 0 (and false) for the others and for a series
// that does not exist.
func (t *Timeline) perBin(series int, value func(s *Series, b int) float64) (vs []float64, ok []bool) {
	n := t.Used()
	vs, ok = make([]float64, n), make([]bool, n)
	if series < 0 || series >= len(t.series) {
		return vs, ok
	}
	s := t.series[series]
	if s.sum == nil {
		return vs, ok
	}
	for b := range vs {
		if s.cov[b] > 0 {
			vs[b], ok[b] = value(s, b), true
		}
	}
	return vs, ok
}

// HasData says whether the series holds any value.
func (s *Series) HasData() bool { return s.sum != nil }

// Enter makes row enter state (an id, or -1 for no known state) at tS,
// ending the state it was in. Calls for one row must come in time order;
// an earlier tS counts as the time of the previous call.
func (t *Timeline) Enter(row, state int, tS float64) {
	if row < 0 || row >= len(t.rows) {
		return
	}
	r := t.rows[row]
	tS = math.Max(tS, r.since)
	if r.cur >= 0 {
		t.AddState(row, r.cur, r.since, tS)
	}
	r.cur, r.since = state, tS
}

// Set gives series a new value from tS on, ending the previous one. Calls
// for one series must come in time order; an earlier tS counts as the time
// of the previous call.
func (t *Timeline) Set(series int, value, tS float64) {
	if series < 0 || series >= len(t.series) {
		return
	}
	s := t.series[series]
	if s.has {
		tS = math.Max(tS, s.since)
		t.AddLevel(series, s.value, s.since, tS)
	}
	s.has, s.value, s.since = true, value, tS
}

// Close ends every row's state and every series' value at endS, or at the
// latest instant seen if later.
func (t *Timeline) Close(endS float64) {
	endS = math.Max(endS, t.endS)
	for i, r := range t.rows {
		if r.cur >= 0 {
			t.AddState(i, r.cur, r.since, endS)
		}
		r.cur = -1
	}
	for i, s := range t.series {
		if s.has {
			t.AddLevel(i, s.value, s.since, endS)
		}
		s.has = false
	}
	if e, _, ok := valid(endS, endS+1); ok && endS <= maxEndS {
		t.grow(e)
	}
}
