package fit

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"

	"gonum.org/v1/gonum/stat"
)

// ErrNoSamples is returned by the fitting functions when given no samples.
var ErrNoSamples = errors.New("fit: no samples")

// ErrBadSample is wrapped by the errors for NaN, infinite or negative inputs.
var ErrBadSample = errors.New("fit: invalid sample")

// ErrBadHistogram is wrapped by the errors of Histogram.Validate.
var ErrBadHistogram = errors.New("fit: invalid histogram")

// degenerateRelWidth is the relative half-width given to the single bin of a
// sample set whose values are all equal: a zero-width bin has an infinite
// density, so it is widened to [x-δ, x+δ] with δ = degenerateRelWidth·|x|
// (at least degenerateAbsWidthUS), clipped at 0 because durations are
// non-negative.
const (
	degenerateRelWidth   = 1e-9
	degenerateAbsWidthUS = 1e-9
)

// Histogram is an irregular histogram: len(EdgesUS) = len(Counts)+1, EdgesUS
// strictly increasing (µs). Bin i is [EdgesUS[i], EdgesUS[i+1]) and holds
// Counts[i] samples, spread uniformly inside it.
type Histogram struct {
	EdgesUS []float64
	Counts  []uint64
}

// FitHistogram builds an irregular histogram of durations (µs) with Bayesian
// Blocks (Scargle et al. 2013, events mode, false-positive rate p0 = 0.05).
// Up to 4096 distinct values the exact O(n²) optimum is computed; above, the
// sorted samples are first merged into about 2048 equal-count cells (values
// next to a wide gap keep their own cell) and the optimum is searched over the
// cell edges, so 1e6 samples take well under a second. See doc.go.
//
// A single sample, or all-equal samples, give one bin widened by a relative
// 1e-9. Negative, NaN or infinite samples are an error. The input is not
// modified.
func FitHistogram(samplesUS []float64) (Histogram, error) {
	return fitHistogram(samplesUS, exactMaxCells, gridCells)
}

func fitHistogram(samplesUS []float64, maxExact, grid int) (Histogram, error) {
	if len(samplesUS) == 0 {
		return Histogram{}, ErrNoSamples
	}
	for i, x := range samplesUS {
		if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
			return Histogram{}, fmt.Errorf("%w: sample %d is %v µs (want finite, >= 0)", ErrBadSample, i, x)
		}
	}
	sorted := slices.Clone(samplesUS)
	slices.Sort(sorted)

	lo, hi := sorted[0], sorted[len(sorted)-1]
	if lo == hi {
		d := math.Max(degenerateRelWidth*math.Abs(lo), degenerateAbsWidthUS)
		return Histogram{
			EdgesUS: []float64{math.Max(0, lo-d), lo + d},
			Counts:  []uint64{uint64(len(sorted))},
		}, nil
	}

	c := buildCells(sorted, maxExact, grid)
	starts := bayesianBlocks(c, ncpPrior(len(sorted), bbFalsePositiveRate))

	h := Histogram{
		EdgesUS: make([]float64, 0, len(starts)+1),
		Counts:  make([]uint64, 0, len(starts)),
	}
	for b, s := range starts {
		e := len(c.counts)
		if b+1 < len(starts) {
			e = starts[b+1]
		}
		var n uint64
		for _, k := range c.counts[s:e] {
			n += k
		}
		h.EdgesUS = append(h.EdgesUS, c.edges[s])
		h.Counts = append(h.Counts, n)
	}
	h.EdgesUS = append(h.EdgesUS, c.edges[len(c.counts)])
	return h, nil
}

