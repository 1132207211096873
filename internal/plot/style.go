package plot

import (
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// palette holds the series colors, in order of use. It is the
// Tableau 10 palette followed by black and a dark blue: twelve colors
// that are distinct on screen and whose luminances differ enough to
// help in grayscale (glyphs and dashes do the rest).
var palette = []color.RGBA{
	{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}, // blue
	{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff}, // orange
	{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}, // green
	{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}, // red
	{R: 0x94, G: 0x67, B: 0xbd, A: 0xff}, // purple
	{R: 0x8c, G: 0x56, B: 0x4b, A: 0xff}, // brown
	{R: 0xe3, G: 0x77, B: 0xc2, A: 0xff}, // pink
	{R: 0x7f, G: 0x7f, B: 0x7f, A: 0xff}, // gray
	{R: 0xbc, G: 0xbd, B: 0x22, A: 0xff}, // olive
	{R: 0x17, G: 0xbe, B: 0xcf, A: 0xff}, // cyan
	{R: 0x00, G: 0x00, B: 0x00, A: 0xff}, // black
	{R: 0x00, G: 0x2b, B: 0x80, A: 0xff}, // dark blue
}

// glyphs holds the point shapes, alternating filled and hollow ones.
var glyphs = []draw.GlyphDrawer{
	draw.CircleGlyph{},   // filled circle
	draw.SquareGlyph{},   // hollow square
	draw.PyramidGlyph{},  // filled triangle
	draw.CrossGlyph{},    // x
	draw.BoxGlyph{},      // filled square
	draw.RingGlyph{},     // hollow circle
	draw.TriangleGlyph{}, // hollow triangle
	draw.PlusGlyph{},     // +
}

// dashes holds the line dash patterns: solid, dashed, dotted, dash-dot.
var dashes = [][]vg.Length{
	nil,
	{vg.Points(7), vg.Points(3)},
	{vg.Points(1.5), vg.Points(2.5)},
	{vg.Points(7), vg.Points(2.5), vg.Points(1.5), vg.Points(2.5)},
}

const (
	lineWidth   = 1.5 // points
	glyphRadius = 3.5 // points
)

// seriesStyle returns the line and glyph styles of the i-th series.
// For i < 12 every series has its own color and its own
// (glyph, dash) pair; beyond that the styles repeat.
func seriesStyle(i int) (draw.LineStyle, draw.GlyphStyle) {
	c := palette[i%len(palette)]
	g := glyphs[i%len(glyphs)]
	// Shift the dash cycle by one for each pass over the glyphs, so
	// that series i and i+len(glyphs) differ in dash pattern too.
	d := dashes[(i+i/len(glyphs))%len(dashes)]
	ls := draw.LineStyle{
		Color:  c,
		Width:  vg.Points(lineWidth),
		Dashes: d,
	}
	gs := draw.GlyphStyle{
		Color:  c,
		Radius: vg.Points(glyphRadius),
		Shape:  g,
	}
	return ls, gs
}

// plotStyle is the look of one kind of plot: the sizes of its title (and
// the space below it), of its axis labels and of its tick labels.
type plotStyle struct{ title, titlePad, label, tick vg.Length }

// legendStyle is the look of one kind of legend: its text size, the width
// of its thumbnails and the padding around its entries.
type legendStyle struct{ text, thumbW, pad vg.Length }

var (
	figurePlot = plotStyle{title: titleSize, titlePad: vg.Points(8), label: axisSize, tick: tickSize} // a Figure
	smallPlot  = plotStyle{title: vg.Points(11), titlePad: vg.Points(5), label: vg.Points(10), tick: vg.Points(8)}
	modelPlot  = plotStyle{title: vg.Points(13), titlePad: vg.Points(8), label: vg.Points(11), tick: vg.Points(9)}

	figureLegend = legendStyle{text: legendSize, thumbW: vg.Points(32), pad: vg.Points(3)} // Figure and Grid
	panelLegend  = legendStyle{text: vg.Points(9), thumbW: vg.Points(16), pad: vg.Points(2)}
)

// newPlot returns an empty plot whose texts have s's sizes, all in the
// figures' font.
func (s plotStyle) newPlot() *plot.Plot {
	p := plot.New()
	p.Title.TextStyle.Font.Size = s.title
	p.Title.TextStyle.Font.Variant = fontVariant
	p.Title.Padding = s.titlePad
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font.Size = s.label
		a.Label.TextStyle.Font.Variant = fontVariant
		a.Tick.Label.Font.Size = s.tick
		a.Tick.Label.Font.Variant = fontVariant
	}
	return p
}

// newLegend returns an empty legend, its entries from the top left, in s's
// look and the figures' font.
func (s legendStyle) newLegend() *plot.Legend {
	leg := plot.NewLegend()
	leg.Top, leg.Left = true, true
	leg.TextStyle.Font.Size = s.text
	leg.TextStyle.Font.Variant = fontVariant
	leg.ThumbnailWidth = s.thumbW
	leg.Padding = s.pad
	return &leg
}
