package traces

import (
	"bytes"
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/starsim/starsim/internal/atomicfile"
)

// ganttPalette colors the kernels, in the order of their sorted names: the
// Tableau 10 palette (as internal/plot), then black and a dark blue; more
// kernels reuse the colors.
var ganttPalette = []color.RGBA{
	{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff},
	{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff},
	{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff},
	{R: 0xd6, G: 0x27, B: 0x28, A: 0xff},
	{R: 0x94, G: 0x67, B: 0xbd, A: 0xff},
	{R: 0x8c, G: 0x56, B: 0x4b, A: 0xff},
	{R: 0xe3, G: 0x77, B: 0xc2, A: 0xff},
	{R: 0x7f, G: 0x7f, B: 0x7f, A: 0xff},
	{R: 0xbc, G: 0xbd, B: 0x22, A: 0xff},
	{R: 0x17, G: 0xbe, B: 0xcf, A: 0xff},
	{R: 0x00, G: 0x00, B: 0x00, A: 0xff},
	{R: 0x00, G: 0x2b, B: 0x80, A: 0xff},
}

// Gantt layout.
var (
	ganttWidth      = 11 * vg.Inch
	ganttMargin     = vg.Points(9)
	ganttPanelGap   = vg.Points(14)
	ganttRowHeight  = vg.Points(20)  // per worker, up to ganttMaxData
	ganttMinData    = vg.Points(60)  // data-area height bounds of a panel
	ganttMaxData    = vg.Points(430) // rows get thinner past ~21 workers
	ganttOverhead   = vg.Points(70)  // title and X axis of a panel
	ganttLegendPad  = vg.Points(5)
	ganttLegendGap  = vg.Points(12)
	ganttGridColor  = color.Gray{Y: 0xdd}
	ganttBandColor  = color.Gray{Y: 0xf4}
	ganttFrameColor = color.Gray{Y: 0xaa}
)

const ganttFont = "Sans" // Liberation Sans, as internal/plot

// SaveGantt draws a and b as two Gantt charts, a on top and b below, on
// the same time axis (ms since each trace's first task start, from 0 to
// the longer makespan, data areas aligned) and writes the figure to path:
// PNG or SVG by the extension (.png, .svg, any letter case). Each panel has
// one row per worker (Trace.Workers, first worker on top, labelled with
// WorkerInfo.Label) and one rectangle per task from StartTime to EndTime,
// colored by kernel name; one legend, right of the panels, lists the
// kernels of both traces. The output is deterministic (no maps iterated,
// no clock; see internal/plot for the backends' determinism).
func SaveGantt(a, b *Trace, path string) error {
	format := strings.ToLower(filepath.Ext(path))
	if format != ".png" && format != ".svg" {
		return fmt.Errorf("traces: cannot save Gantt chart %q: unsupported extension %q (want .png or .svg)", path, filepath.Ext(path))
	}
	if a == nil || b == nil {
		return errors.New("traces: SaveGantt needs two traces")
	}
	var buf bytes.Buffer
	if err := renderGantt(&buf, a, b, format); err != nil {
		return fmt.Errorf("traces: cannot save Gantt chart %q: %w", path, err)
	}
	return atomicfile.WriteFile(path, buf.Bytes())
}

// ganttPanel is one trace's chart and its height.
type ganttPanel struct {
	p     *plot.Plot
	dataH vg.Length
}

