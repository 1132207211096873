package netsim

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"path/filepath"

	"github.com/starsim/starsim/internal/inputfile"
	"github.com/starsim/starsim/internal/jsonpos"
	"github.com/starsim/starsim/internal/srcerr"
)

// Link is an inline link of a scenario.
type Link struct {
	ID           string
	BandwidthBps float64
	LatencyS     float64
	Sharing      string // "SHARED" or "FATPIPE"
	Line         int
}

// Route is an inline one-way route.
type Route struct {
	Src, Dst string
	Links    []string
	Line     int
}

// Flow is one transfer to simulate.
type Flow struct {
	ID       string
	Src, Dst string
	Bytes    float64
	StartS   float64
	Line     int
}

// Scenario is a parsed scenario file. Either PlatformFile is set (an
// absolute or scenario-relative path, already joined with the scenario's
// directory) or Links and Routes are.
type Scenario struct {
	File         string
	PlatformFile string
	Links        []Link
	Routes       []Route
	Flows        []Flow
}

// ReadFile reads and validates a scenario file.
func ReadFile(path string) (*Scenario, error) {
	data, err := inputfile.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(data, path)
}

type rawLink struct {
	ID            *string  `json:"id"`
	Bandwidth     *float64 `json:"bandwidth"`
	Latency       *float64 `json:"latency"`
	SharingPolicy *string  `json:"sharing_policy"`
}

type rawRoute struct {
	Src   *string  `json:"src"`
	Dst   *string  `json:"dst"`
	Links []string `json:"links"`
}

type rawFlow struct {
	ID    *string  `json:"id"`
	Src   *string  `json:"src"`
	Dst   *string  `json:"dst"`
	Bytes *float64 `json:"bytes"`
	Start *float64 `json:"start"`
}

// Parse reads a scenario from data; name is the file name used in errors and
// to resolve a relative platform_file.
func Parse(data []byte, name string) (*Scenario, error) {
	p := &parser{data: data, file: name, dec: json.NewDecoder(bytes.NewReader(data))}
	sc, err := p.scenario()
	if err != nil {
		return nil, err
	}
	return sc, nil
}

type parser struct {
	data []byte
	file string
	dec  *json.Decoder
}

func (p *parser) errAt(off int64, format string, args ...any) error {
	return srcerr.Errorf(p.file, srcerr.LineOf(p.data, off), format, args...)
}

// jsonErr turns a decoding error into FILE:LINE: reason.
func (p *parser) jsonErr(err error, what string) error {
	return jsonpos.DecodeError(p.data, p.file, what, err, p.dec.InputOffset())
}

// next returns the next token and the offset where it starts.
func (p *parser) next(what string) (json.Token, int64, error) {
	start := p.skipSpace(p.dec.InputOffset())
	tok, err := p.dec.Token()
	if err != nil {
		return nil, start, p.jsonErr(err, what)
	}
	return tok, start, nil
}

// skipSpace returns the offset of the first byte at or after off that is not
// JSON whitespace or a separator.
func (p *parser) skipSpace(off int64) int64 {
	for off < int64(len(p.data)) {
		switch p.data[off] {
		case ' ', '\t', '\n', '\r', ',', ':':
			off++
		default:
			return off
		}
	}
	return off
}

