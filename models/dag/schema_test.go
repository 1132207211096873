package dag

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"

	"github.com/starsim/starsim/models"
	"github.com/starsim/starsim/runtime/graph"
)

func compileSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	sch, err := jsonschema.NewCompiler().Compile("dag.schema.json")
	require.NoError(t, err)
	return sch
}

func schemaErr(t *testing.T, sch *jsonschema.Schema, doc []byte) error {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	require.NoError(t, err)
	return sch.Validate(v)
}

// The published schema accepts what Write writes and the examples under
// docs/, and refuses documents the reader refuses: the two cannot drift.
func TestSchemaAcceptsWrittenAndExamples(t *testing.T) {
	sch := compileSchema(t)
	g, err := models.New("lu", models.Options{N: 2880, Block: 960, Prio: graph.UnboundedPrio})
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, g, "d"))
	require.NoError(t, schemaErr(t, sch, buf.Bytes()))
	examples, _ := filepath.Glob("../../docs/dag/*.dag.json")
	require.NotEmpty(t, examples)
	for _, ex := range examples {
		data, err := os.ReadFile(ex)
		require.NoError(t, err)
		require.NoError(t, schemaErr(t, sch, data), ex)
		_, err = ReadJSON(data, ex)
		require.NoError(t, err, ex)
	}
}

func TestSchemaRejectsWhatReadRejects(t *testing.T) {
	sch := compileSchema(t)
	base := `{"format": "starsim-dag", "version": 1, "data": [{"size_bytes": 8}], "tasks": [{"name": "a", "access": [{"data": 0, "mode": "RW"}]}]}`
	for i, mutate := range []func(m map[string]any){
		func(m map[string]any) { m["bogus"] = 1 },
		func(m map[string]any) { m["version"] = 2 },
		func(m map[string]any) { task(m)["name"] = "" },
		func(m map[string]any) { task(m)["footprint"] = "XYZ" },
		func(m map[string]any) { task(m)["durations_us"] = map[string]any{"cpu": 0} },
		func(m map[string]any) { task(m)["durations_us"] = map[string]any{"GPU!": 1} },
		func(m map[string]any) { task(m)["access"].([]any)[0].(map[string]any)["mode"] = "RX" },
		func(m map[string]any) { task(m)["priority"] = 1 << 40 },
		func(m map[string]any) { m["data"].([]any)[0].(map[string]any)["size_bytes"] = -1 },
		func(m map[string]any) { m["data"].([]any)[0].(map[string]any)["home"] = "CUDA0" },
		func(m map[string]any) { m["data"].([]any)[0].(map[string]any)["rows"] = 2 },
	} {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(base), &m))
		require.NoError(t, schemaErr(t, sch, []byte(base)))
		mutate(m)
		doc, _ := json.Marshal(m)
		require.Error(t, schemaErr(t, sch, doc), "mutation %d", i)
		_, err := ReadJSON(doc, "x.json")
		require.Error(t, err, "mutation %d", i)
	}
}

func task(m map[string]any) map[string]any { return m["tasks"].([]any)[0].(map[string]any) }
