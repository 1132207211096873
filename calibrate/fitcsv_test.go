package calibrate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFitFromCSV writes seeded synthetic samples as CSV, fits them over the
// small calibration and checks what comes back. Tolerances: the mean of 5000
// lognormal draws (sigma 0.05) is within 0.5% of its expectation with
// overwhelming probability (standard error ~0.07%); the transfer model is
// exact up to 0.5% multiplicative noise, so breakpoints are found at the
// sampled size where the regime changes and slopes within 2%.
func TestFitFromCSV(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(11, 12))
	var kb strings.Builder
	kb.WriteString("model,arch,footprint,size,duration_us\n")
	const mode = 2800.0
	for i := 0; i < 5000; i++ {
		d := mode * math.Exp(0.05*rng.NormFloat64())
		if i%100 == 0 { // 1% tail at 10x the mode
			d *= 10
		}
		fmt.Fprintf(&kb, "chol_model_gemm,cuda0,24c84a50,11059200,%.3f\n", d)
	}
	kpath := filepath.Join(dir, "k.csv")
	require.NoError(t, os.WriteFile(kpath, []byte(kb.String()), 0o644))

	// Two regimes at pitch 38400 B: below 4 MiB 12 us + 1/6 GB/s, above
	// 60 us + 1/10 GB/s (an abrupt change of slope and intercept).
	var tb strings.Builder
	tb.WriteString("# src,dst,bytes,pitch,duration_us\n")
	truth := func(b float64) float64 {
		if b < 4<<20 {
			return 12 + b/6e3
		}
		return 60 + b/10e3
	}
	for s := 0; s < 24; s++ {
		b := float64(256<<10) * math.Pow(1.25, float64(s))
		for r := 0; r < 4; r++ {
			fmt.Fprintf(&tb, "RAM,CUDA0,%.0f,38400,%.4f\n", b, truth(b)*(1+0.005*rng.NormFloat64()))
		}
	}
	tpath := filepath.Join(dir, "t.csv")
	require.NoError(t, os.WriteFile(tpath, []byte(tb.String()), 0o644))

	base, err := ReadFile("testdata/small.calib.json")
	require.NoError(t, err)
	ks, err := ReadKernelCSV(kpath)
	require.NoError(t, err)
	ts, err := ReadTransferCSV(tpath)
	require.NoError(t, err)
	f, err := Fit(base, ks, ts)
	require.NoError(t, err)

	e := f.Kernels[0].Entries[0]
	assert.Equal(t, "24c84a50", e.Footprint)
	assert.Equal(t, uint64(5000), e.N)
	wantMean := mode * math.Exp(0.05*0.05/2) * (0.99 + 0.01*10)
	assert.InEpsilon(t, wantMean, e.MeanUS, 0.005)
	assert.Equal(t, float64(base.Kernels[0].Entries[0].Flops), float64(e.Flops), "flops kept from the base")
	require.NotNil(t, e.Histogram)
	assert.Greater(t, len(e.Histogram.Counts), 2)
	var tot uint64
	for _, c := range e.Histogram.Counts {
		tot += c
	}
	assert.Equal(t, uint64(5000), tot)

	tr := f.Transfers[0]
	require.Len(t, tr.PitchModels, 1)
	segs := tr.PitchModels[0].Segments
	require.Len(t, segs, 2)
	require.NotNil(t, segs[0].HiBytes)
	// The first sampled size at or above 4 MiB.
	firstAbove := 0.0
	for s := 0; s < 24; s++ {
		if b := float64(256<<10) * math.Pow(1.25, float64(s)); b >= 4<<20 {
			firstAbove = math.Round(b)
			break
		}
	}
	assert.Equal(t, firstAbove, *segs[0].HiBytes)
	assert.InEpsilon(t, 1/6e9, segs[0].SlopeSPerByte, 0.02)
	assert.InEpsilon(t, 1/10e9, segs[1].SlopeSPerByte, 0.02)
	// The fitted file is a valid calibration (it re-reads).
	var b strings.Builder
	require.NoError(t, f.Write(&b))
	_, err = Parse([]byte(b.String()), "fitted")
	require.NoError(t, err)
}

