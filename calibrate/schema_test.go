package calibrate

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"
)

// schemaValidate checks a calibration document against the published
// calibration.schema.json, so the schema and the Go reader cannot drift apart.
func schemaValidate(t *testing.T, doc []byte) {
	t.Helper()
	c := jsonschema.NewCompiler()
	sch, err := c.Compile("calibration.schema.json")
	require.NoError(t, err)
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	require.NoError(t, err)
	require.NoError(t, sch.Validate(v))
}

func TestSchemaAcceptsDefault(t *testing.T) {
	schemaValidate(t, defaultJSON)
}

// TestSchemaRejectsWhatParseRejects: a few invalid documents the schema must
// refuse too (unknown key, bad arch, bad footprint).
func TestSchemaRejectsWhatParseRejects(t *testing.T) {
	c := jsonschema.NewCompiler()
	sch, err := c.Compile("calibration.schema.json")
	require.NoError(t, err)
	var base map[string]any
	require.NoError(t, json.Unmarshal(defaultJSON, &base))
	mutate := []func(m map[string]any){
		func(m map[string]any) { m["bogus"] = 1 },
		func(m map[string]any) { m["kernels"].([]any)[0].(map[string]any)["arch"] = "gpu0" },
		func(m map[string]any) {
			m["kernels"].([]any)[0].(map[string]any)["entries"].([]any)[0].(map[string]any)["footprint"] = "XYZ"
		},
		func(m map[string]any) { m["version"] = 2 },
	}
	for i, f := range mutate {
		var m map[string]any
		require.NoError(t, json.Unmarshal(defaultJSON, &m))
		f(m)
		doc, _ := json.Marshal(m)
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
		require.NoError(t, err)
		require.Error(t, sch.Validate(v), "mutation %d", i)
		_, perr := Parse(doc, "x.calib.json")
		require.Error(t, perr, "mutation %d", i)
	}
}
