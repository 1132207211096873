package plot

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/starsim/starsim/internal/timeline"
)

var panelGroups = []struct {
	group, label string
	scale        float64 // value / scale is drawn
}{
	{timeline.GroupReady, "ready tasks", 1},
	{timeline.GroupMemory, "GPU memory used (MiB)", 1 << 20},
	{timeline.GroupInFlight, "in flight (MiB)", 1 << 20},
}

// Panel is a StarVZ-like figure of one or more runs on one time axis:
// per run (Block), a Gantt chart of its workers' states, then its ready
// tasks, the memory used on each GPU and the bytes in flight per transfer
// direction.
type Panel struct {
	// Title heads the figure: the machine and the configuration.
	Title  string
	Blocks []Block
}

// Block is one run of a Panel.
type Block struct {
	// Title heads the block's Gantt chart.
	Title string
	// TL holds the run: rows are workers, series are counters of the
	// Group* groups. Times are seconds from the block's origin.
	TL *timeline.Timeline
	// XLabel describes the origin of the time axis (default "time (ms)").
	XLabel string
	// Absent tells, per counter group the source does not record, why
	// (e.g. "not recorded in tasks.rec"): the row then shows the reason.
	Absent map[string]string
}

// Layout of panels.
var (
	panelWidth     = 11 * vg.Inch
	panelRowH      = vg.Points(13)  // per worker
	panelGanttMin  = vg.Points(40)  // Gantt data-area height bounds
	panelGanttMax  = vg.Points(360) // rows get thinner past ~28 workers
	panelCounterH  = vg.Points(62)  // data-area height of a counter row
	panelAbsentH   = vg.Points(22)  // a row that only says why it is empty
	panelGap       = vg.Points(4)   // between the rows of a block
	panelBlockGap  = vg.Points(14)  // between blocks
	panelTitleH    = vg.Points(24)  // figure title
	panelAxisH     = vg.Points(34)  // X tick labels and axis label
	panelBlockHead = vg.Points(22)  // a block's title
	fetchColor     = color.RGBA{R: 0xff, G: 0x33, B: 0xff, A: 0xff}
	runtimeColor   = color.RGBA{R: 0xc8, G: 0xc8, B: 0xc8, A: 0xff}
	bandColor      = color.Gray{Y: 0xf4}
)

// PanelRow is where one row of a saved panel lies, in pixels of the PNG
// (origin top left): for tests and tools that check what was drawn.
type PanelRow struct {
	Block int
	// Kind is "gantt", a Group* value, or "absent:"+group.
	Kind       string
	X0, Y0     int // data area, top left
	X1, Y1     int // data area, bottom right (exclusive)
	DrawnItems int // rectangles (Gantt) or line segments drawn
}

// SavePanel writes the panel to path, PNG or SVG by the extension (.png,
// .svg, any letter case). Output is deterministic (see the package doc).
func SavePanel(p Panel, path string) error {
	data, err := EncodePanel(p, path)
	return writeEncoded(path, data, err)
}

// EncodePanel draws p as SavePanel would write it to path and returns the
// file's bytes (see Encode).
func EncodePanel(p Panel, path string) ([]byte, error) {
	return encode(path, nil, func(b *strings.Builder) { digestPanel(b, p) },
		func(out io.Writer, format string) error { _, err := RenderPanel(out, p, format); return err })
}

// panelRow is one row to draw.
type panelRow struct {
	block   int
	kind    string
	p       *plot.Plot
	dataH   vg.Length
	head    vg.Length // above the data area (block title)
	foot    vg.Length // below it (X axis)
	label   string    // above the row's legend
	legend  *plot.Legend
	counted *int
}

// gapAbove is the space between row i of prs and the row above it: none
// above the first, panelBlockGap above a block's first, panelGap otherwise.
func gapAbove(prs []*panelRow, i int) vg.Length {
	switch {
	case i == 0:
		return 0
	case prs[i].block != prs[i-1].block:
		return panelBlockGap
	}
	return panelGap
}

