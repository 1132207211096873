package dag

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/starsim/starsim/runtime/graph"
)

// seeds adds the example files under docs/dag (and a few small inputs).
func seeds(f *testing.F, glob string, extra ...string) {
	files, _ := filepath.Glob(filepath.Join("../../docs/dag", glob))
	for _, p := range files {
		data, err := os.ReadFile(p)
		require.NoError(f, err)
		f.Add(data)
	}
	for _, s := range extra {
		f.Add([]byte(s))
	}
}

// check: a graph read is sound (its dependencies derive) and survives
// Write and ReadJSON unchanged.
func check(t *testing.T, g *graph.Graph) {
	if _, err := graph.DeriveDeps(g); err != nil {
		t.Fatalf("read a graph whose dependencies do not derive: %v", err)
	}
	var buf bytes.Buffer
	if err := Write(&buf, g, ""); err != nil {
		t.Fatalf("write: %v", err)
	}
	back, err := ReadJSON(buf.Bytes(), "back.json")
	if err != nil {
		t.Fatalf("written graph does not read back: %v\n%s", err, buf.Bytes())
	}
	if len(g.Handles) == 0 && len(back.Handles) == 0 {
		back.Handles = g.Handles // nil or empty: no data either way
	}
	require.Equal(t, g, back)
}

func FuzzReadJSON(f *testing.F) {
	seeds(f, "*.dag.json", `{"format":"starsim-dag","version":1,"data":[],"tasks":[{"name":"a","deps":[0]}]}`)
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := ReadJSON(data, "f.json")
		if err != nil {
			return
		}
		check(t, g)
	})
}

func FuzzReadDOT(f *testing.F) {
	seeds(f, "*.dot", "digraph { a -> b -> c [size=3]; a -> c }", "strict digraph x { node [kernel=k]; subgraph { y } }")
	f.Fuzz(func(t *testing.T, data []byte) {
		g, _, err := ReadDOT(data, "f.dot")
		if err != nil {
			return
		}
		check(t, g)
	})
}

func FuzzReadWfFormat(f *testing.F) {
	seeds(f, "*.wfformat.json", `{"schemaVersion":"1.4","workflow":{"tasks":[{"name":"a","runtimeInSeconds":1,"children":["b"]},{"name":"b","runtimeInSeconds":0}]}}`)
	f.Fuzz(func(t *testing.T, data []byte) {
		g, _, err := ReadWfFormat(data, "f.json")
		if err != nil {
			return
		}
		check(t, g)
	})
}
