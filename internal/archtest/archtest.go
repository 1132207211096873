// Package archtest checks that imports go one way, as the README's layer
// drawing says: a package imports only packages of its own layer or of the
// layers below it. Its test runs `go list` on the module and checks every
// non-test import (tests may use the whole product).
//
// The drawing is the README's fenced block that follows the line
// "Layers, top to bottom:". Each line is a layer, its entries separated by
// blanks; an entry is a package path relative to the module ("calibrate")
// or, ending in "/...", a path and everything beneath it ("runtime/...").
// A package belongs to the layer of its most specific entry (the longest
// path that matches it); a package no entry matches is an error, so a new
// package needs a place in the drawing.
package archtest

import (
	"bufio"
	"bytes"
	"fmt"
	"sort"
	"strings"
)

// Layers is the drawing: for each entry, its layer (0 = bottom).
type Layers struct {
	exact, tree map[string]int
}

// marker introduces the drawing in the README.
const marker = "Layers, top to bottom:"

// Parse reads the drawing from the README's text.
func Parse(readme []byte) (*Layers, error) {
	var rows [][]string
	sc := bufio.NewScanner(bytes.NewReader(readme))
	state := 0 // 0: before the marker, 1: before the fence, 2: inside
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case state == 0 && strings.HasSuffix(line, marker):
			state = 1
		case state == 1 && strings.HasPrefix(line, "```"):
			state = 2
		case state == 2 && strings.HasPrefix(line, "```"):
			return build(rows)
		case state == 2 && line != "":
			rows = append(rows, strings.Fields(line))
		}
	}
	return nil, fmt.Errorf("README: no fenced block after %q", marker)
}

func build(rows [][]string) (*Layers, error) {
	if len(rows) == 0 {
		return nil, fmt.Errorf("README: empty layer drawing")
	}
	l := &Layers{exact: map[string]int{}, tree: map[string]int{}}
	for i, row := range rows {
		layer := len(rows) - 1 - i
		for _, e := range row {
			m, p := l.exact, e
			if strings.HasSuffix(e, "/...") {
				m, p = l.tree, strings.TrimSuffix(e, "/...")
			}
			if _, dup := m[p]; dup {
				return nil, fmt.Errorf("README: %s is drawn twice", e)
			}
			m[p] = layer
		}
	}
	return l, nil
}

// Layer returns the layer of pkg (a path relative to the module); ok is
// false when no entry matches it.
func (l *Layers) Layer(pkg string) (layer int, ok bool) {
	if n, ok := l.exact[pkg]; ok {
		return n, true
	}
	for p := pkg; ; {
		if n, ok := l.tree[p]; ok {
			return n, true
		}
		i := strings.LastIndexByte(p, '/')
		if i < 0 {
			return 0, false
		}
		p = p[:i]
	}
}

// Check returns the violations among imports (package -> the packages it
// imports, paths relative to the module): an import of a higher layer, or
// a package the drawing does not place. Sorted, one line each.
func (l *Layers) Check(imports map[string][]string) []string {
	var out []string
	for pkg, imps := range imports {
		from, ok := l.Layer(pkg)
		if !ok {
			out = append(out, pkg+": not in the README's layer drawing")
			continue
		}
		for _, imp := range imps {
			to, ok := l.Layer(imp)
			switch {
			case !ok:
				out = append(out, pkg+" imports "+imp+", which is not in the README's layer drawing")
			case to > from:
				out = append(out, fmt.Sprintf("%s (layer %d) imports %s (layer %d): upward", pkg, from, imp, to))
			}
		}
	}
	sort.Strings(out)
	return out
}