// RenderPanel draws p in format (".png" or ".svg") to out and returns
// where its rows lie (pixels at 96 dpi).
func RenderPanel(out io.Writer, p Panel, format string) (rows []PanelRow, err error) {
	defer recoverPlot(&err)
	if len(p.Blocks) == 0 {
		return nil, errors.New("panel has no run")
	}
	for i, b := range p.Blocks {
		if b.TL == nil || len(b.TL.Rows()) == 0 {
			return nil, fmt.Errorf("run %d (%q) has no worker", i+1, b.Title)
		}
	}
	colors, kernels := stateColors(p.Blocks)
	xmax := 0.0
	for _, b := range p.Blocks {
		xmax = math.Max(xmax, b.TL.EndS()*1e3)
	}
	if !(xmax > 0) {
		xmax = 1
	}
	xticks := niceTicksWithin(0, xmax)

	var prs []*panelRow
	for bi, b := range p.Blocks {
		first := len(prs)
		prs = append(prs, ganttRow(bi, b, colors, kernels, xmax))
		for _, g := range panelGroups {
			if r := counterRow(bi, b, g.group, g.label, g.scale, xmax); r != nil {
				prs = append(prs, r)
			}
		}
		prs[first].head = panelBlockHead
		last := prs[len(prs)-1]
		last.foot = panelAxisH
		xl := b.XLabel
		if xl == "" {
			xl = "time (ms)"
		}
		last.p.X.Label.Text = xl
		for _, r := range prs[first:] {
			ticks := make([]plot.Tick, len(xticks))
			copy(ticks, xticks)
			if r != last {
				for i := range ticks {
					ticks[i].Label = ""
				}
			}
			r.p.X.Tick.Marker = plot.ConstantTicks(ticks)
		}
	}

	height := 2*margin + panelTitleH
	for i, r := range prs {
		height += r.head + r.dataH + r.foot
		height += gapAbove(prs, i)
	}
	cw, c, err := newPage(format, panelWidth, height)
	if err != nil {
		return nil, err
	}

	// Figure title.
	title := panelTextStyle(vg.Points(13), color.Black, draw.XCenter, draw.YTop)
	c.FillText(title, vg.Point{X: (c.Min.X + c.Max.X) / 2, Y: c.Max.Y}, p.Title)

	// Legend column on the right: as wide as the widest legend or label.
	labelSty := panelTextStyle(vg.Points(9.5), color.Black, draw.XLeft, draw.YTop)
	var legW vg.Length
	for _, r := range prs {
		if r.legend != nil {
			legW = max(legW, r.legend.Rectangle(c).Size().X+2*legendPad)
		}
		if r.label != "" {
			legW = max(legW, labelSty.Rectangle(r.label).Size().X)
		}
	}
	plotsC := draw.Crop(c, 0, -(legW + legendGap), 0, -panelTitleH)

	canv := make([]draw.Canvas, len(prs))
	top := plotsC.Max.Y
	for i, r := range prs {
		top -= gapAbove(prs, i)
		h := r.head + r.dataH + r.foot
		canv[i] = draw.Canvas{Canvas: plotsC.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: plotsC.Min.X, Y: top - h}, Max: vg.Point{X: plotsC.Max.X, Y: top}}}
		top -= h
	}
	// Align every data area on the widest left and right paddings.
	var left, right vg.Length
	for i, r := range prs {
		dc := r.p.DataCanvas(canv[i])
		left = max(left, dc.Min.X-canv[i].Min.X)
		right = max(right, canv[i].Max.X-dc.Max.X)
	}
	legX := c.Max.X - legW
	legTop := c.Max.Y // legends go down the column, each at its row's top or below the previous one
	for i, r := range prs {
		dc := r.p.DataCanvas(canv[i])
		cc := draw.Crop(canv[i], left-(dc.Min.X-canv[i].Min.X), -(right - (canv[i].Max.X - dc.Max.X)), 0, 0)
		r.p.Draw(cc)
		da := r.p.DataCanvas(cc)
		row := pixelRow(r.kind, da, height)
		row.Block = r.block
		if r.counted != nil {
			row.DrawnItems = *r.counted
		}
		rows = append(rows, row)
		y := min(da.Max.Y, legTop)
		if r.label != "" {
			c.FillText(labelSty, vg.Point{X: legX, Y: y}, r.label)
			y -= labelSty.Rectangle(r.label).Size().Y + vg.Points(2)
		}
		if r.legend != nil {
			y = drawLegendFrame(c, r.legend, legX, y, legW)
		}
		legTop = y - vg.Points(4)
	}
	_, err = cw.WriteTo(out)
	return rows, err
}

