package calibrate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/starsim/starsim/calibrate/starpu"
	"github.com/starsim/starsim/emulator/network"
	"github.com/starsim/starsim/platforms"
	"github.com/starsim/starsim/platforms/netsim"
)

const samplingDir = "../../shared/calibrations/starpu-sampling"

var sharedHosts = []string{"attila", "mirage", "hannibal", "hannibal-pitch"}

func needShared(t *testing.T) {
	if _, err := os.Stat(samplingDir); err != nil {
		t.Skip("../shared sampling directory not found")
	}
}

func sameFloat(a, b float64) bool { return a == b || (math.IsNaN(a) && math.IsNaN(b)) }

// TestImportNumberForNumber: every entry of every StarPU model file reaches
// the calibration (and `calibrate show --json` rows) with the same mean,
// deviation, count, sums, size and flops, through a write/read round trip.
func TestImportNumberForNumber(t *testing.T) {
	needShared(t)
	for _, host := range sharedHosts {
		t.Run(host, func(t *testing.T) {
			f, warn, err := Import(samplingDir, host)
			require.NoError(t, err)
			assert.Empty(t, warn)
			var buf bytes.Buffer
			require.NoError(t, f.Write(&buf))
			schemaValidate(t, buf.Bytes())
			g, err := Parse(buf.Bytes(), host+".calib.json")
			require.NoError(t, err)

			s, err := starpu.ReadSampling(samplingDir, host)
			require.NoError(t, err)
			rows := map[string]KernelRow{}
			for _, r := range g.Rows() {
				rows[fmt.Sprintf("%s/%s/%d/%s", r.Model, r.Arch, r.Impl, r.Footprint)] = r
			}
			nentries := 0
			for _, m := range s.Models {
				for _, c := range m.Combs {
					for i, im := range c.Impls {
						for _, e := range im.Entries {
							nentries++
							key := fmt.Sprintf("%s/%s/%d/%08x", m.Symbol, c.Arch(), i, e.Footprint)
							r, ok := rows[key]
							require.True(t, ok, key)
							assert.Equal(t, e.MeanUS, r.MeanUS, key)
							assert.Equal(t, e.DevUS, r.StddevUS, key)
							assert.Equal(t, e.N, r.N, key)
							assert.Equal(t, e.Size, r.Size, key)
							assert.True(t, sameFloat(e.Flops, float64(r.Flops)), key)
						}
					}
				}
			}
			assert.Equal(t, nentries, len(rows))
			// Sums and regressions survive too (checked on the first model).
			k := g.Kernels[0]
			im := s.Models[0].Combs[0].Impls[0]
			assert.Equal(t, im.Entries[0].Sum, k.Entries[0].SumUS)
			assert.Equal(t, im.Entries[0].Sum2, k.Entries[0].Sum2US2)
			assert.True(t, sameFloat(im.Regression.Alpha, float64(k.Regression.Alpha)))
			assert.Equal(t, im.Regression.N, k.Regression.N)
		})
	}
}

// TestImportAttilaFacts checks values read off StarPU's perfmodel and bus
// files by hand: attila's GEMM cuda0 mean 2795.67 us, the hannibal
// CUDA0->CUDA1 prediction 1679.85 MB/s (through RAM) and 25.05 us.
func TestImportAttilaFacts(t *testing.T) {
	needShared(t)
	f, _, err := Import(samplingDir, "attila")
	require.NoError(t, err)
	assert.Equal(t, 12, f.Machine.CPUCores)
	require.Len(t, f.Machine.Devices, 6)
	assert.Equal(t, int64(3220897792), f.Machine.Devices[0].MemoryBytes)
	assert.True(t, f.Machine.Devices[0].PeerAccess)
	for _, r := range f.Rows() {
		if r.Model == "chol_model_gemm" && r.Arch == "cuda0" && r.Footprint == "24c84a50" {
			assert.InDelta(t, 2795.67, r.MeanUS, 0.005)
			assert.Equal(t, uint64(6503), r.N)
		}
	}
	h, _, err := Import(samplingDir, "hannibal")
	require.NoError(t, err)
	tr := h.transfer("CUDA0", "CUDA1")
	require.NotNil(t, tr)
	assert.InDelta(t, 1679.85e6, tr.PredictedBandwidthBps, 0.01e6)
	assert.InDelta(t, 25.05e-6, tr.PredictedLatencyS, 0.005e-6)
}

