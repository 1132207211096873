package platforms

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/starsim/starsim/internal/inputfile"
	"github.com/starsim/starsim/internal/srcerr"
)

// maxDepth bounds element nesting so that hostile input cannot make the tree huge.
const maxDepth = 256

// ParseFile reads a SimGrid platform file. Errors are *srcerr.Error with File = path.
func ParseFile(path string) (*Platform, error) {
	data, err := inputfile.ReadFile(path)
	if err != nil {
		return nil, srcerr.Errorf(path, 0, "%v", err)
	}
	return Parse(data, path)
}

// Parse reads a SimGrid platform (v3, v4 or v4.1; <zone> or <AS>; speed= or
// power=) and flattens nested zones into one Platform, which it validates.
// Errors are *srcerr.Error with File = name and the line of the offending element.
//
// Unsupported on purpose, with a "not supported" error: non-Full routing,
// inter-zone and bypass routes, clusters, cabinets, peers, routers, disks,
// traces, SPLITDUPLEX and WIFI links, props of links and zones, and attributes
// starsim does not model (pstate, *_file, coordinates...). <actor>/<process>
// elements (deployment) are ignored. A host's core attribute is checked and
// ignored. Comments, DOCTYPE, processing instructions and text are ignored.
func Parse(data []byte, name string) (*Platform, error) {
	root, err := parseTree(data, name)
	if err != nil {
		return nil, err
	}
	r := &reader{file: name}
	p, err := r.platform(root)
	if err != nil {
		return nil, err
	}
	p.source = name
	idx, err := p.check(name, func(i, j int) int {
		if i < len(r.ctnLines) && j < len(r.ctnLines[i]) {
			return r.ctnLines[i][j]
		}
		return 0
	})
	if err != nil {
		return nil, err
	}
	p.idx = idx
	return p, nil
}

// element is an XML element with the line of its start tag, which is what
// errors point at (etree and encoding/xml's Unmarshal do not keep lines).
type element struct {
	xml.StartElement
	line     int
	children []*element
}

// parseTree reads the single root element of a well-formed XML document.
func parseTree(data []byte, file string) (*element, error) {
	dec := xml.NewDecoder(bytes.NewReader(data))
	dec.Strict = true
	var root *element
	var stack []*element
	for {
		line, _ := dec.InputPos() // the next token starts here: the '<' of a start tag
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			if se, ok := errors.AsType[*xml.SyntaxError](err); ok {
				return nil, srcerr.Errorf(file, se.Line, "malformed XML: %s", se.Msg)
			}
			line, _ = dec.InputPos()
			return nil, srcerr.Errorf(file, line, "malformed XML: %v", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			e := &element{StartElement: t.Copy(), line: line}
			if len(t.Attr) > 1 { // encoding/xml keeps both; SimGrid refuses them
				seen := make(map[xml.Name]bool, len(t.Attr))
				for _, a := range t.Attr {
					if seen[a.Name] {
						return nil, srcerr.Errorf(file, line, "<%s> has attribute %q twice", t.Name.Local, a.Name.Local)
					}
					seen[a.Name] = true
				}
			}
			switch {
			case len(stack) > 0:
				parent := stack[len(stack)-1]
				parent.children = append(parent.children, e)
			case root != nil:
				return nil, srcerr.Errorf(file, line, "malformed XML: more than one root element")
			default:
				root = e
			}
			if stack = append(stack, e); len(stack) > maxDepth {
				return nil, srcerr.Errorf(file, line, "elements nested deeper than %d", maxDepth)
			}
		case xml.EndElement:
			stack = stack[:len(stack)-1] // the decoder checked that it matches
		}
	}
	if root == nil {
		return nil, srcerr.Errorf(file, 1, "not a platform file: no root element")
	}
	return root, nil
}

// reader turns an element tree into a Platform.
type reader struct {
	file     string
	p        *Platform
	ctnLines [][]int // ctnLines[i][j]: line of link_ctn j of route i
}

func (r *reader) errorf(e *element, format string, args ...any) error {
	return srcerr.Errorf(r.file, e.line, format, args...)
}

// tag renders e's name as written (namespaced ones with their namespace).
func (e *element) tag() string {
	if e.Name.Space != "" {
		return e.Name.Space + ":" + e.Name.Local
	}
	return e.Name.Local
}

// is reports whether e is the un-namespaced element local.
func (e *element) is(local string) bool { return e.Name.Space == "" && e.Name.Local == local }

// Elements SimGrid knows but starsim does not model. Refusing them beats
// silently simulating another platform than the file describes.
var unsupported = map[string]string{
	"zoneRoute":       "inter-zone routes",
	"ASroute":         "inter-zone routes",
	"bypassRoute":     "bypass routes",
	"bypassASroute":   "bypass routes",
	"bypassZoneRoute": "bypass routes",
	"cluster":         "clusters",
	"cabinet":         "cabinets",
	"peer":            "peers",
	"host_link":       "host links",
	"backbone":        "backbones",
	"router":          "routers",
	"disk":            "disks",
	"trace":           "traces",
	"trace_connect":   "traces",
	"include":         "includes",
	"storage":         "storages",
	"storage_type":    "storages",
	"mount":           "storages",
}

