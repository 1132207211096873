package plot

import (
	"errors"
	"io"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// ModelFigure is a kernel model's duration against its data size, one
// series per arch, on log-log axes — what starpu_perfmodel_plot draws —
// and, below, the duration histograms of the archs that have some.
type ModelFigure struct {
	Title string
	Archs []ModelArch
}

// ModelArch is one arch (and implementation) of a model.
type ModelArch struct {
	// Name labels the series ("cuda0_impl0").
	Name string
	// Per footprint, by increasing size: total data size (bytes), mean
	// duration and its standard deviation (ms).
	SizeBytes, MeanMs, StddevMs []float64
	// Linear is StarPU's power law ms = Linear[0]·size^Linear[1]; nil
	// when the model has none.
	Linear *[2]float64
	// NonLinear is ms = A·size^B + C, {A, B, C}; nil when none.
	NonLinear *[3]float64
	// Hists are the footprints' duration histograms, if any.
	Hists []ModelHist
}

// ModelHist is the duration histogram of one footprint.
type ModelHist struct {
	SizeBytes float64
	// EdgesMs has one more value than Counts.
	EdgesMs []float64
	Counts  []float64
}

// Layout of a model figure.
var (
	modelWidth = 8 * vg.Inch
	modelMainH = 5 * vg.Inch
	modelHistH = 2.2 * vg.Inch
)

// SaveModelFigure writes f to path, PNG or SVG by the extension.
func SaveModelFigure(f ModelFigure, path string) error {
	data, err := encode(path, nil, func(b *strings.Builder) { digestModel(b, f) },
		func(out io.Writer, format string) error { _, err := RenderModelFigure(out, f, format); return err })
	return writeEncoded(path, data, err)
}

// positive reports whether v can go on a log axis.
func positive(v float64) bool { return v > 0 && !math.IsInf(v, 0) }

// RenderModelFigure draws f in format (".png" or ".svg") and returns where
// its panels lie (pixels at 96 dpi): Kind "model", then "histogram" ones.
func RenderModelFigure(out io.Writer, f ModelFigure, format string) (rows []PanelRow, err error) {
	defer recoverPlot(&err)
	main := newFigurePlot(f.Title, "total data size (bytes)", "duration (ms)")
	main.X.Scale, main.Y.Scale = plot.LogScale{}, plot.LogScale{}
	main.X.Tick.Marker, main.Y.Tick.Marker = plot.LogTicks{Prec: -1}, plot.LogTicks{Prec: -1}
	main.Legend.Top, main.Legend.Left = true, true
	main.Add(gridPlotter{})
	xmin, xmax := math.Inf(1), math.Inf(-1)
	ymin, ymax := math.Inf(1), math.Inf(-1)
	var histArchs []int
	drawn := 0
	for i, a := range f.Archs {
		ls, gs := seriesStyle(i)
		var pts plotter.XYs
		var bars errBars
		for j := range a.SizeBytes {
			x, y := a.SizeBytes[j], a.MeanMs[j]
			if !positive(x) || !positive(y) {
				continue
			}
			sd := 0.0
			if j < len(a.StddevMs) && a.StddevMs[j] > 0 && !math.IsInf(a.StddevMs[j], 0) {
				sd = a.StddevMs[j]
			}
			lo := math.Max(y-sd, y/100) // a log axis has no 0
			pts = append(pts, plotter.XY{X: x, Y: y})
			bars.bars = append(bars.bars, errBar{x: x, lo: lo, hi: y + sd})
			xmin, xmax = math.Min(xmin, x), math.Max(xmax, x)
			ymin, ymax = math.Min(ymin, lo), math.Max(ymax, y+sd)
		}
		if len(a.Hists) > 0 {
			histArchs = append(histArchs, i)
		}
		if len(pts) == 0 {
			continue
		}
		line, points, err := plotter.NewLinePoints(pts)
		if err != nil {
			return nil, err
		}
		line.LineStyle, points.GlyphStyle = ls, gs
		line.LineStyle.Dashes = nil
		bars.style = draw.LineStyle{Color: ls.Color, Width: vg.Points(1)}
		main.Add(line, points, bars)
		main.Legend.Add("average "+a.Name, line, points)
		drawn += len(pts)
	}
	if drawn == 0 {
		return nil, errors.New("no footprint with a positive size and mean duration to plot")
	}
	// Regressions over the data's sizes, a decade wider each side.
	for i, a := range f.Archs {
		ls, _ := seriesStyle(i)
		ls.Width = vg.Points(1)
		ls.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		curve := func(name string, fn func(x float64) float64) {
			var pts plotter.XYs
			for k := 0; k <= 64; k++ {
				x := xmin / 10 * math.Pow(100*xmax/xmin, float64(k)/64)
				if y := fn(x); positive(y) {
					pts = append(pts, plotter.XY{X: x, Y: y})
				}
			}
			if len(pts) < 2 {
				return
			}
			l, err := plotter.NewLine(pts)
			if err != nil {
				return
			}
			l.LineStyle = ls
			main.Add(l)
			main.Legend.Add(name+" "+a.Name, l)
		}
		if r := a.Linear; r != nil {
			curve("linear regression", func(x float64) float64 { return r[0] * math.Pow(x, r[1]) })
			ls.Dashes = []vg.Length{vg.Points(1.5), vg.Points(2.5)}
		}
		if r := a.NonLinear; r != nil {
			curve("non-linear regression", func(x float64) float64 { return r[0]*math.Pow(x, r[1]) + r[2] })
		}
	}
	main.X.Min, main.X.Max = xmin/2, xmax*2
	main.Y.Min, main.Y.Max = ymin/2, ymax*2

	height := modelMainH + vg.Length(len(histArchs))*modelHistH
	cw, c, err := newPage(format, modelWidth, height)
	if err != nil {
		return nil, err
	}
	// Panels share the page inside the margins in proportion to their
	// nominal heights.
	scale := (height - 2*margin) / height
	box := func(kind string, p *plot.Plot, pc draw.Canvas) PanelRow {
		r := pixelRow(kind, p.DataCanvas(pc), height)
		r.DrawnItems = drawn
		return r
	}
	top := c.Max.Y
	mc := draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{Min: vg.Point{X: c.Min.X, Y: top - modelMainH*scale}, Max: vg.Point{X: c.Max.X, Y: top}}}
	main.Draw(mc)
	rows = append(rows, box("model", main, mc))
	top -= modelMainH * scale
	for _, i := range histArchs {
		a := f.Archs[i]
		hp := newFigurePlot("", "duration (ms), "+a.Name, "samples per ms")
		hp.X.Scale, hp.X.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
		hp.Legend.Top = true
		hp.Add(gridPlotter{})
		hx0, hx1, hy := math.Inf(1), math.Inf(-1), 0.0
		n := 0
		for j, h := range a.Hists {
			if len(h.EdgesMs) != len(h.Counts)+1 || len(h.Counts) == 0 {
				continue
			}
			// Density (samples per ms): the bins are irregular (Bayesian
			// blocks), so a count per bin would overstate wide ones.
			var pts plotter.XYs
			for k, cnt := range h.Counts {
				x0, x1 := h.EdgesMs[k], h.EdgesMs[k+1]
				if !positive(x0) || !(x1 > x0) || math.IsInf(x1, 0) || !(cnt >= 0) || math.IsInf(cnt, 0) {
					continue
				}
				d := cnt / (x1 - x0)
				if len(pts) == 0 || pts[len(pts)-1].X != x0 {
					pts = append(pts, plotter.XY{X: x0, Y: 0})
				}
				pts = append(pts, plotter.XY{X: x0, Y: d}, plotter.XY{X: x1, Y: d}, plotter.XY{X: x1, Y: 0})
				hx0, hx1, hy = math.Min(hx0, x0), math.Max(hx1, x1), math.Max(hy, d)
			}
			if len(pts) == 0 {
				continue
			}
			l, err := plotter.NewLine(pts)
			if err != nil {
				continue
			}
			l.LineStyle, _ = seriesStyle(j)
			l.LineStyle.Width = vg.Points(1.2)
			hp.Add(l)
			hp.Legend.Add(strconv.FormatFloat(h.SizeBytes, 'f', -1, 64)+" B", l)
			n += len(pts)
		}
		if n == 0 {
			continue
		}
		hp.X.Min, hp.X.Max = hx0/1.2, hx1*1.2
		lo, hi, ticks := niceRange(0, hy)
		hp.Y.Min, hp.Y.Max, hp.Y.Tick.Marker = lo, hi, plot.ConstantTicks(ticks)
		hc := draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{Min: vg.Point{X: c.Min.X, Y: top - modelHistH*scale}, Max: vg.Point{X: c.Max.X, Y: top}}}
		hp.Draw(hc)
		r := box("histogram", hp, hc)
		r.DrawnItems = n
		rows = append(rows, r)
		top -= modelHistH * scale
	}
	_, err = cw.WriteTo(out)
	return rows, err
}

// newFigurePlot is a plot in the figures' fonts.
func newFigurePlot(title, xlabel, ylabel string) *plot.Plot {
	p := modelPlot.newPlot()
	p.Title.Text = title
	p.X.Label.Text, p.Y.Label.Text = xlabel, ylabel
	p.Legend.TextStyle.Font.Size = vg.Points(9)
	p.Legend.TextStyle.Font.Variant = fontVariant
	return p
}

// errBars draws a vertical bar per point, from lo to hi.
type errBars struct {
	bars  []errBar
	style draw.LineStyle
}

type errBar struct{ x, lo, hi float64 }

// Plot implements plot.Plotter.
func (e errBars) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	sty := e.style
	for _, b := range e.bars {
		x := trX(b.x)
		cap := vg.Points(3)
		c.StrokeLines(sty, c.ClipLinesXY([]vg.Point{{X: x, Y: trY(b.lo)}, {X: x, Y: trY(b.hi)}})...)
		for _, y := range []float64{b.lo, b.hi} {
			c.StrokeLines(sty, c.ClipLinesXY([]vg.Point{{X: x - cap, Y: trY(y)}, {X: x + cap, Y: trY(y)}})...)
		}
	}
}
