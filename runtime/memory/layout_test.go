package memory

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
)

// TestHandleSize guards the size the hot paths' cache behaviour relies on:
// a handle's 96 bytes keep its bit sets on one cache line of its slab
// (see Handle). A field added should find room, not push it over.
func TestHandleSize(t *testing.T) {
	assert.Equal(t, uintptr(96), unsafe.Sizeof(Handle{}))
}

// TestReplicaSize guards the replicas' 72 bytes (see Replica): the hot
// paths read them at random, and a few thousand handles' replicas should
// stay within a core's L2 cache.
func TestReplicaSize(t *testing.T) {
	assert.Equal(t, uintptr(72), unsafe.Sizeof(Replica{}))
}
