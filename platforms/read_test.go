package platforms

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/starsim/starsim/internal/srcerr"
)

func mustParseFile(t *testing.T, path string) *Platform {
	t.Helper()
	p, err := ParseFile(path)
	if err != nil {
		t.Fatalf("ParseFile(%s): %v", path, err)
	}
	return p
}

// model returns p's exported content without lines or index, for comparisons.
func model(p *Platform) Platform {
	m := Platform{Config: p.Config, ZoneID: p.ZoneID, Routing: p.Routing}
	for _, h := range p.Hosts {
		h.Line = 0
		m.Hosts = append(m.Hosts, h)
	}
	for _, l := range p.Links {
		l.Line = 0
		m.Links = append(m.Links, l)
	}
	for _, r := range p.Routes {
		r.Line = 0
		m.Routes = append(m.Routes, r)
	}
	return m
}

// canonicalConfig returns m with config ids as WriteXML writes them.
func canonicalConfig(m Platform) Platform {
	var cfg []Prop
	for _, c := range m.Config {
		cfg = append(cfg, Prop{CanonicalConfigID(c.ID), c.Value})
	}
	m.Config = cfg
	return m
}

func TestParseSmall(t *testing.T) {
	p := mustParseFile(t, "testdata/small.platform.xml")
	want := Platform{
		Config:  []Prop{{"network/TCP-gamma", "-1"}, {"network/crosstraffic", "0"}},
		ZoneID:  "AS0",
		Routing: "Full",
		Hosts: []Host{
			{ID: "CPU0", SpeedFlops: 2e9, Line: 10},
			{ID: "CUDA0", SpeedFlops: 1.5e12, Props: []Prop{{"model", `Test & "GPU"`}, {"memsize", "4294967296"}}, Line: 11},
			{ID: "RAM", SpeedFlops: 1, Line: 15},
		},
		Links: []Link{
			{ID: "Share", BandwidthBps: 12.5e9, LatencyS: 0, Sharing: Shared, Line: 16},
			{ID: "RAM-CUDA0", BandwidthBps: 6008661719.001335, LatencyS: 9e-6, Sharing: Shared, Line: 17},
			{ID: "CUDA0-RAM", BandwidthBps: 6.4 * 1024 * 1024 * 1024, LatencyS: 10e-6, Sharing: Shared, Line: 18},
			{ID: "Loop", BandwidthBps: 10e9, LatencyS: 0, Sharing: Fatpipe, Line: 19},
		},
		Routes: []Route{
			{Src: "RAM", Dst: "CUDA0", Links: []string{"RAM-CUDA0", "Share"}, Symmetrical: false, Line: 20},
			{Src: "CUDA0", Dst: "RAM", Links: []string{"CUDA0-RAM", "Share"}, Symmetrical: false, Line: 24},
			{Src: "CPU0", Dst: "RAM", Links: []string{"Loop", "Share", "Share"}, Symmetrical: true, Line: 28},
		},
	}
	got := *p
	got.idx, got.source = nil, ""
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ParseFile(small) =\n%+v\nwant\n%+v", got, want)
	}
	if v, ok := p.Hosts[1].Prop("memsize"); !ok || v != "4294967296" {
		t.Errorf("CUDA0 memsize = %q, %v", v, ok)
	}
	if _, ok := p.Hosts[0].Prop("memsize"); ok {
		t.Errorf("CPU0 has a memsize")
	}
}

func TestParseV3EqualsV4(t *testing.T) {
	v3 := mustParseFile(t, "testdata/small.v3.platform.xml")
	v4 := mustParseFile(t, "testdata/small.platform.xml")
	if got, want := canonicalConfig(model(v3)), model(v4); !reflect.DeepEqual(got, want) {
		t.Errorf("v3 model =\n%+v\nv4 model =\n%+v", got, want)
	}
}

