package plot

import (
	"bytes"
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/starsim/starsim/internal/atomicfile"
)

// Default figure size, in inches.
const (
	DefaultWidthIn  = 8.0
	DefaultHeightIn = 5.0
	// maxSizeIn bounds WidthIn and HeightIn, so that a typo cannot
	// ask for a multi-gigabyte PNG.
	maxSizeIn = 100.0
)

// Series is one curve: points (X, Y) in order.
type Series struct {
	// Name is the series' legend entry; an empty name shows as
	// "series N" (N counting from 1).
	Name string
	// X and Y hold the points' coordinates; they must have the same,
	// non-zero length and hold only finite numbers. Points are joined
	// in the order given.
	X, Y []float64
}

// Figure describes a line chart.
type Figure struct {
	Title, XLabel, YLabel string
	Series                []Series
	// WidthIn and HeightIn are the figure size in inches; a value
	// that is not > 0 means the default, 8in x 5in.
	WidthIn, HeightIn float64
}

// Save writes the figure to path; the format comes from the extension:
// .png or .svg (in any letter case; any other extension is an error).
//
// The figure is a line chart with a point glyph at each data point,
// grid lines, and a legend (one entry per series, in order) to the right
// of the data area. The Y axis starts at 0 (or below, if some Y is
// negative) and ends at a round number. When all series together hold
// at most 10 distinct X values, the X axis has a tick at each of them,
// labelled as a plain number (76800, not 7.68e+04); labels that would
// overlap a neighbour are dropped, leaving an unlabelled tick.
//
// Save checks the figure before drawing: it returns an error, and
// writes nothing, when the figure has no series, a series has no
// points or X and Y of different lengths, or a coordinate is NaN or
// infinite. PNG files are drawn at gonum's default resolution,
// vgimg.DefaultDPI (96 dots per inch: 768 x 480 pixels by default).
func Save(f Figure, path string) error {
	data, err := Encode(f, path)
	return writeEncoded(path, data, err)
}

// Encode draws f as Save would write it to path (PNG or SVG by its
// extension), with Save's checks, and returns the file's bytes: a command
// that writes several outputs renders them all before it writes any.
func Encode(f Figure, path string) ([]byte, error) {
	var w, h vg.Length
	check := func() (err error) {
		if err = f.validate(); err != nil {
			return err
		}
		w, h, err = f.size()
		return err
	}
	return encode(path, check, func(b *strings.Builder) { digestFigure(b, f) },
		func(out io.Writer, format string) error { return render(out, f, format, w, h) })
}

// encode is what every Encode function does: it refuses a path that
// CheckExt refuses, then one that check (if not nil) refuses, with check's
// error as it is; it gives Inputs the figure's digest, written by digest;
// and it returns the bytes that draw writes in the format of path's
// extension (".png" or ".svg", lower case).
func encode(path string, check func() error, digest func(b *strings.Builder), draw func(out io.Writer, format string) error) ([]byte, error) {
	if err := CheckExt(path); err != nil {
		return nil, fmt.Errorf("plot: %w", err)
	}
	if check != nil {
		if err := check(); err != nil {
			return nil, err
		}
	}
	report(path, digest)
	var buf bytes.Buffer
	if err := draw(&buf, strings.ToLower(filepath.Ext(path))); err != nil {
		return nil, fmt.Errorf("plot: cannot save %q: %w", path, err)
	}
	return buf.Bytes(), nil
}

// writeEncoded writes data, which an Encode function returned with err, to
// path all or nothing; an Encode error is returned as it is and writes
// nothing.
func writeEncoded(path string, data []byte, err error) error {
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(path, data); err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	return nil
}

// CheckExt says whether path names a file Save and SavePanel can write: its
// extension is .png or .svg (any letter case).
func CheckExt(path string) error {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".png", ".svg":
		return nil
	}
	return fmt.Errorf("cannot save %q: unsupported extension %q (want .png or .svg)", path, filepath.Ext(path))
}

