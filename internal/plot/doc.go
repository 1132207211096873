// Package plot draws starsim's figures with gonum.org/v1/plot.
//
// It has one job: turn a Figure (a titled line chart made of named
// series) into a PNG or SVG file whose look is consistent across all
// of starsim's reports. Every series gets its own color, point glyph
// and dash pattern, so curves stay distinguishable when printed in
// grayscale; the legend sits to the right of the data area, outside it,
// so it never hides a curve.
//
// Output is deterministic: the same Figure saved twice gives
// byte-identical files, for SVG and for PNG, within a process and
// across processes. gonum's SVG backend writes no date, random id or
// map-ordered content (its only map is a set of embedded fonts, never
// iterated), the PNG backend rasterizes with fixed fonts and encodes
// with image/png, and this package uses no maps or clocks. Text uses
// the Liberation fonts compiled into gonum/plot, so no system font is
// looked up. The SVG does not embed the fonts: it names them
// ("Liberation Sans"), and viewers without them substitute a
// metric-compatible font such as Arial. Bytes are only guaranteed for
// one build: another Go version (image/png, compress/flate) or another
// CPU architecture (Go fuses multiply-adds on arm64, not amd64) may
// change PNG pixels or the last SVG digit, so golden files should not
// be compared across platforms.
package plot
