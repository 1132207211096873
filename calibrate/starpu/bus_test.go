package starpu

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadBusSynthetic(t *testing.T) {
	b, err := ReadBus(filepath.Join("testdata", "sampling"), "synth")
	require.NoError(t, err)
	assert.Equal(t, 4, b.NCPU)
	assert.Equal(t, 0, b.NNUMA)
	assert.Equal(t, 2, b.NCUDA)
	assert.Equal(t, 1, b.NOpenCL)
	assert.Equal(t, []Count{{"CPUs", 4, 2}, {"CUDA devices", 2, 3}, {"OpenCL devices", 1, 4}}, b.Counts)
	assert.Equal(t, []string{"RAM", "CUDA0", "CUDA1", "OpenCL0"}, b.Nodes)
	assert.Equal(t, [][]float64{
		{0, 6000, 5000, 4000},
		{3000, 0, 2000, 1500},
		{2500, 1800, 0, 1400},
		{3500, 1700, 1600, 0},
	}, b.BandwidthMBps)
	// The latency file's last real row is short of padding, and the file
	// has fewer padding rows than the bandwidth file: both are fine.
	assert.Equal(t, [][]float64{
		{0, 10, 11, 20},
		{10.5, 0, 21.5, 30.5},
		{11, 21, 0, 31},
		{20, 30, 31, 0},
	}, b.LatencyUS)
	assert.Equal(t, "CPU", b.AffinityUnit)
	assert.Equal(t, [][]int{{0, 1, 2, 3}, {2, 3, 0, 1}, {1, 0, 3, 2}}, b.Affinity)
}

func TestReadBusNUMA(t *testing.T) {
	b, err := ReadBus(filepath.Join("testdata", "numa"), "numa2")
	require.NoError(t, err)
	assert.Equal(t, 16, b.NCPU)
	assert.Equal(t, 2, b.NNUMA)
	assert.Equal(t, []string{"NUMA0", "NUMA1", "CUDA0"}, b.Nodes)
	assert.Equal(t, [][]float64{{0, 9000, 12000}, {9500, 0, 8000}, {11000, 7000, 0}}, b.BandwidthMBps)
	assert.Equal(t, [][]float64{{0, 0.5, 9}, {0.5, 0, 12}, {8, 11, 0}}, b.LatencyUS)
	assert.Equal(t, "NUMA", b.AffinityUnit)
	assert.Equal(t, [][]int{{0, 1}}, b.Affinity)
}

