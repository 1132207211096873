package starpu

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestFootprintVectors checks the hashes shipped in StarPU's Cholesky and LU
// sample models (reference doc §2): one, two and three n×n tiles.
func TestFootprintVectors(t *testing.T) {
	cases := []struct {
		n             uint32
		one, two, thr string
	}{
		{320, "cea37d6d", "2c1922b7", "d46431bb"},
		{640, "afdd228b", "d39bff17", "f0ac7beb"},
		{960, "617e5fe6", "ff82dda0", "24c84a50"},
		{1440, "25ebb669", "0e8bce2b", "8cfc3ba0"},
	}
	hex := func(v uint32) string { return fmt.Sprintf("%08x", v) }
	for _, c := range cases {
		h := MatrixFootprint(c.n, c.n)
		assert.Equal(t, c.one, hex(TaskFootprint([]uint32{h})), "n=%d, 1 buffer", c.n)
		assert.Equal(t, c.two, hex(TaskFootprint([]uint32{h, h})), "n=%d, 2 buffers", c.n)
		assert.Equal(t, c.thr, hex(TaskFootprint([]uint32{h, h, h})), "n=%d, 3 buffers", c.n)
	}
}

func TestCRC32BE(t *testing.T) {
	// Zero input and zero initial value stay zero (no final xor).
	assert.Equal(t, uint32(0), CRC32BE(0, 0))
	// One byte 0x01 from 0 gives the polynomial itself: MSB-first, no
	// reflection.
	assert.Equal(t, uint32(0x1EDC6F41), CRC32Bytes([]byte{1}, 0))
	// The 32-bit input is fed least significant byte first.
	for _, v := range []uint32{1, 0x01020304, 960, 0xdeadbeef} {
		b := []byte{byte(v), byte(v >> 8), byte(v >> 16), byte(v >> 24)}
		assert.Equal(t, CRC32Bytes(b, 0x12345678), CRC32BE(v, 0x12345678))
	}
	// prev is the initial value: hashing in two steps is hashing at once.
	assert.Equal(t, CRC32Bytes([]byte{1, 2, 3, 4, 5, 6, 7, 8}, 7), CRC32Bytes([]byte{5, 6, 7, 8}, CRC32Bytes([]byte{1, 2, 3, 4}, 7)))
	// A matrix handle is crc(crc(nx, ny), interface id 0).
	assert.Equal(t, CRC32BE(CRC32BE(960, 480), 0), MatrixFootprint(960, 480))
	assert.NotEqual(t, MatrixFootprint(960, 480), MatrixFootprint(480, 960))
}

func TestTaskAndSizeFootprints(t *testing.T) {
	assert.Equal(t, uint32(0), TaskFootprint(nil), "a task without buffers")
	assert.Equal(t, CRC32BE(0xabc, 0), TaskFootprint([]uint32{0xabc}))
	// size_base models hash the size as an 8-byte size_t (values from the
	// mirage sample models func, log_arr, multi_2arr).
	for size, want := range map[uint64]string{0: "00000000", 1: "2669802c", 2: "4cd30058", 5: "bfcf809c", 25: "50d9324f", 225: "06c91a73"} {
		assert.Equal(t, want, fmt.Sprintf("%08x", SizeFootprint(size)), "size %d", size)
	}
	// One vector of 1024 elements (the overlap_sleep_1024_24 sample models).
	assert.Equal(t, "a3d3725e", fmt.Sprintf("%08x", TaskFootprint([]uint32{VectorFootprint(1024)})))
}