func TestParseNested(t *testing.T) {
	p := mustParseFile(t, "testdata/nested.platform.xml")
	want := Platform{
		Config:  []Prop{{"network/weight-S", "0.0"}},
		ZoneID:  "world",
		Routing: "Full",
		Hosts: []Host{
			{ID: "A", SpeedFlops: 1e9, Line: 9},
			{ID: "B", SpeedFlops: 3e9, Line: 11},
			{ID: "C", SpeedFlops: 42, Line: 15},
		},
		Links: []Link{
			{ID: "AB", BandwidthBps: 1 << 20, LatencyS: 1e-3, Sharing: Shared, Line: 12},
			{ID: "BC", BandwidthBps: 125000, LatencyS: 2, Sharing: Shared, Line: 16},
		},
		Routes: []Route{
			{Src: "A", Dst: "B", Links: []string{"AB"}, Symmetrical: true, Line: 18},
			{Src: "B", Dst: "C", Links: []string{"AB", "BC"}, Symmetrical: true, Line: 21},
			{Src: "C", Dst: "C", Links: []string{"BC"}, Symmetrical: true, Line: 22},
		},
	}
	got := *p
	got.idx, got.source = nil, ""
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ParseFile(nested) =\n%+v\nwant\n%+v", got, want)
	}
}

func TestDirectedRoutesAndLookups(t *testing.T) {
	p := mustParseFile(t, "testdata/nested.platform.xml")
	want := []Route{
		{Src: "A", Dst: "B", Links: []string{"AB"}, Line: 18},
		{Src: "B", Dst: "A", Links: []string{"AB"}, Line: 18},
		{Src: "B", Dst: "C", Links: []string{"AB", "BC"}, Line: 21},
		{Src: "C", Dst: "B", Links: []string{"BC", "AB"}, Line: 21},
		{Src: "C", Dst: "C", Links: []string{"BC"}, Line: 22}, // a self route has no reverse
	}
	if got := p.DirectedRoutes(); !reflect.DeepEqual(got, want) {
		t.Errorf("DirectedRoutes =\n%+v\nwant\n%+v", got, want)
	}
	// Indexed lookups and the linear fallback of a never-validated copy agree.
	bare := &Platform{Config: p.Config, ZoneID: p.ZoneID, Routing: p.Routing, Hosts: p.Hosts, Links: p.Links, Routes: p.Routes}
	for _, q := range []*Platform{p, bare} {
		for _, r := range want {
			if got, ok := q.Route(r.Src, r.Dst); !ok || !reflect.DeepEqual(got, r.Links) {
				t.Errorf("Route(%s, %s) = %v, %v; want %v", r.Src, r.Dst, got, ok, r.Links)
			}
		}
		if got, ok := q.Route("A", "C"); ok {
			t.Errorf("Route(A, C) = %v, true; want none", got)
		}
		if h, ok := q.Host("B"); !ok || h.ID != "B" || h.SpeedFlops != 3e9 {
			t.Errorf("Host(B) = %+v, %v", h, ok)
		}
		if l, ok := q.Link("BC"); !ok || l.ID != "BC" || l.BandwidthBps != 125000 {
			t.Errorf("Link(BC) = %+v, %v", l, ok)
		}
		if _, ok := q.Host("AB"); ok {
			t.Errorf("Host(AB) found a link")
		}
		if _, ok := q.Link("A"); ok {
			t.Errorf("Link(A) found a host")
		}
	}
	// Host returns a pointer into the platform.
	h, _ := p.Host("A")
	h.SpeedFlops = 7
	if p.Hosts[0].SpeedFlops != 7 {
		t.Errorf("Host did not return a pointer into Hosts")
	}
}