func TestReadBusShared(t *testing.T) {
	dir := needShared(t)
	cases := []struct {
		host               string
		ncpu, ncuda, nocl  int
		nodes              int
		haveMIC            bool
		padRowsBandwidth   int
		cuda0cuda1BW       float64
		cuda0cuda1Lat      float64
		ram2cuda0, cuda2ra float64
	}{
		{"hannibal", 8, 3, 3, 7, false, 16, 1679.850942, 25.046875, 5988.779905, 3599.738919},
		{"hannibal-pitch", 8, 3, 3, 7, false, 16, 1679.850942, 25.046875, 5988.779905, 3599.738919},
		{"attila", 12, 3, 3, 7, true, 32, math.NaN(), math.NaN(), math.NaN(), math.NaN()},
		{"mirage", 12, 3, 3, 7, true, 32, math.NaN(), math.NaN(), math.NaN(), math.NaN()},
	}
	for _, c := range cases {
		t.Run(c.host, func(t *testing.T) {
			b, err := ReadBus(dir, c.host)
			require.NoError(t, err)
			assert.Equal(t, c.ncpu, b.NCPU)
			assert.Equal(t, c.ncuda, b.NCUDA)
			assert.Equal(t, c.nocl, b.NOpenCL)
			assert.Equal(t, 0, b.NMIC)
			assert.Len(t, b.Counts, map[bool]int{false: 3, true: 4}[c.haveMIC])
			assert.Equal(t, []string{"RAM", "CUDA0", "CUDA1", "CUDA2", "OpenCL0", "OpenCL1", "OpenCL2"}, b.Nodes)
			require.Len(t, b.BandwidthMBps, c.nodes)
			require.Len(t, b.LatencyUS, c.nodes)
			for i := 0; i < c.nodes; i++ {
				require.Len(t, b.BandwidthMBps[i], c.nodes)
				assert.Equal(t, 0.0, b.BandwidthMBps[i][i])
				assert.Equal(t, 0.0, b.LatencyUS[i][i])
				for j := 0; j < c.nodes; j++ {
					assert.False(t, math.IsNaN(b.BandwidthMBps[i][j]), "%s bw %d->%d", c.host, i, j)
					if i != j {
						assert.Positive(t, b.BandwidthMBps[i][j])
						assert.Positive(t, b.LatencyUS[i][j])
					}
				}
			}
			if !math.IsNaN(c.cuda0cuda1BW) {
				assert.Equal(t, c.ram2cuda0, b.BandwidthMBps[0][1])
				assert.Equal(t, c.cuda2ra, b.BandwidthMBps[1][0])
				assert.Equal(t, c.cuda0cuda1BW, b.BandwidthMBps[1][2])
				// A non-peer GPU-GPU copy goes through the RAM: slownesses add up.
				assert.InEpsilon(t, 1/(1/b.BandwidthMBps[1][0]+1/b.BandwidthMBps[0][2]), b.BandwidthMBps[1][2], 1e-6)
				assert.Equal(t, c.cuda0cuda1Lat, b.LatencyUS[1][2])
				assert.InDelta(t, b.LatencyUS[1][0]+b.LatencyUS[0][2], b.LatencyUS[1][2], 0.01)
			}
			// The full file is padded to STARPU_MAXNODES with nan.
			m, err := ParseBandwidth(readFile(t, filepath.Join(dir, "bus", c.host+".bandwidth")), c.host+".bandwidth")
			require.NoError(t, err)
			assert.Len(t, m, c.padRowsBandwidth)
			assert.True(t, math.IsNaN(m[c.nodes][0]))
			assert.True(t, math.IsNaN(m[0][c.nodes]))

			assert.Equal(t, "CPU", b.AffinityUnit)
			require.Len(t, b.Affinity, c.ncuda+c.nocl)
			for _, row := range b.Affinity {
				assert.ElementsMatch(t, seq(c.ncpu), row)
			}
		})
	}
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

func TestReadBusWithoutAffinity(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "bus"), 0o755))
	for _, ext := range []string{"config", "bandwidth", "latency"} {
		data := readFile(t, filepath.Join("testdata", "sampling", "bus", "synth."+ext))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "bus", "h."+ext), data, 0o644))
	}
	b, err := ReadBus(dir, "h")
	require.NoError(t, err)
	assert.Nil(t, b.Affinity)
	assert.Equal(t, "", b.AffinityUnit)
	assert.Len(t, b.Nodes, 4)
}

// writeBus writes a bus directory for host "h" from the synthetic files,
// with some files replaced.
func writeBus(t *testing.T, replace map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "bus"), 0o755))
	for _, ext := range []string{"config", "bandwidth", "latency", "affinity"} {
		data := readFile(t, filepath.Join("testdata", "sampling", "bus", "synth."+ext))
		if r, ok := replace[ext]; ok {
			if r == "" {
				continue
			}
			data = []byte(r)
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, "bus", "h."+ext), data, 0o644))
	}
	return dir
}

