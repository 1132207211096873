package maxmin

import "math"

// RelTol is the one relative tolerance of the solver (see the package doc).
const RelTol = 1e-12

// Constraint is a shared resource with a capacity (e.g. B/s for a link).
type Constraint struct {
	Capacity float64
	// Fatpipe makes the constraint bound each variable separately (max of the
	// consumptions) instead of their sum.
	Fatpipe bool
}

// Elem says that a variable consumes Coef units of constraint Cnst per unit of
// rate. A variable may list the same constraint twice; coefficients add up for
// SHARED constraints and the largest counts for FATPIPE ones.
type Elem struct {
	Cnst int
	Coef float64
}

// Variable is one sharing participant. Penalty > 0: at a common level t the
// variable gets t/Penalty, so rates on a bottleneck are proportional to
// 1/Penalty.
type Variable struct {
	Penalty float64
	Elems   []Elem
}

// Solver holds scratch space so repeated solves do not allocate. The zero
// value is ready to use. A Solver is not safe for concurrent use.
type Solver struct {
	remaining []float64
	usage     []float64
	nUnfixed  []int32
	live      []bool
	byCnst    [][]int32 // variables touching each constraint (with coef > 0)
	fixed     []bool
	sat       []int32
}

// Solve computes the rate of every variable into rates (len(vars)).
// It panics on a non-positive penalty or a negative coefficient: callers
// validate their inputs.
func (s *Solver) Solve(cnsts []Constraint, vars []Variable, rates []float64) {
	nc, nv := len(cnsts), len(vars)
	s.reset(nc, nv)
	for vi := range vars {
		v := &vars[vi]
		if !(v.Penalty > 0) {
			panic("maxmin: variable penalty must be > 0")
		}
		rates[vi] = math.Inf(1)
		for _, el := range v.Elems {
			if el.Coef < 0 || math.IsNaN(el.Coef) {
				panic("maxmin: negative coefficient")
			}
			if el.Coef == 0 {
				continue
			}
			c := el.Cnst
			s.addUsage(cnsts[c].Fatpipe, c, el.Coef/v.Penalty)
			// A variable listing a constraint twice is registered once per
			// listing; fixing it skips the duplicates (see fix).
			s.byCnst[c] = append(s.byCnst[c], int32(vi))
			s.nUnfixed[c]++
		}
	}
	for c := range cnsts {
		s.remaining[c] = cnsts[c].Capacity
		s.live[c] = s.nUnfixed[c] > 0 && s.remaining[c] > 0
	}
	// Variables on an exhausted (zero-capacity) constraint get rate 0.
	for c := range cnsts {
		if s.nUnfixed[c] > 0 && !(cnsts[c].Capacity > 0) {
			for _, vi := range s.byCnst[c] {
				if !s.fixed[vi] {
					s.fix(cnsts, vars, rates, int(vi), 0)
				}
			}
		}
	}
	for {
		minLevel := math.Inf(1)
		for c := 0; c < nc; c++ {
			if s.live[c] {
				if l := s.remaining[c] / s.usage[c]; l < minLevel {
					minLevel = l
				}
			}
		}
		if math.IsInf(minLevel, 1) {
			break
		}
		s.sat = s.sat[:0]
		lim := minLevel * (1 + RelTol)
		for c := 0; c < nc; c++ {
			if s.live[c] && s.remaining[c]/s.usage[c] <= lim {
				s.sat = append(s.sat, int32(c))
			}
		}
		for _, c := range s.sat {
			for _, vi := range s.byCnst[c] {
				if !s.fixed[vi] {
					s.fix(cnsts, vars, rates, int(vi), minLevel/vars[vi].Penalty)
				}
			}
			s.live[c] = false
		}
	}
}

func (s *Solver) addUsage(fatpipe bool, c int, u float64) {
	if fatpipe {
		if u > s.usage[c] {
			s.usage[c] = u
		}
	} else {
		s.usage[c] += u
	}
}

// fix sets variable vi's rate and withdraws it from its constraints.
func (s *Solver) fix(cnsts []Constraint, vars []Variable, rates []float64, vi int, rate float64) {
	s.fixed[vi] = true
	rates[vi] = rate
	v := &vars[vi]
	for _, el := range v.Elems {
		if el.Coef == 0 {
			continue
		}
		c := el.Cnst
		s.nUnfixed[c]--
		if cnsts[c].Fatpipe {
			// The max over the remaining variables must be recomputed; the
			// capacity is not consumed (each variable has it all).
			u := 0.0
			for _, wi := range s.byCnst[c] {
				if !s.fixed[wi] {
					for _, e2 := range vars[wi].Elems {
						if e2.Cnst == c && e2.Coef/vars[wi].Penalty > u {
							u = e2.Coef / vars[wi].Penalty
						}
					}
				}
			}
			s.usage[c] = u
		} else {
			s.remaining[c] -= el.Coef * rate
			s.usage[c] -= el.Coef / v.Penalty
			if s.remaining[c] < RelTol*cnsts[c].Capacity {
				s.remaining[c] = 0
			}
		}
		if s.nUnfixed[c] == 0 || s.remaining[c] <= 0 || !(s.usage[c] > 0) {
			s.live[c] = false
		}
	}
}

func (s *Solver) reset(nc, nv int) {
	grow := func(n int, f []float64) []float64 {
		if cap(f) < n {
			return make([]float64, n)
		}
		f = f[:n]
		clear(f)
		return f
	}
	s.remaining = grow(nc, s.remaining)
	s.usage = grow(nc, s.usage)
	if cap(s.nUnfixed) < nc {
		s.nUnfixed = make([]int32, nc)
		s.live = make([]bool, nc)
	}
	s.nUnfixed = s.nUnfixed[:nc]
	clear(s.nUnfixed)
	s.live = s.live[:nc]
	clear(s.live)
	if cap(s.byCnst) < nc {
		s.byCnst = append(s.byCnst[:cap(s.byCnst)], make([][]int32, nc-cap(s.byCnst))...)
	}
	s.byCnst = s.byCnst[:nc]
	for c := range s.byCnst {
		s.byCnst[c] = s.byCnst[c][:0]
	}
	if cap(s.fixed) < nv {
		s.fixed = make([]bool, nv)
	}
	s.fixed = s.fixed[:nv]
	clear(s.fixed)
}
