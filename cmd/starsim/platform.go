package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/starsim/starsim/calibrate"
	"github.com/starsim/starsim/internal/atomicfile"
	"github.com/starsim/starsim/platforms"
)

// platformCmd is `starsim platform` and its subcommands.
func platformCmd() *cobra.Command {
	return group("platform", "SimGrid platform files: show, build from a calibration", platformShowCmd(), platformBuildCmd())
}

const platformShowDoc = `
Prints the hosts (id, speed in flop/s, properties such as model and memsize),
links (bandwidth B/s, latency s, sharing policy) and routes of a SimGrid
platform file, v3 (<AS>, power=) or v4/v4.1 (<zone>, speed=). A symmetrical
route is listed in both directions.

--json prints {"hosts":[{"id","speed","props":{}}],
"links":[{"id","bandwidth","latency","sharing_policy"}],
"routes":[{"src","dst","links":[]}]}.`

type hostJSON struct {
	ID    string            `json:"id"`
	Speed float64           `json:"speed"`
	Props map[string]string `json:"props"`
}

type linkJSON struct {
	ID            string  `json:"id"`
	Bandwidth     float64 `json:"bandwidth"`
	Latency       float64 `json:"latency"`
	SharingPolicy string  `json:"sharing_policy"`
}

type routeJSON struct {
	Src   string   `json:"src"`
	Dst   string   `json:"dst"`
	Links []string `json:"links"`
}

type platformJSON struct {
	Hosts  []hostJSON  `json:"hosts"`
	Links  []linkJSON  `json:"links"`
	Routes []routeJSON `json:"routes"`
}

func platformShowCmd() *cobra.Command {
	return leaf("show FILE", "hosts, links and routes of a SimGrid platform file (v3 or v4 dialect)", platformShowDoc, func(fs *pflag.FlagSet) runner {
		asJSON := fs.Bool("json", false, "print JSON instead of tables")
		return func(pos []string, stdout, _ io.Writer) error { return platformShow(pos, *asJSON, stdout) }
	})
}

func platformShow(pos []string, asJSON bool, stdout io.Writer) error {
	if len(pos) != 1 {
		return &usageError{"want exactly one platform FILE"}
	}
	p, err := platforms.ParseFile(pos[0])
	if err != nil {
		return err
	}
	out := platformJSON{Hosts: []hostJSON{}, Links: []linkJSON{}, Routes: []routeJSON{}}
	for _, h := range p.Hosts {
		props := map[string]string{}
		for _, pr := range h.Props {
			props[pr.ID] = pr.Value
		}
		out.Hosts = append(out.Hosts, hostJSON{h.ID, h.SpeedFlops, props})
	}
	for _, l := range p.Links {
		out.Links = append(out.Links, linkJSON{l.ID, l.BandwidthBps, l.LatencyS, string(l.Sharing)})
	}
	for _, r := range p.DirectedRoutes() {
		links := r.Links
		if links == nil {
			links = []string{}
		}
		out.Routes = append(out.Routes, routeJSON{r.Src, r.Dst, links})
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	return printPlatform(stdout, pos[0], p, &out)
}

func printPlatform(w io.Writer, file string, p *platforms.Platform, out *platformJSON) error {
	fmt.Fprintf(w, "%s: %d hosts, %d links, %d routes\n\n", file, len(out.Hosts), len(out.Links), len(out.Routes))
	hosts := newTable("HOST", "SPEED (flop/s)", "PROPERTIES")
	for _, h := range p.Hosts {
		var props []string
		for _, pr := range h.Props {
			props = append(props, pr.ID+"="+pr.Value)
		}
		hosts.row(h.ID, num(h.SpeedFlops), strings.Join(props, " "))
	}
	links := newTable("LINK", "BANDWIDTH (B/s)", "LATENCY (s)", "SHARING")
	for _, l := range out.Links {
		links.row(l.ID, num(l.Bandwidth), num(l.Latency), l.SharingPolicy)
	}
	routes := newTable("ROUTE", "LINKS")
	for _, r := range out.Routes {
		routes.row(r.Src+" -> "+r.Dst, strings.Join(r.Links, ", "))
	}
	for i, t := range []*table{hosts, links, routes} {
		if i > 0 {
			fmt.Fprintln(w)
		}
		if err := t.write(w); err != nil {
			return err
		}
	}
	return nil
}

// num prints a float exactly (shortest round-trip form).
func num(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

func platformBuildCmd() *cobra.Command {
	return leaf("build [FILE.calib.json]", "write the SimGrid v4.1 platform of a calibration (default: the embedded one)", `
Writes the SimGrid v4.1 platform of a calibration (default: the embedded
one): hosts MAIN, CPU0.., each device with model/memsize/memcpy_peer props,
RAM; the calibration's links and one-way routes; StarPU's network config.
The real SimGrid 3.x loads it. -o - writes to stdout.`, func(fs *pflag.FlagSet) runner {
		out := fs.StringP("output", "o", "", "output platform `FILE`, or - for stdout")
		dir := fs.String("starpu", "", "StarPU sampling directory `DIR` instead of a calibration file")
		host := fs.String("host", "", "host `NAME`, with --starpu")
		return func(pos []string, stdout, stderr io.Writer) error {
			return platformBuild(pos, *out, *dir, *host, stdout, stderr)
		}
	})
}

func platformBuild(pos []string, out, dir, host string, stdout, stderr io.Writer) error {
	if len(pos) > 1 || out == "" {
		return &usageError{"want [FILE.calib.json] -o platform.xml"}
	}
	if out != "-" {
		if err := checkOutput("-o", out); err != nil {
			return err
		}
	}
	file := ""
	if len(pos) == 1 {
		file = pos[0]
	}
	f, err := loadCalibration(file, dir, host, stderr)
	if err != nil {
		return err
	}
	p, err := calibrate.BuildPlatform(f)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := p.WriteXML(&buf); err != nil {
		return err
	}
	if out == "-" {
		_, err := stdout.Write(buf.Bytes())
		return err
	}
	return atomicfile.WriteFile(out, buf.Bytes())
}