func TestReadBusErrors(t *testing.T) {
	cases := []struct {
		name    string
		replace map[string]string
		file    string
		line    int
		phrase  string
	}{
		{"missing config", map[string]string{"config": ""}, "config", 0, "missing bus config file (run starpu_calibrate_bus on h)"},
		{"missing bandwidth", map[string]string{"bandwidth": ""}, "bandwidth", 0, "missing bus bandwidth file"},
		{"missing latency", map[string]string{"latency": ""}, "latency", 0, "missing bus latency file"},
		{"too few nodes", map[string]string{"bandwidth": "0\t1\n1\t0\n"}, "bandwidth", 0, "bandwidth matrix has 2 node(s), the config lists 4 (RAM, CUDA0, CUDA1, OpenCL0)"},
		{"data beyond the nodes", map[string]string{"latency": "0 1 1 1 7\n1 0 1 1 nan\n1 1 0 1 nan\n1 1 1 0 nan\n"}, "latency", 1, "latency from node 0 to node 4 is 7, but the config lists only 4 node(s)"},
		{"data in a padding row", map[string]string{"bandwidth": "0 1 1 1\n1 0 1 1\n1 1 0 1\n1 1 1 0\n\n# pad\nnan nan 5 nan\n"}, "bandwidth", 7, "bandwidth from node 4 to node 2 is 5"},
		{"unknown kind counted", map[string]string{
			"config":    "4 # Number of CPUs\n1 # Number of CUDA devices\n0 # Number of OpenCL devices\n2 # Number of FOO devices\n",
			"bandwidth": "0 1 1 1\n1 0 1 1\n1 1 0 1\n1 1 1 0\n", "latency": "0 1\n1 0\n", "affinity": "0 0 1 2 3\n",
		}, "bandwidth", 1, "counts of unknown node kind: FOO devices"},
		{"affinity rows", map[string]string{"affinity": "0 0 1 2 3\n"}, "affinity", 0, "found 1 device row(s), the config lists 2 CUDA and 1 OpenCL device(s)"},
		{"affinity numbering", map[string]string{"affinity": "0 0 1 2 3\n1 0 1 2 3\n1 0 1 2 3\n"}, "affinity", 3, "device row 3 is numbered 1, want 0"},
		{"affinity width", map[string]string{"affinity": "# GPU\tCPU0\tCPU1\n0 0 1\n1 0 1\n0 1 0\n"}, "affinity", 2, "device 0 lists 2 CPU id(s), the config has 4"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := writeBus(t, c.replace)
			b, err := ReadBus(dir, "h")
			assert.Nil(t, b)
			prefix := filepath.Join(dir, "bus", "h."+c.file) + ":"
			if c.line > 0 {
				prefix += strconv.Itoa(c.line) + ":"
			}
			requireSrcErr(t, err, prefix+" ", c.phrase)
		})
	}
}

func TestParseConfigErrors(t *testing.T) {
	cases := []struct {
		name, text string
		line       int
		phrase     string
	}{
		{"no label", "8\n", 1, "count 8 has no \"# Number of ...\" label"},
		{"other comment", "8 # CPUs\n", 1, "has no \"# Number of ...\" label"},
		{"two values", "8 3 # Number of CPUs\n", 1, "expected one count per line, found 2 values"},
		{"negative", "-8 # Number of CPUs\n", 1, "expected a count (a non-negative integer), found \"-8\""},
		{"float", "# Current configuration\n8.5 # Number of CPUs\n", 2, "found \"8.5\""},
		{"duplicate", "8 # Number of CPUs\n2 # Number of CUDA devices\n3 # Number of CUDA devices\n", 3, "second count of \"CUDA devices\" (first on line 2)"},
		{"huge", "99999999 # Number of CUDA devices\n", 1, "count 99999999 is implausibly large"},
		{"no cpu count", "3 # Number of CUDA devices\n", 0, "no \"Number of CPUs\" count"},
		{"empty", "", 0, "no \"Number of CPUs\" count"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := ParseConfig([]byte(c.text), "h.config")
			assert.Nil(t, cfg)
			prefix := "h.config:"
			if c.line > 0 {
				prefix += strconv.Itoa(c.line) + ":"
			}
			requireSrcErr(t, err, prefix+" ", c.phrase)
		})
	}
	// Newer layout with NUMA nodes and MPI devices; labels any case.
	cfg, err := ParseConfig([]byte("# Current configuration\n16 # Number of CPUs\n2 # Number of NUMA nodes\n1 # number of CUDA devices\n0 # Number of OpenCL devices\n0 # Number of MIC devices\n4 # Number of MPI devices\n1 # Number of HIP devices\n"), "h.config")
	require.NoError(t, err)
	assert.Equal(t, Config{NCPU: 16, NNUMA: 2, NCUDA: 1, NMPI: 4, Counts: cfg.Counts}, *cfg)
	assert.Len(t, cfg.Counts, 7)
	assert.Equal(t, Count{"HIP devices", 1, 8}, cfg.Counts[6])
	assert.Equal(t, []string{"NUMA0", "NUMA1", "CUDA0", "MPI_MS0", "MPI_MS1", "MPI_MS2", "MPI_MS3"}, cfg.NodeNames())
}

