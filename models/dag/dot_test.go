package dag

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/starsim/starsim/runtime/graph"
)

func TestReadDOTDaggen(t *testing.T) {
	data, err := os.ReadFile("../../docs/dag/daggen.dot")
	require.NoError(t, err)
	g, notes, err := ReadDOT(data, "daggen.dot")
	require.NoError(t, err)
	require.Len(t, g.Tasks, 7)
	assert.Equal(t, "G", g.Name)
	// Nodes in file order are already topological here.
	assert.Equal(t, 3221225472.0, g.Tasks[0].Flops)
	assert.Equal(t, "task", g.Tasks[0].Name)
	// Edge 1 -> 3 carries 8 MiB: a data task 0 writes and task 2 reads.
	require.Len(t, g.Handles, 8)
	assert.Equal(t, "1->3", g.Handles[0].Name)
	assert.Equal(t, int64(8388608), g.Handles[0].SizeBytes)
	assert.True(t, g.Handles[0].NoSeqConsistency)
	assert.Contains(t, g.Tasks[0].Buffers, graph.Access{Handle: 0, Mode: graph.W})
	assert.Contains(t, g.Tasks[2].Buffers, graph.Access{Handle: 0, Mode: graph.R})
	assert.Equal(t, []int{2, 3}, g.Tasks[5].Deps) // 6 after 3 and 4
	assert.Nil(t, g.Tasks[0].DurationsUS, "DAGGEN gives flops only")
	require.Len(t, notes, 1)
	assert.Contains(t, notes[0], "alpha")
	// With a flop rate per kind, durations follow.
	g2, _, _, err := Read(data, "daggen.dot", Options{FlopRates: map[string]float64{"cpu": 1e9}})
	require.NoError(t, err)
	us, ok := g2.Tasks[0].DurationOn("cpu0")
	assert.True(t, ok)
	assert.InDelta(t, 3221225.472, us, 1e-6)
}

func TestReadDOTAttributes(t *testing.T) {
	data, err := os.ReadFile("../../docs/dag/heterogeneous.dot")
	require.NoError(t, err)
	g, _, err := ReadDOT(data, "h.dot")
	require.NoError(t, err)
	require.Len(t, g.Tasks, 5)
	byName := map[string]int{}
	for i, tk := range g.Tasks {
		byName[tk.Name+string(rune('0'+i))] = i
	}
	assert.Equal(t, "stage", g.Tasks[0].Name, "node defaults")
	assert.Equal(t, map[string]float64{"cpu": 800, "cuda": 900}, g.Tasks[0].DurationsUS)
	assert.Equal(t, "fft", g.Tasks[1].Name)
	assert.Equal(t, 2e9, g.Tasks[1].Flops)
	assert.Equal(t, 1, g.Tasks[4].Priority)
	assert.Equal(t, []int{1, 2, 3}, g.Tasks[4].Deps)
	// split -> c carries no size: a dependency, no data.
	assert.Len(t, g.Handles, 4)
}

// Tasks are submitted in a topological order, ties to file order.
func TestReadDOTOrder(t *testing.T) {
	src := "digraph { c [kernel=C]; b [kernel=B]; a [kernel=A]; a -> b -> c; d [kernel=D] }"
	g, _, err := ReadDOT([]byte(src), "o.dot")
	require.NoError(t, err)
	var names []string
	for _, tk := range g.Tasks {
		names = append(names, tk.Name)
	}
	// Ready at first: a and d; a (before d in the file) releases b, b
	// (before d) releases c, which appears first of all.
	assert.Equal(t, []string{"A", "B", "C", "D"}, names)
}

func TestReadDOTSyntax(t *testing.T) {
	src := `/* comment */ strict digraph "quoted " + "name" {
	# a preprocessor line
	graph [rankdir=LR]; rankdir = LR
	node [shape=box, kernel=K]
	subgraph cluster0 { node [kernel=S]; s1; s2 }
	"x y":p:n -> s1 [size=10, color="red"]; // ports ignored
	s2 -> <html<b>>
}`
	g, notes, err := ReadDOT([]byte(src), "s.dot")
	require.NoError(t, err)
	assert.Equal(t, "quoted name", g.Name)
	require.Len(t, g.Tasks, 4)
	kernels := map[string]bool{}
	for _, tk := range g.Tasks {
		kernels[tk.Name] = true
	}
	assert.Equal(t, map[string]bool{"K": true, "S": true}, kernels)
	require.Len(t, notes, 1)
	assert.Contains(t, notes[0], "edge color")
	assert.Contains(t, notes[0], "shape")
}

func TestReadDOTErrors(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"graph { a -- b }", "d.dot:1: an undirected graph"},
		{"digraph { a -> b; b -> a }", "d.dot:1: node a is on a cycle"},
		{"digraph {\n a -> a }", "d.dot:2: node a depends on itself"},
		{"digraph {\n a [size=x] }", `d.dot:2: node a: size "x": want flops`},
		{"digraph {\n a [size=1, flops=2] }", "both flops and size"},
		{"digraph {\n a -> b [size=-4] }", `d.dot:2: edge a -> b: size "-4"`},
		{"digraph {\n a [duration_us_GPU=3] }", "duration_us_GPU: want duration_us_<arch>"},
		{"digraph {\n a [duration_us_cpu=0] }", "want a duration in µs, > 0"},
		{"digraph {\n a [priority=1.5] }", "want a 32-bit integer"},
		{"digraph {\n a [footprint=zz] }", "want 1 to 8 hexadecimal digits"},
		{"digraph { a -> { b c } }", "an edge to a subgraph: not supported"},
		{"digraph {\n a -> \n", "d.dot:3: expected a node after ->, found the end of the file"},
		{"digraph { a [x=\"open }", "d.dot:1: string not closed"},
		{"digraph { /* open }", "comment /* not closed"},
		{"digraph { a } digraph { b }", "one graph per file"},
		{"digraph {}", "no node"},
		{"digraph { a ! }", `unexpected character "!"`},
		{"{}", "expected digraph"},
		{"digraph { a [size] }", "expected '=' after attribute size"},
	} {
		_, _, err := ReadDOT([]byte(tc.src), "d.dot")
		require.Error(t, err, tc.src)
		assert.Contains(t, err.Error(), tc.want, tc.src)
	}
}