func renderGantt(out io.Writer, a, b *Trace, format string) (err error) {
	defer func() {
		if r := recover(); r != nil { // gonum/plot reports some problems by panicking
			err = fmt.Errorf("gonum/plot failed: %v", r)
		}
	}()
	// Kernel colors: sorted names of both traces.
	seen := map[string]bool{}
	var kernels []string
	for _, t := range []*Trace{a, b} {
		for i := range t.Tasks {
			n := kernelName(&t.Tasks[i])
			if !seen[n] {
				seen[n] = true
				kernels = append(kernels, n)
			}
		}
	}
	sort.Strings(kernels)
	colors := make(map[string]color.Color, len(kernels))
	for i, k := range kernels {
		colors[k] = ganttPalette[i%len(ganttPalette)]
	}
	xmax := math.Max(a.Makespan(), b.Makespan())
	if xmax <= 0 {
		xmax = 1
	}
	panels := []ganttPanel{newGanttPanel("A", a, colors, xmax), newGanttPanel("B", b, colors, xmax)}

	leg := plot.NewLegend()
	leg.Top, leg.Left = true, true
	leg.TextStyle.Font.Size = vg.Points(10)
	leg.TextStyle.Font.Variant = ganttFont
	leg.ThumbnailWidth = vg.Points(18)
	leg.Padding = vg.Points(3)
	for _, k := range kernels {
		leg.Add(k, ganttSwatch{colors[k]})
	}

	height := 2*ganttMargin + ganttPanelGap
	for _, p := range panels {
		height += p.dataH + ganttOverhead
	}
	var cw vg.CanvasWriterTo
	switch format {
	case ".png":
		cw = vgimg.PngCanvas{Canvas: vgimg.New(ganttWidth, height)}
	case ".svg":
		cw = vgsvg.New(ganttWidth, height)
	default:
		return errors.New("unsupported format " + format)
	}
	c := draw.New(cw)
	c.SetColor(color.White)
	c.Fill(c.Rectangle.Path())
	c = draw.Crop(c, ganttMargin, -ganttMargin, ganttMargin, -ganttMargin)

	// Legend frame on the right; panels on the left.
	legSize := leg.Rectangle(c).Size()
	frameW := legSize.X + 2*ganttLegendPad
	if len(kernels) == 0 {
		frameW = 0
	}
	plotsC := draw.Crop(c, 0, -(frameW + ganttLegendGap), 0, 0)

	// Panel canvases, top to bottom, then aligned: every data area gets
	// the widest left (Y labels) and right paddings.
	canv := make([]draw.Canvas, len(panels))
	top := plotsC.Max.Y
	for i, p := range panels {
		h := p.dataH + ganttOverhead
		canv[i] = draw.Canvas{Canvas: plotsC.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: plotsC.Min.X, Y: top - h}, Max: vg.Point{X: plotsC.Max.X, Y: top}}}
		top -= h + ganttPanelGap
	}
	var left, right vg.Length
	for i, p := range panels {
		dc := p.p.DataCanvas(canv[i])
		left = max(left, dc.Min.X-canv[i].Min.X)
		right = max(right, canv[i].Max.X-dc.Max.X)
	}
	var dataTop vg.Length
	for i, p := range panels {
		dc := p.p.DataCanvas(canv[i])
		cc := draw.Crop(canv[i], left-(dc.Min.X-canv[i].Min.X), -(right - (canv[i].Max.X - dc.Max.X)), 0, 0)
		p.p.Draw(cc)
		if i == 0 {
			dataTop = p.p.DataCanvas(cc).Max.Y
		}
	}

	if len(kernels) > 0 {
		frame := vg.Rectangle{
			Min: vg.Point{X: c.Max.X - frameW, Y: dataTop - legSize.Y - 2*ganttLegendPad},
			Max: vg.Point{X: c.Max.X, Y: dataTop},
		}
		c.SetColor(color.White)
		c.Fill(frame.Path())
		c.StrokeLines(draw.LineStyle{Color: ganttFrameColor, Width: vg.Points(0.75)}, []vg.Point{
			frame.Min, {X: frame.Max.X, Y: frame.Min.Y}, frame.Max, {X: frame.Min.X, Y: frame.Max.Y}, frame.Min,
		})
		leg.Draw(draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: frame.Min.X + ganttLegendPad, Y: frame.Min.Y + ganttLegendPad},
			Max: vg.Point{X: frame.Max.X - ganttLegendPad, Y: frame.Max.Y - ganttLegendPad},
		}})
	}
	_, err = cw.WriteTo(out)
	return err
}

func kernelName(t *TaskRecord) string {
	switch {
	case t.Name != "":
		return t.Name
	case t.Model != "":
		return t.Model
	}
	return "(unnamed)"
}

// newGanttPanel builds the chart of trace t ("A" or "B").
func newGanttPanel(side string, t *Trace, colors map[string]color.Color, xmax float64) ganttPanel {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s: %s (%s), makespan %.1f ms, %d tasks", side, shortName(t.Name), t.Format, t.Makespan(), len(t.Tasks))
	p.Title.TextStyle.Font.Size = vg.Points(12)
	p.Title.TextStyle.Font.Variant = ganttFont
	p.Title.Padding = vg.Points(6)
	p.X.Label.Text = "time since the first task start (ms)"
	for _, ax := range []*plot.Axis{&p.X, &p.Y} {
		ax.Label.TextStyle.Font.Size = vg.Points(11)
		ax.Label.TextStyle.Font.Variant = ganttFont
		ax.Tick.Label.Font.Size = vg.Points(9)
		ax.Tick.Label.Font.Variant = ganttFont
	}

	// Rows: Trace.Workers, plus any worker of a task missing there.
	rowOf := map[int]int{}
	var labels []string
	for _, w := range t.Workers {
		rowOf[w.ID] = len(labels)
		labels = append(labels, w.Label())
	}
	for i := range t.Tasks {
		id := *t.Tasks[i].WorkerID
		if _, ok := rowOf[id]; !ok {
			rowOf[id] = len(labels)
			labels = append(labels, fmt.Sprintf("w%d", id))
		}
	}
	n := len(labels)
	if n > 24 {
		p.Y.Tick.Label.Font.Size = vg.Points(7)
	}
	// Row k (worker order) is drawn at y = n-1-k: the first worker on top.
	ticks := make([]plot.Tick, n)
	for k, l := range labels {
		ticks[n-1-k] = plot.Tick{Value: float64(n - 1 - k), Label: l}
	}
	p.Y.Tick.Marker = plot.ConstantTicks(ticks)
	p.Y.Min, p.Y.Max = -0.5, math.Max(float64(n)-0.5, 0.5)
	p.X.Min, p.X.Max = 0, xmax
	p.X.Tick.Marker = plot.ConstantTicks(timeTicks(xmax))

	t0 := t.Start()
	bars := ganttBars{rows: n}
	for i := range t.Tasks {
		r := &t.Tasks[i]
		bars.bars = append(bars.bars, ganttBar{
			x0: *r.StartTime - t0, x1: *r.EndTime - t0,
			y:     float64(n - 1 - rowOf[*r.WorkerID]),
			color: colors[kernelName(r)],
		})
	}
	p.Add(bars)

	dataH := ganttRowHeight * vg.Length(n)
	dataH = min(max(dataH, ganttMinData), ganttMaxData)
	return ganttPanel{p: p, dataH: dataH}
}

