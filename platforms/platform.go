package platforms

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/starsim/starsim/internal/srcerr"
)

// Platform is a SimGrid platform: config props, hosts, links and routes of one flat zone.
//
// Parse and ParseFile return validated platforms. A Platform built or changed by
// hand should be passed to Validate, which checks it and indexes it so that
// Host, Link and Route run in O(1); before that they fall back to linear scans.
// Do not modify a Platform after Validate without calling Validate again.
type Platform struct {
	Config  []Prop  // <config><prop>, in file order
	ZoneID  string  // id of the (outermost) zone/AS, e.g. "AS0"; "" is written as "AS0"
	Routing string  // routing of that zone; only "Full" (or "", meaning Full) is supported
	Hosts   []Host  // in file order
	Links   []Link  // in file order
	Routes  []Route // as declared in the file (one entry per <route>), Symmetrical kept

	source string // file name used in Validate's errors; set by Parse
	idx    *index // built by Validate; nil until then
}

// Prop is one <prop id value/> of a config or a host.
type Prop struct{ ID, Value string }

// Host is a compute node (for StarPU platforms: a CPU core, a GPU, RAM, a disk).
type Host struct {
	ID         string
	SpeedFlops float64 // first pstate speed, flop/s
	Props      []Prop  // in file order
	Line       int     // line of the <host> element; 0 when not read from a file
}

// Prop returns the value of the host's first prop with the given id.
func (h *Host) Prop(id string) (string, bool) {
	for _, p := range h.Props {
		if p.ID == id {
			return p.Value, true
		}
	}
	return "", false
}

// SharingPolicy says how a link's bandwidth is split among the flows that cross it.
type SharingPolicy string

// The sharing policies starsim supports (SimGrid's SPLITDUPLEX and WIFI are not).
const (
	Shared  SharingPolicy = "SHARED"  // flows share the bandwidth (the default)
	Fatpipe SharingPolicy = "FATPIPE" // every flow gets the full bandwidth
)

// Link is a network link. An empty Sharing means Shared.
type Link struct {
	ID           string
	BandwidthBps float64 // bytes per second, > 0
	LatencyS     float64 // seconds, >= 0
	Sharing      SharingPolicy
	Line         int // line of the <link> element; 0 when not read from a file
}

// Route is an ordered list of link ids from host Src to host Dst. A link listed
// twice counts twice. A symmetrical route also goes Dst -> Src through the same
// links in reverse order (except when Src == Dst, as in SimGrid).
type Route struct {
	Src, Dst    string
	Links       []string
	Symmetrical bool
	Line        int // line of the <route> element; 0 when not read from a file
}

// pair is a directed (src, dst) host pair.
type pair struct{ src, dst string }

// directed locates the route for one direction: declared route i, forward or reversed.
type directed struct {
	route    int
	reversed []string // the reversed link list when this direction is a symmetrical route's reverse
}

type index struct {
	hosts  map[string]int
	links  map[string]int
	routes map[pair]directed
}

// ctnLineFunc gives the line of link_ctn j of route i (0 if unknown), so that a
// reference to an undeclared link is reported where it is written.
type ctnLineFunc func(i, j int) int

// Validate checks that the platform is consistent — unique non-empty host and
// link ids, finite bandwidths > 0, latencies >= 0, speeds >= 0, known sharing
// policies, non-empty routes between declared hosts over declared links, no
// direction declared twice (a symmetrical route declares both) — and indexes it
// for O(1) lookups. Errors are *srcerr.Error located at the offending element.
func (p *Platform) Validate() error {
	idx, err := p.check(p.source, nil)
	if err != nil {
		return err
	}
	p.idx = idx
	return nil
}

