package platforms

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current writer")

func writeXML(t *testing.T, p *Platform) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := p.WriteXML(&b); err != nil {
		t.Fatalf("WriteXML: %v", err)
	}
	return b.Bytes()
}

func TestWriteGolden(t *testing.T) {
	for _, name := range []string{"small", "nested"} {
		p := mustParseFile(t, "testdata/"+name+".platform.xml")
		got := writeXML(t, p)
		golden := "testdata/" + name + ".platform.golden"
		if *update {
			if err := os.WriteFile(golden, got, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (run go test ./platforms -update to create it)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("WriteXML(%s) differs from %s (run with -update if intended):\n%s", name, golden, got)
		}
	}
}

// roundTrip checks that writing p and reading it back gives the same model
// (config ids aside, which the writer modernises).
func roundTrip(t *testing.T, p *Platform) {
	t.Helper()
	out := writeXML(t, p)
	q, err := Parse(out, "written.xml")
	if err != nil {
		t.Fatalf("Parse(WriteXML): %v\n%s", err, out)
	}
	if got, want := model(q), canonicalConfig(model(p)); !reflect.DeepEqual(got, want) {
		t.Errorf("round trip changed the model:\ngot  %+v\nwant %+v", got, want)
	}
	if again := writeXML(t, q); !bytes.Equal(again, out) {
		t.Errorf("writing the re-read platform gives other bytes:\n%s\nvs\n%s", again, out)
	}
}

func TestRoundTripTestdata(t *testing.T) {
	files, err := filepath.Glob("testdata/*.platform.xml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata: %v", err)
	}
	for _, f := range files {
		if strings.Contains(f, "bad-") {
			continue
		}
		t.Run(filepath.Base(f), func(t *testing.T) { roundTrip(t, mustParseFile(t, f)) })
	}
}

func TestRoundTripHandBuilt(t *testing.T) {
	p := &Platform{
		Config: []Prop{{"network/latency_factor", "1"}, {"x", "tab\tnl\ncr\r<&>\"'"}},
		Hosts: []Host{
			{ID: "h 1", SpeedFlops: 0},
			{ID: "h\t2", SpeedFlops: 1.0000000000000002, Props: []Prop{{"k", ""}}},
		},
		Links: []Link{
			{ID: "l", BandwidthBps: 5e-324, LatencyS: 1e300},
			{ID: "f", BandwidthBps: 1.7976931348623157e308, Sharing: Fatpipe},
		},
		Routes: []Route{{Src: "h 1", Dst: "h\t2", Links: []string{"l", "f", "l"}, Symmetrical: true}},
	}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	out := writeXML(t, p)
	if !bytes.Contains(out, []byte(`<zone id="AS0" routing="Full">`)) || !bytes.Contains(out, []byte(`id="network/latency-factor"`)) {
		t.Errorf("defaults or config translation missing:\n%s", out)
	}
	q, err := Parse(out, "written.xml")
	if err != nil {
		t.Fatalf("Parse(WriteXML): %v\n%s", err, out)
	}
	want := canonicalConfig(model(p))
	want.ZoneID, want.Routing = "AS0", "Full"
	for i := range want.Links {
		if want.Links[i].Sharing == "" {
			want.Links[i].Sharing = Shared
		}
	}
	if got := model(q); !reflect.DeepEqual(got, want) {
		t.Errorf("round trip changed the model:\ngot  %+v\nwant %+v", got, want)
	}
}

func TestCanonicalConfigID(t *testing.T) {
	for in, want := range map[string]string{
		"network/TCP_gamma":        "network/TCP-gamma",
		"network/latency_factor":   "network/latency-factor",
		"network/bandwidth_factor": "network/bandwidth-factor",
		"network/weight_S":         "network/weight-S",
		"network/crosstraffic":     "network/crosstraffic",
		"network/TCP-gamma":        "network/TCP-gamma",
	} {
		if got := CanonicalConfigID(in); got != want {
			t.Errorf("CanonicalConfigID(%q) = %q, want %q", in, got, want)
		}
	}
}
