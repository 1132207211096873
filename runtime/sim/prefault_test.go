package sim

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
)

// TestPrefaultKeepsBytes: prefault maps pages without writing, so what is
// already written stays, whether the range is page-aligned, unaligned,
// shorter than a page or empty.
func TestPrefaultKeepsBytes(t *testing.T) {
	b := make([]byte, 1<<20+123)
	for i := range b {
		if i%3000 == 0 {
			b[i] = byte(i/3000) | 1
		}
	}
	want := append([]byte(nil), b...)
	for _, r := range [][2]int{{0, len(b)}, {7, len(b) - 7}, {5000, 100}, {10, 0}} {
		prefault(unsafe.Pointer(&b[r[0]]), uintptr(r[1]))
	}
	assert.Equal(t, want, b)
}

// TestHugePagesKeepsBytes: hugePages only advises the kernel, so what is
// written stays, over a range holding whole huge pages or none.
func TestHugePagesKeepsBytes(t *testing.T) {
	b := make([]byte, 5<<20+123)
	for i := range b {
		if i%3000 == 0 {
			b[i] = byte(i/3000) | 1
		}
	}
	want := append([]byte(nil), b...)
	for _, r := range [][2]int{{0, len(b)}, {7, len(b) - 7}, {5000, 100}, {10, 0}} {
		hugePages(unsafe.Pointer(&b[r[0]]), uintptr(r[1]))
	}
	assert.Equal(t, want, b)
}
