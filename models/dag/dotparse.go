package dag

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/starsim/starsim/internal/srcerr"
)

// A small reader of the Graphviz DOT language (graphviz.org/doc/info/lang.html):
// the whole grammar except edges to or from subgraphs, which task graphs
// do not use. gonum's DOT parser was not used: its syntax tree carries no
// positions, and every fault here must name its line.

// dotTok is a token of the DOT language.
type dotTok struct {
	kind byte   // 'i' identifier (any ID form), 'k' keyword, 'e' edge op, or the punctuation itself
	text string // the ID's value (quotes removed, escapes applied); the keyword in lower case
	line int
}

type dotLexer struct {
	src  []byte
	pos  int
	line int
	file string
}

func (l *dotLexer) errf(format string, args ...any) error {
	return srcerr.Errorf(l.file, l.line, format, args...)
}

// skip passes blanks, comments and '#' lines (C preprocessor output).
func (l *dotLexer) skip() error {
	atLineStart := l.pos == 0 || l.src[l.pos-1] == '\n'
	for l.pos < len(l.src) {
		c := l.src[l.pos]
		switch {
		case c == '\n':
			l.line++
			l.pos++
			atLineStart = true
			continue
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			l.pos++
			continue
		case c == '#' && atLineStart:
			for l.pos < len(l.src) && l.src[l.pos] != '\n' {
				l.pos++
			}
			continue
		case c == '/' && l.pos+1 < len(l.src) && l.src[l.pos+1] == '/':
			for l.pos < len(l.src) && l.src[l.pos] != '\n' {
				l.pos++
			}
			continue
		case c == '/' && l.pos+1 < len(l.src) && l.src[l.pos+1] == '*':
			start := l.line
			l.pos += 2
			for {
				if l.pos+1 >= len(l.src) {
					l.line = start
					return l.errf("comment /* not closed")
				}
				if l.src[l.pos] == '*' && l.src[l.pos+1] == '/' {
					l.pos += 2
					break
				}
				if l.src[l.pos] == '\n' {
					l.line++
				}
				l.pos++
			}
			continue
		}
		return nil
	}
	return nil
}

func isIDStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// next returns the next token; kind 0 at the end.
func (l *dotLexer) next() (dotTok, error) {
	if err := l.skip(); err != nil {
		return dotTok{}, err
	}
	if l.pos >= len(l.src) {
		return dotTok{line: l.line}, nil
	}
	line := l.line
	c := l.src[l.pos]
	switch {
	case strings.IndexByte("{}[]=;,:", c) >= 0:
		l.pos++
		return dotTok{kind: c, text: string(c), line: line}, nil
	case c == '-' && l.pos+1 < len(l.src) && (l.src[l.pos+1] == '>' || l.src[l.pos+1] == '-'):
		op := string(l.src[l.pos : l.pos+2])
		l.pos += 2
		return dotTok{kind: 'e', text: op, line: line}, nil
	case isIDStart(c):
		s := l.pos
		for l.pos < len(l.src) && (isIDStart(l.src[l.pos]) || isDigit(l.src[l.pos])) {
			l.pos++
		}
		word := string(l.src[s:l.pos])
		switch lw := strings.ToLower(word); lw {
		case "node", "edge", "graph", "digraph", "subgraph", "strict":
			return dotTok{kind: 'k', text: lw, line: line}, nil
		}
		return dotTok{kind: 'i', text: word, line: line}, nil
	case c == '-' || c == '.' || isDigit(c):
		s := l.pos
		if c == '-' {
			l.pos++
		}
		digits, dot := 0, false
		for l.pos < len(l.src) {
			d := l.src[l.pos]
			if isDigit(d) {
				digits++
			} else if d == '.' && !dot {
				dot = true
			} else {
				break
			}
			l.pos++
		}
		if digits == 0 {
			return dotTok{}, l.errf("%q is not a number", string(l.src[s:l.pos]))
		}
		if l.pos < len(l.src) && isIDStart(l.src[l.pos]) {
			e := l.pos
			for e < len(l.src) && (isIDStart(l.src[e]) || isDigit(l.src[e]) || l.src[e] == '+' || l.src[e] == '-' || l.src[e] == '.') {
				e++
			}
			return dotTok{}, l.errf("%s: a DOT number has no exponent nor letters: quote it (\"%s\")", l.src[s:e], l.src[s:e])
		}
		return dotTok{kind: 'i', text: string(l.src[s:l.pos]), line: line}, nil
	case c == '"':
		return l.quoted()
	case c == '<':
		return l.html()
	}
	return dotTok{}, l.errf("unexpected character %q", string(rune(c)))
}