// badChild reports an element that may not appear inside parent.
func (r *reader) badChild(e, parent *element) error {
	if what, ok := unsupported[e.Name.Local]; ok && e.Name.Space == "" {
		return r.errorf(e, "<%s> is not supported (starsim reads flat Full-routed platforms; no %s)", e.tag(), what)
	}
	return r.errorf(e, "unexpected element <%s> in <%s>", e.tag(), parent.tag())
}

// noChildren refuses any child element of e.
func (r *reader) noChildren(e *element) error {
	if len(e.children) > 0 {
		return r.badChild(e.children[0], e)
	}
	return nil
}

// attrs returns e's attributes by name, refusing any not in allowed.
func (r *reader) attrs(e *element, allowed ...string) (map[string]string, error) {
	m := make(map[string]string, len(e.Attr))
	for _, a := range e.Attr {
		key := a.Name.Local
		if a.Name.Space != "" {
			key = a.Name.Space + ":" + key
		}
		if a.Name.Space != "" || !slices.Contains(allowed, key) {
			return nil, r.errorf(e, "attribute %q of <%s> is not supported (accepted: %s)", key, e.tag(), strings.Join(allowed, ", "))
		}
		m[key] = a.Value
	}
	return m, nil
}

// required returns the attribute name of e, which must be present.
func (r *reader) required(e *element, attrs map[string]string, name string) (string, error) {
	v, ok := attrs[name]
	if !ok {
		return "", r.errorf(e, "<%s> is missing required attribute %q", e.tag(), name)
	}
	return v, nil
}

// requiredID returns the id attribute of e, which must be present and non-empty.
func (r *reader) requiredID(e *element, attrs map[string]string) (string, error) {
	id, err := r.required(e, attrs, "id")
	if err == nil && id == "" {
		err = r.errorf(e, "<%s> has an empty id", e.tag())
	}
	return id, err
}

func (r *reader) platform(e *element) (*Platform, error) {
	if !e.is("platform") {
		return nil, r.errorf(e, "root element is <%s>, want <platform>", e.tag())
	}
	attrs, err := r.attrs(e, "version")
	if err != nil {
		return nil, err
	}
	version, err := r.required(e, attrs, "version")
	if err != nil {
		return nil, err
	}
	// SimGrid compares round(100*version) too, so "4.0" and "4.10" are fine.
	if v, err := strconv.ParseFloat(version, 64); err != nil || !slices.Contains([]float64{300, 400, 410}, math.Round(100*v)) {
		return nil, r.errorf(e, "unsupported platform version %q (accepted: 3, 4, 4.1)", version)
	}
	r.p = &Platform{}
	var zone *element
	for _, c := range e.children {
		switch {
		case c.is("config"):
			if zone != nil {
				return nil, r.errorf(c, "<config> must come before the zone")
			}
			if err := r.config(c); err != nil {
				return nil, err
			}
		case c.is("zone") || c.is("AS"):
			if zone != nil {
				return nil, r.errorf(c, "second top-level <%s>; a platform has one root zone (nest zones instead)", c.tag())
			}
			zone = c
			if err := r.zone(c, true); err != nil {
				return nil, err
			}
		case c.is("actor") || c.is("process"):
			// Deployment, not platform: ignored.
		default:
			return nil, r.badChild(c, e)
		}
	}
	if zone == nil {
		return nil, r.errorf(e, "<platform> has no <zone> (or <AS>)")
	}
	return r.p, nil
}

func (r *reader) config(e *element) error {
	if _, err := r.attrs(e, "id"); err != nil {
		return err
	}
	for _, c := range e.children {
		if !c.is("prop") {
			return r.badChild(c, e)
		}
		prop, err := r.prop(c)
		if err != nil {
			return err
		}
		r.p.Config = append(r.p.Config, prop)
	}
	return nil
}

func (r *reader) prop(e *element) (Prop, error) {
	attrs, err := r.attrs(e, "id", "value")
	if err != nil {
		return Prop{}, err
	}
	id, err := r.requiredID(e, attrs)
	if err != nil {
		return Prop{}, err
	}
	value, err := r.required(e, attrs, "value")
	if err != nil {
		return Prop{}, err
	}
	return Prop{ID: id, Value: value}, r.noChildren(e)
}

