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

// madvHugepage is Linux's MADV_HUGEPAGE.
const madvHugepage = 14

// hugePages asks the kernel to back the whole 2 MiB pages of the n bytes
// at p with huge pages, when they first fault. A slab of hundreds of MB
// otherwise takes a fault per 4 KiB page as it is first filled (in a
// virtual machine, each costs microseconds: a third of a second of system
// time for the 1M-task DAG's slabs); with huge pages, one per 2 MiB. It
// changes no byte; where transparent huge pages are off, or on an older
// kernel, it does nothing.
func hugePages(p unsafe.Pointer, n uintptr) {
	const huge = 2 << 20
	start := (uintptr(p) + huge - 1) &^ (huge - 1)
	end := (uintptr(p) + n) &^ (huge - 1)
	if end <= start {
		return
	}
	_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, start, end-start, madvHugepage)
}