// timeTicks labels about 10 round instants (step 1, 2 or 5 x 10^k ms)
// from 0 to xmax, with an unlabelled tick between two labelled ones.
func timeTicks(xmax float64) []plot.Tick {
	raw := xmax / 10
	step := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*step >= raw {
			step *= m
			break
		}
	}
	decimals := max(0, int(-math.Floor(math.Log10(step)+1e-9)))
	var ticks []plot.Tick
	for i := 0; ; i++ {
		v := float64(i) * step / 2
		if v > xmax*(1+1e-9) {
			break
		}
		t := plot.Tick{Value: v}
		if i%2 == 0 {
			t.Label = strconv.FormatFloat(float64(i/2)*step, 'f', decimals, 64)
		}
		ticks = append(ticks, t)
	}
	return ticks
}

// shortName keeps the end of a long trace name.
func shortName(s string) string {
	const max = 70
	if r := []rune(s); len(r) > max {
		return "…" + string(r[len(r)-max+1:])
	}
	return s
}

// ganttBar is one task: [x0, x1] ms on row y.
type ganttBar struct {
	x0, x1, y float64
	color     color.Color
}

// ganttBars is a plot.Plotter drawing the task rectangles over row bands
// and vertical grid lines at the X ticks.
type ganttBars struct {
	rows int
	bars []ganttBar
}

// Plot implements plot.Plotter.
func (g ganttBars) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	// Alternate rows get a light band, so a row is easy to follow.
	for k := 0; k < g.rows; k += 2 {
		y := float64(g.rows - 1 - k)
		c.SetColor(ganttBandColor)
		c.Fill(rectPath(c.Min.X, trY(y-0.5), c.Max.X, trY(y+0.5)))
	}
	grid := draw.LineStyle{Color: ganttGridColor, Width: vg.Points(0.5)}
	for _, t := range p.X.Tick.Marker.Ticks(p.X.Min, p.X.Max) {
		if t.Value < p.X.Min || t.Value > p.X.Max {
			continue
		}
		x := trX(t.Value)
		c.StrokeLine2(grid, x, c.Min.Y, x, c.Max.Y)
	}
	// Bars 80% of a row high, at least 0.5 pt wide so that the shortest
	// tasks show; a thin white edge separates back-to-back tasks.
	edge := draw.LineStyle{Color: color.White, Width: vg.Points(0.3)}
	minW := vg.Points(0.5)
	for _, b := range g.bars {
		x0, x1 := trX(b.x0), trX(b.x1)
		if x1-x0 < minW {
			x1 = x0 + minW
		}
		y0, y1 := trY(b.y-0.4), trY(b.y+0.4)
		path := rectPath(x0, y0, x1, y1)
		c.SetColor(b.color)
		c.Fill(path)
		if x1-x0 > 2*edge.Width {
			c.StrokeLines(edge, []vg.Point{{X: x0, Y: y0}, {X: x0, Y: y1}}, []vg.Point{{X: x1, Y: y0}, {X: x1, Y: y1}})
		}
	}
}

// DataRange implements plot.DataRanger.
func (g ganttBars) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax = math.Inf(1), math.Inf(-1)
	for _, b := range g.bars {
		xmin, xmax = math.Min(xmin, b.x0), math.Max(xmax, b.x1)
	}
	if len(g.bars) == 0 {
		xmin, xmax = 0, 1
	}
	return xmin, xmax, -0.5, float64(g.rows) - 0.5
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

// ganttSwatch is a legend thumbnail: a filled box of the kernel's color.
type ganttSwatch struct{ color color.Color }

// Thumbnail implements plot.Thumbnailer.
func (s ganttSwatch) Thumbnail(c *draw.Canvas) {
	r := c.Rectangle
	c.SetColor(s.color)
	c.Fill(rectPath(r.Min.X, r.Min.Y, r.Max.X, r.Max.Y))
}
