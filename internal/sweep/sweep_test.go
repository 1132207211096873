package sweep

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/starsim/starsim/calibrate"
	"github.com/starsim/starsim/internal/synthsampling"
	"github.com/starsim/starsim/models/generation"
	"github.com/starsim/starsim/runtime/cost"
	"github.com/starsim/starsim/runtime/sim"
)

func smallPlan() *Plan {
	o := sim.DefaultOptions()
	o.Check = true
	o.Durations = cost.Normal // random durations: determinism must not depend on goroutines
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

// TestParseCSVRefusesBadRows: empty files, files without rows and rows
// with values WriteCSV never writes are errors at their line.
func TestParseCSVRefusesBadRows(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, WriteCSV(&b, nil))
	head := b.String()
	good := "0,2,m,calibration file m.calib.json,1.4,cholesky,dmda,9600,960,-1,-1,220,1000,0.5,1.2,3,0.4,0,50,0,0\n"
	for _, c := range []struct{ name, doc, want string }{
		{"empty", "", "s.csv: empty file: want sweep CSV"},
		{"blank", "\n\n", "s.csv: empty file"},
		{"header only", head, "s.csv: no rows after the header"},
		{"NaN", head + strings.Replace(good, ",1000,", ",NaN,", 1), "s.csv:2: column gflops: \"NaN\" is not a finite number >= 0"},
		{"Inf", head + strings.Replace(good, ",0.5,", ",+Inf,", 1), "s.csv:2: column makespan_s: \"+Inf\""},
		{"negative", head + strings.Replace(good, ",50,", ",-50,", 1), "s.csv:2: column busy_pct: \"-50\""},
		{"zero jobs", head + strings.Replace(good, "0,2,", "0,0,", 1), "s.csv:2: column jobs: 0 is below 1"},
		{"index beyond", head + strings.Replace(good, "0,2,", "5,2,", 1), "s.csv:2: index 5 out of [0, 2)"},
		{"n zero", head + strings.Replace(good, ",9600,", ",0,", 1), "s.csv:2: n 0, block 960: want both > 0 (a built-in application) or both 0 with no starpu_generation"},
		{"ncpu", head + strings.Replace(good, ",-1,-1,", ",-2,-1,", 1), "s.csv:2: column ncpu: -2 is below -1"},
		{"empty machine", head + strings.Replace(good, ",m,", ",,", 1), "s.csv:2: column machine is empty"},
		{"short row", head + "0,2,m\n", "s.csv:2: not sweep CSV: wrong number of fields"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseCSV([]byte(c.doc), "s.csv")
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
	a, err := ParseCSV([]byte(head+good), "a.csv")
	require.NoError(t, err)
	_, err = MergeFiles(a, a)
	assert.EqualError(t, err, "a.csv:2: job 0 appears twice (also a.csv:2)")
	c, err := ParseCSV([]byte(head+strings.Replace(good, "0,2,", "1,3,", 1)), "c.csv")
	require.NoError(t, err)
	_, err = MergeFiles(a, c)
	assert.EqualError(t, err, "c.csv:2: row of a sweep of 3 jobs, but a.csv:2 of one of 2: not shards of one sweep")
}

// TestSweepSampleBudget: runs each within sim.MaxSamples whose series
// add up to more than MaxSamples fail the sweep (and the rows beyond the
// budget keep no series), instead of piling up in memory.
func TestSweepSampleBudget(t *testing.T) {
	p := smallPlan()
	p.Apps, p.Scheds, p.Ns = []string{"cholesky"}, []string{"dmda"}, []int{960 * 4}
	p.Options.Check = false
	rows, err := Run(p, p.Jobs(), 1, nil)
	require.NoError(t, err)
	workers := 40 // the default machine's
	// An interval giving each run 7/8 of sim.MaxSamples: five runs pass
	// MaxSamples (2^25 = 4 × 2^23).
	p.Options.SampleIntervalS = rows[0].MakespanS * float64(workers) / (sim.MaxSamples * 7 / 8)
	p.Ns = []int{3840, 3840, 3840, 3840, 3840} // the same run five times
	_, err = Run(p, p.Jobs(), 1, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the sweep's utilization series exceed 33554432 samples (2^25)")
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
	o := sim.DefaultOptions()
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

// A task graph from a file has neither N nor block nor StarPU generation.
func TestParseCSVTaskGraphRow(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, WriteCSV(&b, nil))
	row := "0,1,m,calibration file m.calib.json,,g.dag.json,dmda,0,0,-1,-1,4,100,0.5,1.2,3,0.4,0,50,0,0\n"
	sh, err := ParseCSV([]byte(b.String()+row), "s.csv")
	require.NoError(t, err)
	require.Len(t, sh.Rows, 1)
	assert.Equal(t, "g.dag.json", sh.Rows[0].App)
	_, err = ParseCSV([]byte(b.String()+strings.Replace(row, ",,g", ",1.4,g", 1)), "s.csv")
	assert.ErrorContains(t, err, "with no starpu_generation")
}

// TestSharedGraphs: jobs whose graphs are the same (dmda and dmdar share
// one priority range, so one graph per app and N) share it, jobs whose
// graphs differ in priorities alone (dmdas's) share their dependencies,
// the largest jobs come first, every graph and dependencies are dropped
// after their last job, and each row is that of the job prepared alone.
func TestSharedGraphs(t *testing.T) {
	p := smallPlan()
	p.Scheds = []string{"dmda", "dmdar", "dmdas"}
	jobs := p.Jobs()
	c := p.newCache(jobs)
	assert.Len(t, c.graph, 2*3*2, "apps x Ns x priority ranges")
	for _, sg := range c.graph {
		assert.Contains(t, []int{1, 2}, sg.users)
	}
	assert.Len(t, c.deps, 2*3, "apps x Ns")
	for _, sd := range c.deps {
		assert.Equal(t, 3, sd.users)
	}
	first, last := jobs[c.order[0]], jobs[c.order[len(jobs)-1]]
	assert.Equal(t, [2]any{"lu", 960 * 8}, [2]any{first.App, first.N}, "the largest first")
	assert.Equal(t, [2]any{"cholesky", 960 * 4}, [2]any{last.App, last.N}, "the smallest last")

	rows, err := Run(p, jobs, 2, nil)
	require.NoError(t, err)
	m := p.Machines[0].File.RuntimeMachine()
	for i, j := range jobs {
		s, _, _, err := p.prepare(j, m, nil, "", "", nil)
		require.NoError(t, err)
		out, err := s.Run()
		require.NoError(t, err)
		assert.Equal(t, out.MakespanS, rows[i].MakespanS, "job %d", i)
	}
	// Each run reuses the buffers of the one before, larger or smaller:
	// the rows do not change.
	var spare *sim.Spare
	for i, j := range jobs {
		row, sp, err := p.run(j, m, len(jobs), c, c.keys[i], c.depKeys[i], spare)
		require.NoError(t, err)
		assert.Equal(t, rows[i], row, "job %d", i)
		spare = sp
	}
	assert.Empty(t, c.graph, "each graph dropped after its last job")
	assert.Empty(t, c.deps, "each graph's dependencies dropped after their last job")
}
