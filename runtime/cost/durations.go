package cost

import (
	"math/rand/v2"

	"github.com/starsim/starsim/calibrate/fit"
	"github.com/starsim/starsim/runtime/machine"
)

// Durations selects how kernel durations are drawn.
type Durations string

const (
	// Mean runs every kernel for its model's mean (StarPU over SimGrid).
	Mean Durations = "mean"
	// Normal draws from a normal law (mean, stddev), truncated at 0.
	Normal Durations = "normal"
	// Histogram draws from the entry's irregular histogram (mean when the
	// entry has none).
	Histogram Durations = "histogram"
)

// SampleUS is the duration (µs) of one run of a kernel whose model entry
// is k, drawn as d says from rng (the run's one seeded generator: one draw
// for Normal and Histogram, none for Mean). A histogram is inverted as
// calibrate/fit's Histogram.Sample does.
func SampleUS(k *machine.KernelStats, d Durations, rng *rand.Rand) float64 {
	us := k.MeanUS
	switch d {
	case Normal:
		us = k.MeanUS + k.StddevUS*rng.NormFloat64()
		if us < 0 {
			us = 0
		}
	case Histogram:
		if len(k.Counts) > 0 {
			us = fit.Histogram{EdgesUS: k.EdgesUS, Counts: k.Counts}.Sample(rng.Float64())
		}
	}
	return us
}
