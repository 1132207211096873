package netsim

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/starsim/starsim/emulator/network"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const sharedDir = "../../../shared"

// TestFluidCases runs every shared hand-derived case end to end (reader and
// runner); "expected" and "derivation" are keys the reader must ignore.
func TestFluidCases(t *testing.T) {
	files, _ := filepath.Glob(sharedDir + "/docs/fluid-cases/*.json")
	if len(files) == 0 {
		t.Skip("shared fluid cases not found")
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			sc, err := ReadFile(file)
			require.NoError(t, err)
			res, err := Run(sc, Options{Network: network.Options{Check: true}})
			require.NoError(t, err)
			data, _ := os.ReadFile(file)
			var exp struct {
				Expected map[string]struct{ Start, Finish, Duration float64 }
			}
			require.NoError(t, json.Unmarshal(data, &exp))
			require.Len(t, res.Flows, len(exp.Expected))
			for _, f := range res.Flows {
				w := exp.Expected[f.ID]
				assert.InDelta(t, w.Finish, f.FinishS, 1e-12*w.Finish+1e-18, f.ID)
				assert.InDelta(t, w.Duration, f.DurationS, 1e-12*w.Finish+1e-18, f.ID)
				assert.LessOrEqual(t, f.FinishS, res.MakespanS)
			}
		})
	}
}

