package fit

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// BenchmarkFitHistogram1e6 fits 1e6 mixture samples (pre-binned path).
func BenchmarkFitHistogram1e6(b *testing.B) {
	xs := kernelMixture().draw(rand.New(rand.NewPCG(1, 1)), 1_000_000)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := FitHistogram(xs); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFitHistogramExact4096 is the largest input of the exact O(n²)
// program (4096 distinct values).
func BenchmarkFitHistogramExact4096(b *testing.B) {
	xs := kernelMixture().draw(rand.New(rand.NewPCG(1, 1)), exactMaxCells)
	for b.Loop() {
		if _, err := FitHistogram(xs); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFitSegments2000 fits 400 payload sizes × 5 repetitions of the
// three-regime model.
func BenchmarkFitSegments2000(b *testing.B) {
	samples := synth(rand.New(rand.NewPCG(1, 1)), threeRegimes, testSizes(400), 5, 4096, 0.01)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := FitSegments(samples); err != nil {
			b.Fatal(err)
		}
	}
}

// TestFitHistogramMillion checks the pre-binned path at scale (its speed is
// measured by BenchmarkFitHistogram1e6, not here). Accuracy: KS distance
// to the true mixture within 1.36/sqrt(N) + the Bayesian Blocks binning bound
// of TestFitHistogramMixture + 1/gridCells (a change point can move by one
// grid cell); measured 0.0013 against a bound of 0.0025.
func TestFitHistogramMillion(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	xs := kernelMixture().draw(rand.New(rand.NewPCG(2, 2)), 1_000_000)
	h, err := FitHistogram(xs)
	if err != nil {
		t.Fatal(err)
	}
	n := float64(len(xs))
	bound := 1.36/math.Sqrt(n) + math.Sqrt(ncpPrior(len(xs), bbFalsePositiveRate)*float64(slices.Max(h.Counts))/2)/n + 1.0/gridCells
	ks := ksDistance(h, kernelMixture().cdf)
	if ks > bound {
		t.Errorf("KS distance %.5f > %.5f", ks, bound)
	}
	t.Logf("1e6 samples: %d bins, KS %.5f (bound %.5f)", len(h.Counts), ks, bound)
}
