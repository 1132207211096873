package platforms

import (
	"io"
	"strconv"

	"github.com/beevik/etree"
)

// oldConfigIDs maps the underscore config names of SimGrid < 3.19 (still in
// StarPU's v3 platform files) to their dashed names. SimGrid 3.32 refuses the
// old names ("Bad config key: network/TCP_gamma"), so WriteXML translates them.
var oldConfigIDs = map[string]string{
	"network/TCP_gamma":        "network/TCP-gamma",
	"network/latency_factor":   "network/latency-factor",
	"network/bandwidth_factor": "network/bandwidth-factor",
	"network/weight_S":         "network/weight-S",
}

// CanonicalConfigID returns the name SimGrid 3.32 knows for config prop id:
// the dashed form of the known old underscore names, else id unchanged.
func CanonicalConfigID(id string) string {
	if n, ok := oldConfigIDs[id]; ok {
		return n
	}
	return id
}

// WriteXML writes the platform as a SimGrid v4.1 file that SimGrid 3.32 loads:
// one <config id="General"> (if any props; ids through CanonicalConfigID), one
// Full zone with hosts, links and routes in slice order, explicit units, and
// numbers in the shortest form that reads back to the same float64. It refuses
// a platform that Validate would refuse, and writes nothing then.
func (p *Platform) WriteXML(w io.Writer) error {
	if _, err := p.check(p.source, nil); err != nil {
		return err
	}
	zoneID, routing := p.ZoneID, p.Routing
	if zoneID == "" {
		zoneID = "AS0"
	}
	if routing == "" {
		routing = "Full"
	}
	doc := etree.NewDocument()
	// Escape tabs and newlines in attributes: XML readers normalise literal
	// ones to spaces, and values must read back unchanged.
	doc.WriteSettings.CanonicalAttrVal = true
	doc.CreateProcInst("xml", "version='1.0'")
	doc.CreateDirective(`DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd"`)
	root := doc.CreateElement("platform")
	root.CreateAttr("version", "4.1")
	if len(p.Config) > 0 {
		cfg := root.CreateElement("config")
		cfg.CreateAttr("id", "General")
		for _, c := range p.Config {
			addProp(cfg, Prop{ID: CanonicalConfigID(c.ID), Value: c.Value})
		}
	}
	zone := root.CreateElement("zone")
	zone.CreateAttr("id", zoneID)
	zone.CreateAttr("routing", routing)
	for _, h := range p.Hosts {
		e := zone.CreateElement("host")
		e.CreateAttr("id", h.ID)
		e.CreateAttr("speed", formatFloat(h.SpeedFlops)+"f")
		for _, pr := range h.Props {
			addProp(e, pr)
		}
	}
	for _, l := range p.Links {
		e := zone.CreateElement("link")
		e.CreateAttr("id", l.ID)
		e.CreateAttr("bandwidth", formatFloat(l.BandwidthBps)+"Bps")
		e.CreateAttr("latency", formatFloat(l.LatencyS)+"s")
		if l.Sharing == Fatpipe {
			e.CreateAttr("sharing_policy", string(Fatpipe))
		}
	}
	for _, r := range p.Routes {
		e := zone.CreateElement("route")
		e.CreateAttr("src", r.Src)
		e.CreateAttr("dst", r.Dst)
		sym := "NO"
		if r.Symmetrical {
			sym = "YES"
		}
		e.CreateAttr("symmetrical", sym)
		for _, id := range r.Links {
			e.CreateElement("link_ctn").CreateAttr("id", id)
		}
	}
	doc.Indent(2)
	_, err := doc.WriteTo(w)
	return err
}

// formatFloat writes v in the shortest form that parses back to v.
func formatFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

func addProp(parent *etree.Element, p Prop) {
	e := parent.CreateElement("prop")
	e.CreateAttr("id", p.ID)
	e.CreateAttr("value", p.Value)
}
