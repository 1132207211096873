package fit

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const mib = 1 << 20

// threeRegimes is a copy-time model with abrupt breakpoints at 1 MiB and
// 8 MiB: latency-bound small copies at 6 GB/s, then a jump of +85 µs to
// 5 GB/s, then a jump of +1460 µs to 3 GB/s (a pitch-induced slow path).
var threeRegimes = []Segment{
	{LoBytes: 0, HiBytes: 1 * mib, InterceptUS: 10, SlopeUSPerByte: 1.0 / 6000},
	{LoBytes: 1 * mib, HiBytes: 8 * mib, InterceptUS: 60, SlopeUSPerByte: 1.0 / 5000},
	{LoBytes: 8 * mib, HiBytes: math.Inf(1), InterceptUS: 400, SlopeUSPerByte: 1.0 / 3000},
}

var oneRegime = []Segment{{LoBytes: 0, HiBytes: math.Inf(1), InterceptUS: 15, SlopeUSPerByte: 1.0 / 5500}}

// sizeSpacing is the ratio between consecutive test payloads: 3 per octave.
var sizeSpacing = math.Cbrt(2)

// testSizes are 31 payloads 64 KiB·2^(i/3), i = 0..30 (64 KiB to 64 MiB);
// 1 MiB (i = 12) and 8 MiB (i = 21) are among them.
func testSizes(n int) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = math.Round(65536 * math.Pow(2, float64(i)*30/float64(3*(n-1))))
	}
	return xs
}

// synth draws reps copies per size with multiplicative noise of relative
// standard deviation noise (0 for exact data).
func synth(r *rand.Rand, model []Segment, sizes []float64, reps int, pitch, noise float64) []TransferSample {
	var out []TransferSample
	for _, x := range sizes {
		y, _ := EvalSegmentsUS(model, x)
		for range reps {
			d := y
			if noise > 0 {
				d *= 1 + noise*r.NormFloat64()
			}
			out = append(out, TransferSample{Bytes: x, Pitch: pitch, DurationUS: d})
		}
	}
	return out
}

func checkCoverage(t *testing.T, segs []Segment) {
	t.Helper()
	require.NotEmpty(t, segs)
	assert.Equal(t, 0.0, segs[0].LoBytes)
	assert.True(t, math.IsInf(segs[len(segs)-1].HiBytes, 1))
	for i := 1; i < len(segs); i++ {
		assert.Equal(t, segs[i-1].HiBytes, segs[i].LoBytes, "contiguous")
		assert.Less(t, segs[i].LoBytes, segs[i].HiBytes)
	}
}

// olsStdErr returns the standard errors of the weighted least-squares
// intercept and slope for samples at sizes xs (reps each) of a segment whose
// true times are ys, with relative noise sd: Var = (XᵀWX)⁻¹, W = 1/σ_i².
func olsStdErr(xs, ys []float64, reps int, sd float64) (intercept, slope float64) {
	var s0, s1, s2 float64
	for i, x := range xs {
		w := float64(reps) / (sd * ys[i] * sd * ys[i])
		s0 += w
		s1 += w * x
		s2 += w * x * x
	}
	det := s0*s2 - s1*s1
	return math.Sqrt(s2 / det), math.Sqrt(s0 / det)
}