// quoted reads a double-quoted string, and those '+' joins to it.
func (l *dotLexer) quoted() (dotTok, error) {
	line := l.line
	var b strings.Builder
	for {
		l.pos++ // the opening quote
		for {
			if l.pos >= len(l.src) {
				l.line = line
				return dotTok{}, l.errf("string not closed")
			}
			c := l.src[l.pos]
			if c == '"' {
				l.pos++
				break
			}
			if c == '\\' && l.pos+1 < len(l.src) {
				switch n := l.src[l.pos+1]; n {
				case '"':
					b.WriteByte('"')
					l.pos += 2
					continue
				case '\n': // a line continuation
					l.line++
					l.pos += 2
					continue
				case '\r':
					if l.pos+2 < len(l.src) && l.src[l.pos+2] == '\n' {
						l.line++
						l.pos += 3
						continue
					}
				}
			}
			if c == '\n' {
				l.line++
			}
			b.WriteByte(c)
			l.pos++
		}
		// "a" + "b" is one string.
		save, saveLine := l.pos, l.line
		if err := l.skip(); err != nil {
			return dotTok{}, err
		}
		if l.pos < len(l.src) && l.src[l.pos] == '+' {
			l.pos++
			if err := l.skip(); err != nil {
				return dotTok{}, err
			}
			if l.pos < len(l.src) && l.src[l.pos] == '"' {
				continue
			}
			return dotTok{}, l.errf("'+' must join two quoted strings")
		}
		l.pos, l.line = save, saveLine
		return dotTok{kind: 'i', text: b.String(), line: line}, nil
	}
}

// html reads an HTML string <...> (nested angle brackets balanced).
func (l *dotLexer) html() (dotTok, error) {
	line, s, depth := l.line, l.pos, 0
	for l.pos < len(l.src) {
		switch l.src[l.pos] {
		case '<':
			depth++
		case '>':
			depth--
			if depth == 0 {
				l.pos++
				return dotTok{kind: 'i', text: string(l.src[s+1 : l.pos-1]), line: line}, nil
			}
		case '\n':
			l.line++
		}
		l.pos++
	}
	l.line = line
	return dotTok{}, l.errf("HTML string < not closed")
}

// dotAttr is one attribute as written: its value and line.
type dotAttr struct {
	val  string
	line int
}

// dotNode is a node: its ID, the line it first appears on, its
// attributes (defaults in force where it first appears, then its own).
type dotNode struct {
	id    string
	line  int
	attrs map[string]dotAttr
	// declared: a node statement names it; line is then that
	// statement's (its place in the file), else its first appearance.
	declared bool
}

// dotEdge is one edge a -> b, with its attributes.
type dotEdge struct {
	from, to int // node indexes
	line     int
	attrs    map[string]dotAttr
}

// dotGraph is a parsed DOT file.
type dotGraph struct {
	name     string // the graph's ID, if any
	directed bool
	nodes    []*dotNode
	index    map[string]int
	edges    []dotEdge
}

type dotParser struct {
	lex  *dotLexer
	tok  dotTok
	g    *dotGraph
	file string
	// maxItems bounds nodes and edges (a budget, not DOT's).
	maxItems int
}

func (p *dotParser) advance() error {
	t, err := p.lex.next()
	p.tok = t
	return err
}

func (p *dotParser) errf(format string, args ...any) error {
	return srcerr.Errorf(p.file, p.tok.line, format, args...)
}

func (p *dotParser) describe() string {
	switch p.tok.kind {
	case 0:
		return "the end of the file"
	case 'i':
		return fmt.Sprintf("%q", p.tok.text)
	case 'k':
		return "keyword " + p.tok.text
	}
	return fmt.Sprintf("%q", p.tok.text)
}

func (p *dotParser) expect(kind byte, what string) error {
	if p.tok.kind != kind {
		return p.errf("expected %s, found %s", what, p.describe())
	}
	return p.advance()
}

