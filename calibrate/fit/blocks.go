package fit

import "math"

const (
	// bbFalsePositiveRate is p0 of Scargle et al. (2013, eq. 21): the
	// probability that the prior lets a spurious change point through.
	bbFalsePositiveRate = 0.05
	// exactMaxCells: up to this many distinct values the O(n²) program runs on
	// the exact events-mode cells (one per distinct value), about 0.1 s.
	exactMaxCells = 4096
	// gridCells: above exactMaxCells, samples are pre-binned into about this
	// many equal-count cells; a change point can then be placed within 1/2048
	// of the probability mass of its exact position.
	gridCells = 2048
)

// ncpPrior is Scargle et al.'s (2013, eq. 21) calibrated prior on the number
// of change points for n events: ncp_prior = 4 - ln(73.53 p0 n^-0.478).
// n is the number of samples (not of cells), so pre-binning leaves it alone.
func ncpPrior(n int, p0 float64) float64 {
	return 4 - math.Log(73.53*p0*math.Pow(float64(n), -0.478))
}

// cells are the elementary intervals the blocks are made of: len(edges) =
// len(counts)+1, edges strictly increasing, every count >= 1.
type cells struct {
	edges  []float64
	counts []uint64
}

// buildCells turns sorted samples (at least two distinct values) into cells.
//
// Events mode gives every distinct value its own cell, bounded by the
// midpoints to its neighbours (the first and last cells start and end at the
// extreme samples). With more than maxExact distinct values, runs of
// consecutive values are merged up to ceil(n/grid) samples per cell, a grid of
// quantiles that keeps resolution where the mass is. A value next to a gap
// wider than range/grid keeps a cell of its own, as in events mode: otherwise
// the cell bordering an empty region would carry up to n/grid samples across
// it, and the histogram would put that mass into the gap. At most grid gaps
// can be that wide, so the cell count stays a small multiple of grid.
func buildCells(sorted []float64, maxExact, grid int) cells {
	u := 1
	for i := 1; i < len(sorted); i++ {
		if sorted[i] != sorted[i-1] {
			u++
		}
	}
	vals := make([]float64, 0, u)
	mult := make([]uint64, 0, u)
	for i, x := range sorted {
		if i > 0 && x == sorted[i-1] {
			mult[len(mult)-1]++
			continue
		}
		vals = append(vals, x)
		mult = append(mult, 1)
	}
	mid := func(i int) float64 { // edge between value i-1 and value i
		if i == 0 {
			return vals[0]
		}
		if i == u {
			return vals[u-1]
		}
		return 0.5 * (vals[i-1] + vals[i])
	}

	var c cells
	emit := func(from, to int) { // values [from, to)
		var n uint64
		for _, m := range mult[from:to] {
			n += m
		}
		if len(c.edges) == 0 {
			c.edges = append(c.edges, mid(from))
		}
		c.edges = append(c.edges, mid(to))
		c.counts = append(c.counts, n)
	}

	if u <= maxExact {
		c.edges = make([]float64, 0, u+1)
		c.counts = make([]uint64, 0, u)
		for i := range u {
			emit(i, i+1)
		}
		return dropZeroWidth(c)
	}

	target := uint64((len(sorted) + grid - 1) / grid)
	gapLimit := (vals[u-1] - vals[0]) / float64(grid)
	isolated := func(i int) bool {
		return (i > 0 && vals[i]-vals[i-1] > gapLimit) || (i+1 < u && vals[i+1]-vals[i] > gapLimit)
	}
	start := 0
	var acc uint64
	for i := range u {
		if isolated(i) {
			if start < i {
				emit(start, i)
			}
			emit(i, i+1)
			start, acc = i+1, 0
			continue
		}
		acc += mult[i]
		if acc >= target {
			emit(start, i+1)
			start, acc = i+1, 0
		}
	}
	if start < u {
		emit(start, u)
	}
	return dropZeroWidth(c)
}

// dropZeroWidth merges every zero-width cell into its predecessor (the
// first one into its successor). Adjacent floats can have a midpoint equal to
// one of them, and a zero-width cell has an infinite density that the
// fitness would chase.
func dropZeroWidth(c cells) cells {
	out := cells{edges: []float64{c.edges[0]}}
	var carry uint64
	for i, n := range c.counts {
		if !(c.edges[i+1] > out.edges[len(out.edges)-1]) {
			if len(out.counts) > 0 {
				out.counts[len(out.counts)-1] += n
			} else {
				carry += n
			}
			continue
		}
		out.edges = append(out.edges, c.edges[i+1])
		out.counts = append(out.counts, n+carry)
		carry = 0
	}
	return out
}

// bayesianBlocks returns the first cell index of every block of the optimal
// partition (Scargle et al. 2013, algorithm of section 3): it maximizes the
// sum over blocks of the events-mode fitness N_k·ln(N_k/T_k) minus ncpPrior
// per block, by dynamic programming over the last change point.
func bayesianBlocks(c cells, prior float64) []int {
	m := len(c.counts)
	cum := make([]float64, m+1)
	for i, n := range c.counts {
		cum[i+1] = cum[i] + float64(n)
	}
	best := make([]float64, m)
	last := make([]int, m)
	for k := range m {
		hiCount, hiEdge := cum[k+1], c.edges[k+1]
		bestVal, bestR := math.Inf(-1), 0
		for r := 0; r <= k; r++ {
			n := hiCount - cum[r]
			f := n*math.Log(n/(hiEdge-c.edges[r])) - prior
			if r > 0 {
				f += best[r-1]
			}
			if f > bestVal {
				bestVal, bestR = f, r
			}
		}
		best[k], last[k] = bestVal, bestR
	}
	var starts []int
	for k := m; k > 0; k = last[k-1] {
		starts = append(starts, last[k-1])
	}
	for i, j := 0, len(starts)-1; i < j; i, j = i+1, j-1 {
		starts[i], starts[j] = starts[j], starts[i]
	}
	return starts
}