func (p *parser) scenario() (*Scenario, error) {
	tok, off, err := p.next("scenario")
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, p.errAt(off, "a scenario must be a JSON object")
	}
	sc := &Scenario{File: p.file}
	seen := map[string]bool{}
	for p.dec.More() {
		tok, off, err := p.next("scenario")
		if err != nil {
			return nil, err
		}
		key := tok.(string)
		if seen[key] {
			return nil, p.errAt(off, "duplicate key %q", key)
		}
		seen[key] = true
		switch key {
		case "links":
			err = p.array(key, func(off int64) error { return p.link(sc, off) })
		case "routes":
			err = p.array(key, func(off int64) error { return p.route(sc, off) })
		case "flows":
			err = p.array(key, func(off int64) error { return p.flow(sc, off) })
		case "platform_file":
			var s string
			if err = p.dec.Decode(&s); err != nil {
				err = p.jsonErr(err, key)
			} else if s == "" {
				err = p.errAt(off, "platform_file is empty")
			} else {
				sc.PlatformFile = s
				if !filepath.IsAbs(s) {
					sc.PlatformFile = filepath.Join(filepath.Dir(p.file), s)
				}
			}
		default: // unknown top-level keys are ignored
			var skip json.RawMessage
			if err = p.dec.Decode(&skip); err != nil {
				err = p.jsonErr(err, key)
			}
		}
		if err != nil {
			return nil, err
		}
	}
	if _, _, err := p.next("scenario"); err != nil { // closing brace
		return nil, err
	}
	if tok, off, err := p.next("scenario"); err == nil || tok != nil {
		return nil, p.errAt(off, "unexpected data after the scenario object")
	}
	return sc, p.validate(sc, seen)
}

func (p *parser) array(key string, elem func(off int64) error) error {
	tok, off, err := p.next(key)
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return p.errAt(off, "%s must be a JSON array", key)
	}
	for p.dec.More() {
		start := p.skipSpace(p.dec.InputOffset())
		if err := elem(start); err != nil {
			return err
		}
	}
	_, _, err = p.next(key)
	return err
}

// decodeElem decodes one array element strictly (unknown keys are errors).
func (p *parser) decodeElem(v any, what string) error {
	var raw json.RawMessage
	if err := p.dec.Decode(&raw); err != nil {
		return p.jsonErr(err, what)
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return err
	}
	return nil
}

