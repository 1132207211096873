package plot

import (
	"errors"
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// recoverPlot, deferred by a Render function, turns a panic into *err:
// gonum/plot reports some problems by panicking.
func recoverPlot(err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("gonum/plot failed: %v", r)
	}
}

// newCanvas returns a w x h canvas that writes format (".png" or ".svg").
func newCanvas(format string, w, h vg.Length) (vg.CanvasWriterTo, error) {
	switch format {
	case ".png":
		return vgimg.PngCanvas{Canvas: vgimg.New(w, h)}, nil
	case ".svg":
		return vgsvg.New(w, h), nil
	}
	return nil, errors.New("unsupported format " + format)
}

// newPage returns a w x h canvas that writes format, painted white, and
// the part of it inside the margins, where the figure is drawn.
func newPage(format string, w, h vg.Length) (vg.CanvasWriterTo, draw.Canvas, error) {
	cw, err := newCanvas(format, w, h)
	if err != nil {
		return nil, draw.Canvas{}, err
	}
	c := draw.New(cw)
	c.SetColor(color.White)
	c.Fill(c.Rectangle.Path())
	return cw, draw.Crop(c, margin, -margin, margin, -margin), nil
}

// toPixels converts a length on the page to pixels of a PNG drawn at
// gonum's default resolution (vgimg.DefaultDPI).
func toPixels(v vg.Length) int {
	return int(math.Round(float64(v / vg.Inch * vg.Length(vgimg.DefaultDPI))))
}

// pixelRow is a PanelRow of kind for the data area da of a page of height
// pageH: its corners in pixels from the page's top left.
func pixelRow(kind string, da draw.Canvas, pageH vg.Length) PanelRow {
	return PanelRow{Kind: kind,
		X0: toPixels(da.Min.X), Y0: toPixels(pageH - da.Max.Y),
		X1: toPixels(da.Max.X), Y1: toPixels(pageH - da.Min.Y)}
}