func TestValidateHandBuilt(t *testing.T) {
	p := &Platform{
		Hosts:  []Host{{ID: "a", SpeedFlops: 1}, {ID: "b", SpeedFlops: 1}},
		Links:  []Link{{ID: "l", BandwidthBps: 1}}, // Sharing "" means SHARED
		Routes: []Route{{Src: "a", Dst: "b", Links: []string{"l"}, Symmetrical: true}},
	}
	if err := p.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	if got, ok := p.Route("b", "a"); !ok || !reflect.DeepEqual(got, []string{"l"}) {
		t.Errorf("Route(b, a) = %v, %v", got, ok)
	}
	// Without a file, errors carry no line.
	p.Links = append(p.Links, Link{ID: "l", BandwidthBps: 1, Line: 12})
	err := p.Validate()
	if err == nil || err.Error() != `duplicate link "l"` {
		t.Errorf("Validate = %v; want the duplicate link, without line", err)
	}
	var b strings.Builder
	if err := p.WriteXML(&b); err == nil || b.Len() != 0 {
		t.Errorf("WriteXML of an invalid platform = %v, wrote %d bytes", err, b.Len())
	}
	for _, tt := range []struct {
		name string
		edit func(p *Platform)
		want string
	}{
		{"routing", func(p *Platform) { p.Routing = "Floyd" }, `routing "Floyd" is not supported`},
		{"empty host id", func(p *Platform) { p.Hosts[0].ID = "" }, `host id "" must be non-empty`},
		{"NaN speed", func(p *Platform) { p.Hosts[0].SpeedFlops = nan() }, "speed must be a finite number >= 0"},
		{"zero bandwidth", func(p *Platform) { p.Links[0].BandwidthBps = 0 }, "bandwidth must be a finite number > 0"},
		{"sharing", func(p *Platform) { p.Links[0].Sharing = "SPLITDUPLEX" }, `sharing policy "SPLITDUPLEX" is not supported`},
		{"bad XML char", func(p *Platform) { p.Hosts[1].Props = []Prop{{"x", "\x00"}} }, "representable in XML"},
		{"bad UTF-8", func(p *Platform) { p.Config = []Prop{{"\xff", "1"}} }, "representable in XML"},
		{"empty route", func(p *Platform) { p.Routes[0].Links = nil }, "has no <link_ctn>"},
	} {
		q := &Platform{
			Hosts:  []Host{{ID: "a", SpeedFlops: 1}, {ID: "b", SpeedFlops: 1}},
			Links:  []Link{{ID: "l", BandwidthBps: 1}},
			Routes: []Route{{Src: "a", Dst: "b", Links: []string{"l"}}},
		}
		tt.edit(q)
		if err := q.Validate(); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Validate = %v; want %q", tt.name, err, tt.want)
		}
	}
}

func nan() float64 { var z float64; return z / z }

func TestErrorLineFromFile(t *testing.T) {
	const path = "testdata/bad-link.platform.xml"
	_, err := ParseFile(path)
	want := path + `:7: link "L": invalid bandwidth "12xyz": unknown unit "xyz"; accepted: `
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("ParseFile = %v; want prefix %q", err, want)
	}
	var se *srcerr.Error
	if !errors.As(err, &se) || se.File != path || se.Line != 7 {
		t.Errorf("error = %#v; want *srcerr.Error at %s:7", err, path)
	}
	if _, err := ParseFile("testdata/missing.xml"); err == nil || !strings.HasPrefix(err.Error(), "testdata/missing.xml: ") {
		t.Errorf("ParseFile(missing) = %v", err)
	}
}

// head is a valid platform prefix: the body of a bad-input case starts on line 7.
const head = `<?xml version='1.0'?>
<platform version="4.1">
<zone id="AS0" routing="Full">
<host id="A" speed="1f"/>
<host id="B" speed="1f"/>
<link id="L" bandwidth="1Bps" latency="0s"/>
`

const tail = "</zone>\n</platform>\n"