// TestFitSegmentsThreeRegimes: 31 sizes × 5 repetitions, 1% multiplicative
// noise, seeds 1..20.
//
// Breakpoints must be within one sample spacing (a factor 2^(1/3)) of 1 MiB
// and 8 MiB; with jumps of 30-50% against 1% noise they are found exactly
// on every seed.
// Slopes and intercepts are checked two ways: against their own standard
// error, computed from the design (|error| <= 4 SE: 20 seeds × 3 segments ×
// 2 parameters would see a 4 SE miss with probability ~0.4%), and by fixed
// relative bounds: slopes within 3% (SE 0.2-0.4%; measured worst 0.7%),
// intercepts within 10% (the intercept is an extrapolation to 0 bytes: for
// the last segment from 8 MiB, where each sample has ±32 µs of noise, its SE
// is 15.6 µs = 3.9% of 400 µs; measured worst 7.5%; worst parameter of all:
// 2.4 SE).
// Predictions at every measured size within 1% (measured worst 0.7%): what
// the simulator uses is accurate even where the intercept is loose.
func TestFitSegmentsThreeRegimes(t *testing.T) {
	const reps, noise = 5, 0.01
	sizes := testSizes(31)
	var worstSlope, worstIcpt, worstPred, worstSE float64
	for seed := uint64(1); seed <= 20; seed++ {
		samples := synth(rand.New(rand.NewPCG(seed, 1)), threeRegimes, sizes, reps, 4096, noise)
		segs, err := FitSegments(samples)
		require.NoError(t, err)
		checkCoverage(t, segs)
		require.Len(t, segs, 3, "seed %d: %+v", seed, segs)
		for i, want := range threeRegimes {
			got := segs[i]
			if i > 0 {
				ratio := got.LoBytes / want.LoBytes
				assert.True(t, ratio >= 1/sizeSpacing-1e-9 && ratio <= sizeSpacing+1e-9,
					"seed %d: break %d at %.0f bytes, want %.0f", seed, i, got.LoBytes, want.LoBytes)
			}
			var xs, ys []float64
			for _, x := range sizes {
				if x >= want.LoBytes && x < want.HiBytes {
					y, _ := EvalSegmentsUS(threeRegimes, x)
					xs, ys = append(xs, x), append(ys, y)
				}
			}
			seI, seS := olsStdErr(xs, ys, reps, noise)
			errS := math.Abs(got.SlopeUSPerByte - want.SlopeUSPerByte)
			errI := math.Abs(got.InterceptUS - want.InterceptUS)
			assert.Less(t, errS, 4*seS, "seed %d segment %d slope", seed, i)
			assert.Less(t, errI, 4*seI, "seed %d segment %d intercept", seed, i)
			assert.Less(t, errS/want.SlopeUSPerByte, 0.03, "seed %d segment %d slope", seed, i)
			assert.Less(t, errI/want.InterceptUS, 0.10, "seed %d segment %d intercept", seed, i)
			worstSlope = math.Max(worstSlope, errS/want.SlopeUSPerByte)
			worstIcpt = math.Max(worstIcpt, errI/want.InterceptUS)
			worstSE = math.Max(worstSE, math.Max(errS/seS, errI/seI))
			if seed == 1 {
				t.Logf("segment %d: SE intercept %.2f µs (%.1f%%), SE slope %.2f%%", i, seI, 100*seI/want.InterceptUS, 100*seS/want.SlopeUSPerByte)
			}
		}
		for _, x := range sizes {
			got, _ := EvalSegmentsUS(segs, x)
			want, _ := EvalSegmentsUS(threeRegimes, x)
			worstPred = math.Max(worstPred, math.Abs(got-want)/want)
			assert.InDelta(t, want, got, 0.01*want, "seed %d at %.0f bytes", seed, x)
		}
	}
	t.Logf("worst over 20 seeds: slope %.2f%%, intercept %.2f%%, %.1f standard errors, prediction %.2f%%",
		100*worstSlope, 100*worstIcpt, worstSE, 100*worstPred)
}

// TestFitSegmentsExact: noise-free data give the breakpoints exactly and the
// parameters to rounding; the residual floor keeps BIC from adding segments
// that only fit rounding errors.
func TestFitSegmentsExact(t *testing.T) {
	segs, err := FitSegments(synth(nil, threeRegimes, testSizes(31), 1, 4096, 0))
	require.NoError(t, err)
	checkCoverage(t, segs)
	require.Len(t, segs, 3)
	for i, want := range threeRegimes {
		assert.Equal(t, want.LoBytes, segs[i].LoBytes)
		assert.InDelta(t, want.InterceptUS, segs[i].InterceptUS, 1e-6)
		assert.InDelta(t, want.SlopeUSPerByte, segs[i].SlopeUSPerByte, 1e-12)
	}
}

// TestFitSegmentsNoBreak: a single regime with 1% noise stays one segment on
// every seed 1..20 (a spurious break must buy more than 3·ln(155) ≈ 15 of
// BIC).
func TestFitSegmentsNoBreak(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		segs, err := FitSegments(synth(rand.New(rand.NewPCG(seed, 2)), oneRegime, testSizes(31), 5, 4096, 0.01))
		require.NoError(t, err)
		checkCoverage(t, segs)
		require.Len(t, segs, 1, "seed %d: %+v", seed, segs)
		assert.InDelta(t, oneRegime[0].SlopeUSPerByte, segs[0].SlopeUSPerByte, 0.01*oneRegime[0].SlopeUSPerByte)
	}
}