// zone reads a zone and, flattening, every zone nested in it.
func (r *reader) zone(e *element, outermost bool) error {
	attrs, err := r.attrs(e, "id", "routing")
	if err != nil {
		return err
	}
	id, err := r.requiredID(e, attrs)
	if err != nil {
		return err
	}
	routing, err := r.required(e, attrs, "routing")
	if err != nil {
		return err
	}
	if routing != "Full" {
		return r.errorf(e, "zone %q: routing %q is not supported (only Full)", id, routing)
	}
	if outermost {
		r.p.ZoneID, r.p.Routing = id, routing
	}
	for _, c := range e.children {
		var err error
		switch {
		case c.is("host"):
			err = r.host(c)
		case c.is("link"):
			err = r.link(c)
		case c.is("route"):
			err = r.route(c)
		case c.is("zone") || c.is("AS"):
			err = r.zone(c, false)
		default:
			err = r.badChild(c, e)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (r *reader) host(e *element) error {
	attrs, err := r.attrs(e, "id", "speed", "power", "core")
	if err != nil {
		return err
	}
	id, err := r.requiredID(e, attrs)
	if err != nil {
		return err
	}
	speed, hasSpeed := attrs["speed"]
	power, hasPower := attrs["power"]
	attr := "speed"
	switch {
	case hasSpeed && hasPower:
		return r.errorf(e, "host %q has both speed and power (power is the v3 name of speed)", id)
	case hasPower:
		speed, attr = power, "power"
	case !hasSpeed:
		return r.errorf(e, "<host> is missing required attribute \"speed\"")
	}
	flops, err := parseSpeed(speed)
	if err != nil {
		return r.errorf(e, "host %q: invalid %s %q: %v; %s", id, attr, speed, err, speedAccepted)
	}
	if core, ok := attrs["core"]; ok {
		// Checked because SimGrid would refuse it, then ignored: StarPU platforms use one core per host.
		if n, err := strconv.Atoi(core); err != nil || n < 1 {
			return r.errorf(e, "host %q: invalid core %q: want an integer >= 1", id, core)
		}
	}
	h := Host{ID: id, SpeedFlops: flops, Line: e.line}
	for _, c := range e.children {
		if !c.is("prop") {
			return r.badChild(c, e)
		}
		prop, err := r.prop(c)
		if err != nil {
			return err
		}
		h.Props = append(h.Props, prop)
	}
	r.p.Hosts = append(r.p.Hosts, h)
	return nil
}

func (r *reader) link(e *element) error {
	attrs, err := r.attrs(e, "id", "bandwidth", "latency", "sharing_policy")
	if err != nil {
		return err
	}
	id, err := r.requiredID(e, attrs)
	if err != nil {
		return err
	}
	bw, err := r.required(e, attrs, "bandwidth")
	if err != nil {
		return err
	}
	l := Link{ID: id, Sharing: Shared, Line: e.line}
	if l.BandwidthBps, err = parseBandwidth(bw); err != nil {
		return r.errorf(e, "link %q: invalid bandwidth %q: %v; %s", id, bw, err, bandwidthAccepted)
	}
	if lat, ok := attrs["latency"]; ok { // optional: 0 by default
		if l.LatencyS, err = parseTime(lat); err != nil {
			return r.errorf(e, "link %q: invalid latency %q: %v; %s", id, lat, err, timeAccepted)
		}
	}
	if sp, ok := attrs["sharing_policy"]; ok {
		switch SharingPolicy(sp) {
		case Shared, Fatpipe:
			l.Sharing = SharingPolicy(sp)
		default:
			return r.errorf(e, "link %q: sharing_policy %q is not supported (accepted: SHARED, FATPIPE)", id, sp)
		}
	}
	if err := r.noChildren(e); err != nil {
		return err
	}
	r.p.Links = append(r.p.Links, l)
	return nil
}

func (r *reader) route(e *element) error {
	attrs, err := r.attrs(e, "src", "dst", "symmetrical")
	if err != nil {
		return err
	}
	rt := Route{Symmetrical: true, Line: e.line} // symmetrical by default, as in SimGrid
	if rt.Src, err = r.required(e, attrs, "src"); err != nil {
		return err
	}
	if rt.Dst, err = r.required(e, attrs, "dst"); err != nil {
		return err
	}
	if s, ok := attrs["symmetrical"]; ok {
		switch strings.ToUpper(s) {
		case "YES":
		case "NO":
			rt.Symmetrical = false
		default:
			return r.errorf(e, "route %s -> %s: symmetrical=%q: want YES or NO", rt.Src, rt.Dst, s)
		}
	}
	var lines []int
	for _, c := range e.children {
		if !c.is("link_ctn") {
			return r.badChild(c, e)
		}
		attrs, err := r.attrs(c, "id", "direction")
		if err != nil {
			return err
		}
		id, err := r.requiredID(c, attrs)
		if err != nil {
			return err
		}
		if d, ok := attrs["direction"]; ok && d != "NONE" {
			return r.errorf(c, "link_ctn %q: direction %q is not supported (SPLITDUPLEX links are not supported)", id, d)
		}
		if err := r.noChildren(c); err != nil {
			return err
		}
		rt.Links = append(rt.Links, id)
		lines = append(lines, c.line)
	}
	r.p.Routes = append(r.p.Routes, rt)
	r.ctnLines = append(r.ctnLines, lines)
	return nil
}
