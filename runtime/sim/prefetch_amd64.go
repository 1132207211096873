package sim

import "unsafe"

// prefetch asks the processor to bring the cache line at p into its
// caches, and goes on without waiting for it (PREFETCHT0): the run reads
// a task's scattered data (its buffers, its successors) at events that
// can be foreseen one event or more ahead, where a load would stall on
// the miss then. A hint: it faults on no address and changes nothing.
//
//go:noescape
func prefetch(p unsafe.Pointer)
