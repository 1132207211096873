package plot

import (
	"fmt"
	"math"
	"strings"

	"github.com/starsim/starsim/internal/timeline"
)

// Inputs, when not nil, is called by Save, SaveGrid, SavePanel and
// SaveModelFigure, before drawing, with the file and a digest of what the
// figure shows: its texts and its numbers rounded to 4 significant digits
// (panels: per worker the time in each state, per series its time-average
// and peak). The digest does not depend on how a figure is rasterized, nor
// on floating-point noise of another CPU architecture, so it tells whether
// a committed figure's inputs are still those its command produces (see
// `make figures`).
var Inputs func(path, digest string)

func report(path string, describe func(b *strings.Builder)) {
	if Inputs == nil {
		return
	}
	var b strings.Builder
	describe(&b)
	Inputs(path, b.String())
}

// r4 rounds to 4 significant digits, as text.
func r4(v float64) string {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Sprint(v)
	}
	return fmt.Sprintf("%.4g", v)
}

func digestSeries(b *strings.Builder, ss []Series) {
	for _, s := range ss {
		fmt.Fprintf(b, "series %q:", s.Name)
		for i := range s.X {
			fmt.Fprintf(b, " (%s, %s)", r4(s.X[i]), r4(s.Y[i]))
		}
		b.WriteByte('\n')
	}
}

func digestFigure(b *strings.Builder, f Figure) {
	fmt.Fprintf(b, "figure %q x %q y %q\n", f.Title, f.XLabel, f.YLabel)
	digestSeries(b, f.Series)
}

func digestGrid(b *strings.Builder, g Grid) {
	fmt.Fprintf(b, "grid %q x %q y %q cols %d\n", g.Title, g.XLabel, g.YLabel, g.Cols)
	for _, p := range g.Panels {
		fmt.Fprintf(b, "panel %q\n", p.Title)
		digestSeries(b, p.Series)
	}
}

func digestPanel(b *strings.Builder, p Panel) {
	fmt.Fprintf(b, "panel %q\n", p.Title)
	for _, bl := range p.Blocks {
		if bl.TL == nil {
			continue
		}
		fmt.Fprintf(b, "block %q x %q end %s\n", bl.Title, bl.XLabel, r4(bl.TL.EndS()))
		for g, why := range sortedAbsent(bl.Absent) {
			fmt.Fprintf(b, "absent %s: %s\n", g, why)
		}
		tl := bl.TL
		for i, r := range tl.Rows() {
			fmt.Fprintf(b, "row %q %s:", r.Name, r.Kind)
			for id, s := range tl.States() {
				if v := tl.Total(i, id); v > 0 {
					fmt.Fprintf(b, " %s=%s", s, r4(v))
				}
			}
			b.WriteByte('\n')
		}
		for i, s := range tl.Series() {
			mean, ok := tl.Mean(i)
			mx, _ := tl.Max(i)
			var sum, peak float64
			n := 0
			for k := range mean {
				if ok[k] {
					sum += mean[k]
					peak = math.Max(peak, mx[k])
					n++
				}
			}
			avg := 0.0
			if n > 0 {
				avg = sum / float64(n)
			}
			fmt.Fprintf(b, "series %q %s: bins %d mean %s peak %s\n", s.Name, s.Group, n, r4(avg), r4(peak))
		}
	}
}

// sortedAbsent iterates a map of reasons in key order.
func sortedAbsent(m map[string]string) func(yield func(string, string) bool) {
	return func(yield func(string, string) bool) {
		for _, g := range []string{timeline.GroupReady, timeline.GroupMemory, timeline.GroupInFlight} {
			if why, ok := m[g]; ok && !yield(g, why) {
				return
			}
		}
	}
}

func digestModel(b *strings.Builder, f ModelFigure) {
	fmt.Fprintf(b, "model %q\n", f.Title)
	for _, a := range f.Archs {
		fmt.Fprintf(b, "arch %q:", a.Name)
		for i := range a.SizeBytes {
			fmt.Fprintf(b, " (%s, %s±%s)", r4(a.SizeBytes[i]), r4(a.MeanMs[i]), r4(a.StddevMs[i]))
		}
		if a.Linear != nil {
			fmt.Fprintf(b, " linear %s %s", r4(a.Linear[0]), r4(a.Linear[1]))
		}
		if a.NonLinear != nil {
			fmt.Fprintf(b, " nonlinear %s %s %s", r4(a.NonLinear[0]), r4(a.NonLinear[1]), r4(a.NonLinear[2]))
		}
		fmt.Fprintf(b, " histograms %d\n", len(a.Hists))
	}
}