func TestParseMatrixErrors(t *testing.T) {
	cases := []struct {
		name, text string
		line       int
		phrase     string
	}{
		{"empty", "# to 0\n", 1, "no bandwidth values"},
		{"garbage", "0\t1\n1\tx\n", 2, "bandwidth to node 1: expected a number or nan, found \"x\""},
		{"negative", "0\t-1\n1\t0\n", 1, "negative bandwidth -1"},
		{"infinite", "0\tinf\n1\t0\n", 1, "found \"inf\""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := ParseBandwidth([]byte(c.text), "h.bandwidth")
			assert.Nil(t, m)
			requireSrcErr(t, err, "h.bandwidth:"+strconv.Itoa(c.line)+": ", c.phrase)
		})
	}
	_, err := ParseLatency([]byte("0 -2\n"), "h.latency")
	requireSrcErr(t, err, "h.latency:1: ", "negative latency -2")

	// Short rows and missing rows are NaN; NaN in any spelling.
	m, err := ParseLatency([]byte("0 NaN -nan\n1\n"), "h.latency")
	require.NoError(t, err)
	require.Len(t, m, 3)
	assert.Equal(t, 0.0, m[0][0])
	assert.True(t, math.IsNaN(m[0][1]) && math.IsNaN(m[0][2]))
	assert.Equal(t, 1.0, m[1][0])
	assert.True(t, math.IsNaN(m[1][1]) && math.IsNaN(m[2][0]))
}

func TestParseAffinity(t *testing.T) {
	a, err := ParseAffinity([]byte("# GPU\tNUMA0\tNUMA1\t\n0\t1\t0\t\n1\t0\t1\t\n"), "h.affinity")
	require.NoError(t, err)
	assert.Equal(t, &Affinity{Unit: "NUMA", Rows: []AffinityRow{{0, []int{1, 0}, 2}, {1, []int{0, 1}, 3}}}, a)

	// No header: the width comes from the first row.
	a, err = ParseAffinity([]byte("0 2 1 0\n"), "h.affinity")
	require.NoError(t, err)
	assert.Equal(t, "", a.Unit)
	assert.Equal(t, []int{2, 1, 0}, a.Rows[0].Order)

	cases := []struct {
		name, text string
		line       int
		phrase     string
	}{
		{"row width", "# GPU\tCPU0\tCPU1\n0 0 1\n1 0\n", 3, "device 1: found 1 ids, want 2"},
		{"header width", "# GPU\tCPU0\tCPU1\n0 0 1 2\n", 2, "device 0: found 3 ids, want 2"},
		{"id range", "0 0 5\n", 1, "device 0: id 5 out of range [0, 2)"},
		{"bad device", "x 0 1\n", 1, "expected a device number, found \"x\""},
		{"bad id", "0 0 -1\n", 1, "device 0: expected a CPU or NUMA node id, found \"-1\""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, err := ParseAffinity([]byte(c.text), "h.affinity")
			assert.Nil(t, a)
			requireSrcErr(t, err, "h.affinity:"+strconv.Itoa(c.line)+": ", c.phrase)
		})
	}
}