// parseDOT reads one graph.
func parseDOT(src []byte, file string, maxItems int) (*dotGraph, error) {
	if !utf8.Valid(src) {
		off := 0
		for off < len(src) {
			r, size := utf8.DecodeRune(src[off:])
			if r == utf8.RuneError && size == 1 {
				break
			}
			off += size
		}
		return nil, srcerr.Errorf(file, srcerr.LineOf(src, int64(off)), "not UTF-8 text (Graphviz's default charset)")
	}
	p := &dotParser{lex: &dotLexer{src: src, line: 1, file: file}, file: file, maxItems: maxItems,
		g: &dotGraph{index: map[string]int{}}}
	if err := p.advance(); err != nil {
		return nil, err
	}
	if p.tok.kind == 'k' && p.tok.text == "strict" {
		if err := p.advance(); err != nil {
			return nil, err
		}
	}
	switch {
	case p.tok.kind == 'k' && p.tok.text == "digraph":
		p.g.directed = true
	case p.tok.kind == 'k' && p.tok.text == "graph":
		return nil, p.errf("an undirected graph (graph): a task graph is a digraph, its edges dependencies")
	default:
		return nil, p.errf("expected digraph, found %s", p.describe())
	}
	if err := p.advance(); err != nil {
		return nil, err
	}
	if p.tok.kind == 'i' {
		p.g.name = p.tok.text
		if err := p.advance(); err != nil {
			return nil, err
		}
	}
	if err := p.expect('{', "'{'"); err != nil {
		return nil, err
	}
	if err := p.stmts(map[string]dotAttr{}, map[string]dotAttr{}); err != nil {
		return nil, err
	}
	if err := p.expect('}', "'}'"); err != nil {
		return nil, err
	}
	if p.tok.kind != 0 {
		return nil, p.errf("unexpected %s after the graph (one graph per file)", p.describe())
	}
	return p.g, nil
}

