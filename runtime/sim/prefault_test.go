package sim

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
)

// keepsBytes checks that f, applied over ranges of a buffer of size bytes
// that are page-aligned, unaligned, shorter than a page or empty, leaves
// what was written in it.
func keepsBytes(t *testing.T, size int, f func(unsafe.Pointer, uintptr)) {
	t.Helper()
	b := make([]byte, size)
	for i := range b {
		if i%3000 == 0 {
			b[i] = byte(i/3000) | 1
		}
	}
	want := append([]byte(nil), b...)
	for _, r := range [][2]int{{0, len(b)}, {7, len(b) - 7}, {5000, 100}, {10, 0}} {
		f(unsafe.Pointer(&b[r[0]]), uintptr(r[1]))
	}
	assert.Equal(t, want, b)
}

// TestPrefaultKeepsBytes: prefault maps pages without writing, so what is
// already written stays.
func TestPrefaultKeepsBytes(t *testing.T) { keepsBytes(t, 1<<20+123, prefault) }

// TestHugePagesKeepsBytes: hugePages only advises the kernel, so what is
// written stays, over a range holding whole huge pages or none.
func TestHugePagesKeepsBytes(t *testing.T) { keepsBytes(t, 5<<20+123, hugePages) }
