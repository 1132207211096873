package platforms

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// dumpScript loads a platform in SimGrid's Python bindings and prints what
// SimGrid built: host speeds, link bandwidths and latencies, and the links of
// every non-empty route between two hosts.
const dumpScript = `
import json, simgrid, sys
e = simgrid.Engine(["starsim-test"])
e.load_platform(sys.argv[1])
hosts = e.all_hosts
routes = {}
for a in hosts:
    for b in hosts:
        links = [l.name for l in a.route_to(b)[0] if l.name != "__loopback__"]
        if links:
            routes[a.name + " -> " + b.name] = links
json.dump({"hosts": {h.name: h.speed for h in hosts},
           "links": {l.name: [l.bandwidth, l.latency] for l in e.all_links if l.name != "__loopback__"},
           "routes": routes}, sys.stdout)
`

type simgridDump struct {
	Hosts  map[string]float64
	Links  map[string][2]float64
	Routes map[string][]string
}

// simgridPython returns a Python interpreter that has SimGrid's bindings
// (Debian's python3-simgrid installs them for /usr/bin/python3 only).
func simgridPython(t *testing.T) string {
	t.Helper()
	for _, py := range []string{"python3", "/usr/bin/python3"} {
		if path, err := exec.LookPath(py); err == nil && exec.Command(path, "-c", "import simgrid").Run() == nil {
			return path
		}
	}
	t.Skip("no python3 with the simgrid module (apt-get install python3-simgrid)")
	return ""
}

// dumpOf is what SimGrid should build from p.
func dumpOf(p *Platform) simgridDump {
	d := simgridDump{Hosts: map[string]float64{}, Links: map[string][2]float64{}, Routes: map[string][]string{}}
	for _, h := range p.Hosts {
		d.Hosts[h.ID] = h.SpeedFlops
	}
	for _, l := range p.Links {
		d.Links[l.ID] = [2]float64{l.BandwidthBps, l.LatencyS}
	}
	for _, r := range p.DirectedRoutes() {
		d.Routes[r.Src+" -> "+r.Dst] = r.Links
	}
	return d
}

func loadInSimGrid(t *testing.T, python, path string) simgridDump {
	t.Helper()
	cmd := exec.Command(python, "-c", dumpScript, path)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("SimGrid refused %s: %v\n%s", path, err, stderr.String())
	}
	var d simgridDump
	if err := json.Unmarshal(out, &d); err != nil {
		t.Fatalf("SimGrid dump of %s: %v\n%s", path, err, out)
	}
	return d
}

// TestSimGridLoadsWrittenPlatforms writes every platform with WriteXML and checks
// that real SimGrid (3.32 on Debian) loads it and builds the same hosts, links
// and directed routes. It also loads the shared v4 files as they are, which
// checks the reader against SimGrid's own.
func TestSimGridLoadsWrittenPlatforms(t *testing.T) {
	python := simgridPython(t)
	files, _ := filepath.Glob("testdata/*.platform.xml")
	shared, _ := filepath.Glob(filepath.Join(sharedBus, "*.xml"))
	files = append(files, shared...)
	for _, f := range files {
		if strings.Contains(f, "bad-") {
			continue
		}
		t.Run(filepath.Base(f), func(t *testing.T) {
			p := mustParseFile(t, f)
			want := dumpOf(p)
			out := filepath.Join(t.TempDir(), "written.xml")
			if err := os.WriteFile(out, writeXML(t, p), 0o644); err != nil {
				t.Fatal(err)
			}
			if got := loadInSimGrid(t, python, out); !reflect.DeepEqual(got, want) {
				t.Errorf("SimGrid built from WriteXML output:\n%+v\nwant\n%+v", got, want)
			}
			if strings.HasSuffix(f, ".v4.xml") {
				if got := loadInSimGrid(t, python, f); !reflect.DeepEqual(got, want) {
					t.Errorf("SimGrid built from %s:\n%+v\nstarsim read\n%+v", f, got, want)
				}
			}
		})
	}
}