// TestPlatformBuildMatchesStarPU: the platform built from an imported
// calibration has the original platform file's links and directed routes,
// and a lone transfer on every route takes the same time (exactly) on both.
func TestPlatformBuildMatchesStarPU(t *testing.T) {
	needShared(t)
	for _, host := range sharedHosts {
		t.Run(host, func(t *testing.T) {
			f, _, err := Import(samplingDir, host)
			require.NoError(t, err)
			built, err := BuildPlatform(f)
			require.NoError(t, err)
			orig, err := platforms.ParseFile(filepath.Join(samplingDir, "bus", host+".platform.v4.xml"))
			require.NoError(t, err)
			var buf bytes.Buffer
			require.NoError(t, built.WriteXML(&buf))
			reread, err := platforms.Parse(buf.Bytes(), "built.xml")
			require.NoError(t, err)
			for _, r := range orig.DirectedRoutes() {
				links, ok := reread.Route(r.Src, r.Dst)
				require.True(t, ok, "%s->%s", r.Src, r.Dst)
				assert.Equal(t, r.Links, links)
				for _, id := range links {
					a, _ := orig.Link(id)
					b, _ := reread.Link(id)
					assert.Equal(t, a.BandwidthBps, b.BandwidthBps, id)
					assert.Equal(t, a.LatencyS, b.LatencyS, id)
				}
				for _, bytes := range []float64{1, 3686400, 64 << 20} {
					assert.Equal(t, runOne(t, orig, r.Src, r.Dst, bytes), runOne(t, reread, r.Src, r.Dst, bytes), "%s->%s %v B", r.Src, r.Dst, bytes)
				}
			}
			for _, h := range orig.Hosts {
				b, ok := reread.Host(h.ID)
				require.True(t, ok, h.ID)
				mem, _ := h.Prop("memsize")
				mem2, _ := b.Prop("memsize")
				assert.Equal(t, mem, mem2, h.ID)
			}
		})
	}
}

// TestPlatformBuildInSimGrid loads the built platform in the real SimGrid
// (tools/sgoracle, needs Debian's python3-simgrid) and checks that transfers
// on every route, alone and all at once, finish at the same times as on the
// original StarPU platform file.
func TestPlatformBuildInSimGrid(t *testing.T) {
	needShared(t)
	oracle := simgridOracle(t)
	for _, host := range []string{"attila", "hannibal"} {
		t.Run(host, func(t *testing.T) {
			f, _, err := Import(samplingDir, host)
			require.NoError(t, err)
			built, err := BuildPlatform(f)
			require.NoError(t, err)
			dir := t.TempDir()
			var buf bytes.Buffer
			require.NoError(t, built.WriteXML(&buf))
			builtPath := filepath.Join(dir, "built.xml")
			require.NoError(t, os.WriteFile(builtPath, buf.Bytes(), 0o644))
			origPath, _ := filepath.Abs(filepath.Join(samplingDir, "bus", host+".platform.v4.xml"))
			orig, err := platforms.ParseFile(origPath)
			require.NoError(t, err)
			var flows []map[string]any
			for i, r := range orig.DirectedRoutes() {
				flows = append(flows, map[string]any{"id": fmt.Sprint(i), "src": r.Src, "dst": r.Dst, "bytes": 3686400 * (1 + i%3), "start": 0.001 * float64(i%4)})
			}
			run := func(plat string) []float64 {
				sc, _ := json.Marshal(map[string]any{"platform_file": plat, "flows": flows})
				p := filepath.Join(dir, "sc.json")
				require.NoError(t, os.WriteFile(p, sc, 0o644))
				out, err := exec.Command(oracle, p).Output()
				require.NoError(t, err)
				var res netsim.Result
				require.NoError(t, json.Unmarshal(out, &res))
				var fin []float64
				for _, fl := range res.Flows {
					fin = append(fin, fl.FinishS)
				}
				return fin
			}
			a, b := run(origPath), run(builtPath)
			require.Equal(t, len(flows), len(a))
			for i := range a {
				assert.InDelta(t, a[i], b[i], 1e-12*a[i], "flow %d", i)
			}
			// And starsim's own network agrees with SimGrid on the built file.
			sc := &netsim.Scenario{File: "x"}
			for _, fl := range flows {
				sc.Flows = append(sc.Flows, netsim.Flow{ID: fl["id"].(string), Src: fl["src"].(string), Dst: fl["dst"].(string),
					Bytes: float64(fl["bytes"].(int)), StartS: fl["start"].(float64)})
			}
			res, err := netsim.RunOn(netsim.PlatformTopology(built), sc, netsim.Options{Network: network.Options{Check: true}})
			require.NoError(t, err)
			for i, fl := range res.Flows {
				assert.InDelta(t, b[i], fl.FinishS, 1e-9*fl.DurationS, "flow %d", i)
			}
		})
	}
}

// simgridOracle returns the path of tools/sgoracle/sgnetsim.py when the real
// SimGrid is importable by /usr/bin/python3, else skips.
func simgridOracle(t *testing.T) string {
	t.Helper()
	if err := exec.Command("/usr/bin/python3", "-c", "import simgrid").Run(); err != nil {
		t.Skip("SimGrid not available (apt-get install python3-simgrid)")
	}
	p, err := filepath.Abs("../tools/sgoracle/sgnetsim.py")
	require.NoError(t, err)
	return p
}

func TestImportErrors(t *testing.T) {
	_, _, err := Import(t.TempDir(), "nohost")
	require.Error(t, err)
	needShared(t)
	_, _, err = Import(samplingDir, "unknown-host")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "unknown-host")
}