// TestPlatformScenario runs flows over a real StarPU platform: a lone
// RAM->CUDA0 transfer on attila crosses RAM-CUDA0 (9e-6 s, 6008661719 B/s),
// the PCI tree links (latency 0) and Host, so it takes 9e-6 + bytes/min(bw)
// with min(bw) = 6008661719.001335 (RAM-CUDA0 and the PCI "down" links).
func TestPlatformScenario(t *testing.T) {
	plat, _ := filepath.Abs(sharedDir + "/calibrations/starpu-sampling/bus/attila.platform.v4.xml")
	if _, err := os.Stat(plat); err != nil {
		t.Skip("shared attila platform not found")
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "s.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"platform_file": "`+plat+`",
	  "flows": [{"id": "h2d", "src": "RAM", "dst": "CUDA0", "bytes": 3686400, "start": 0.5}]}`), 0o644))
	sc, err := ReadFile(file)
	require.NoError(t, err)
	res, err := Run(sc, Options{Network: network.Options{Check: true}})
	require.NoError(t, err)
	want := 0.5 + 9e-6 + 3686400/6008661719.001335
	assert.InDelta(t, want, res.Flows[0].FinishS, 1e-15)

	// A flow between hosts with no route in the platform is an error at the
	// flow's line.
	require.NoError(t, os.WriteFile(file, []byte("{\"platform_file\": \""+plat+"\",\n \"flows\": [\n  {\"id\": \"x\", \"src\": \"CPU0\", \"dst\": \"CUDA0\", \"bytes\": 1}]}"), 0o644))
	sc, err = ReadFile(file)
	require.NoError(t, err)
	_, err = Run(sc, Options{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), file+":3: flow \"x\": no route from \"CPU0\" to \"CUDA0\"")
}

func TestRelativePlatformFile(t *testing.T) {
	sc, err := Parse([]byte(`{"platform_file": "p.xml", "flows": []}`), "some/dir/s.json")
	require.NoError(t, err)
	assert.Equal(t, filepath.Join("some", "dir", "p.xml"), sc.PlatformFile)
}

func TestBadScenarios(t *testing.T) {
	const links = `"links": [{"id": "L", "bandwidth": 1e9, "latency": 1e-5}],
"routes": [{"src": "A", "dst": "B", "links": ["L"]}],
`
	cases := []struct {
		name, doc, want string
	}{
		{"not json", "hello", "s.json:1: invalid JSON"},
		{"not an object", "[1]", "s.json:1: a scenario must be a JSON object"},
		{"truncated", "{\n" + links + `"flows": [{"id": "f"`, "s.json:4: truncated JSON"},
		{"no links", `{"flows": []}`, "s.json: missing \"links\""},
		{"zero bandwidth", "{\n\"links\": [\n{\"id\": \"L\", \"bandwidth\": 0}]}", "s.json:3: link \"L\": bandwidth must be > 0 and at most 1e+18 B/s"},
		{"negative bandwidth", "{\"links\": [{\"id\": \"L\", \"bandwidth\": -5}]}", "bandwidth must be > 0 and at most 1e+18 B/s, got -5"},
		{"missing bandwidth", "{\"links\": [{\"id\": \"L\"}]}", "s.json:1: link \"L\": missing \"bandwidth\""},
		{"negative latency", "{\"links\": [{\"id\": \"L\", \"bandwidth\": 1, \"latency\": -1e-6}]}", "latency must be >= 0 and at most 1e+09 s"},
		{"string bandwidth", "{\"links\": [\n{\"id\": \"L\", \"bandwidth\": \"NaN\"}]}", "s.json:2: link: field \"bandwidth\": expected float64, got JSON string"},
		{"bad policy", "{\"links\": [{\"id\": \"L\", \"bandwidth\": 1, \"sharing_policy\": \"SPLITDUPLEX\"}]}", "sharing_policy must be SHARED or FATPIPE"},
		{"unknown field", "{\"links\": [{\"id\": \"L\", \"bandwith\": 1}]}", "unknown field \"bandwith\""},
		{"duplicate link", "{\"links\": [{\"id\": \"L\", \"bandwidth\": 1},\n{\"id\": \"L\", \"bandwidth\": 2}]}", "s.json:2: duplicate link id \"L\""},
		{"unknown link", "{\"links\": [],\n\"routes\": [{\"src\": \"A\", \"dst\": \"B\", \"links\": [\"M\"]}]}", "s.json:2: route A->B: unknown link \"M\""},
		{"empty route", "{\"links\": [],\n\"routes\": [{\"src\": \"A\", \"dst\": \"B\", \"links\": []}]}", "s.json:2: route A->B: \"links\" must list at least one link id"},
		{"unknown top-level key", "{" + links + "\"routes2\": 1}", ""}, // ignored: valid
		{"duplicate route", "{\"links\": [{\"id\": \"L\", \"bandwidth\": 1}],\n\"routes\": [{\"src\": \"A\", \"dst\": \"B\", \"links\": [\"L\"]},\n{\"src\": \"A\", \"dst\": \"B\", \"links\": [\"L\"]}]}", "s.json:3: duplicate route A->B"},
		{"no route", "{\n" + links + "\"flows\": [\n{\"id\": \"f\", \"src\": \"B\", \"dst\": \"A\", \"bytes\": 1}]}", "s.json:5: flow \"f\": no route from \"B\" to \"A\""},
		{"negative bytes", "{\n" + links + "\"flows\": [{\"id\": \"f\", \"src\": \"A\", \"dst\": \"B\", \"bytes\": -1}]}", "s.json:4: flow \"f\": bytes must be >= 0"},
		{"negative start", "{\n" + links + "\"flows\": [{\"id\": \"f\", \"src\": \"A\", \"dst\": \"B\", \"bytes\": 1, \"start\": -2}]}", "start must be >= 0 and at most 1e+09 s"},
		{"duplicate flow", "{\n" + links + "\"flows\": [{\"id\": \"f\", \"src\": \"A\", \"dst\": \"B\", \"bytes\": 1},\n{\"id\": \"f\", \"src\": \"A\", \"dst\": \"B\", \"bytes\": 1}]}", "s.json:5: duplicate flow id \"f\""},
		{"missing bytes", "{\n" + links + "\"flows\": [{\"id\": \"f\", \"src\": \"A\", \"dst\": \"B\"}]}", "missing \"bytes\""},
		{"both", "{\"platform_file\": \"p.xml\"," + links + "\"flows\": []}", "give either"},
		{"trailing data", "{\"links\": []} {}", "s.json:1: unexpected data after the scenario object"},
		{"duplicate key", "{\"links\": [],\n\"links\": []}", "s.json:2: duplicate key \"links\""},
		{"truncated link", "{\"links\": [\n{\"id\": \"L\",\n\"bandwidth\": 1", "s.json:3: truncated JSON in link"},
		{"huge start", "{\n" + links + "\"flows\": [{\"id\": \"f\", \"src\": \"A\", \"dst\": \"B\", \"bytes\": 1, \"start\": 1e308}]}", "s.json:4: flow \"f\": start must be >= 0 and at most 1e+09 s, got 1e+308"},
		{"huge bytes", "{\n" + links + "\"flows\": [{\"id\": \"f\", \"src\": \"A\", \"dst\": \"B\", \"bytes\": 1e300}]}", "bytes must be >= 0 and at most 1e+18"},
		{"huge bandwidth", "{\"links\": [{\"id\": \"L\", \"bandwidth\": 1e300}]}", "bandwidth must be > 0 and at most 1e+18 B/s, got 1e+300"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.doc), "s.json")
			if c.want == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
			assert.Equal(t, 1, strings.Count(err.Error(), "s.json"), "the location once: %v", err)
		})
	}
}

// TestDurationLostToRounding: a flow whose time is below float64's
// resolution at its start is an error, not a duration of 0.
func TestDurationLostToRounding(t *testing.T) {
	doc := `{"links": [{"id": "L", "bandwidth": 1e9}], "routes": [{"src": "A", "dst": "B", "links": ["L"]}],
"flows": [{"id": "ok", "src": "A", "dst": "B", "bytes": 0, "start": 1e9},
{"id": "f", "src": "A", "dst": "B", "bytes": 1, "start": 1e9}]}`
	sc, err := Parse([]byte(doc), "s.json")
	require.NoError(t, err)
	_, err = Run(sc, Options{})
	assert.EqualError(t, err, `s.json:3: flow "f": its duration is lost to float64 rounding (start 1e+09 s, finish 1e+09 s): give times and sizes of comparable scales`)
}

func TestMissingPlatformFile(t *testing.T) {
	sc, err := Parse([]byte(`{"platform_file": "nope.xml", "flows": []}`), filepath.Join(t.TempDir(), "s.json"))
	require.NoError(t, err)
	_, err = Run(sc, Options{})
	require.Error(t, err)
	assert.True(t, strings.Contains(err.Error(), "nope.xml"))
}

// FuzzParse: the reader never panics, and whatever it accepts runs.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(sharedDir + "/docs/fluid-cases/*.json")
	for _, file := range files {
		if data, err := os.ReadFile(file); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte(`{"links":[{"id":"L","bandwidth":1e9}],"routes":[{"src":"a","dst":"b","links":["L","L"]}],"flows":[{"id":"x","src":"a","dst":"b","bytes":10,"start":1}]}`))
	f.Add([]byte(`{"links":[{"id":"L","bandwidth":1e9,"sharing_policy":"FATPIPE"}],"routes":[],"flows":[]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		sc, err := Parse(data, "fuzz.json")
		if err != nil || sc.PlatformFile != "" || len(sc.Flows) > 200 {
			return
		}
		for _, fl := range sc.Flows {
			if fl.StartS > 1e6 || fl.Bytes > 1e15 {
				return
			}
		}
		if _, err := Run(sc, Options{Network: network.Options{Check: true}}); err != nil {
			t.Fatalf("accepted scenario failed to run: %v", err)
		}
	})
}
