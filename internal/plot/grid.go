package plot

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Grid is a figure of small multiples: line-chart panels side by side that
// share their axes' labels, their Y range (so that panels compare at a
// glance) and their series — a series name has one style in every panel,
// and one legend, right of the panels, lists them.
type Grid struct {
	Title, XLabel, YLabel string
	// Panels use their Title and Series (Figure's other fields are
	// ignored); a panel may lack some series.
	Panels []Figure
	// Cols is the number of panels per row (<= 0: up to 3).
	Cols int
}

// Grid layout.
var (
	gridPanelW = 3.4 * vg.Inch
	gridPanelH = 2.7 * vg.Inch
	gridTitleH = vg.Points(26)
)

// maxGridPanels bounds a grid, so that a large sweep cannot ask for a
// figure no one can read (or a huge PNG).
const maxGridPanels = 36

// SaveGrid writes g to path, PNG or SVG by the extension. It fails, writing
// nothing, on a grid with no panel or more than 36, or on a series that
// Save would refuse.
func SaveGrid(g Grid, path string) error {
	data, err := EncodeGrid(g, path)
	return writeEncoded(path, data, err)
}

// EncodeGrid draws g as SaveGrid would write it to path, with its checks,
// and returns the file's bytes (see Encode).
func EncodeGrid(g Grid, path string) ([]byte, error) {
	return encode(path, nil, func(b *strings.Builder) { digestGrid(b, g) },
		func(out io.Writer, format string) error { _, err := RenderGrid(out, g, format); return err })
}

// RenderGrid draws g in format (".png" or ".svg") and returns where its
// panels' data areas lie (pixels at 96 dpi, Kind "panel").
func RenderGrid(out io.Writer, g Grid, format string) (rows []PanelRow, err error) {
	defer recoverPlot(&err)
	switch {
	case len(g.Panels) == 0:
		return nil, errors.New("grid has no panel")
	case len(g.Panels) > maxGridPanels:
		return nil, fmt.Errorf("grid has %d panels, more than %d", len(g.Panels), maxGridPanels)
	}
	// Series styles by name, in order of first appearance; the shared Y range.
	styleOf := map[string]int{}
	var names []string
	ymin, ymax := 0.0, 0.0
	for i := range g.Panels {
		p := g.Panels[i]
		if p.Title == "" {
			p.Title = fmt.Sprintf("panel %d", i+1)
		}
		if err := p.validate(); err != nil {
			return nil, err
		}
		for _, s := range p.Series {
			if _, ok := styleOf[s.Name]; !ok {
				styleOf[s.Name] = len(names)
				names = append(names, s.Name)
			}
			for _, y := range s.Y {
				ymin, ymax = math.Min(ymin, y), math.Max(ymax, y)
			}
		}
	}
	ylo, yhi, yticks := niceRange(ymin, ymax)

	cols := g.Cols
	if cols <= 0 {
		cols = min(3, len(g.Panels))
	}
	nrows := (len(g.Panels) + cols - 1) / cols
	leg := figureLegend.newLegend()
	for _, n := range names {
		ls, gs := seriesStyle(styleOf[n])
		l, _ := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}})
		l.LineStyle = ls
		sc, _ := plotter.NewScatter(plotter.XYs{{X: 0, Y: 0}})
		sc.GlyphStyle = gs
		leg.Add(n, l, sc)
	}
	probe := draw.New(vgimg.New(vg.Inch, vg.Inch))
	legSize := leg.Rectangle(probe).Size()
	frameW := legSize.X + 2*legendPad

	width := 2*margin + vg.Length(cols)*gridPanelW + legendGap + frameW
	height := 2*margin + gridTitleH + vg.Length(nrows)*gridPanelH
	cw, c, err := newPage(format, width, height)
	if err != nil {
		return nil, err
	}
	title := panelTextStyle(titleSize, color.Black, draw.XCenter, draw.YTop)
	c.FillText(title, vg.Point{X: c.Min.X + vg.Length(cols)*gridPanelW/2, Y: c.Max.Y}, g.Title)

	var dataTop vg.Length
	for i, f := range g.Panels {
		r, col := i/cols, i%cols
		p := smallPlot.newPlot()
		p.Title.Text = f.Title
		if r == nrows-1 || i+cols >= len(g.Panels) {
			p.X.Label.Text = g.XLabel
		}
		if col == 0 {
			p.Y.Label.Text = g.YLabel
		}
		p.Add(gridPlotter{})
		var xs []float64
		xmin, xmax := math.Inf(1), math.Inf(-1)
		for _, s := range f.Series {
			for _, x := range s.X {
				xmin, xmax = math.Min(xmin, x), math.Max(xmax, x)
			}
			xs = append(xs, s.X...)
			if _, _, err := addLinePoints(p, s, styleOf[s.Name]); err != nil {
				return nil, err
			}
		}
		xticks := xTicks(xs, xmin, xmax)
		pad := (xmax - xmin) / 20
		if pad == 0 {
			pad = math.Max(math.Abs(xmin)/10, 1)
		}
		p.X.Min, p.X.Max = xmin-pad, xmax+pad
		p.Y.Min, p.Y.Max = ylo, yhi
		p.Y.Tick.Marker = plot.ConstantTicks(yticks)
		pc := draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: c.Min.X + vg.Length(col)*gridPanelW, Y: c.Max.Y - gridTitleH - vg.Length(r+1)*gridPanelH},
			Max: vg.Point{X: c.Min.X + vg.Length(col+1)*gridPanelW, Y: c.Max.Y - gridTitleH - vg.Length(r)*gridPanelH},
		}}
		pc = draw.Crop(pc, vg.Points(4), -vg.Points(8), vg.Points(4), 0)
		da := p.DataCanvas(pc)
		p.X.Tick.Marker = plot.ConstantTicks(pruneLabels(xticks, p.X.Tick.Label, p.X.Min, p.X.Max, da.Min.X, da.Max.X))
		p.Draw(pc)
		if i == 0 {
			dataTop = da.Max.Y
		}
		n := 0
		for _, s := range f.Series {
			n += len(s.X)
		}
		row := pixelRow("panel", da, height)
		row.Block, row.DrawnItems = i, n
		rows = append(rows, row)
	}
	drawLegendFrame(c, leg, c.Max.X-frameW, dataTop, frameW)
	_, err = cw.WriteTo(out)
	return rows, err
}
