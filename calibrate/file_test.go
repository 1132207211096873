package calibrate

import (
	"bytes"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadSmall(t *testing.T) {
	f, err := ReadFile("testdata/small.calib.json")
	require.NoError(t, err)
	assert.Equal(t, []string{"RAM", "CUDA0"}, f.Nodes())
	assert.True(t, math.IsNaN(float64(f.Kernels[1].Entries[0].Flops)), "null flops reads as NaN")
	assert.Nil(t, f.Transfers[0].PitchModels[0].Segments[1].HiBytes)
	// Round trip: write, read, same model and same bytes the second time.
	var b1, b2 bytes.Buffer
	require.NoError(t, f.Write(&b1))
	g, err := Parse(b1.Bytes(), "rt.json")
	require.NoError(t, err)
	require.NoError(t, g.Write(&b2))
	assert.Equal(t, b1.String(), b2.String())
	schemaValidate(t, b1.Bytes())
	data, _ := os.ReadFile("testdata/small.calib.json")
	schemaValidate(t, data)
}

// TestBadCalibrations edits one line of the small file at a time and checks
// the error names that line.
func TestBadCalibrations(t *testing.T) {
	orig, err := os.ReadFile("testdata/small.calib.json")
	require.NoError(t, err)
	cases := []struct {
		name, old, new string
		line           int
		msg            string
	}{
		{"wrong version", `"version": 1`, `"version": 7`, 3, "unsupported version 7"},
		{"wrong format", `"format": "starsim-calibration"`, `"format": "other"`, 2, "format must be"},
		{"unknown key", `"cpu_cores": 4,`, `"cpu_cores": 4, "gpus": 2,`, 6, "unknown key \"gpus\""},
		{"zero cores", `"cpu_cores": 4`, `"cpu_cores": 0`, 6, "cpu_cores must be >= 1"},
		{"driver core", `"driver_core": 3`, `"driver_core": 9`, 9, "driver_core 9 is not a core"},
		{"bad kind", `"kind": "cuda"`, `"kind": "gpu"`, 9, "kind must be cuda"},
		// 90 % of it in whole MiB is 0, which must not mean unlimited.
		{"tiny GPU memory", `"memory_bytes": 1073741824`, `"memory_bytes": 1000000`, 9, "memory_bytes must be at least 2097152 (2 MiB"},
		{"negative bandwidth", `"bandwidth_Bps": 11e9, "latency_s": 1e-5}`, `"bandwidth_Bps": -11e9, "latency_s": 1e-5}`, 15, "bandwidth must be > 0"},
		{"negative latency", `"bandwidth_Bps": 12e9, "latency_s": 0}`, `"bandwidth_Bps": 12e9, "latency_s": -1}`, 14, "latency must be >= 0"},
		{"unknown link", `["CUDA0-RAM", "Share"]`, `["CUDA0-RAM", "Shared"]`, 20, "unknown link \"Shared\""},
		{"transfer node", `{"src": "CUDA0", "dst": "RAM", "predicted`, `{"src": "CUDA9", "dst": "RAM", "predicted`, 28, "two memory nodes"},
		{"gap in segments", `{"lo_bytes": 1048576, "hi_bytes": null`, `{"lo_bytes": 2000000, "hi_bytes": null`, 27, "contiguous"},
		{"bad serial", `"b": "CUDA0->RAM"`, `"b": "CUDA0-RAM"`, 30, "not a transfer direction"},
		{"negative cost", `"task_push_s": 1e-6`, `"task_push_s": -1e-6`, 32, "task_push_s must be >= 0"},
		{"unknown arch", `"arch": "cpu0", "impl"`, `"arch": "gpu0", "impl"`, 38, "unknown arch \"gpu0\""},
		{"negative mean", `"mean_us": 84000`, `"mean_us": -84000`, 39, "mean_us must be >= 0"},
		{"bad footprint", `"footprint": "24c84a50", "size": 11059200, "flops": null`, `"footprint": "24C84A5", "size": 11059200, "flops": null`, 39, "footprint must be 8 lowercase hex"},
		{"histogram counts", `"counts": [1, 2, 1]`, `"counts": [1, 2]`, 37, "n+1 edges"},
		{"histogram order", `[2700, 2790, 2810, 2900]`, `[2700, 2810, 2790, 2900]`, 37, "strictly increasing"},
		{"type error", `"n": 4,`, `"n": "four",`, 35, "expected uint64"},
		{"truncated", `"power"`, `"power": [{` + "\n", 42, "truncated"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.Contains(t, string(orig), c.old)
			doc := strings.Replace(string(orig), c.old, c.new, 1)
			if c.name == "truncated" {
				doc = doc[:strings.Index(doc, `"power"`)] + c.new
			}
			_, err := Parse([]byte(doc), "m.calib.json")
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.msg)
			assert.True(t, strings.HasPrefix(err.Error(), "m.calib.json:"+strconv.Itoa(c.line)+":"), "got %q, want line %d", err, c.line)
		})
	}
}

func FuzzParse(f *testing.F) {
	if data, err := os.ReadFile("testdata/small.calib.json"); err == nil {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cal, err := Parse(data, "fuzz.calib.json")
		if err != nil {
			return
		}
		// Whatever is accepted writes, re-reads and builds a platform.
		var b bytes.Buffer
		if err := cal.Write(&b); err != nil {
			t.Fatalf("accepted file does not write: %v", err)
		}
		if _, err := Parse(b.Bytes(), "rt"); err != nil {
			t.Fatalf("written file does not re-read: %v", err)
		}
		if _, err := BuildPlatform(cal); err != nil {
			t.Fatalf("accepted file does not build a platform: %v", err)
		}
	})
}