func TestBadCSV(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name, kind, body, want string
	}{
		{"columns", "k", "model,arch,footprint,size,duration_us\nchol,cuda0,24c84a50,1\n", "k.csv:2: want 5 columns"},
		{"negative", "k", "chol,cuda0,24c84a50,10,-3\n", "k.csv:1: duration_us must be >= 0"},
		{"arch", "k", "\nchol,gpu0,24c84a50,10,3\n", "k.csv:2: unknown arch \"gpu0\""},
		{"footprint", "k", "chol,cuda0,zz,10,3\n", "k.csv:1: footprint must be 8 hex digits"},
		{"size", "k", "chol,cuda0,24c84a50,ten,3\n", "size must be a number of bytes"},
		{"nan", "t", "RAM,CUDA0,10,3840,NaN\n", "t.csv:1: duration_us must be a finite number"},
		{"same node", "t", "# c\nRAM,RAM,10,3840,1\n", "t.csv:2: src and dst must be two different"},
		{"pitch", "t", "RAM,CUDA0,10,-1,1\n", "pitch must be >= 0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(dir, c.kind+".csv")
			require.NoError(t, os.WriteFile(p, []byte(c.body), 0o644))
			var err error
			if c.kind == "k" {
				_, err = ReadKernelCSV(p)
			} else {
				_, err = ReadTransferCSV(p)
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

// FuzzReadCSV: the sample readers never panic, reject with FILE:LINE, and
// what they accept fits (or fails with an error, never a panic).
func FuzzReadCSV(f *testing.F) {
	f.Add([]byte("model,arch,footprint,size,duration_us\nchol,cuda0,24c84a50,10,3.5\n"), true)
	f.Add([]byte("src,dst,bytes,pitch,duration_us\nRAM,CUDA0,1048576,3840,95.5\nRAM,CUDA0,2097152,3840,180\n"), false)
	f.Add([]byte("# c\n\"a,b\",cuda0,24c84a50,1,1\n"), true)
	dir := f.TempDir()
	base := Default()
	f.Fuzz(func(t *testing.T, data []byte, kernels bool) {
		p := filepath.Join(dir, "s.csv")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Skip()
		}
		if kernels {
			ks, err := ReadKernelCSV(p)
			if err != nil {
				if !strings.HasPrefix(err.Error(), p+":") {
					t.Fatalf("error without file:line: %v", err)
				}
				return
			}
			if len(ks) > 2000 {
				return
			}
			_, _ = Fit(base, ks, nil)
			return
		}
		ts, err := ReadTransferCSV(p)
		if err != nil {
			if !strings.HasPrefix(err.Error(), p+":") {
				t.Fatalf("error without file:line: %v", err)
			}
			return
		}
		if len(ts) > 2000 {
			return
		}
		_, _ = Fit(base, nil, ts)
	})
}

// TestFitErrorsNameTheCSVLine: empty files are errors, and what the fit
// refuses names the sample's FILE:LINE.
func TestFitErrorsNameTheCSVLine(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
		return p
	}
	empty := write("empty.csv", "")
	_, err := ReadKernelCSV(empty)
	assert.EqualError(t, err, empty+": no kernel samples: want rows model,arch,footprint,size,duration_us")
	headerOnly := write("h.csv", "src,dst,bytes,pitch,duration_us\n# nothing\n")
	_, err = ReadTransferCSV(headerOnly)
	assert.EqualError(t, err, headerOnly+": no transfer samples: want rows src,dst,bytes,pitch,duration_us")
	huge := write("huge.csv", "chol,cuda0,24c84a50,10,1e300\n")
	_, err = ReadKernelCSV(huge)
	assert.EqualError(t, err, huge+":1: duration_us must be at most 1e+12, got 1e+300")

	base, err := ReadFile("testdata/small.calib.json")
	require.NoError(t, err)
	unknown := write("t.csv", "RAM,CUDA0,1048576,3840,95\nRAM,CUDA7,1048576,3840,95\n")
	ts, err := ReadTransferCSV(unknown)
	require.NoError(t, err)
	_, err = Fit(base, nil, ts)
	assert.EqualError(t, err, unknown+`:2: "CUDA7" is not a memory node of small (RAM, CUDA0)`)
	sizes := write("k.csv", "chol,cuda0,24c84a50,10,1\nchol,cuda0,24c84a50,11,1\n")
	ks, err := ReadKernelCSV(sizes)
	require.NoError(t, err)
	_, err = Fit(base, ks, nil)
	assert.EqualError(t, err, sizes+":2: kernel chol cuda0 24c84a50: samples disagree on size (10 bytes on line 1, 11 here)")
}
