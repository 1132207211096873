package runtime_test

import (
	"testing"

	"github.com/starsim/starsim/runtime"
	"github.com/starsim/starsim/runtime/graph"
	"github.com/stretchr/testify/assert"
)

// The registry gives each scheduler StarPU's priority range (which the
// applications read to choose their priorities).
func TestPriorityRange(t *testing.T) {
	for sched, want := range map[string]graph.PrioRange{
		"lws": graph.UnboundedPrio, "ws": graph.UnboundedPrio, "prio": graph.UnboundedPrio,
		"dmdap": graph.UnboundedPrio, "dmdas": graph.UnboundedPrio, "dmdasd": graph.UnboundedPrio,
		"dm": {}, "dmda": {}, "dmdar": {}, "eager": {}, "random": {},
		"heft-tm": {}, "heftx": {}, // heft... is dmda
	} {
		got, ok := runtime.PriorityRange(sched)
		assert.True(t, ok, sched)
		assert.Equal(t, want, got, sched)
	}
	for _, sched := range []string{"DMDA", "nosuch", ""} {
		_, ok := runtime.PriorityRange(sched)
		assert.False(t, ok, "%q: StarPU's names are case-sensitive, and no default here", sched)
	}
}
