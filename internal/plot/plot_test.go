package plot

import (
	"bytes"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sizes are matrix sizes like the ones starsim's sweeps use.
var sizes = []float64{9600, 19200, 28800, 38400, 48000, 57600, 67200, 76800}

func threeSeries() Figure {
	mk := func(scale, pow float64) []float64 {
		ys := make([]float64, len(sizes))
		for i, n := range sizes {
			ys[i] = scale * math.Pow(n/9600, pow)
		}
		return ys
	}
	return Figure{
		Title:  "GEMM time vs matrix size",
		XLabel: "matrix size N",
		YLabel: "time (s)",
		Series: []Series{
			{Name: "emulator <fp32>", X: sizes, Y: mk(0.5, 3)},
			{Name: "model A & B", X: sizes, Y: mk(0.8, 2.6)},
			{Name: "measured", X: sizes, Y: mk(1.1, 2.2)},
		},
	}
}

// saveAndRead saves f to path and returns the file's bytes.
func saveAndRead(t *testing.T, f Figure, path string) []byte {
	t.Helper()
	if err := Save(f, path); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestSavePNG(t *testing.T) {
	data := saveAndRead(t, threeSeries(), filepath.Join(t.TempDir(), "fig.png"))
	if len(data) == 0 {
		t.Fatal("empty PNG file")
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("decoding PNG: %v", err)
	}
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	// 8in x 5in: the pixel ratio is 8:5 whatever the dpi, and the dpi
	// read back from the width is gonum's (96).
	if 5*w != 8*h {
		t.Errorf("PNG is %dx%d pixels, want an 8:5 ratio", w, h)
	}
	if dpi := float64(w) / DefaultWidthIn; dpi != 96 {
		t.Errorf("PNG is %dx%d pixels: %v dpi, want 96 (gonum's vgimg.DefaultDPI)", w, h, dpi)
	}
}

func TestSaveSizeFields(t *testing.T) {
	f := threeSeries()
	f.WidthIn, f.HeightIn = 4, 4
	data := saveAndRead(t, f, filepath.Join(t.TempDir(), "square.PNG")) // extension case is ignored
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != 384 || b.Dy() != 384 {
		t.Errorf("4in x 4in PNG is %dx%d pixels, want 384x384", b.Dx(), b.Dy())
	}
}

func TestSaveSVG(t *testing.T) {
	f := threeSeries()
	s := string(saveAndRead(t, f, filepath.Join(t.TempDir(), "fig.svg")))
	if !strings.HasPrefix(s, "<?xml") && !strings.HasPrefix(s, "<svg") {
		t.Errorf("SVG starts with %q", s[:min(len(s), 20)])
	}
	if !strings.Contains(s, `width="576pt" height="360pt"`) {
		t.Errorf("SVG is not 8in x 5in (576pt x 360pt): %q", s[:min(len(s), 200)])
	}
	// Text is XML-escaped in the SVG.
	for _, name := range []string{"emulator &lt;fp32&gt;", "model A &amp; B", "measured", f.Title} {
		if !strings.Contains(s, name) {
			t.Errorf("SVG lacks %q", name)
		}
	}
	// X ticks at the data's X values, printed as plain integers.
	for _, label := range []string{">9600<", ">19200<", ">76800<"} {
		if !strings.Contains(s, label) {
			t.Errorf("SVG lacks X tick label %q", label)
		}
	}
	if strings.Contains(s, "e+0") {
		t.Error("SVG has a label in exponent notation")
	}
}

// TestDeterministic saves the same figure twice in each format and
// wants byte-identical files.
func TestDeterministic(t *testing.T) {
	dir := t.TempDir()
	for _, ext := range []string{".svg", ".png"} {
		var files [2][]byte
		for i := range files {
			files[i] = saveAndRead(t, threeSeries(), filepath.Join(dir, string(rune('a'+i))+ext))
		}
		if !bytes.Equal(files[0], files[1]) {
			t.Errorf("two saves of the same figure as %s differ", ext)
		}
	}
}

func TestSaveErrors(t *testing.T) {
	dir := t.TempDir()
	ok := threeSeries()
	tests := []struct {
		name string
		fig  Figure
		file string
		want string
	}{
		{"jpg", ok, "fig.jpg", "unsupported extension"},
		{"no extension", ok, "fig", "unsupported extension"},
		{"empty figure", Figure{Title: "empty"}, "fig.png", "no series"},
		{"empty series", Figure{Series: []Series{{Name: "e"}}}, "fig.svg", "has no points"},
		{"mismatched", Figure{Series: []Series{{Name: "m", X: []float64{1, 2, 3}, Y: []float64{1, 2}}}}, "fig.png",
			"X has 3 values but Y has 2"},
		{"NaN Y", Figure{Series: []Series{{Name: "n", X: []float64{1, 2}, Y: []float64{1, math.NaN()}}}}, "fig.svg",
			"Y[1] is NaN"},
		{"Inf X", Figure{Series: []Series{{Name: "i", X: []float64{math.Inf(1)}, Y: []float64{1}}}}, "fig.png",
			"X[0] is +Inf"},
		{"NaN width", Figure{WidthIn: math.NaN(), Series: ok.Series}, "fig.png", "WidthIn is NaN"},
		{"huge height", Figure{HeightIn: 1e6, Series: ok.Series}, "fig.png", "HeightIn"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, tt.file)
			err := Save(tt.fig, path)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Save: err = %v, want one containing %q", err, tt.want)
			}
			if _, statErr := os.Stat(path); !os.IsNotExist(statErr) {
				t.Errorf("Save failed but wrote %s", path)
			}
		})
	}
}