func TestBadInput(t *testing.T) {
	nest := strings.Repeat(`<zone id="z" routing="Full">`+"\n", 300)
	tests := []struct {
		name string
		doc  string // body between head and tail, unless it starts with "<?xml" or is empty
		line int
		want string
	}{
		// Not XML, truncated, wrong root, version.
		{"empty file", "", 1, "no root element"},
		{"not XML", "<?xml version='1.0'?>\nhello <", 2, "malformed XML"},
		{"truncated", head + `<route src="A" dst="B">`, 7, "malformed XML: unexpected EOF"},
		{"mismatched tag", `<host id="C" speed="1f"></link>`, 7, "malformed XML: element <host> closed by </link>"},
		{"bad entity", `<host id="&nbsp;" speed="1f"/>`, 7, "malformed XML"},
		{"encoding", "<?xml version='1.0' encoding='ISO-8859-1'?>\n<platform version=\"4.1\"/>", 1, "malformed XML"},
		{"wrong root", "<?xml version='1.0'?>\n<plat version=\"4.1\"/>\n", 2, "root element is <plat>, want <platform>"},
		{"two roots", "<?xml version='1.0'?>\n<platform version=\"4.1\"/>\n<platform version=\"4.1\"/>\n", 3, "more than one root element"},
		{"version 5", "<?xml version='1.0'?>\n<platform version=\"5\"/>\n", 2, `unsupported platform version "5" (accepted: 3, 4, 4.1)`},
		{"version 3.5", "<?xml version='1.0'?>\n<platform version=\"3.5\"/>\n", 2, "unsupported platform version"},
		{"no version", "<?xml version='1.0'?>\n<platform>\n</platform>\n", 2, `<platform> is missing required attribute "version"`},
		{"no zone", "<?xml version='1.0'?>\n<platform version=\"4\">\n</platform>\n", 2, "<platform> has no <zone>"},
		{"two zones", "<?xml version='1.0'?>\n<platform version=\"4\">\n<zone id=\"a\" routing=\"Full\"/>\n<zone id=\"b\" routing=\"Full\"/>\n</platform>\n", 4, "second top-level <zone>"},
		{"config after zone", "<?xml version='1.0'?>\n<platform version=\"4\">\n<zone id=\"a\" routing=\"Full\"/>\n<config/>\n</platform>\n", 4, "<config> must come before the zone"},
		{"routing", "<?xml version='1.0'?>\n<platform version=\"4\">\n<zone id=\"a\" routing=\"Floyd\"/>\n</platform>\n", 3, `zone "a": routing "Floyd" is not supported (only Full)`},
		{"too deep", nest, 7 + 256 - 2, "nested deeper than 256"}, // <platform> and <zone> are in head
		{"namespaced", `<x:host xmlns:x="urn:x" id="C" speed="1f"/>`, 7, "unexpected element <urn:x:host> in <zone>"},
		{"text ignored but element inside prop", `<host id="C" speed="1f">hi<prop id="a" value="b"><prop id="c" value="d"/></prop></host>`, 7, "unexpected element <prop> in <prop>"},

		// Attributes.
		{"missing bandwidth", `<link id="M" latency="0s"/>`, 7, `<link> is missing required attribute "bandwidth"`},
		{"missing speed", `<host id="C"/>`, 7, `<host> is missing required attribute "speed"`},
		{"missing id", `<host speed="1f"/>`, 7, `<host> is missing required attribute "id"`},
		{"empty id", `<link id="" bandwidth="1Bps"/>`, 7, "<link> has an empty id"},
		{"missing src", `<route dst="B"><link_ctn id="L"/></route>`, 7, `<route> is missing required attribute "src"`},
		{"missing prop value", `<host id="C" speed="1f">` + "\n" + `<prop id="x"/></host>`, 8, `<prop> is missing required attribute "value"`},
		{"unsupported attribute", `<host id="C" speed="1f" pstate="0"/>`, 7, `attribute "pstate" of <host> is not supported (accepted: id, speed, power, core)`},
		{"duplicate attribute", `<host id="C" id="D" speed="1f"/>`, 7, `<host> has attribute "id" twice`},
		{"speed and power", `<host id="C" speed="1f" power="1"/>`, 7, "has both speed and power"},
		{"bad core", `<host id="C" speed="1f" core="0"/>`, 7, `invalid core "0"`},
		{"symmetrical", `<route src="A" dst="B" symmetrical="maybe"><link_ctn id="L"/></route>`, 7, `symmetrical="maybe": want YES or NO`},

		// Units and values.
		{"unknown unit", `<link id="M" bandwidth="12xyz"/>`, 7, `link "M": invalid bandwidth "12xyz": unknown unit "xyz"; accepted: a number with unit Bps or bps`},
		{"space in value", `<link id="M" bandwidth="5 GBps"/>`, 7, `unknown unit " GBps"`},
		{"empty bandwidth", `<link id="M" bandwidth=""/>`, 7, `invalid bandwidth "": empty value`},
		{"NaN bandwidth", `<link id="M" bandwidth="NaN"/>`, 7, `invalid bandwidth "NaN": not a number`},
		{"Inf latency", `<link id="M" bandwidth="1Bps" latency="Inf"/>`, 7, `invalid latency "Inf": not a number; accepted: a number with unit w, d, h, m, s`},
		{"NaN speed", `<host id="C" speed="NaN"/>`, 7, `host "C": invalid speed "NaN": not a number; accepted: a number with unit f`},
		{"power unit", `<host id="C" power="1GHz"/>`, 7, `host "C": invalid power "1GHz": unknown unit "GHz"`},
		{"out of range", `<link id="M" bandwidth="1e999Bps"/>`, 7, "number out of range"},
		{"bandwidth list", `<link id="M" bandwidth="1Bps,2Bps"/>`, 7, "list of bandwidths"},
		{"bad pstate", `<host id="C" speed="1Gf,fast"/>`, 7, "pstate 1: not a number"},
		{"zero bandwidth", `<link id="M" bandwidth="0Bps"/>`, 7, `link "M": bandwidth must be a finite number > 0, got 0`},
		{"negative bandwidth", `<link id="M" bandwidth="-1GBps"/>`, 7, "bandwidth must be a finite number > 0"},
		{"negative latency", `<link id="M" bandwidth="1Bps" latency="-1ms"/>`, 7, `link "M": latency must be a finite number >= 0, got -0.001`},
		{"negative speed", `<host id="C" speed="-1Gf"/>`, 7, `host "C": speed must be a finite number >= 0, got -1e+09`},
		{"splitduplex", `<link id="M" bandwidth="1Bps" sharing_policy="SPLITDUPLEX"/>`, 7, `sharing_policy "SPLITDUPLEX" is not supported (accepted: SHARED, FATPIPE)`},
		{"wifi", `<link id="M" bandwidth="1Bps" sharing_policy="WIFI"/>`, 7, `sharing_policy "WIFI" is not supported`},
		{"direction", `<route src="A" dst="B">` + "\n" + `<link_ctn id="L" direction="UP"/></route>`, 8, `direction "UP" is not supported`},

		// Cross references.
		{"duplicate host", `<host id="A" speed="2f"/>`, 7, `duplicate host "A" (first declared at line 4)`},
		{"duplicate link", `<link id="L" bandwidth="2Bps"/>`, 7, `duplicate link "L" (first declared at line 6)`},
		{"duplicate route", `<route src="A" dst="B" symmetrical="NO"><link_ctn id="L"/></route>` + "\n" +
			`<route src="A" dst="B" symmetrical="NO"><link_ctn id="L"/></route>`, 8, "duplicate route A -> B (already declared at line 7)"},
		{"symmetrical after reverse", `<route src="B" dst="A" symmetrical="NO"><link_ctn id="L"/></route>` + "\n" +
			`<route src="A" dst="B"><link_ctn id="L"/></route>`, 8, "route A -> B is symmetrical but route B -> A is already declared at line 7"},
		{"reverse after symmetrical", `<route src="A" dst="B"><link_ctn id="L"/></route>` + "\n" +
			`<route src="B" dst="A" symmetrical="NO"><link_ctn id="L"/></route>`, 8,
			"duplicate route B -> A: it is the reverse of the symmetrical route A -> B at line 7"},
		{"unknown dst", `<route src="A" dst="Z"><link_ctn id="L"/></route>`, 7, `route A -> Z: dst "Z" is not a declared host`},
		{"unknown src", `<route src="Z" dst="A"><link_ctn id="L"/></route>`, 7, `route Z -> A: src "Z" is not a declared host`},
		{"route to a link", `<route src="A" dst="L"><link_ctn id="L"/></route>`, 7, `dst "L" is not a declared host`},
		{"unknown link", `<route src="A" dst="B">` + "\n" + `<link_ctn id="L"/>` + "\n" + `<link_ctn id="Q"/>` + "\n" + `</route>`, 9, `route A -> B uses undeclared link "Q"`},
		{"empty route", `<route src="A" dst="B"/>`, 7, "route A -> B has no <link_ctn>; SimGrid forbids empty routes"},

		// Elements.
		{"unknown element", `<foo/>`, 7, "unexpected element <foo> in <zone>"},
		{"config in zone", `<config/>`, 7, "unexpected element <config> in <zone>"},
		{"link prop", `<link id="M" bandwidth="1Bps"><prop id="a" value="b"/></link>`, 7, "unexpected element <prop> in <link>"},
		{"zoneRoute", `<zoneRoute src="a" dst="b" gw_src="A" gw_dst="B"/>`, 7, "<zoneRoute> is not supported"},
		{"ASroute", `<ASroute src="a" dst="b" gw_src="A" gw_dst="B"/>`, 7, "<ASroute> is not supported"},
		{"cluster", `<cluster id="c" prefix="c-" suffix="" radical="0-3" speed="1Gf" bw="1GBps" lat="1us"/>`, 7, "<cluster> is not supported"},
		{"cabinet", `<cabinet id="c"/>`, 7, "<cabinet> is not supported"},
		{"peer", `<peer id="p"/>`, 7, "<peer> is not supported"},
		{"host_link", `<host_link id="A" up="L" down="L"/>`, 7, "<host_link> is not supported"},
		{"backbone", `<backbone id="bb" bandwidth="1Bps" latency="0s"/>`, 7, "<backbone> is not supported"},
		{"bypassRoute", `<bypassRoute src="A" dst="B"/>`, 7, "<bypassRoute> is not supported"},
		{"router", `<router id="r"/>`, 7, "<router> is not supported"},
		{"disk", `<host id="C" speed="1f">` + "\n" + `<disk id="d" read_bw="1Bps" write_bw="1Bps"/></host>`, 8, "<disk> is not supported"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := tt.doc
			if doc != "" && !strings.HasPrefix(doc, "<?xml") {
				doc = head + doc + "\n" + tail
			}
			const name = "bad.xml"
			_, err := Parse([]byte(doc), name)
			prefix := fmt.Sprintf("%s:%d: ", name, tt.line)
			if err == nil || !strings.HasPrefix(err.Error(), prefix) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Parse = %v\nwant prefix %q and %q", err, prefix, tt.want)
			}
			var se *srcerr.Error
			if !errors.As(err, &se) || se.File != name || se.Line != tt.line {
				t.Errorf("error is %#v, want a *srcerr.Error", err)
			}
		})
	}
}