func TestFitSegmentsSmallInputs(t *testing.T) {
	tests := []struct {
		name    string
		in      []TransferSample
		want    []Segment
		atBytes float64
		wantUS  float64
	}{
		{
			name:    "one size is a constant",
			in:      []TransferSample{{Bytes: 1e6, DurationUS: 200}, {Bytes: 1e6, DurationUS: 202}},
			want:    []Segment{{LoBytes: 0, HiBytes: math.Inf(1), InterceptUS: 201}},
			atBytes: 5e6, wantUS: 201,
		},
		{
			// Two points: the exact line 10 + 0.001·bytes, extended to 0.
			name:    "two sizes one sample each",
			in:      []TransferSample{{Bytes: 1000, DurationUS: 11}, {Bytes: 3000, DurationUS: 13}},
			want:    []Segment{{LoBytes: 0, HiBytes: math.Inf(1), InterceptUS: 10, SlopeUSPerByte: 0.001}},
			atBytes: 0, wantUS: 10,
		},
		{
			// Too few points to split: 4 sizes cannot make two segments of
			// 2 sizes and 3 points each.
			name: "four sizes one segment",
			in: []TransferSample{{Bytes: 1, DurationUS: 1}, {Bytes: 2, DurationUS: 2},
				{Bytes: 3, DurationUS: 30}, {Bytes: 4, DurationUS: 40}},
			atBytes: 4,
		},
		{
			name:    "zero bytes and zero durations",
			in:      []TransferSample{{Bytes: 0, DurationUS: 0}, {Bytes: 0, DurationUS: 0}},
			want:    []Segment{{LoBytes: 0, HiBytes: math.Inf(1), InterceptUS: 0}},
			atBytes: 0, wantUS: 0,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			segs, err := FitSegments(tc.in)
			require.NoError(t, err)
			checkCoverage(t, segs)
			if tc.want == nil {
				assert.Len(t, segs, 1)
				return
			}
			require.Len(t, segs, len(tc.want))
			for i := range segs {
				assert.InDelta(t, tc.want[i].InterceptUS, segs[i].InterceptUS, 1e-9)
				assert.InDelta(t, tc.want[i].SlopeUSPerByte, segs[i].SlopeUSPerByte, 1e-12)
			}
			got, ok := EvalSegmentsUS(segs, tc.atBytes)
			assert.True(t, ok)
			assert.InDelta(t, tc.wantUS, got, 1e-9)
		})
	}
}

func TestFitErrors(t *testing.T) {
	ok := TransferSample{Bytes: 1000, Pitch: 4096, DurationUS: 10}
	with := func(f func(*TransferSample)) []TransferSample {
		s := ok
		f(&s)
		return []TransferSample{ok, s}
	}
	tests := []struct {
		name     string
		in       []TransferSample
		want     error
		pitchErr bool // also an error for FitPitchModels
	}{
		{"nil", nil, ErrNoSamples, true},
		{"NaN bytes", with(func(s *TransferSample) { s.Bytes = math.NaN() }), ErrBadSample, true},
		{"negative bytes", with(func(s *TransferSample) { s.Bytes = -1 }), ErrBadSample, true},
		{"Inf bytes", with(func(s *TransferSample) { s.Bytes = math.Inf(1) }), ErrBadSample, true},
		{"NaN duration", with(func(s *TransferSample) { s.DurationUS = math.NaN() }), ErrBadSample, true},
		{"negative duration", with(func(s *TransferSample) { s.DurationUS = -3 }), ErrBadSample, true},
		{"negative pitch", with(func(s *TransferSample) { s.Pitch = -1 }), ErrBadSample, true},
		{"NaN pitch", with(func(s *TransferSample) { s.Pitch = math.NaN() }), ErrBadSample, true},
		{"mixed pitches", with(func(s *TransferSample) { s.Pitch = 8192 }), ErrBadSample, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := FitSegments(tc.in)
			assert.True(t, errors.Is(err, tc.want), "FitSegments: got %v", err)
			_, err = FitPitchModels(tc.in)
			if tc.pitchErr {
				assert.True(t, errors.Is(err, tc.want), "FitPitchModels: got %v", err)
			} else {
				assert.NoError(t, err)
			}
		})
	}
}

// scaled returns model with every slope multiplied by f.
func scaled(model []Segment, f float64) []Segment {
	out := append([]Segment(nil), model...)
	for i := range out {
		out[i].SlopeUSPerByte *= f
	}
	return out
}