// check validates p and returns its index without storing it.
func (p *Platform) check(file string, ctnLine ctnLineFunc) (*index, error) {
	errAt := func(line int, format string, args ...any) error {
		if file == "" {
			line = 0 // a line without its file would only confuse
		}
		return srcerr.Errorf(file, line, format, args...)
	}
	if p.Routing != "" && p.Routing != "Full" {
		return nil, errAt(0, "zone %q: routing %q is not supported (only Full)", p.ZoneID, p.Routing)
	}
	if !xmlSafe(p.ZoneID) {
		return nil, errAt(0, "zone id %q is not representable in XML", p.ZoneID)
	}
	for _, c := range p.Config {
		if c.ID == "" || !xmlSafe(c.ID) || !xmlSafe(c.Value) {
			return nil, errAt(0, "config prop %q=%q: id must be non-empty and both must be representable in XML", c.ID, c.Value)
		}
	}
	idx := &index{
		hosts:  make(map[string]int, len(p.Hosts)),
		links:  make(map[string]int, len(p.Links)),
		routes: make(map[pair]directed, 2*len(p.Routes)),
	}
	for i := range p.Hosts {
		h := &p.Hosts[i]
		switch {
		case h.ID == "" || !xmlSafe(h.ID):
			return nil, errAt(h.Line, "host id %q must be non-empty and representable in XML", h.ID)
		case math.IsNaN(h.SpeedFlops) || math.IsInf(h.SpeedFlops, 0) || h.SpeedFlops < 0:
			return nil, errAt(h.Line, "host %q: speed must be a finite number >= 0, got %v", h.ID, h.SpeedFlops)
		}
		if j, dup := idx.hosts[h.ID]; dup {
			return nil, errAt(h.Line, "duplicate host %q%s", h.ID, atLine(file, " (first declared at line %d)", p.Hosts[j].Line))
		}
		for _, pr := range h.Props {
			if pr.ID == "" || !xmlSafe(pr.ID) || !xmlSafe(pr.Value) {
				return nil, errAt(h.Line, "host %q: prop %q=%q: id must be non-empty and both must be representable in XML", h.ID, pr.ID, pr.Value)
			}
		}
		idx.hosts[h.ID] = i
	}
	for i := range p.Links {
		l := &p.Links[i]
		switch {
		case l.ID == "" || !xmlSafe(l.ID):
			return nil, errAt(l.Line, "link id %q must be non-empty and representable in XML", l.ID)
		case math.IsNaN(l.BandwidthBps) || math.IsInf(l.BandwidthBps, 0) || l.BandwidthBps <= 0:
			return nil, errAt(l.Line, "link %q: bandwidth must be a finite number > 0, got %v", l.ID, l.BandwidthBps)
		case math.IsNaN(l.LatencyS) || math.IsInf(l.LatencyS, 0) || l.LatencyS < 0:
			return nil, errAt(l.Line, "link %q: latency must be a finite number >= 0, got %v", l.ID, l.LatencyS)
		case l.Sharing != "" && l.Sharing != Shared && l.Sharing != Fatpipe:
			return nil, errAt(l.Line, "link %q: sharing policy %q is not supported (accepted: SHARED, FATPIPE)", l.ID, l.Sharing)
		}
		if j, dup := idx.links[l.ID]; dup {
			return nil, errAt(l.Line, "duplicate link %q%s", l.ID, atLine(file, " (first declared at line %d)", p.Links[j].Line))
		}
		idx.links[l.ID] = i
	}
	for i := range p.Routes {
		r := &p.Routes[i]
		for _, end := range [...]struct{ attr, id string }{{"src", r.Src}, {"dst", r.Dst}} {
			if _, ok := idx.hosts[end.id]; !ok {
				return nil, errAt(r.Line, "route %s -> %s: %s %q is not a declared host", r.Src, r.Dst, end.attr, end.id)
			}
		}
		if len(r.Links) == 0 {
			return nil, errAt(r.Line, "route %s -> %s has no <link_ctn>; SimGrid forbids empty routes", r.Src, r.Dst)
		}
		for j, id := range r.Links {
			if _, ok := idx.links[id]; !ok {
				line := r.Line
				if ctnLine != nil {
					if l := ctnLine(i, j); l != 0 {
						line = l
					}
				}
				return nil, errAt(line, "route %s -> %s uses undeclared link %q", r.Src, r.Dst, id)
			}
		}
		fwd := pair{r.Src, r.Dst}
		if d, dup := idx.routes[fwd]; dup {
			first := p.Routes[d.route]
			if d.reversed != nil {
				return nil, errAt(r.Line, "duplicate route %s -> %s: it is the reverse of the symmetrical route %s -> %s%s",
					r.Src, r.Dst, first.Src, first.Dst, atLine(file, " at line %d", first.Line))
			}
			return nil, errAt(r.Line, "duplicate route %s -> %s%s", r.Src, r.Dst, atLine(file, " (already declared at line %d)", first.Line))
		}
		idx.routes[fwd] = directed{route: i}
		if r.Symmetrical && r.Src != r.Dst {
			rev := pair{r.Dst, r.Src}
			if d, dup := idx.routes[rev]; dup {
				return nil, errAt(r.Line, "route %s -> %s is symmetrical but route %s -> %s is already declared%s; declare it symmetrical=\"NO\"",
					r.Src, r.Dst, r.Dst, r.Src, atLine(file, " at line %d", p.Routes[d.route].Line))
			}
			idx.routes[rev] = directed{route: i, reversed: reversed(r.Links)}
		}
	}
	return idx, nil
}

