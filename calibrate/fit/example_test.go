package fit_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/starsim/starsim/calibrate/fit"
)

// A kernel's recorded durations become a histogram; the simulator draws from
// it with its own seeded generator.
func ExampleFitHistogram() {
	r := rand.New(rand.NewPCG(1, 2))
	samples := make([]float64, 10000)
	for i := range samples {
		samples[i] = 2800 + 80*r.NormFloat64()
		if r.Float64() < 0.01 {
			samples[i] *= 10 // a rare slow run
		}
	}
	h, err := fit.FitHistogram(samples)
	if err != nil {
		panic(err)
	}
	sim := rand.New(rand.NewPCG(42, 0)) // the simulation's one RNG
	d := h.Sample(sim.Float64())
	fmt.Println(h.Validate() == nil, h.Total(), d > 0)
	// Output: true 10000 true
}

// Transfer times measured at two pitches that behave alike become one model
// covering both pitches.
func ExampleFitPitchModels() {
	var samples []fit.TransferSample
	for _, pitch := range []float64{3840, 7680} {
		for kib := 64.0; kib <= 8192; kib *= 2 {
			bytes := kib * 1024
			us := 12 + bytes/6000 // 6 GB/s
			if bytes >= 1<<20 {
				us = 80 + bytes/5000 // slower regime from 1 MiB on
			}
			samples = append(samples, fit.TransferSample{Bytes: bytes, Pitch: pitch, DurationUS: us})
		}
	}
	models, err := fit.FitPitchModels(samples)
	if err != nil {
		panic(err)
	}
	us, ok := fit.EvalUS(models, 2<<20, 5000)
	fmt.Printf("%d model(s), pitches [%v, %v], %d segments, 2 MiB: %.1f µs %v\n",
		len(models), models[0].PitchLo, models[0].PitchHi, len(models[0].Segments), us, ok)
	// Output: 1 model(s), pitches [3840, 7680], 2 segments, 2 MiB: 499.4 µs true
}