// TestFitPitchModelsMergeSplit: pitches 4096 and 8192 follow the same model
// (independent noise), 16384 has 40% steeper slopes: two ranges. The merged
// range is refit on the pooled 310 samples.
func TestFitPitchModelsMergeSplit(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	sizes := testSizes(31)
	var samples []TransferSample
	samples = append(samples, synth(r, threeRegimes, sizes, 5, 16384, 0.01)...) // input order does not matter
	samples = append(samples, synth(r, threeRegimes, sizes, 5, 4096, 0.01)...)
	samples = append(samples, synth(r, threeRegimes, sizes, 5, 8192, 0.01)...)
	for i := range samples {
		if samples[i].Pitch == 16384 {
			y, _ := EvalSegmentsUS(scaled(threeRegimes, 1.4), samples[i].Bytes)
			samples[i].DurationUS = y * (1 + 0.01*r.NormFloat64())
		}
	}
	models, err := FitPitchModels(samples)
	require.NoError(t, err)
	require.Len(t, models, 2)
	assert.Equal(t, [2]float64{4096, 8192}, [2]float64{models[0].PitchLo, models[0].PitchHi})
	assert.Equal(t, [2]float64{16384, 16384}, [2]float64{models[1].PitchLo, models[1].PitchHi})
	for _, m := range models {
		checkCoverage(t, m.Segments)
		assert.Len(t, m.Segments, 3)
	}
	want, _ := EvalSegmentsUS(threeRegimes, 4*mib)
	wantSteep, _ := EvalSegmentsUS(scaled(threeRegimes, 1.4), 4*mib)
	for _, c := range []struct {
		pitch, want float64
	}{
		{4096, want}, {6000, want}, {8192, want}, // inside the merged range
		{1024, want},         // below every range: nearest is [4096, 8192]
		{11000, want},        // 2808 from 8192, 5384 from 16384
		{14000, wantSteep},   // nearer 16384
		{1 << 20, wantSteep}, // above every range
	} {
		got, ok := EvalUS(models, 4*mib, c.pitch)
		require.True(t, ok)
		assert.InDelta(t, c.want, got, 0.01*c.want, "pitch %v", c.pitch)
	}
}

// TestFitPitchModelsNoChaining: noise-free single-regime models whose slopes
// grow by 2% per pitch. Each neighbour agrees within MergeRelTol (3%) but the
// third pitch is 4% away from the first, so the ranges are {1,2}, {3,4}, {5}:
// a range never spans models that disagree.
func TestFitPitchModelsNoChaining(t *testing.T) {
	var samples []TransferSample
	for p := range 5 {
		samples = append(samples, synth(nil, scaled(oneRegime, 1+0.02*float64(p)), testSizes(31), 1, float64(p+1), 0)...)
	}
	models, err := FitPitchModels(samples)
	require.NoError(t, err)
	var ranges [][2]float64
	for _, m := range models {
		ranges = append(ranges, [2]float64{m.PitchLo, m.PitchHi})
	}
	assert.Equal(t, [][2]float64{{1, 2}, {3, 4}, {5, 5}}, ranges)
}

// TestFitPitchModelsDisjointSizes: pitches measured on payload ranges that do
// not overlap have nothing to compare and stay separate.
func TestFitPitchModelsDisjointSizes(t *testing.T) {
	sizes := testSizes(31)
	samples := synth(nil, oneRegime, sizes[:10], 1, 4096, 0)
	samples = append(samples, synth(nil, oneRegime, sizes[20:], 1, 8192, 0)...)
	models, err := FitPitchModels(samples)
	require.NoError(t, err)
	assert.Len(t, models, 2)
}

func TestEvalUS(t *testing.T) {
	flat := func(us float64) []Segment { return []Segment{{LoBytes: 0, HiBytes: math.Inf(1), InterceptUS: us}} }
	models := []PitchModel{
		{PitchLo: 100, PitchHi: 200, Segments: flat(1)},
		{PitchLo: 300, PitchHi: 300, Segments: threeRegimes},
		{PitchLo: 500, PitchHi: 600, Segments: []Segment{{LoBytes: 0, HiBytes: math.Inf(1), InterceptUS: -50, SlopeUSPerByte: 1}}},
	}
	tests := []struct {
		name         string
		models       []PitchModel
		bytes, pitch float64
		want         float64
		ok           bool
	}{
		{"no models", nil, 1, 100, 0, false},
		{"NaN bytes", models, math.NaN(), 100, 0, false},
		{"negative bytes", models, -1, 100, 0, false},
		{"NaN pitch", models, 1, math.NaN(), 0, false},
		{"Inf pitch", models, 1, math.Inf(1), 0, false},
		{"range low end", models, 1, 100, 1, true},
		{"inside range", models, 1, 150, 1, true},
		{"exact pitch", models, 1 * mib, 300, 60 + mib/5000.0, true},
		{"segment below break", models, mib - 1, 300, 10 + (mib-1)/6000.0, true},
		{"below all", models, 1, 1, 1, true},
		{"tie goes to lower range", models, 1, 250, 1, true},
		{"nearest above", models, 8 * mib, 260, 400 + 8*mib/3000.0, true},
		{"clamped at zero", models, 10, 550, 0, true},
		{"above all", models, 60, 1e9, 10, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := EvalUS(tc.models, tc.bytes, tc.pitch)
			assert.Equal(t, tc.ok, ok)
			assert.InDelta(t, tc.want, got, 1e-9)
		})
	}
}