// validate reports the first problem that keeps f from being drawn.
func (f *Figure) validate() error {
	if len(f.Series) == 0 {
		return fmt.Errorf("plot: figure %q has no series", f.Title)
	}
	for i, s := range f.Series {
		if len(s.X) != len(s.Y) {
			return fmt.Errorf("plot: figure %q: series %d (%q): X has %d values but Y has %d",
				f.Title, i, s.Name, len(s.X), len(s.Y))
		}
		if len(s.X) == 0 {
			return fmt.Errorf("plot: figure %q: series %d (%q) has no points", f.Title, i, s.Name)
		}
		for _, c := range []struct {
			axis string
			vs   []float64
		}{{"X", s.X}, {"Y", s.Y}} {
			for j, v := range c.vs {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return fmt.Errorf("plot: figure %q: series %d (%q): %s[%d] is %v (want a finite number)",
						f.Title, i, s.Name, c.axis, j, v)
				}
			}
		}
	}
	return nil
}

// size returns the figure's width and height.
func (f *Figure) size() (w, h vg.Length, err error) {
	dim := func(name string, v, def float64) (vg.Length, error) {
		switch {
		case math.IsNaN(v) || math.IsInf(v, 0) || v > maxSizeIn:
			return 0, fmt.Errorf("plot: figure %q: %s is %v (want at most %v inches, or <= 0 for the default)",
				f.Title, name, v, maxSizeIn)
		case v <= 0:
			v = def
		}
		return vg.Length(v) * vg.Inch, nil
	}
	if w, err = dim("WidthIn", f.WidthIn, DefaultWidthIn); err != nil {
		return 0, 0, err
	}
	if h, err = dim("HeightIn", f.HeightIn, DefaultHeightIn); err != nil {
		return 0, 0, err
	}
	return w, h, nil
}

// render draws f as a w x h image in format (".png" or ".svg") to out.
func render(out io.Writer, f Figure, format string, w, h vg.Length) (err error) {
	defer recoverPlot(&err)
	cw, err := newCanvas(format, w, h)
	if err != nil {
		return err
	}
	if err := drawFigure(draw.New(cw), f); err != nil {
		return err
	}
	_, err = cw.WriteTo(out)
	return err
}

// Layout constants.
var (
	margin       = vg.Points(9)  // blank border around the figure
	legendPad    = vg.Points(5)  // space between legend frame and entries
	legendGap    = vg.Points(12) // minimum space between data area and legend
	titleSize    = vg.Points(14)
	axisSize     = vg.Points(12)
	tickSize     = vg.Points(10)
	legendSize   = vg.Points(10)
	gridColor    = color.Gray{Y: 0xdd}
	legendBorder = color.Gray{Y: 0xaa}
)

// fontVariant selects Liberation Sans (gonum's default font is
// Liberation Serif) for all text.
const fontVariant = "Sans"