func clone(m map[string]dotAttr) map[string]dotAttr {
	out := make(map[string]dotAttr, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// stmts reads a statement list up to '}', with the node and edge
// attribute defaults in force (a subgraph scopes its own).
func (p *dotParser) stmts(nodeDef, edgeDef map[string]dotAttr) error {
	for p.tok.kind != '}' && p.tok.kind != 0 {
		if err := p.stmt(nodeDef, edgeDef); err != nil {
			return err
		}
		if p.tok.kind == ';' {
			if err := p.advance(); err != nil {
				return err
			}
		}
	}
	return nil
}

func (p *dotParser) stmt(nodeDef, edgeDef map[string]dotAttr) error {
	switch {
	case p.tok.kind == 'k' && (p.tok.text == "node" || p.tok.text == "edge" || p.tok.text == "graph"):
		which := p.tok.text
		if err := p.advance(); err != nil {
			return err
		}
		attrs := map[string]dotAttr{}
		if err := p.attrLists(attrs); err != nil {
			return err
		}
		switch which {
		case "node":
			for k, v := range attrs {
				nodeDef[k] = v
			}
		case "edge":
			for k, v := range attrs {
				edgeDef[k] = v
			}
		}
		return nil
	case p.tok.kind == 'k' && p.tok.text == "subgraph", p.tok.kind == '{':
		return p.subgraph(nodeDef, edgeDef)
	case p.tok.kind == 'i':
		first := p.tok
		if err := p.advance(); err != nil {
			return err
		}
		if p.tok.kind == '=' { // graph attribute ID = ID
			if err := p.advance(); err != nil {
				return err
			}
			return p.expect('i', "a value after '='")
		}
		if err := p.port(); err != nil {
			return err
		}
		if p.tok.kind == 'e' {
			return p.edges(first, nodeDef, edgeDef)
		}
		attrs := map[string]dotAttr{}
		if err := p.attrLists(attrs); err != nil {
			return err
		}
		n, err := p.node(first, nodeDef)
		if err != nil {
			return err
		}
		if !n.declared {
			n.declared, n.line = true, first.line
		}
		for k, v := range attrs {
			n.attrs[k] = v
		}
		return nil
	}
	return p.errf("expected a statement, found %s", p.describe())
}

// subgraph reads [subgraph [ID]] { stmts }: its statements join the graph;
// its defaults stay inside.
func (p *dotParser) subgraph(nodeDef, edgeDef map[string]dotAttr) error {
	if p.tok.kind == 'k' {
		if err := p.advance(); err != nil {
			return err
		}
		if p.tok.kind == 'i' {
			if err := p.advance(); err != nil {
				return err
			}
		}
	}
	if err := p.expect('{', "'{'"); err != nil {
		return err
	}
	if err := p.stmts(clone(nodeDef), clone(edgeDef)); err != nil {
		return err
	}
	if err := p.expect('}', "'}' closing the subgraph"); err != nil {
		return err
	}
	if p.tok.kind == 'e' {
		return p.errf("an edge from a subgraph: not supported, write the edges between nodes")
	}
	return nil
}

// port skips a node's port (":port[:compass]").
func (p *dotParser) port() error {
	for i := 0; i < 2 && p.tok.kind == ':'; i++ {
		if err := p.advance(); err != nil {
			return err
		}
		if err := p.expect('i', "a port after ':'"); err != nil {
			return err
		}
	}
	return nil
}

// edges reads the rest of a -> b [-> c ...] [attrs] after a.
func (p *dotParser) edges(first dotTok, nodeDef, edgeDef map[string]dotAttr) error {
	ends := []dotTok{first}
	for p.tok.kind == 'e' {
		if p.tok.text != "->" {
			return p.errf("'--' in a digraph: its edges are written ->")
		}
		if err := p.advance(); err != nil {
			return err
		}
		if p.tok.kind == '{' || p.tok.kind == 'k' && p.tok.text == "subgraph" {
			return p.errf("an edge to a subgraph: not supported, write the edges between nodes")
		}
		if p.tok.kind != 'i' {
			return p.errf("expected a node after ->, found %s", p.describe())
		}
		ends = append(ends, p.tok)
		if err := p.advance(); err != nil {
			return err
		}
		if err := p.port(); err != nil {
			return err
		}
	}
	attrs := clone(edgeDef)
	if err := p.attrLists(attrs); err != nil {
		return err
	}
	idx := make([]int, len(ends))
	for i, e := range ends {
		n, err := p.node(e, nodeDef)
		if err != nil {
			return err
		}
		idx[i] = p.g.index[n.id]
	}
	for i := 1; i < len(idx); i++ {
		if len(p.g.edges) >= p.maxItems {
			return p.errf("more than %d edges", p.maxItems)
		}
		p.g.edges = append(p.g.edges, dotEdge{from: idx[i-1], to: idx[i], line: ends[i].line, attrs: attrs})
	}
	return nil
}

// node returns the node named by t, creating it with the defaults in force.
func (p *dotParser) node(t dotTok, nodeDef map[string]dotAttr) (*dotNode, error) {
	if i, ok := p.g.index[t.text]; ok {
		return p.g.nodes[i], nil
	}
	if len(p.g.nodes) >= p.maxItems {
		return nil, srcerr.Errorf(p.file, t.line, "more than %d nodes", p.maxItems)
	}
	n := &dotNode{id: t.text, line: t.line, attrs: clone(nodeDef)}
	p.g.index[t.text] = len(p.g.nodes)
	p.g.nodes = append(p.g.nodes, n)
	return n, nil
}

// attrLists reads [a=b, c=d][...] into attrs (later ones win).
func (p *dotParser) attrLists(attrs map[string]dotAttr) error {
	for p.tok.kind == '[' {
		if err := p.advance(); err != nil {
			return err
		}
		for p.tok.kind != ']' {
			if p.tok.kind != 'i' {
				return p.errf("expected an attribute name or ']', found %s", p.describe())
			}
			key, line := p.tok.text, p.tok.line
			if err := p.advance(); err != nil {
				return err
			}
			if err := p.expect('=', "'=' after attribute "+key); err != nil {
				return err
			}
			if p.tok.kind != 'i' {
				return p.errf("expected a value for attribute %s, found %s", key, p.describe())
			}
			attrs[key] = dotAttr{val: p.tok.text, line: line}
			if err := p.advance(); err != nil {
				return err
			}
			if p.tok.kind == ',' || p.tok.kind == ';' {
				if err := p.advance(); err != nil {
					return err
				}
			}
		}
		if err := p.advance(); err != nil {
			return err
		}
	}
	return nil
}
