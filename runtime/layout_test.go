package runtime

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
)

// TestHotStructSizes guards the sizes the hot paths' cache behaviour relies
// on: a task's state is two cache lines of its slab, a handle's 96 bytes
// keep its bit sets on one line (see TaskState and handleState). A field
// added to either should find room, not push them over.
func TestHotStructSizes(t *testing.T) {
	assert.Equal(t, uintptr(128), unsafe.Sizeof(TaskState{}))
	assert.Equal(t, uintptr(96), unsafe.Sizeof(handleState{}))
}