// drawFigure draws f, which has passed validate, onto c.
func drawFigure(c draw.Canvas, f Figure) error {
	p := figurePlot.newPlot()
	p.Title.Text = f.Title
	p.X.Label.Text = f.XLabel
	p.Y.Label.Text = f.YLabel
	leg := figureLegend.newLegend()

	p.Add(gridPlotter{})
	var xs []float64
	xmin, xmax := math.Inf(1), math.Inf(-1)
	ymin, ymax := math.Inf(1), math.Inf(-1)
	for i, s := range f.Series {
		for j := range s.X {
			xmin, xmax = math.Min(xmin, s.X[j]), math.Max(xmax, s.X[j])
			ymin, ymax = math.Min(ymin, s.Y[j]), math.Max(ymax, s.Y[j])
		}
		xs = append(xs, s.X...)
		line, points, err := addLinePoints(p, s, i)
		if err != nil {
			return fmt.Errorf("series %d (%q): %w", i, s.Name, err)
		}
		name := s.Name
		if name == "" {
			name = fmt.Sprintf("series %d", i+1)
		}
		leg.Add(name, line, points)
	}

	// X axis: the data's range.
	xticks := xTicks(xs, xmin, xmax)
	if xmin == xmax {
		pad := math.Max(math.Abs(xmin)/10, 1)
		xmin, xmax = xmin-pad, xmax+pad
	}
	p.X.Min, p.X.Max = xmin, xmax
	p.X.Tick.Marker = plot.ConstantTicks(xticks)

	// Y axis: from 0 (or the lowest Y, if negative) to a round number.
	ylo, yhi, yticks := niceRange(math.Min(0, ymin), math.Max(0, ymax))
	p.Y.Min, p.Y.Max = ylo, yhi
	p.Y.Tick.Marker = plot.ConstantTicks(yticks)

	// Layout: the plot (title, axes, data) on the left, the legend in
	// a frame on the right, top-aligned with the data area.
	c = draw.Crop(c, margin, -margin, margin, -margin)
	legSize := leg.Rectangle(c).Size()
	frameW := legSize.X + 2*legendPad
	gap := legendGap
	if n := len(xticks); n > 0 && xticks[n-1].Value == xmax {
		// The last X tick label is centred on the data area's right
		// edge; keep its right half clear of the legend.
		half := p.X.Tick.Label.Rectangle(xticks[n-1].Label).Size().X / 2
		gap = max(gap, half+vg.Points(6))
	}
	plotC := draw.Crop(c, 0, -(frameW + gap), 0, 0)
	dataC := p.DataCanvas(plotC)
	p.X.Tick.Marker = plot.ConstantTicks(pruneLabels(xticks, p.X.Tick.Label, p.X.Min, p.X.Max, dataC.Min.X, dataC.Max.X))
	p.Draw(plotC)

	drawLegendFrame(c, leg, c.Max.X-frameW, dataC.Max.Y, frameW)
	return nil
}

// addLinePoints adds s to p as a line with a glyph at each point, in the
// style of series number style (see seriesStyle).
func addLinePoints(p *plot.Plot, s Series, style int) (*plotter.Line, *plotter.Scatter, error) {
	pts := make(plotter.XYs, len(s.X))
	for j := range s.X {
		pts[j] = plotter.XY{X: s.X[j], Y: s.Y[j]}
	}
	line, points, err := plotter.NewLinePoints(pts)
	if err != nil {
		return nil, nil, err
	}
	line.LineStyle, points.GlyphStyle = seriesStyle(style)
	p.Add(line, points)
	return line, points, nil
}

// gridPlotter draws grid lines at every X and Y tick, labelled or not
// (gonum's plotter.Grid skips unlabelled ticks, which pruneLabels
// creates).
type gridPlotter struct{}

func (gridPlotter) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	drawXGrid(c, p, trX)
	for _, t := range p.Y.Tick.Marker.Ticks(p.Y.Min, p.Y.Max) {
		if t.Value < p.Y.Min || t.Value > p.Y.Max {
			continue
		}
		y := trY(t.Value)
		c.StrokeLine2(gridLine, c.Min.X, y, c.Max.X, y)
	}
}

// gridLine is the style of grid lines.
var gridLine = draw.LineStyle{Color: gridColor, Width: vg.Points(0.5)}

// drawXGrid draws a vertical grid line at each X tick of p within p's X
// range; trX is p's X transform on c.
func drawXGrid(c draw.Canvas, p *plot.Plot, trX func(float64) vg.Length) {
	for _, t := range p.X.Tick.Marker.Ticks(p.X.Min, p.X.Max) {
		if t.Value < p.X.Min || t.Value > p.X.Max {
			continue
		}
		x := trX(t.Value)
		c.StrokeLine2(gridLine, x, c.Min.Y, x, c.Max.Y)
	}
}
