package main

import (
	"bytes"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// table is a terminal table, drawn by olekukonko/tablewriter in one plain
// style: the header underlined with dashes, columns two spaces apart, no
// borders, numbers right-aligned, text left-aligned, no trailing spaces.
// Its bytes are pinned by golden tests (tablewriter's output has changed
// between releases; go.mod pins the version).
type table struct {
	header []string
	rows   [][]string
}

// newTable starts a table with its column headers.
func newTable(header ...string) *table { return &table{header: header} }

// row adds a row, one cell per column.
func (t *table) row(cells ...string) { t.rows = append(t.rows, cells) }

// write draws the table to w.
func (t *table) write(w io.Writer) error {
	align := make([]tw.Align, len(t.header))
	for c := range align {
		align[c] = tw.AlignLeft
		if t.numeric(c) {
			align[c] = tw.AlignRight
		}
	}
	var buf bytes.Buffer
	tab := tablewriter.NewTable(&buf,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{
			Borders: tw.BorderNone,
			Symbols: tw.NewSymbols(tw.StyleASCII),
			Settings: tw.Settings{
				Separators: tw.Separators{BetweenColumns: tw.Off, BetweenRows: tw.Off, ShowHeader: tw.On},
				Lines:      tw.Lines{ShowHeaderLine: tw.On},
			},
		})),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignmentConfig(tw.CellAlignment{PerColumn: align}),
		tablewriter.WithRowAlignmentConfig(tw.CellAlignment{PerColumn: align}),
		tablewriter.WithPadding(tw.Padding{Left: "", Right: "  ", Overwrite: true}),
		tablewriter.WithTrimSpace(tw.Off),
		tablewriter.WithHeaderAutoWrap(tw.WrapNone),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
	)
	tab.Header(t.header)
	for _, r := range t.rows {
		if err := tab.Append(r); err != nil {
			return err
		}
	}
	if err := tab.Render(); err != nil {
		return err
	}
	// The padding after the last column goes, and the header's rule
	// spans the widest line.
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	width := 0
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
		if strings.Trim(lines[i], "-") != "" {
			width = max(width, utf8.RuneCountInString(lines[i]))
		}
	}
	for i, l := range lines {
		if l != "" && strings.Trim(l, "-") == "" {
			lines[i] = strings.Repeat("-", width)
		}
	}
	_, err := io.WriteString(w, strings.Join(lines, "\n")+"\n")
	return err
}

// numeric says whether every cell of column c is a number ("-" marks a
// value that is absent).
func (t *table) numeric(c int) bool {
	any := false
	for _, r := range t.rows {
		if c >= len(r) || r[c] == "" || r[c] == "-" {
			continue
		}
		if _, err := strconv.ParseFloat(strings.TrimPrefix(r[c], "+"), 64); err != nil {
			return false
		}
		any = true
	}
	return any
}