// TestSaveEdgeCases draws figures with unusual but valid data.
func TestSaveEdgeCases(t *testing.T) {
	dir := t.TempDir()
	if d := os.Getenv("PLOT_EXAMPLE_DIR"); d != "" {
		dir = d // keep the files for a human to look at
	}
	many := Figure{Title: "many series, many X values"}
	for i := range 14 {
		var s Series
		for x := range 30 {
			s.X = append(s.X, float64(x)*0.1)
			s.Y = append(s.Y, float64(i)+math.Sin(float64(x)/5))
		}
		many.Series = append(many.Series, s) // no names: "series N"
	}
	figs := map[string]Figure{
		"single": {Series: []Series{{Name: "one", X: []float64{9600}, Y: []float64{3}}}},
		"zeros":  {Series: []Series{{Name: "z", X: []float64{0, 1}, Y: []float64{0, 0}}}},
		"neg":    {Series: []Series{{Name: "neg", X: []float64{-2, -1, 0}, Y: []float64{-5, 2.5, -0.001}}}},
		"close":  {Series: []Series{{Name: "c", X: []float64{1024, 2048, 4096, 8192, 16384, 32768, 65536}, Y: []float64{1, 2, 3, 4, 5, 6, 7}}}},
		"many":   many,
	}
	for name, f := range figs {
		for _, ext := range []string{".png", ".svg"} {
			if err := Save(f, filepath.Join(dir, name+ext)); err != nil {
				t.Errorf("%s%s: %v", name, ext, err)
			}
		}
	}
	if err := Save(figs["many"], filepath.Join(dir, "many.svg")); err == nil {
		s, _ := os.ReadFile(filepath.Join(dir, "many.svg"))
		if !strings.Contains(string(s), "series 14") {
			t.Error("unnamed series 14 has no legend entry")
		}
	}
}

// TestExample writes example figures for a human to look at when
// PLOT_EXAMPLE_DIR is set (e.g. PLOT_EXAMPLE_DIR=/tmp).
func TestExample(t *testing.T) {
	dir := os.Getenv("PLOT_EXAMPLE_DIR")
	if dir == "" {
		t.Skip("PLOT_EXAMPLE_DIR not set")
	}
	f := threeSeries()
	for i := range 9 {
		ys := make([]float64, len(sizes))
		for j, n := range sizes {
			ys[j] = float64(i+3) * 0.1 * math.Pow(n/9600, 2+float64(i)/10)
		}
		f.Series = append(f.Series, Series{Name: "variant " + string(rune('A'+i)), X: sizes, Y: ys})
	}
	for _, name := range []string{"plot-example.png", "plot-example.svg"} {
		if err := Save(f, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
}

func TestNiceRange(t *testing.T) {
	tests := []struct {
		lo, hi         float64
		wantLo, wantHi float64
		wantLabels     string
	}{
		{0, 372, 0, 400, "0 100 200 300 400"},
		{-1, 14, -2, 14, "-2 0 2 4 6 8 10 12 14"},
		{0, 3, 0, 3, "0 0.5 1.0 1.5 2.0 2.5 3.0"},
		{0, 0, 0, 1, "0 0.2 0.4 0.6 0.8 1.0"},
		{0, 0.3, 0, 0.3, "0 0.05 0.10 0.15 0.20 0.25 0.30"},
		{0, 0.1 + 0.2, 0, 0.3, "0 0.05 0.10 0.15 0.20 0.25 0.30"}, // 0.30000000000000004
		{0, 123456, 0, 140000, "0 20000 40000 60000 80000 100000 120000 140000"},
	}
	for _, tt := range tests {
		lo, hi, ticks := niceRange(tt.lo, tt.hi)
		var labels []string
		for _, tk := range ticks {
			labels = append(labels, tk.Label)
		}
		if lo != tt.wantLo || hi != tt.wantHi || strings.Join(labels, " ") != tt.wantLabels {
			t.Errorf("niceRange(%v, %v) = %v, %v, %q; want %v, %v, %q",
				tt.lo, tt.hi, lo, hi, strings.Join(labels, " "), tt.wantLo, tt.wantHi, tt.wantLabels)
		}
	}
}

func TestNiceTicksWithin(t *testing.T) {
	var labels []string
	for _, tk := range niceTicksWithin(0.3, 2.9) {
		labels = append(labels, tk.Label)
	}
	if got, want := strings.Join(labels, " "), "0.5 1.0 1.5 2.0 2.5"; got != want {
		t.Errorf("niceTicksWithin(0.3, 2.9) labels = %q, want %q", got, want)
	}
	labels = nil
	for _, tk := range niceTicksWithin(0.3, 0.9) {
		labels = append(labels, tk.Label)
	}
	if got, want := strings.Join(labels, " "), "0.3 0.4 0.5 0.6 0.7 0.8 0.9"; got != want {
		t.Errorf("niceTicksWithin(0.3, 0.9) labels = %q, want %q", got, want)
	}
}

func TestFormatTick(t *testing.T) {
	for v, want := range map[float64]string{9600: "9600", 76800: "76800", 1e7: "10000000", 0.25: "0.25", -0: "0", -3: "-3"} {
		if got := formatTick(v); got != want {
			t.Errorf("formatTick(%v) = %q, want %q", v, got, want)
		}
	}
}
