package fit

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"

	"gonum.org/v1/gonum/stat"
)

// TransferSample is one measured 2D tile copy (cudaMemcpy2D).
type TransferSample struct {
	Bytes, Pitch float64 // payload and leading dimension of the matrix, bytes
	DurationUS   float64 // measured copy time, µs
}

// Segment is one linear piece of a transfer model: for a payload in
// [LoBytes, HiBytes) the time is InterceptUS + SlopeUSPerByte·bytes.
type Segment struct {
	LoBytes, HiBytes float64 // [lo, hi)
	InterceptUS      float64
	SlopeUSPerByte   float64
}

// PitchModel is the piece-wise linear transfer model of the pitches in
// [PitchLo, PitchHi] (bytes; a single pitch has PitchLo == PitchHi). Its
// Segments are sorted and cover [0, +Inf).
type PitchModel struct {
	PitchLo, PitchHi float64
	Segments         []Segment
}

const (
	// minSegmentSizes: a slope needs two distinct payload sizes.
	minSegmentSizes = 2
	// minSegmentPoints: three samples leave one residual degree of freedom,
	// so a segment cannot absorb noise by fitting it exactly.
	minSegmentPoints = 3
	// maxSegments bounds the dynamic program; the copy regimes of a GPU
	// (latency-bound, pipelined, changed by the pitch) are a handful.
	maxSegments = 8
	// relResidualFloor is the smallest relative RMS residual the criterion
	// believes in. Noise-free data must not gain from extra breakpoints by
	// fitting rounding errors (the moments lose ~1e-8 relative RMS to
	// cancellation); real timings are never that clean (a 1 µs timer on a
	// 100 ms copy is 1e-5).
	relResidualFloor = 1e-6
	// minScaleUS keeps the 1/duration² weights finite for zero durations.
	minScaleUS = 1e-6
)

// Merge tolerances of FitPitchModels: two adjacent pitches share a model when,
// at every payload size measured for both, their predictions differ by at most
// MergeRelTol of the larger one plus MergeAbsTolUS. With 1% timing noise and
// 5 repetitions of 31 sizes, two independent fits of one model differ by at
// most 1.8% at any measured size (500 seed pairs), while the pitch effects
// worth modelling change times by tens of percent.
const (
	MergeRelTol   = 0.03
	MergeAbsTolUS = 0.1
)

// FitSegments fits a piece-wise linear model of the copy time against the
// payload for samples of a single pitch (an error if they mix pitches).
//
// Breakpoints come from segmented least squares: a dynamic program over the
// sorted distinct payload sizes finds, for each number of segments K up to 8,
// the partition with the smallest residual sum of squares; K is chosen by BIC,
// n·ln(RSS/n) + (3K-1)·ln(n). Residuals are relative (weights 1/duration², the
// per-size median), as timing noise is multiplicative. Each segment has at
// least 2 distinct sizes and 3 samples and is refit with
// stat.LinearRegression. A breakpoint sits at the smallest payload of the
// upper segment. The first segment is extended down to 0 and the last up to
// +Inf. A single distinct size gives one constant segment.
func FitSegments(samples []TransferSample) ([]Segment, error) {
	if err := validateTransfers(samples); err != nil {
		return nil, err
	}
	for i, s := range samples {
		if s.Pitch != samples[0].Pitch {
			return nil, fmt.Errorf("%w: sample %d has pitch %v, sample 0 has %v; use FitPitchModels",
				ErrBadSample, i, s.Pitch, samples[0].Pitch)
		}
	}
	return fitSegments(samples), nil
}

