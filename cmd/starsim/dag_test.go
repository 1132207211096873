package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// dagRunJSON runs `run ARGS --json` and returns its result without the
// machine (which names where the task graph came from).
func dagRunJSON(t *testing.T, args ...string) map[string]any {
	t.Helper()
	code, out, errs := runCLI(append(append([]string{"run"}, args...), "--json")...)
	require.Equal(t, 0, code, errs)
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &m))
	delete(m, "machine")
	return m
}

// A DAG exported from a built-in application and run back gives the same
// result as the built-in run: every field of run --json but the machine's
// description of where the graph came from.
func TestDAGExportRunsBackTheSame(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		export, run []string
	}{
		{[]string{"--app", "cholesky", "--n", "9600", "--sched", "dmdas"}, []string{"--sched", "dmdas", "--n", "9600"}},
		{[]string{"--app", "lu", "--n", "7680", "--double", "--sched", "dmda"}, []string{"--app", "lu", "--n", "7680", "--double", "--sched", "dmda", "--ncpu", "4"}},
		{[]string{"--app", "cholesky", "--n", "9600", "--sched", "lws", "--no-prio"}, []string{"--sched", "lws", "--n", "9600", "--no-prio", "--ncuda", "2"}},
		{[]string{"--app", "qr", "--n", "7680", "--double"}, []string{"--app", "qr", "--n", "7680", "--double", "--sched", "dmdas"}},
	} {
		file := filepath.Join(dir, "g.json")
		code, _, errs := runCLI(append([]string{"dag", "export", "-o", file}, tc.export...)...)
		require.Equal(t, 0, code, errs)
		builtin := dagRunJSON(t, tc.run...)
		var flags []string
		for i := 0; i < len(tc.run); i++ {
			switch tc.run[i] {
			case "--app", "--n":
				i++
			case "--double", "--no-prio":
			default:
				flags = append(flags, tc.run[i])
			}
		}
		back := dagRunJSON(t, append([]string{"--dag", file}, flags...)...)
		assert.Equal(t, builtin, back, "%v", tc.export)
		assert.NotZero(t, builtin["makespan_s"])
	}
}

// A recorded tasks.rec exported runs as replay runs it (its tasks are all
// calibrated: the recorded lengths stand by unused).
func TestDAGExportTraceRunsLikeReplay(t *testing.T) {
	dir := t.TempDir()
	rec := filepath.Join(dir, "rec")
	code, _, errs := runCLI("run", "--n", "9600", "--sched", "dmdas", "--trace-rec", rec)
	require.Equal(t, 0, code, errs)
	file := filepath.Join(dir, "rec.json")
	code, _, errs = runCLI("dag", "export", rec, "-o", file)
	require.Equal(t, 0, code, errs)
	code, out, errs := runCLI("replay", rec, "--calib", "default", "--sched", "dmda", "--json")
	require.Equal(t, 0, code, errs)
	var replay map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &replay))
	delete(replay, "machine")
	back := dagRunJSON(t, "--dag", file, "--calib", "default", "--sched", "dmda")
	assert.Equal(t, replay, back)
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.Contains(t, string(data), `"durations_us":{"`, "recorded lengths kept")
}

func TestDAGRunErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.dot")
	require.NoError(t, os.WriteFile(bad, []byte("digraph {\n a -> b\n b -> a\n}\n"), 0o644))
	nodur := filepath.Join(dir, "nodur.dot")
	require.NoError(t, os.WriteFile(nodur, []byte(`digraph { a [size="1e9"] }`), 0o644))
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"run", "--dag", "x.json", "--n", "9600"}, 2, "--n: the task graph is --dag's"},
		{[]string{"run", "--dag-rate", "cpu=1e9"}, 2, `--dag-rate "cpu=1e9": only with --dag`},
		{[]string{"run", "--dag", nodur, "--dag-rate", "GPU=3"}, 2, `"GPU=3": want ARCH=FLOPS`},
		{[]string{"run", "--dag", filepath.Join(dir, "missing.json")}, 1, "missing.json: no such file"},
		{[]string{"run", "--dag", bad}, 1, "bad.dot:2: node a is on a cycle"},
		{[]string{"run", "--dag", nodur}, 1, "task 0 (task) has no duration on this run's workers"},
		{[]string{"sweep", "--dag", nodur, "--plot", "x.png"}, 2, "--plot does not go with --dag"},
		{[]string{"dag", "export"}, 2, "want -o FILE"},
		{[]string{"dag", "export", "-o", "-", "--starpu-generation", "2"}, 2, "want 1.3 or 1.4"},
		{[]string{"dag", "export", "a.rec", "-o", "-", "--n", "3"}, 2, "--n: the graph is the trace's"},
		{[]string{"run", "--ib", "32"}, 2, "--ib 32: QR's inner block size: only with --app qr"},
		{[]string{"run", "--app", "qr", "--ib", "0"}, 2, "--ib 0: want an inner block size from 1 to the block size (960)"},
		{[]string{"sweep", "--app", "qr", "--block", "960,64", "--ib", "96"}, 2, "to the block size (64)"},
		{[]string{"run", "--app", "qr", "--ib", "32", "--n", "1920"}, 1, "kernel sgeqrt footprint"},
	} {
		code, out, errs := runCLI(tc.args...)
		assert.Equal(t, tc.code, code, "%v: %s", tc.args, errs)
		assert.Contains(t, errs, tc.want, "%v", tc.args)
		assert.Empty(t, out, "%v", tc.args)
	}
	// With a flop rate, the DOT file runs.
	code, out, errs := runCLI("run", "--dag", nodur, "--dag-rate", "cpu=1e9")
	require.Equal(t, 0, code, errs)
	assert.True(t, strings.Contains(out, "makespan 1000.0"), out)
}

func TestSweepDAG(t *testing.T) {
	dir := t.TempDir()
	csv := filepath.Join(dir, "s.csv")
	code, _, errs := runCLI("sweep", "--dag", "../../docs/dag/pipeline.dag.json,../../docs/dag/heterogeneous.dot", "--sched", "dmda,eager", "-j", "2", "--csv", csv)
	require.Equal(t, 0, code, errs)
	data, err := os.ReadFile(csv)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	require.Len(t, lines, 5)
	assert.Contains(t, lines[1], ",,../../docs/dag/pipeline.dag.json,dmda,0,0,")
	// The same run as run --dag.
	one := dagRunJSON(t, "--dag", "../../docs/dag/heterogeneous.dot", "--sched", "eager")
	assert.Contains(t, lines[4], "heterogeneous.dot,eager,0,0,")
	assert.Contains(t, lines[4], ","+jsonNumber(one["makespan_s"])+",")
}

func jsonNumber(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
