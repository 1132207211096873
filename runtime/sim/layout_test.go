package sim

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
)

// TestHotStructSizes guards the size the hot paths' cache behaviour relies
// on: a task's state is two cache lines of its slab (see TaskState). A
// field added should find room, not push it over.
func TestHotStructSizes(t *testing.T) {
	assert.Equal(t, uintptr(128), unsafe.Sizeof(TaskState{}))
}