// FitPitchModels groups samples by exact pitch, fits each group with
// FitSegments, then walks the pitches in increasing order and merges a pitch
// into the current range when its model agrees with the model of every pitch
// already in the range (see MergeRelTol): comparing with every member, not
// just the last, stops a slow drift from chaining different regimes
// together. A merged range is refit on the pooled samples. The result is
// sorted by pitch; ranges do not overlap.
func FitPitchModels(samples []TransferSample) ([]PitchModel, error) {
	if err := validateTransfers(samples); err != nil {
		return nil, err
	}
	sorted := slices.Clone(samples)
	slices.SortStableFunc(sorted, func(a, b TransferSample) int { return cmp.Compare(a.Pitch, b.Pitch) })

	type group struct {
		pitch   float64
		samples []TransferSample
		segs    []Segment
		sizes   []float64 // distinct payload sizes, increasing
	}
	var groups []group
	for i := 0; i < len(sorted); {
		j := i
		for j < len(sorted) && sorted[j].Pitch == sorted[i].Pitch {
			j++
		}
		g := group{pitch: sorted[i].Pitch, samples: sorted[i:j:j]}
		g.segs = fitSegments(g.samples)
		for _, s := range g.samples {
			g.sizes = append(g.sizes, s.Bytes)
		}
		slices.Sort(g.sizes)
		g.sizes = slices.Compact(g.sizes)
		groups = append(groups, g)
		i = j
	}

	var models []PitchModel
	for i := 0; i < len(groups); {
		j := i + 1
		for ; j < len(groups); j++ {
			agreeAll := true
			for k := i; k < j && agreeAll; k++ {
				agreeAll = modelsAgree(groups[k].segs, groups[j].segs, groups[k].sizes, groups[j].sizes)
			}
			if !agreeAll {
				break
			}
		}
		m := PitchModel{PitchLo: groups[i].pitch, PitchHi: groups[j-1].pitch, Segments: groups[i].segs}
		if j-i > 1 {
			var pooled []TransferSample
			for _, g := range groups[i:j] {
				pooled = append(pooled, g.samples...)
			}
			m.Segments = fitSegments(pooled)
		}
		models = append(models, m)
		i = j
	}
	return models, nil
}

// modelsAgree reports whether two models predict the same times, within the
// merge tolerances, at every size measured for either of them inside the
// payload range both were measured on. Disjoint ranges never agree: nothing
// says the models match there.
func modelsAgree(a, b []Segment, sizesA, sizesB []float64) bool {
	lo := math.Max(sizesA[0], sizesB[0])
	hi := math.Min(sizesA[len(sizesA)-1], sizesB[len(sizesB)-1])
	checked := 0
	for _, sizes := range [][]float64{sizesA, sizesB} {
		for _, x := range sizes {
			if x < lo || x > hi {
				continue
			}
			fa, _ := EvalSegmentsUS(a, x)
			fb, _ := EvalSegmentsUS(b, x)
			if math.Abs(fa-fb) > MergeRelTol*math.Max(fa, fb)+MergeAbsTolUS {
				return false
			}
			checked++
		}
	}
	return checked > 0
}

// EvalUS returns the copy time (µs) of a payload at a pitch. The model whose
// pitch range contains pitch is used; otherwise the one whose range is nearest
// (on a tie, the lower pitches): the pitch effect is abrupt, so a neighbour's
// regime is a better guess than an interpolation between regimes. ok is false
// when there is no model, pitch is not finite, or bytes is NaN or negative.
func EvalUS(models []PitchModel, bytes, pitch float64) (float64, bool) {
	if len(models) == 0 || math.IsNaN(pitch) || math.IsInf(pitch, 0) {
		return 0, false
	}
	best, bestDist := 0, math.Inf(1)
	for i, m := range models {
		d := math.Max(0, math.Max(m.PitchLo-pitch, pitch-m.PitchHi))
		if d < bestDist {
			best, bestDist = i, d
		}
	}
	return EvalSegmentsUS(models[best].Segments, bytes)
}

// EvalSegmentsUS returns the time (µs) of the segment containing bytes, or the
// nearest segment when bytes lies outside them all. Times are clamped at 0: a
// fitted negative intercept must not yield a negative duration. ok is false
// for no segments, a NaN or a negative bytes.
func EvalSegmentsUS(segs []Segment, bytes float64) (float64, bool) {
	if len(segs) == 0 || math.IsNaN(bytes) || bytes < 0 {
		return 0, false
	}
	i := sort.Search(len(segs), func(i int) bool { return bytes < segs[i].HiBytes })
	if i == len(segs) {
		i--
	}
	s := segs[i]
	return math.Max(0, s.InterceptUS+s.SlopeUSPerByte*bytes), true
}

func validateTransfers(samples []TransferSample) error {
	if len(samples) == 0 {
		return ErrNoSamples
	}
	for i, s := range samples {
		for _, f := range []struct {
			name string
			v    float64
		}{{"Bytes", s.Bytes}, {"Pitch", s.Pitch}, {"DurationUS", s.DurationUS}} {
			if math.IsNaN(f.v) || math.IsInf(f.v, 0) || f.v < 0 {
				return fmt.Errorf("%w: sample %d: %s is %v (want finite, >= 0)", ErrBadSample, i, f.name, f.v)
			}
		}
	}
	return nil
}

