package sched

import (
	"testing"

	"github.com/starsim/starsim/runtime/graph"
	"github.com/stretchr/testify/assert"
)

// The registry gives each scheduler StarPU's priority range (which the
// applications read to choose their priorities).
func TestPriorityRange(t *testing.T) {
	for name, want := range map[string]graph.PrioRange{
		"lws": graph.UnboundedPrio, "ws": graph.UnboundedPrio, "prio": graph.UnboundedPrio,
		"dmdap": graph.UnboundedPrio, "dmdas": graph.UnboundedPrio, "dmdasd": graph.UnboundedPrio,
		"dm": {}, "dmda": {}, "dmdar": {}, "eager": {}, "random": {},
		"heft-tm": {}, "heftx": {}, // heft... is dmda
	} {
		got, ok := PriorityRange(name)
		assert.True(t, ok, name)
		assert.Equal(t, want, got, name)
	}
	for _, name := range []string{"DMDA", "nosuch", "", "heft"} {
		_, ok := PriorityRange(name)
		assert.False(t, ok, "%q: StarPU's names are case-sensitive, and no default here", name)
		_, ok = New(name)
		assert.False(t, ok, name)
	}
	assert.Equal(t, []string{"dm", "dmda", "dmdap", "dmdar", "dmdas", "dmdasd", "eager", "lws", "prio", "random", "ws"}, Names())
}