// drawLegendFrame draws leg in a frame of width w whose top left is (x,
// top) and returns the frame's bottom.
func drawLegendFrame(c draw.Canvas, leg *plot.Legend, x, top, w vg.Length) vg.Length {
	size := leg.Rectangle(c).Size()
	frame := vg.Rectangle{Min: vg.Point{X: x, Y: top - size.Y - 2*legendPad}, Max: vg.Point{X: x + w, Y: top}}
	c.SetColor(color.White)
	c.Fill(frame.Path())
	strokeBox(&c, frame, vg.Points(0.75))
	leg.Draw(draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
		Min: vg.Point{X: frame.Min.X + legendPad, Y: frame.Min.Y + legendPad},
		Max: vg.Point{X: frame.Max.X - legendPad, Y: frame.Max.Y - legendPad},
	}})
	return frame.Min.Y
}

// panelTextStyle is a text style of the panels' font.
func panelTextStyle(size vg.Length, col color.Color, xa draw.XAlignment, ya draw.YAlignment) draw.TextStyle {
	sty := draw.TextStyle{Color: col, Handler: plot.DefaultTextHandler, XAlign: xa, YAlign: ya}
	sty.Font = font.Font{Typeface: "Liberation", Variant: fontVariant, Size: size}
	return sty
}

// stateColors colors the states of every block: kernels in the order of
// their sorted names (palette), then fetching and runtime states.
func stateColors(blocks []Block) (map[string]color.Color, []string) {
	seen := map[string]bool{}
	var kernels []string
	for _, b := range blocks {
		for _, s := range b.TL.States() {
			switch s {
			case timeline.StateIdle, timeline.StateFetch, timeline.StateRuntime:
				continue
			}
			if !seen[s] {
				seen[s] = true
				kernels = append(kernels, s)
			}
		}
	}
	sort.Strings(kernels)
	colors := map[string]color.Color{timeline.StateFetch: fetchColor, timeline.StateRuntime: runtimeColor}
	for i, k := range kernels {
		colors[k] = palette[i%len(palette)]
	}
	return colors, kernels
}

// ganttRow is the Gantt chart of block b: one row per worker, the first on
// top, each bin colored by the state the worker spent most of it in.
func ganttRow(bi int, b Block, colors map[string]color.Color, kernels []string, xmax float64) *panelRow {
	p := smallPlot.newPlot()
	p.Title.Text = b.Title
	tl := b.TL
	rows := tl.Rows()
	n := len(rows)
	ticks := make([]plot.Tick, n)
	for k, r := range rows {
		ticks[n-1-k] = plot.Tick{Value: float64(n - 1 - k), Label: r.Name}
	}
	if n > 28 {
		p.Y.Tick.Label.Font.Size = vg.Points(6)
	}
	p.Y.Tick.Marker = plot.ConstantTicks(ticks)
	p.Y.Min, p.Y.Max = -0.5, float64(n)-0.5
	p.X.Min, p.X.Max = 0, xmax
	g := &ganttPlotter{tl: tl, colors: colors}
	p.Add(g)
	h := min(max(panelRowH*vg.Length(n), panelGanttMin), panelGanttMax)
	r := &panelRow{block: bi, kind: "gantt", p: p, dataH: h, counted: &g.drawn}
	if bi == 0 { // one legend: every block has the same colors
		r.legend = panelLegend.newLegend()
		for _, k := range kernels {
			r.legend.Add(k, swatch{colors[k]})
		}
		r.legend.Add("fetching input", swatch{fetchColor})
		r.legend.Add("runtime", swatch{runtimeColor})
		r.legend.Add("idle", swatch{color.White})
	}
	return r
}