// Validate checks the shape invariants: at least one bin, len(EdgesUS) =
// len(Counts)+1, finite strictly increasing edges and a positive total.
func (h Histogram) Validate() error {
	if len(h.Counts) == 0 {
		return fmt.Errorf("%w: no bins", ErrBadHistogram)
	}
	if len(h.EdgesUS) != len(h.Counts)+1 {
		return fmt.Errorf("%w: %d edges for %d bins (want %d)", ErrBadHistogram, len(h.EdgesUS), len(h.Counts), len(h.Counts)+1)
	}
	for i, e := range h.EdgesUS {
		if math.IsNaN(e) || math.IsInf(e, 0) {
			return fmt.Errorf("%w: edge %d is %v", ErrBadHistogram, i, e)
		}
		if i > 0 && !(e > h.EdgesUS[i-1]) {
			return fmt.Errorf("%w: edge %d (%v) not above edge %d (%v)", ErrBadHistogram, i, e, i-1, h.EdgesUS[i-1])
		}
	}
	if h.Total() == 0 {
		return fmt.Errorf("%w: all counts are zero", ErrBadHistogram)
	}
	return nil
}

// Total returns the number of samples in the histogram.
func (h Histogram) Total() uint64 {
	var n uint64
	for _, c := range h.Counts {
		n += c
	}
	return n
}

// Mean returns the mean of the piecewise-uniform density (µs): the
// count-weighted mean of the bin midpoints. NaN for an empty histogram.
func (h Histogram) Mean() float64 {
	if len(h.Counts) == 0 || len(h.EdgesUS) != len(h.Counts)+1 || h.Total() == 0 {
		return math.NaN()
	}
	mid := make([]float64, len(h.Counts))
	w := make([]float64, len(h.Counts))
	for i, c := range h.Counts {
		mid[i] = 0.5 * (h.EdgesUS[i] + h.EdgesUS[i+1])
		w[i] = float64(c)
	}
	return stat.Mean(mid, w)
}

// CDF returns the fraction of the mass below x (µs), linear inside a bin.
func (h Histogram) CDF(x float64) float64 {
	total := h.Total()
	if total == 0 || len(h.EdgesUS) != len(h.Counts)+1 || math.IsNaN(x) {
		return math.NaN()
	}
	if x <= h.EdgesUS[0] {
		return 0
	}
	if x >= h.EdgesUS[len(h.EdgesUS)-1] {
		return 1
	}
	i := sort.SearchFloat64s(h.EdgesUS, x) // EdgesUS[i-1] < x <= EdgesUS[i]
	var below uint64
	for _, c := range h.Counts[:i-1] {
		below += c
	}
	lo, hi := h.EdgesUS[i-1], h.EdgesUS[i]
	return (float64(below) + float64(h.Counts[i-1])*(x-lo)/(hi-lo)) / float64(total)
}

// Quantile returns the p-quantile (µs) of the piecewise-uniform density, the
// inverse of CDF. p is clamped to [0, 1]: Quantile(0) is the lower edge of the
// first non-empty bin, Quantile(1) the upper edge of the last. NaN for a NaN p
// or an empty histogram.
func (h Histogram) Quantile(p float64) float64 {
	total := h.Total()
	if math.IsNaN(p) || total == 0 || len(h.EdgesUS) != len(h.Counts)+1 {
		return math.NaN()
	}
	first, last := -1, -1
	for i, c := range h.Counts {
		if c > 0 {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	if p <= 0 {
		return h.EdgesUS[first]
	}
	if p >= 1 {
		return h.EdgesUS[last+1]
	}
	t := p * float64(total)
	cum := 0.0
	for i, c := range h.Counts {
		if c == 0 {
			continue
		}
		fc := float64(c)
		if t < cum+fc {
			lo, hi := h.EdgesUS[i], h.EdgesUS[i+1]
			return lo + (t-cum)/fc*(hi-lo)
		}
		cum += fc
	}
	return h.EdgesUS[last+1] // rounding put t at the very top
}

// Sample maps a uniform variate u in [0, 1) to a duration (µs) by inverting the
// CDF: the bin is chosen with probability proportional to its count, the value
// uniformly inside the bin. It is a pure function: the caller draws u from its
// own seeded generator, which keeps a simulation reproducible. Cost O(bins).
func (h Histogram) Sample(u float64) float64 {
	return h.Quantile(u)
}
