package platforms

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// sharedBus holds StarPU's sampled bus platforms. They are LGPL data and are
// read in place, never copied into this repository.
const sharedBus = "../../shared/calibrations/starpu-sampling/bus"

func sharedPlatforms(t *testing.T) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(sharedBus, "*.xml"))
	if len(files) == 0 {
		t.Skipf("no shared platforms in %s", sharedBus)
	}
	return files
}

func TestSharedPlatformsLoad(t *testing.T) {
	for _, f := range sharedPlatforms(t) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			p := mustParseFile(t, f)
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if want := bytes.Count(data, []byte("<route")); len(p.Routes) != want {
				t.Errorf("%d routes, file has %d <route elements", len(p.Routes), want)
			}
			if want := bytes.Count(data, []byte("<host ")); len(p.Hosts) != want {
				t.Errorf("%d hosts, file has %d <host elements", len(p.Hosts), want)
			}
			gpus := 0
			for i := range p.Hosts {
				h := &p.Hosts[i]
				if strings.HasPrefix(h.ID, "CUDA") || strings.HasPrefix(h.ID, "OpenCL") {
					gpus++
					if _, ok := h.Prop("memsize"); !ok {
						t.Errorf("GPU host %s has no memsize", h.ID)
					}
				}
			}
			if gpus == 0 {
				t.Errorf("no GPU hosts")
			}
			// The indexed lookup agrees with the enumeration.
			for _, r := range p.DirectedRoutes() {
				if got, ok := p.Route(r.Src, r.Dst); !ok || !reflect.DeepEqual(got, r.Links) {
					t.Errorf("Route(%s, %s) = %v, %v; want %v", r.Src, r.Dst, got, ok, r.Links)
				}
			}
			roundTrip(t, p)
		})
	}
}

func TestSharedV3EqualsV4(t *testing.T) {
	files := sharedPlatforms(t)
	pairs := 0
	for _, v4 := range files {
		v3, ok := strings.CutSuffix(v4, ".platform.v4.xml")
		if !ok {
			continue
		}
		v3 += ".platform.xml"
		if _, err := os.Stat(v3); err != nil {
			continue
		}
		pairs++
		t.Run(filepath.Base(v3), func(t *testing.T) {
			a, b := mustParseFile(t, v3), mustParseFile(t, v4)
			if got, want := canonicalConfig(model(a)), model(b); !reflect.DeepEqual(got, want) {
				t.Errorf("v3 and v4 models differ:\nv3 %+v\nv4 %+v", got, want)
			}
		})
	}
	if pairs == 0 {
		t.Errorf("no v3/v4 pairs in %s", sharedBus)
	}
}

func TestSharedExactValues(t *testing.T) {
	sharedPlatforms(t)
	tests := []struct {
		file, link   string
		bandwidthBps float64
		latencyS     float64
	}{
		{"attila.platform.xml", "RAM-CUDA0", 6008661719.001335, 9e-6},
		{"attila.platform.v4.xml", "RAM-CUDA0", 6008661719.001335, 9e-6},
		{"attila.platform.xml", "RAM-DISK0", 400000000, 0.002}, // units in a v3 file
		{"attila.platform.v4.xml", "PCI:0000:[00-07] through", 13053464466.224421, 0},
		{"hannibal.platform.xml", "Share", 5988971975.023217, 0},
		{"hannibal.platform.v4.xml", "Share", 5988971975.023217, 0},
		{"hannibal-pitch.platform.xml", "Share", 5988779905.433726, 0},
	}
	for _, tt := range tests {
		p := mustParseFile(t, filepath.Join(sharedBus, tt.file))
		l, ok := p.Link(tt.link)
		if !ok || l.BandwidthBps != tt.bandwidthBps || l.LatencyS != tt.latencyS || l.Sharing != Shared {
			t.Errorf("%s: Link(%q) = %+v, %v; want %v B/s, %v s, SHARED", tt.file, tt.link, l, ok, tt.bandwidthBps, tt.latencyS)
		}
	}
	p := mustParseFile(t, filepath.Join(sharedBus, "attila.platform.v4.xml"))
	if h, ok := p.Host("CUDA0"); !ok || h.SpeedFlops != 2e9 {
		t.Errorf("attila CUDA0 = %+v, %v", h, ok)
	}
	// The CUDA0 -> CUDA2 route crosses the host bridge twice; both count.
	route, ok := p.Route("CUDA0", "CUDA2")
	if !ok || len(route) != 13 || route[0] != "CUDA0-CUDA2" || route[6] != "Host" || route[7] != "Host" {
		t.Errorf("attila Route(CUDA0, CUDA2) = %v, %v", route, ok)
	}
	if want := []Prop{
		{"network/TCP-gamma", "-1"}, {"network/latency-factor", "1"}, {"network/bandwidth-factor", "1"},
		{"network/weight-S", "0.0"}, {"network/crosstraffic", "0"},
	}; !reflect.DeepEqual(p.Config, want) {
		t.Errorf("attila config = %v, want %v", p.Config, want)
	}
}
