package replay

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/starsim/starsim/traces/internal/tracetest"
	"github.com/starsim/starsim/traces/rec"
)

// TestGraphFromNative rebuilds the native trace's graph: 120 tasks, the
// recorded priorities and wont_use calls, handles with their sizes.
func TestGraphFromNative(t *testing.T) {
	recs, err := rec.ReadTasks(tracetest.OpenNative(t, "tasks.rec"), "tasks.rec")
	if err != nil {
		t.Fatal(err)
	}
	g, warn, err := Graph(recs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	assert.Empty(t, warn)
	assert.Len(t, g.Tasks, 120)
	nwu := 0
	for _, tk := range g.Tasks {
		nwu += len(tk.WontUse)
	}
	assert.Equal(t, 36, nwu)
	for _, h := range g.Handles {
		assert.Equal(t, int64(3686400), h.SizeBytes)
	}
	// Unknown models pin their tasks to the recorded worker for the
	// recorded length.
	g, warn, err = Graph(recs, Options{HasModel: func(string) bool { return false }})
	if err != nil {
		t.Fatal(err)
	}
	assert.NotEmpty(t, warn)
	assert.True(t, g.Tasks[0].Pinned)
	assert.Greater(t, g.Tasks[0].FixedUS, 0.0)
}