func (p *parser) elemErr(off int64, what string, err error) error {
	if se := (*srcerr.Error)(nil); errors.As(err, &se) {
		return err // located already (decodeElem's JSON errors)
	}
	var typ *json.UnmarshalTypeError
	if errors.As(err, &typ) {
		return p.errAt(off+typ.Offset, "%s: field %q: expected %s, got JSON %s", what, typ.Field, typ.Type, typ.Value)
	}
	if errors.As(err, new(*json.SyntaxError)) {
		return p.errAt(off, "%s: %v", what, err)
	}
	// DisallowUnknownFields: `json: unknown field "x"`.
	return p.errAt(off, "%s: %v", what, err)
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// Bounds of a scenario's numbers: simulated times to about 31.7 years,
// where float64 seconds still resolve 0.1 µs; sizes and bandwidths to an
// exabyte (per second).
const (
	MaxTimeS        = 1e9
	MaxBytes        = 1e18
	MaxBandwidthBps = 1e18
)

func (p *parser) link(sc *Scenario, off int64) error {
	var r rawLink
	if err := p.decodeElem(&r, "link"); err != nil {
		return p.elemErr(off, "link", err)
	}
	l := Link{Line: srcerr.LineOf(p.data, off), Sharing: "SHARED"}
	if r.ID == nil || *r.ID == "" {
		return p.errAt(off, "link: missing \"id\"")
	}
	l.ID = *r.ID
	if r.Bandwidth == nil {
		return p.errAt(off, "link %q: missing \"bandwidth\" (B/s)", l.ID)
	}
	l.BandwidthBps = *r.Bandwidth
	if !(l.BandwidthBps > 0) || !(l.BandwidthBps <= MaxBandwidthBps) {
		return p.errAt(off, "link %q: bandwidth must be > 0 and at most %g B/s, got %v", l.ID, MaxBandwidthBps, l.BandwidthBps)
	}
	if r.Latency != nil {
		l.LatencyS = *r.Latency
	}
	if !(l.LatencyS >= 0) || !(l.LatencyS <= MaxTimeS) {
		return p.errAt(off, "link %q: latency must be >= 0 and at most %g s, got %v", l.ID, MaxTimeS, l.LatencyS)
	}
	if r.SharingPolicy != nil {
		switch *r.SharingPolicy {
		case "SHARED", "FATPIPE":
			l.Sharing = *r.SharingPolicy
		default:
			return p.errAt(off, "link %q: sharing_policy must be SHARED or FATPIPE, got %q", l.ID, *r.SharingPolicy)
		}
	}
	sc.Links = append(sc.Links, l)
	return nil
}

func (p *parser) route(sc *Scenario, off int64) error {
	var r rawRoute
	if err := p.decodeElem(&r, "route"); err != nil {
		return p.elemErr(off, "route", err)
	}
	if r.Src == nil || r.Dst == nil || *r.Src == "" || *r.Dst == "" {
		return p.errAt(off, "route: missing \"src\" or \"dst\"")
	}
	if len(r.Links) == 0 {
		return p.errAt(off, "route %s->%s: \"links\" must list at least one link id", *r.Src, *r.Dst)
	}
	sc.Routes = append(sc.Routes, Route{Src: *r.Src, Dst: *r.Dst, Links: r.Links, Line: srcerr.LineOf(p.data, off)})
	return nil
}

func (p *parser) flow(sc *Scenario, off int64) error {
	var r rawFlow
	if err := p.decodeElem(&r, "flow"); err != nil {
		return p.elemErr(off, "flow", err)
	}
	f := Flow{Line: srcerr.LineOf(p.data, off)}
	if r.ID == nil || *r.ID == "" {
		return p.errAt(off, "flow: missing \"id\"")
	}
	f.ID = *r.ID
	if r.Src == nil || r.Dst == nil || *r.Src == "" || *r.Dst == "" {
		return p.errAt(off, "flow %q: missing \"src\" or \"dst\"", f.ID)
	}
	f.Src, f.Dst = *r.Src, *r.Dst
	if r.Bytes == nil {
		return p.errAt(off, "flow %q: missing \"bytes\"", f.ID)
	}
	f.Bytes = *r.Bytes
	if !(f.Bytes >= 0) || !(f.Bytes <= MaxBytes) {
		return p.errAt(off, "flow %q: bytes must be >= 0 and at most %g, got %v", f.ID, MaxBytes, f.Bytes)
	}
	if r.Start != nil {
		f.StartS = *r.Start
	}
	if !(f.StartS >= 0) || !(f.StartS <= MaxTimeS) {
		return p.errAt(off, "flow %q: start must be >= 0 and at most %g s, got %v", f.ID, MaxTimeS, f.StartS)
	}
	sc.Flows = append(sc.Flows, f)
	return nil
}

// validate checks cross-references of an inline scenario. Flows of a
// platform scenario are checked against the platform when it is loaded.
func (p *parser) validate(sc *Scenario, seen map[string]bool) error {
	at := func(line int, format string, args ...any) error {
		return srcerr.Errorf(p.file, line, format, args...)
	}
	if sc.PlatformFile != "" && (seen["links"] || seen["routes"]) {
		return at(0, "give either \"platform_file\" or \"links\"/\"routes\", not both")
	}
	if sc.PlatformFile == "" && !seen["links"] {
		return at(0, "missing \"links\" and \"routes\" (or \"platform_file\")")
	}
	links := map[string]bool{}
	for _, l := range sc.Links {
		if links[l.ID] {
			return at(l.Line, "duplicate link id %q", l.ID)
		}
		links[l.ID] = true
	}
	routes := map[[2]string]bool{}
	for _, r := range sc.Routes {
		for _, id := range r.Links {
			if !links[id] {
				return at(r.Line, "route %s->%s: unknown link %q", r.Src, r.Dst, id)
			}
		}
		k := [2]string{r.Src, r.Dst}
		if routes[k] {
			return at(r.Line, "duplicate route %s->%s", r.Src, r.Dst)
		}
		routes[k] = true
	}
	flows := map[string]bool{}
	for _, f := range sc.Flows {
		if flows[f.ID] {
			return at(f.Line, "duplicate flow id %q", f.ID)
		}
		flows[f.ID] = true
		if sc.PlatformFile == "" && !routes[[2]string{f.Src, f.Dst}] {
			return at(f.Line, "flow %q: no route from %q to %q", f.ID, f.Src, f.Dst)
		}
	}
	return nil
}
