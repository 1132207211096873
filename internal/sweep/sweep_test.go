package sweep

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/starsim/starsim/calibrate"
	"github.com/starsim/starsim/internal/synthsampling"
	"github.com/starsim/starsim/models/generation"
	"github.com/starsim/starsim/runtime"
)

func smallPlan() *Plan {
	o := runtime.DefaultOptions()
	o.Check = true
	o.Durations = runtime.DurNormal // random durations: determinism must not depend on goroutines
	o.Seed = 3
	return &Plan{Machines: []Machine{{Label: "default", File: calibrate.Default(), PriceUnits: 40000}},
		Apps: []string{"cholesky", "lu"}, Scheds: []string{"dmda", "dmdas"}, Blocks: []int{960},
		Ns: []int{960 * 4, 960 * 6, 960 * 8}, Options: o}
}

func csvOf(t *testing.T, rows []Row) string {
	var b bytes.Buffer
	require.NoError(t, WriteCSV(&b, rows))
	return b.String()
}

// TestParallelismAndShardsDoNotChangeBytes: 1 or 2 workers, and 3 shards
// merged, give the same CSV bytes.
func TestParallelismAndShardsDoNotChangeBytes(t *testing.T) {
	p := smallPlan()
	jobs := p.Jobs()
	require.Len(t, jobs, 12)
	one, err := Run(p, jobs, 1, nil)
	require.NoError(t, err)
	two, err := Run(p, jobs, 2, nil)
	require.NoError(t, err)
	ref := csvOf(t, one)
	assert.Equal(t, ref, csvOf(t, two))

	dir := t.TempDir()
	var parts [][]Row
	for i := 1; i <= 3; i++ {
		sh, err := Shard(jobs, i, 3)
		require.NoError(t, err)
		rows, err := Run(p, sh, 2, nil)
		require.NoError(t, err)
		path := filepath.Join(dir, "s.csv")
		require.NoError(t, os.WriteFile(path, []byte(csvOf(t, rows)), 0o644))
		back, err := ReadCSV(path)
		require.NoError(t, err)
		assert.Equal(t, rows, back, "CSV round trip")
		parts = append(parts, back)
	}
	merged, err := Merge(parts[2], parts[0], parts[1])
	require.NoError(t, err)
	assert.Equal(t, ref, csvOf(t, merged))

	_, err = Merge(parts[0], parts[1])
	assert.ErrorContains(t, err, "missing")
	_, err = Merge(parts[0], parts[0], parts[1], parts[2])
	assert.ErrorContains(t, err, "twice")
}

func TestRowsMakeSense(t *testing.T) {
	p := smallPlan()
	rows, err := Run(p, p.Jobs(), 2, nil)
	require.NoError(t, err)
	for _, r := range rows {
		assert.Greater(t, r.GFlops, 0.0)
		assert.Greater(t, r.EnergyJ, 0.0, "the default calibration has power figures")
		assert.Greater(t, r.BusyPct, 0.0)
		assert.InDelta(t, r.GFlops/40000, r.GFlopsPerPrice(), 1e-12)
	}
	assert.Equal(t, "cholesky", rows[0].App)
	assert.Equal(t, 960*4, rows[0].N)
	assert.Equal(t, "lu", rows[11].App)
	assert.Equal(t, "dmdas", rows[11].Sched)
}

func TestShardErrors(t *testing.T) {
	for _, c := range [][2]int{{0, 3}, {4, 3}, {1, 0}} {
		_, err := Shard(nil, c[0], c[1])
		assert.Error(t, err)
	}
}

func TestReadCSVErrors(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "bad.csv")
	require.NoError(t, os.WriteFile(p, []byte("a,b\n"), 0o644))
	_, err := ReadCSV(p)
	assert.ErrorContains(t, err, "bad.csv:1:")
	var b bytes.Buffer
	require.NoError(t, WriteCSV(&b, nil))
	require.NoError(t, os.WriteFile(p, append(b.Bytes(), []byte("x,1,m,src,1.4,a,s,1,1,1,1,1,1,1,1,1,1,1,1,1,1\n")...), 0o644))
	_, err = ReadCSV(p)
	assert.ErrorContains(t, err, "bad.csv:2: column index")
}

// TestRowsNameMachineAndGeneration: each row says where its machine came
// from and which StarPU generation's graph ran (per machine, detected from
// its models), and a --gpu-mem what-if limits that machine only.
func TestRowsNameMachineAndGeneration(t *testing.T) {
	var ms []Machine
	for _, g := range []generation.Gen{generation.V13, generation.V14} {
		dir := t.TempDir()
		require.NoError(t, synthsampling.Write(dir, synthsampling.Options{Host: "s", Gen: g, CPUs: 3, GPUs: 2}))
		f, _, err := calibrate.Import(dir, "s")
		require.NoError(t, err)
		ms = append(ms, Machine{Label: "s" + g.String(), File: f, Source: "StarPU sampling directory " + dir})
	}
	lim := ms[1]
	lim.Label, lim.GPUMemLimitBytes = "s1.4+mem", 32<<20
	ms = append(ms, lim)
	o := runtime.DefaultOptions()
	o.Check = true
	p := &Plan{Machines: ms, Apps: []string{"cholesky", "lu"}, Scheds: []string{"dmdas"}, Blocks: []int{960}, Ns: []int{960 * 12}, Options: o}
	rows, err := Run(p, p.Jobs(), 2, nil)
	require.NoError(t, err)
	require.Len(t, rows, 6)
	for i, want := range []string{"1.3", "1.3", "1.4", "1.4", "1.4", "1.4"} {
		assert.Equal(t, want, rows[i].Generation, i)
		assert.Equal(t, ms[i/2].Source, rows[i].MachineSource)
	}
	assert.Equal(t, rows[0].NTasks, rows[2].NTasks, "1.3's Cholesky has as many tasks (GEMMs for SYRKs)")
	assert.NotEqual(t, rows[0].GFlops, rows[2].GFlops)
	assert.Less(t, rows[5].GFlops, rows[3].GFlops, "LU on GPUs of one 32 MiB chunk (9 tiles) evicts")
	var b bytes.Buffer
	require.NoError(t, WriteJSON(&b, rows))
	assert.Contains(t, b.String(), `"starpu_generation": "1.3"`)
	assert.Contains(t, b.String(), `"machine_source": "StarPU sampling directory `)
}
