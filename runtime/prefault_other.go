//go:build !linux

package runtime

import "unsafe"

// prefault does nothing off Linux: pages fault when first written.
func prefault(unsafe.Pointer, uintptr) {}