// ganttPlotter draws a timeline's rows: runs of bins with the same
// dominant state become one rectangle (merging what a pixel cannot tell
// apart), idle is left blank.
type ganttPlotter struct {
	tl     *timeline.Timeline
	colors map[string]color.Color
	drawn  int
}

// Plot implements plot.Plotter.
func (g *ganttPlotter) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	rows := g.tl.Rows()
	n := len(rows)
	for k := 0; k < n; k += 2 {
		y := float64(n - 1 - k)
		c.SetColor(bandColor)
		c.Fill(rectPath(c.Min.X, trY(y-0.5), c.Max.X, trY(y+0.5)))
	}
	drawXGrid(c, p, trX)
	states := g.tl.States()
	binMs := g.tl.BinS() * 1e3
	for k := range rows {
		y := float64(n - 1 - k)
		y0, y1 := trY(y-0.4), trY(y+0.4)
		dom := g.tl.Dominant(k)
		for b := 0; b < len(dom); {
			e := b + 1
			for e < len(dom) && dom[e] == dom[b] {
				e++
			}
			if id := dom[b]; id >= 0 && states[id] != timeline.StateIdle {
				col, ok := g.colors[states[id]]
				if !ok {
					col = runtimeColor
				}
				x0, x1 := trX(float64(b)*binMs), trX(float64(e)*binMs)
				c.SetColor(col)
				c.Fill(rectPath(x0, y0, max(x1, x0+vg.Points(0.3)), y1))
				g.drawn++
			}
			b = e
		}
	}
}

// counterRow draws the series of one group of block b (nil when the block
// has none and no reason for their absence).
func counterRow(bi int, b Block, group, label string, scale, xmax float64) *panelRow {
	p := smallPlot.newPlot()
	p.X.Min, p.X.Max = 0, xmax
	tl := b.TL
	var idx []int
	for i, s := range tl.Series() {
		if s.Group == group && s.HasData() {
			idx = append(idx, i)
		}
	}
	if len(idx) == 0 {
		why, ok := b.Absent[group]
		if !ok {
			return nil
		}
		p.Y.Min, p.Y.Max = 0, 1
		p.Y.Tick.Marker = plot.ConstantTicks(nil)
		p.Add(noteText{text: label + ": " + why})
		return &panelRow{block: bi, kind: "absent:" + group, p: p, dataH: panelAbsentH}
	}
	names, values, oks := combineSeries(tl, idx, scale)
	ymax := 0.0
	for i := range values {
		for b, v := range values[i] {
			if oks[i][b] {
				ymax = math.Max(ymax, v)
			}
		}
	}
	lo, hi, yticks := shortRange(ymax)
	p.Y.Min, p.Y.Max = lo, hi
	p.Y.Tick.Marker = plot.ConstantTicks(yticks)
	p.Add(gridPlotter{})
	leg := panelLegend.newLegend()
	count := 0
	binMs := tl.BinS() * 1e3
	for i := range values {
		ls, _ := seriesStyle(i)
		ls.Width = vg.Points(1)
		ls.Dashes = nil
		var pts []plotter.XY
		flush := func() {
			if len(pts) > 0 {
				p.Add(stepLine{pts: pts, style: ls})
				count += len(pts)
				pts = nil
			}
		}
		for b, v := range values[i] {
			if !oks[i][b] {
				flush()
				continue
			}
			if len(pts) == 0 || pts[len(pts)-1].Y != v { // a step holds its value to the next point
				pts = append(pts, plotter.XY{X: float64(b) * binMs, Y: v})
			}
			if b == len(values[i])-1 || !oks[i][b+1] {
				pts = append(pts, plotter.XY{X: float64(b+1) * binMs, Y: v})
			}
		}
		flush()
		l, _ := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}})
		l.LineStyle = ls
		l.LineStyle.Width = vg.Points(2)
		leg.Add(names[i], l)
	}
	r := &panelRow{block: bi, kind: group, p: p, dataH: panelCounterH, label: label, counted: &count}
	if len(names) > 1 {
		r.legend = leg
	}
	return r
}

