package dag

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/starsim/starsim/runtime/graph"
)

func TestReadWfFormat15(t *testing.T) {
	data, err := os.ReadFile("../../docs/dag/workflow.wfformat.json")
	require.NoError(t, err)
	g, kind, notes, err := Read(data, "w.json", Options{})
	require.NoError(t, err)
	assert.Equal(t, KindWfFormat, kind)
	assert.Equal(t, "split-analyze-merge", g.Name)
	require.Len(t, g.Tasks, 5)
	require.Len(t, g.Handles, 8)
	assert.Equal(t, "split", g.Tasks[0].Name, "the command's program")
	assert.Equal(t, map[string]float64{"cpu": 3.2e6}, g.Tasks[0].DurationsUS)
	assert.Equal(t, []graph.Access{{Handle: 0, Mode: graph.R}, {Handle: 1, Mode: graph.W}, {Handle: 2, Mode: graph.W}, {Handle: 3, Mode: graph.W}}, g.Tasks[0].Buffers)
	assert.Equal(t, []int{1, 2, 3}, g.Tasks[4].Deps)
	assert.Equal(t, 2, g.Tasks[4].Priority)
	assert.NotEmpty(t, notes)
}

func TestReadWfFormat14(t *testing.T) {
	src := `{"name": "w14", "schemaVersion": "1.4", "workflow": {"makespanInSeconds": 1, "executedAt": "x", "tasks": [
 {"name": "merge_ID2", "category": "merge", "parents": ["split_ID1"], "runtimeInSeconds": 0,
  "files": [{"link": "input", "name": "a.dat", "sizeInBytes": 10}, {"link": "output", "name": "b.dat", "sizeInBytes": 4}]},
 {"name": "split_ID1", "runtimeInSeconds": 2.5, "files": [{"link": "output", "name": "a.dat", "sizeInBytes": 10}]}
]}}`
	g, notes, err := ReadWfFormat([]byte(src), "w.json")
	require.NoError(t, err)
	require.Len(t, g.Tasks, 2)
	assert.Equal(t, "split", g.Tasks[0].Name, "listed second, submitted first")
	assert.Equal(t, "merge", g.Tasks[1].Name)
	assert.Equal(t, []int{0}, g.Tasks[1].Deps)
	assert.Equal(t, 1e-3, g.Tasks[1].DurationsUS["cpu"])
	assert.Contains(t, notes[len(notes)-1], "1 tasks of runtime 0 run for 1 ns")
}

func TestReadWfFormatErrors(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{`{"schemaVersion": "1.2", "workflow": {}}`, `schemaVersion "1.2": starsim reads WfFormat 1.4, 1.5 and 1.6`},
		{`{"schemaVersion": "1.5", "workflow": {}}`, "workflow has no specification"},
		{`{"schemaVersion": "1.5", "workflow": {"specification": {"tasks": [{"name": "a", "id": "a", "parents": [], "children": []}]}}}`, "task a has no runtimeInSeconds"},
		{`{"schemaVersion": "1.5", "workflow": {"specification": {"tasks": [{"name": "a", "id": "a", "parents": ["z"], "children": []}]}, "execution": {"tasks": [{"id": "a", "runtimeInSeconds": 1}]}}}`, `parent "z" is no task`},
		{"{\"schemaVersion\": \"1.5\", \"workflow\": {\"specification\": {\"tasks\": [\n{\"name\": \"a\", \"id\": \"a\", \"parents\": [\"b\"], \"children\": []},\n{\"name\": \"b\", \"id\": \"b\", \"parents\": [\"a\"], \"children\": []}]}, \"execution\": {\"tasks\": [{\"id\": \"a\", \"runtimeInSeconds\": 1}, {\"id\": \"b\", \"runtimeInSeconds\": 1}]}}}", "w.json:2: task a is on a cycle"},
		{`{"schemaVersion": "1.5", "workflow": {"specification": {"tasks": [{"name": "a", "id": "a", "parents": [], "children": [], "inputFiles": ["f"]}]}, "execution": {"tasks": [{"id": "a", "runtimeInSeconds": 1}]}}}`, `file "f" is not among the workflow's files`},
		{`{"schemaVersion": "1.5", "workflow": {"specification": {"tasks": [], "files": [{"id": "f"}]}}}`, `file "f" has no sizeInBytes`},
		{`{"schemaVersion": "1.4", "workflow": {"tasks": [{"name": "a", "runtimeInSeconds": -1}]}}`, "runtimeInSeconds -1"},
		{`{"schemaVersion": "1.4", "workflow": {"tasks": [{"name": "a", "runtimeInSeconds": 1, "files": [{"link": "both", "name": "f", "sizeInBytes": 1}]}]}}`, `link "both"`},
		{`{"schemaVersion": "1.5", "workflow": 3}`, "expected"},
	} {
		_, _, err := ReadWfFormat([]byte(tc.src), "w.json")
		require.Error(t, err, tc.src)
		assert.Contains(t, err.Error(), tc.want, tc.src)
	}
}

func TestDetect(t *testing.T) {
	for src, want := range map[string]Kind{
		`{"format": "starsim-dag"}`:     KindJSON,
		`{"schemaVersion": "1.5"}`:      KindWfFormat,
		"\n digraph { a }":              KindDOT,
		"\xef\xbb\xbf{\"workflow\":{}}": KindWfFormat,
	} {
		k, err := Detect([]byte(src), "x")
		require.NoError(t, err, src)
		assert.Equal(t, want, k, src)
	}
	_, err := Detect([]byte(`{"a": 1}`), "x")
	assert.ErrorContains(t, err, "neither a starsim task graph")
}
