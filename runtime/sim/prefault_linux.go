package sim

import (
	"syscall"
	"unsafe"
)

// madvPopulateWrite is Linux's MADV_POPULATE_WRITE (5.14 and later).
const madvPopulateWrite = 23

// prefault asks the kernel to map the whole pages of the n bytes at p now,
// as the first writes to them would, without writing: it lets another core
// take the page faults of a slab the caller is about to fill. It changes no
// byte, so it is safe while the slab is being written. Errors (an older
// kernel) are ignored: the pages then fault when first written.
func prefault(p unsafe.Pointer, n uintptr) {
	const page = 4096
	start := (uintptr(p) + page - 1) &^ (page - 1)
	end := (uintptr(p) + n) &^ (page - 1)
	if end <= start {
		return
	}
	_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, start, end-start, madvPopulateWrite)
}