// shortRange is [0, a round number >= ymax] with about three intervals:
// ticks for a short row.
func shortRange(ymax float64) (float64, float64, []plot.Tick) {
	if !(ymax > 0) {
		ymax = 1
	}
	st := niceStep(ymax, 3)
	last := ceil(ymax / st.at(1))
	return 0, st.at(last), stepTicks(0, last, st)
}

// maxPanelSeries is the most series a counter row draws one by one; past
// it, transfer directions are summed by kind (RAM->GPUs, GPUs->RAM,
// GPU->GPU) and memory nodes into one "all GPUs" series.
const maxPanelSeries = 8

// combineSeries returns the per-bin mean values (divided by scale) of the
// series idx, summed into fewer series when there are too many.
func combineSeries(tl *timeline.Timeline, idx []int, scale float64) (names []string, values [][]float64, oks [][]bool) {
	all := tl.Series()
	key := func(i int) string {
		if len(idx) <= maxPanelSeries {
			return all[i].Name
		}
		src, dst, ok := strings.Cut(all[i].Name, "->")
		switch {
		case !ok:
			return "all"
		case src == "RAM":
			return "RAM->GPUs"
		case dst == "RAM":
			return "GPUs->RAM"
		}
		return "GPU->GPU"
	}
	pos := map[string]int{}
	for _, i := range idx {
		m, ok := tl.Mean(i)
		k := key(i)
		j, seen := pos[k]
		if !seen {
			j = len(names)
			pos[k] = j
			names = append(names, k)
			values = append(values, make([]float64, len(m)))
			oks = append(oks, make([]bool, len(m)))
		}
		for b := range m {
			if ok[b] {
				values[j][b] += m[b] / scale
				oks[j][b] = true
			}
		}
	}
	return names, values, oks
}

// stepLine is a series drawn as steps: each point's value holds until the
// next point. (plotter.Line would do, but it is a GlyphBoxer with a box
// per point, which the layout asks for again and again.)
type stepLine struct {
	pts   []plotter.XY
	style draw.LineStyle
}

// Plot implements plot.Plotter.
func (l stepLine) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	line := make([]vg.Point, 0, 2*len(l.pts))
	for i, pt := range l.pts {
		x, y := trX(pt.X), trY(pt.Y)
		if i > 0 {
			line = append(line, vg.Point{X: x, Y: line[len(line)-1].Y})
		}
		line = append(line, vg.Point{X: x, Y: y})
	}
	c.StrokeLines(l.style, c.ClipLinesXY(line)...)
}

// noteText writes a line of text at the left of the data area.
type noteText struct{ text string }

// Plot implements plot.Plotter.
func (n noteText) Plot(c draw.Canvas, _ *plot.Plot) {
	sty := panelTextStyle(vg.Points(9), color.Gray{Y: 0x55}, draw.XLeft, draw.YCenter)
	c.FillText(sty, vg.Point{X: c.Min.X + vg.Points(4), Y: (c.Min.Y + c.Max.Y) / 2}, n.text)
}

// swatch is a legend thumbnail: a filled, outlined box.
type swatch struct{ color color.Color }

// Thumbnail implements plot.Thumbnailer.
func (s swatch) Thumbnail(c *draw.Canvas) {
	r := c.Rectangle
	c.SetColor(s.color)
	c.Fill(rectPath(r.Min.X, r.Min.Y, r.Max.X, r.Max.Y))
	strokeBox(c, r, vg.Points(0.5))
}

// strokeBox outlines r in the legends' border color, width wide.
func strokeBox(c *draw.Canvas, r vg.Rectangle, width vg.Length) {
	c.StrokeLines(draw.LineStyle{Color: legendBorder, Width: width}, []vg.Point{
		r.Min, {X: r.Max.X, Y: r.Min.Y}, r.Max, {X: r.Min.X, Y: r.Max.Y}, r.Min,
	})
}

func rectPath(x0, y0, x1, y1 vg.Length) vg.Path {
	var p vg.Path
	p.Move(vg.Point{X: x0, Y: y0})
	p.Line(vg.Point{X: x1, Y: y0})
	p.Line(vg.Point{X: x1, Y: y1})
	p.Line(vg.Point{X: x0, Y: y1})
	p.Close()
	return p
}
