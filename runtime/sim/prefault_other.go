//go:build !linux

package sim

import "unsafe"

// prefault does nothing off Linux: pages fault when first written.
func prefault(unsafe.Pointer, uintptr) {}

// hugePages does nothing off Linux.
func hugePages(unsafe.Pointer, uintptr) {}
