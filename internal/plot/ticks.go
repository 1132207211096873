package plot

import (
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
)

const (
	// maxDataTicks is the largest number of distinct X values for
	// which the X axis gets one tick per value; above it the X axis
	// gets evenly spaced "nice" ticks.
	maxDataTicks = 10
	// targetTicks is the number of intervals niceTicksWithin aims at.
	targetTicks = 6
)

// formatTick formats a tick value as a plain decimal number: integers
// print without a fraction or exponent (76800, not 7.68e+04) and other
// values with as few digits as round-trip (0.25).
func formatTick(v float64) string {
	if v == 0 {
		return "0" // avoid "-0"
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// distinct returns the sorted distinct values of xs.
func distinct(xs []float64) []float64 {
	d := slices.Clone(xs)
	slices.Sort(d)
	return slices.Compact(d)
}

// dataTicks returns one major tick per value of vs.
func dataTicks(vs []float64) []plot.Tick {
	ticks := make([]plot.Tick, len(vs))
	for i, v := range vs {
		ticks[i] = plot.Tick{Value: v, Label: formatTick(v)}
	}
	return ticks
}

// xTicks returns the X ticks of a line chart whose points have the X values
// xs, from xmin to xmax: one at each value when there are at most
// maxDataTicks distinct ones, nice round ones within [xmin, xmax] otherwise.
func xTicks(xs []float64, xmin, xmax float64) []plot.Tick {
	if d := distinct(xs); len(d) <= maxDataTicks {
		return dataTicks(d)
	}
	return niceTicksWithin(xmin, xmax)
}

// step is a tick spacing of mult * 10^exp, with mult 1, 2 or 5.
type step struct {
	mult float64
	exp  int
}

// niceStep returns the step that cuts span into about target intervals.
func niceStep(span float64, target int) step {
	raw := span / float64(target)
	exp := int(math.Floor(math.Log10(raw)))
	// The tolerance keeps rounding error (0.9-0.3 = 0.6000000000000001)
	// from bumping the step to the next size.
	const tol = 1 + 1e-9
	switch f := raw / math.Pow10(exp); {
	case f <= 1*tol:
		return step{1, exp}
	case f <= 2*tol:
		return step{2, exp}
	case f <= 5*tol:
		return step{5, exp}
	default:
		return step{1, exp + 1}
	}
}

// at returns k steps. It is computed as an integer times or divided by
// a power of ten, so that it is the float64 nearest to the decimal
// value (3 steps of 0.1 give 0.3, not 0.30000000000000004).
func (s step) at(k float64) float64 {
	if s.exp >= 0 {
		return k * s.mult * math.Pow10(s.exp)
	}
	return k * s.mult / math.Pow10(-s.exp)
}

// niceRange widens [lo, hi] outwards to multiples of a nice step and
// returns the widened range with a major tick at each multiple.
func niceRange(lo, hi float64) (float64, float64, []plot.Tick) {
	if hi <= lo {
		hi = lo + 1
	}
	// Aim at 5 to 8 intervals and keep the tightest range; on a tie,
	// keep the number of intervals nearest targetTicks.
	var (
		best        step
		first, last float64
	)
	score := func(s step, f, l float64) (float64, float64) {
		return s.at(l) - s.at(f), math.Abs(l - f - targetTicks)
	}
	for target := 5; target <= 8; target++ {
		s := niceStep(hi-lo, target)
		f, l := floor(lo/s.at(1)), ceil(hi/s.at(1))
		if best.mult != 0 {
			span, dist := score(s, f, l)
			bestSpan, bestDist := score(best, first, last)
			if span > bestSpan || (span == bestSpan && dist >= bestDist) {
				continue
			}
		}
		best, first, last = s, f, l
	}
	return best.at(first), best.at(last), stepTicks(first, last, best)
}

// niceTicksWithin returns major ticks at the multiples of a nice step
// that lie within [lo, hi]; the range itself is left as it is.
func niceTicksWithin(lo, hi float64) []plot.Tick {
	if hi <= lo {
		return dataTicks([]float64{lo})
	}
	s := niceStep(hi-lo, targetTicks)
	return stepTicks(ceil(lo/s.at(1)), floor(hi/s.at(1)), s)
}

// floor and ceil round a quotient of a value by a step, treating a
// quotient within 1e-9 of an integer as that integer, so that rounding
// error (0.3/0.1 = 2.9999999999999996) neither loses an end tick nor
// adds one.
func floor(q float64) float64 { return math.Floor(q + 1e-9) }
func ceil(q float64) float64  { return math.Ceil(q - 1e-9) }

// stepTicks returns ticks at k steps for k from first to last, labelled
// with as many decimals as the step has (0.10, 0.15, 0.20).
func stepTicks(first, last float64, s step) []plot.Tick {
	prec := max(0, -s.exp)
	var ticks []plot.Tick
	for k := first; k <= last; k++ {
		v := s.at(k)
		label := strconv.FormatFloat(v, 'f', prec, 64)
		if v == 0 {
			label = "0"
		}
		ticks = append(ticks, plot.Tick{Value: v, Label: label})
	}
	return ticks
}

// pruneLabels blanks the labels of ticks (sorted by value) that would
// overlap the previous labelled tick once the axis range [min, max] is
// drawn over [x0, x1]. A tick with a blank label stays as a minor tick
// mark (and keeps its grid line, see gridPlotter).
func pruneLabels(ticks []plot.Tick, sty text.Style, min, max float64, x0, x1 vg.Length) []plot.Tick {
	if max <= min || x1 <= x0 {
		return ticks
	}
	gap := sty.Rectangle("M").Size().X / 2
	out := slices.Clone(ticks)
	haveLast := false
	var lastRight vg.Length
	for i, t := range out {
		if t.Label == "" {
			continue
		}
		x := x0 + vg.Length((t.Value-min)/(max-min))*(x1-x0)
		half := sty.Rectangle(t.Label).Size().X / 2
		if haveLast && x-half < lastRight+gap {
			out[i].Label = ""
			continue
		}
		haveLast = true
		lastRight = x + half
	}
	return out
}
