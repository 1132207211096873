package starpu

import "encoding/binary"

// crc32cPolyBE is the CRC-32C (Castagnoli) polynomial in its normal,
// non-reflected form, as StarPU's hash functions use it.
const crc32cPolyBE = 0x1EDC6F41

// MatrixInterfaceID is StarPU's interface id of the matrix data interface
// (STARPU_MATRIX_INTERFACE_ID, the first value of enum
// starpu_data_interface_id). It enters every matrix handle footprint.
const MatrixInterfaceID = 0

// crcByte folds one byte into crc, most significant bit first.
func crcByte(b byte, crc uint32) uint32 {
	crc ^= uint32(b) << 24
	for i := 0; i < 8; i++ {
		if crc&0x80000000 != 0 {
			crc = crc<<1 ^ crc32cPolyBE
		} else {
			crc <<= 1
		}
	}
	return crc
}

// CRC32Bytes folds the bytes of b, in order, into the running value prev,
// the way StarPU's starpu_hash_crc32c_be_n does.
func CRC32Bytes(b []byte, prev uint32) uint32 {
	crc := prev
	for _, c := range b {
		crc = crcByte(c, crc)
	}
	return crc
}

// CRC32BE is StarPU's starpu_hash_crc32c_be(input, prev): a bitwise,
// big-endian CRC-32C (polynomial 0x1EDC6F41, no bit reflection, no final
// xor) with prev as the initial value. The 32-bit input is fed one byte at a
// time in its in-memory order on the little-endian machines StarPU's sample
// files come from: least significant byte first.
func CRC32BE(input, prev uint32) uint32 {
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], input)
	return CRC32Bytes(b[:], prev)
}

// HandleFootprint is a data handle's footprint as StarPU computes it
// (_starpu_compute_data_footprint): the interface's own footprint opsFP,
// hashed with the interface id as the initial value.
func HandleFootprint(opsFP, interfaceID uint32) uint32 {
	return CRC32BE(opsFP, interfaceID)
}

// MatrixFootprint is the footprint of a handle registered with the matrix
// interface: the interface footprint is crc(nx, ny) (nx the number of
// elements in a row, ny the number of rows), then HandleFootprint with
// MatrixInterfaceID. The element size is not hashed, so float and double
// tiles of the same shape share a footprint.
func MatrixFootprint(nx, ny uint32) uint32 {
	return HandleFootprint(CRC32BE(nx, ny), MatrixInterfaceID)
}

// TaskFootprint folds the handle footprints of a task's buffers, in buffer
// order, into the task footprint that indexes history-based models: start
// from 0, then fp = crc(handleFP, fp) for each buffer. Leave out the buffers
// StarPU leaves out (those accessed with STARPU_NOFOOTPRINT).
func TaskFootprint(handleFootprints []uint32) uint32 {
	var fp uint32
	for _, h := range handleFootprints {
		fp = CRC32BE(h, fp)
	}
	return fp
}

// SizeFootprint is the footprint StarPU uses for a model that defines
// size_base (and no footprint function): the size_t returned by size_base,
// hashed as 8 little-endian bytes (the width of size_t on the 64-bit hosts
// that produce sampling files) from an initial value of 0.
func SizeFootprint(size uint64) uint32 {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], size)
	return CRC32Bytes(b[:], 0)
}

// VectorInterfaceID is StarPU's interface id of the vector data interface
// (STARPU_VECTOR_INTERFACE_ID).
const VectorInterfaceID = 2

// VectorFootprint is the footprint of a handle registered with the vector
// interface: the interface footprint is crc(nx, 0) with nx the number of
// elements, then HandleFootprint with VectorInterfaceID.
func VectorFootprint(nx uint32) uint32 {
	return HandleFootprint(CRC32BE(nx, 0), VectorInterfaceID)
}
