package dag

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/starsim/starsim/calibrate"
	"github.com/starsim/starsim/models"
	"github.com/starsim/starsim/models/generation"
	"github.com/starsim/starsim/runtime/graph"
	"github.com/starsim/starsim/runtime/sim"
)

// builtins are graphs of every built-in application and generation, with
// priorities of a sorted scheduler (not all 0).
func builtins(t *testing.T) map[string]*graph.Graph {
	out := map[string]*graph.Graph{}
	for _, app := range models.Names() {
		for _, gen := range []generation.Gen{generation.V14, generation.V13} {
			for _, prec := range []models.Precision{models.Single, models.Double} {
				g, err := models.New(app, models.Options{N: 4800, Block: 960, Precision: prec, Prio: graph.UnboundedPrio, Generation: gen})
				require.NoError(t, err)
				out[g.Name] = g
			}
		}
	}
	return out
}

// Written and read back, a built-in application's graph is the same graph.
func TestWriteReadRoundTrip(t *testing.T) {
	for name, g := range builtins(t) {
		var buf bytes.Buffer
		require.NoError(t, Write(&buf, g, "exported for a test"), name)
		back, err := ReadJSON(buf.Bytes(), "x.json")
		require.NoError(t, err, name)
		// Handles come back with sequential consistency on, as built.
		assert.Equal(t, g, back, name)
	}
}

// Run back, the exported graph gives the same result as the built-in one
// (the whole Result: makespan, per-worker counts, transfers, memory).
func TestExportedRunsTheSame(t *testing.T) {
	m := calibrate.Default().RuntimeMachine()
	g, err := models.New("cholesky", models.Options{N: 9600, Block: 960, Prio: graph.UnboundedPrio})
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, g, ""))
	back, err := ReadJSON(buf.Bytes(), "x.json")
	require.NoError(t, err)
	for _, sched := range []string{"dmdas", "eager", "lws"} {
		o := sim.DefaultOptions()
		o.Sched, o.NCPU = sched, 4
		run := func(g *graph.Graph) *sim.Result {
			s, err := sim.New(m, g, o)
			require.NoError(t, err)
			r, err := s.Run()
			require.NoError(t, err)
			return r
		}
		a, b := run(g), run(back)
		assert.Equal(t, a, b, sched)
		assert.Greater(t, a.MakespanS, 0.0)
	}
}

func TestReadJSONDefaults(t *testing.T) {
	src := `{"format": "starsim-dag", "version": 1,
 "data": [{"size_bytes": 1024}, {"name": "B", "size_bytes": 4096, "rows": 32, "row_bytes": 128, "pitch_bytes": 512, "sequential_consistency": true}],
 "tasks": [
  {"name": "init", "access": [{"data": 0, "mode": "W"}], "durations_us": {"cpu": 10}},
  {"name": "step", "model": "my_step", "flops": 2e6, "priority": 3, "access": [{"data": 0, "mode": "R"}, {"data": 1, "mode": "RW"}], "deps": [0], "wont_use": [0], "durations_us": {"cpu": 20, "cuda0": 2}}
 ]}`
	g, err := ReadJSON([]byte(src), "d.json")
	require.NoError(t, err)
	assert.Equal(t, "task graph of 2 tasks", g.Name)
	assert.Equal(t, 2e6, g.TotalFlops)
	require.Len(t, g.Handles, 2)
	assert.Equal(t, "d0", g.Handles[0].Name)
	assert.True(t, g.Handles[0].NoSeqConsistency, "off by default")
	assert.False(t, g.Handles[1].NoSeqConsistency, "the data's own setting")
	assert.Equal(t, int64(512), g.Handles[1].PitchBytes)
	assert.Equal(t, "init", g.Tasks[0].Model, "model defaults to the name")
	assert.Equal(t, "my_step", g.Tasks[1].Model)
	assert.Equal(t, []graph.Access{{Handle: 0, Mode: graph.R}, {Handle: 1, Mode: graph.RW}}, g.Tasks[1].Buffers)
	assert.Equal(t, []int{0}, g.Tasks[1].Deps)
	assert.Equal(t, 3, g.Tasks[1].Priority)
	us, ok := g.Tasks[1].DurationOn("cuda0")
	assert.True(t, ok)
	assert.Equal(t, 2.0, us)
	// Footprints follow StarPU's rule from the data footprints.
	assert.NotZero(t, g.Tasks[1].Footprint)
	assert.NotEqual(t, g.Tasks[0].Footprint, g.Tasks[1].Footprint)
}

// Every fault is reported at its line, with what was expected.
func TestReadJSONErrors(t *testing.T) {
	head := "{\"format\": \"starsim-dag\", \"version\": 1,\n \"data\": [{\"size_bytes\": 8}],\n \"tasks\": [\n"
	for _, tc := range []struct{ name, src, want string }{
		{"format", `{"format": "x", "version": 1, "data": [], "tasks": []}`, `d.json:1: format "x": want "starsim-dag"`},
		{"version", `{"format": "starsim-dag", "version": 2, "data": [], "tasks": []}`, "version 2: this starsim reads version 1"},
		{"unknown key", head + `{"name": "a", "prio": 1}]}`, `d.json:4: unknown key "prio"`},
		{"no name", head + `{"model": "a"}]}`, "d.json:4: task 0: no name"},
		{"bad mode", head + `{"name": "a", "access": [{"data": 0, "mode": "X"}]}]}`, `d.json:4: task 0 (a): access 0: mode "X": want R, W or RW`},
		{"bad data", head + `{"name": "a", "access": [{"data": 1, "mode": "R"}]}]}`, "task 0 (a): access 0: data 1: want 0 to 0"},
		{"later dep", head + "{\"name\": \"a\"},\n{\"name\": \"b\", \"deps\": [1]}]}", "d.json:5: task 1 (b): depends on task 1: want an earlier task"},
		{"duration", head + `{"name": "a", "durations_us": {"cpu": -1}}]}`, "durations_us[cpu] -1: want a duration > 0"},
		{"arch", head + `{"name": "a", "durations_us": {"GPU!": 1}}]}`, `arch "GPU!"`},
		{"footprint", head + `{"name": "a", "footprint": "xyz"}]}`, `footprint "xyz": want 1 to 8 hexadecimal digits`},
		{"size", `{"format": "starsim-dag", "version": 1, "data": [{"size_bytes": -1}], "tasks": []}`, "data 0: size_bytes -1"},
		{"layout", `{"format": "starsim-dag", "version": 1, "data": [{"size_bytes": 10, "rows": 3, "row_bytes": 3}], "tasks": []}`, "rows 3 x row_bytes 3 is not size_bytes 10"},
		{"home", `{"format": "starsim-dag", "version": 1, "data": [{"size_bytes": 10, "home": "CUDA0"}], "tasks": []}`, `home "CUDA0"`},
		{"truncated", head, "truncated JSON"},
		{"trailing", `{"format": "starsim-dag", "version": 1, "data": [], "tasks": []} {}`, "unexpected data after the task graph object"},
		{"type", head + `{"name": 3}]}`, "expected string"},
	} {
		_, err := ReadJSON([]byte(tc.src), "d.json")
		require.Error(t, err, tc.name)
		assert.Contains(t, err.Error(), tc.want, tc.name)
	}
}

func TestWriteRefusesPinned(t *testing.T) {
	g := &graph.Graph{Tasks: []graph.Task{{ID: 0, Name: "a", FixedUS: 3}}}
	assert.Error(t, Write(&bytes.Buffer{}, g, ""))
}