// fitSegments is FitSegments without input checks and ignoring the pitch.
func fitSegments(samples []TransferSample) []Segment {
	pts := slices.Clone(samples)
	slices.SortStableFunc(pts, func(a, b TransferSample) int { return cmp.Compare(a.Bytes, b.Bytes) })
	n := len(pts)

	// Distinct sizes: size j holds pts[first[j]:first[j+1]].
	var first []int
	for i := range pts {
		if i == 0 || pts[i].Bytes != pts[i-1].Bytes {
			first = append(first, i)
		}
	}
	d := len(first)
	first = append(first, n)

	x := make([]float64, n)
	y := make([]float64, n)
	w := make([]float64, n)
	for j := range d {
		grp := pts[first[j]:first[j+1]]
		durs := make([]float64, len(grp))
		for i, p := range grp {
			durs[i] = p.DurationUS
		}
		slices.Sort(durs)
		// The per-size median, not each sample, sets the weight: weighting a
		// sample by its own value would favour the low ones.
		scale := math.Max(stat.Quantile(0.5, stat.Empirical, durs, nil), minScaleUS)
		for i, p := range grp {
			k := first[j] + i
			x[k], y[k], w[k] = p.Bytes, p.DurationUS, 1/(scale*scale)
		}
	}

	if d == 1 {
		return []Segment{{LoBytes: 0, HiBytes: math.Inf(1), InterceptUS: stat.Mean(y, w)}}
	}

	starts := segmentStarts(x, y, w, first)
	segs := make([]Segment, len(starts))
	for s, a := range starts {
		b := d
		if s+1 < len(starts) {
			b = starts[s+1]
		}
		lo, hi := first[a], first[b]
		alpha, beta := stat.LinearRegression(x[lo:hi], y[lo:hi], w[lo:hi], false)
		segs[s] = Segment{LoBytes: x[lo], HiBytes: math.Inf(1), InterceptUS: alpha, SlopeUSPerByte: beta}
		if s > 0 {
			segs[s-1].HiBytes = x[lo]
		}
	}
	segs[0].LoBytes = 0
	return segs
}

// segmentStarts returns the first distinct-size index of each segment of the
// BIC-optimal partition. x, y, w are the samples sorted by x; distinct size j
// holds samples [first[j], first[j+1]).
//
// One sweep over the start a of the last segment extends it size by size with
// a weighted Welford update (numerically safe even with bytes ~1e8), giving
// RSS(a, b) in O(1) each: O(D²·maxSegments) time, O(D·maxSegments) memory.
func segmentStarts(x, y, w []float64, first []int) []int {
	d := len(first) - 1
	n := first[d]
	kMax := min(maxSegments, d/minSegmentSizes)
	xScale := x[n-1] // x/xScale in [0, 1] keeps the moments well scaled

	// rss[k][b]: best weighted RSS of sizes 0..b cut into k+1 segments;
	// from[k][b]: the start of the last of those segments.
	rss := make([][]float64, kMax)
	from := make([][]int, kMax)
	for k := range kMax {
		rss[k] = make([]float64, d)
		from[k] = make([]int, d)
		for b := range d {
			rss[k][b] = math.Inf(1)
		}
	}
	for a := range d {
		var sw, mx, my, cxx, cxy, cyy float64
		for b := a; b < d; b++ {
			for i := first[b]; i < first[b+1]; i++ {
				xi := x[i] / xScale
				sw += w[i]
				dx, dy := xi-mx, y[i]-my
				mx += w[i] * dx / sw
				my += w[i] * dy / sw
				cxx += w[i] * dx * (xi - mx)
				cxy += w[i] * dx * (y[i] - my)
				cyy += w[i] * dy * (y[i] - my)
			}
			whole := a == 0 && b == d-1 // one segment over everything is always allowed
			if !whole && (b-a+1 < minSegmentSizes || first[b+1]-first[a] < minSegmentPoints) {
				continue
			}
			cost := cyy
			if cxx > 0 {
				cost -= cxy * cxy / cxx
			}
			cost = math.Max(cost, 0)
			if a == 0 {
				rss[0][b] = cost
				continue
			}
			for k := 1; k < kMax; k++ {
				if c := rss[k-1][a-1] + cost; c < rss[k][b] {
					rss[k][b], from[k][b] = c, a
				}
			}
		}
	}

	nf := float64(n)
	floor := nf * relResidualFloor * relResidualFloor
	bestK, bestBIC := 0, math.Inf(1)
	for k := range kMax {
		r := rss[k][d-1]
		if math.IsInf(r, 1) {
			continue
		}
		bic := nf*math.Log(math.Max(r, floor)/nf) + float64(3*(k+1)-1)*math.Log(nf)
		if bic < bestBIC {
			bestK, bestBIC = k, bic
		}
	}
	starts := make([]int, bestK+1)
	b := d - 1
	for k := bestK; k >= 0; k-- {
		a := 0
		if k > 0 {
			a = from[k][b]
		}
		starts[k] = a
		b = a - 1
	}
	return starts
}