// atLine formats line into format when the line means something, else gives "".
func atLine(file, format string, line int) string {
	if file == "" || line == 0 {
		return ""
	}
	return fmt.Sprintf(format, line)
}

// xmlSafe reports whether s can be written to XML and read back unchanged.
func xmlSafe(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		ok := r == '\t' || r == '\n' || r == '\r' ||
			(r >= 0x20 && r <= 0xD7FF) || (r >= 0xE000 && r <= 0xFFFD) || (r >= 0x10000 && r <= 0x10FFFF)
		if !ok {
			return false
		}
	}
	return true
}

func reversed(links []string) []string {
	rev := slices.Clone(links)
	slices.Reverse(rev)
	return rev
}

// DirectedRoutes returns every one-way route: the declared ones plus the reverse
// of each symmetrical one (same links in reverse order; none for Src == Dst),
// sorted by (Src, Dst). Each result has Symmetrical false and the Line of the
// <route> that declared it; its Links are fresh slices.
func (p *Platform) DirectedRoutes() []Route {
	out := make([]Route, 0, 2*len(p.Routes))
	for _, r := range p.Routes {
		out = append(out, Route{Src: r.Src, Dst: r.Dst, Links: slices.Clone(r.Links), Line: r.Line})
		if r.Symmetrical && r.Src != r.Dst {
			out = append(out, Route{Src: r.Dst, Dst: r.Src, Links: reversed(r.Links), Line: r.Line})
		}
	}
	// Stable so that an invalid platform's duplicates keep declaration order.
	slices.SortStableFunc(out, func(a, b Route) int {
		if c := strings.Compare(a.Src, b.Src); c != 0 {
			return c
		}
		return strings.Compare(a.Dst, b.Dst)
	})
	return out
}

// Route returns the link ids of the directed route src -> dst. The slice is
// shared with the platform: do not modify it.
func (p *Platform) Route(src, dst string) ([]string, bool) {
	if p.idx != nil {
		d, ok := p.idx.routes[pair{src, dst}]
		if !ok {
			return nil, false
		}
		if d.route < len(p.Routes) {
			if d.reversed != nil {
				return d.reversed, true
			}
			if r := &p.Routes[d.route]; r.Src == src && r.Dst == dst {
				return r.Links, true
			}
		}
		// The platform changed since Validate: fall through to a scan.
	}
	for _, r := range p.Routes {
		if r.Src == src && r.Dst == dst {
			return r.Links, true
		}
		if r.Symmetrical && r.Src != r.Dst && r.Src == dst && r.Dst == src {
			return reversed(r.Links), true
		}
	}
	return nil, false
}

// Host returns the host with the given id.
func (p *Platform) Host(id string) (*Host, bool) {
	if p.idx != nil {
		i, ok := p.idx.hosts[id]
		if !ok {
			return nil, false
		}
		if i < len(p.Hosts) && p.Hosts[i].ID == id {
			return &p.Hosts[i], true
		}
		// The platform changed since Validate: fall through to a scan.
	}
	for i := range p.Hosts {
		if p.Hosts[i].ID == id {
			return &p.Hosts[i], true
		}
	}
	return nil, false
}

// Link returns the link with the given id.
func (p *Platform) Link(id string) (*Link, bool) {
	if p.idx != nil {
		i, ok := p.idx.links[id]
		if !ok {
			return nil, false
		}
		if i < len(p.Links) && p.Links[i].ID == id {
			return &p.Links[i], true
		}
		// The platform changed since Validate: fall through to a scan.
	}
	for i := range p.Links {
		if p.Links[i].ID == id {
			return &p.Links[i], true
		}
	}
	return nil, false
}