func TestAcceptedVariants(t *testing.T) {
	tests := []struct{ name, doc string }{
		{"host and link share an id", `<host id="L" speed="1f"/>`},
		{"symmetrical lower case", `<route src="A" dst="B" symmetrical="yes"><link_ctn id="L"/></route>`},
		{"self route with reverse-free symmetry", `<route src="A" dst="A"><link_ctn id="L"/></route>`},
		{"link twice in a route", `<route src="A" dst="B"><link_ctn id="L"/><link_ctn id="L"/></route>`},
		{"both directions declared one-way", `<route src="A" dst="B" symmetrical="NO"><link_ctn id="L"/></route>` +
			`<route src="B" dst="A" symmetrical="NO"><link_ctn id="L"/></route>`},
		{"comments and text", `<!-- c --> text <host id="C" speed="0"><!-- c --></host>`},
		{"route before its link", `<route src="A" dst="B"><link_ctn id="M"/></route><link id="M" bandwidth="1Bps"/>`},
	}
	for _, tt := range tests {
		doc := head + tt.doc + "\n" + tail
		if _, err := Parse([]byte(doc), "ok.xml"); err != nil {
			t.Errorf("%s: %v", tt.name, err)
		}
	}
	for _, v := range []string{"3", "4", "4.1", "4.0", "4.10", "3.0"} {
		doc := `<platform version="` + v + `"><zone id="z" routing="Full"/></platform>`
		if _, err := Parse([]byte(doc), "v.xml"); err != nil {
			t.Errorf("version %s: %v", v, err)
		}
	}
}
