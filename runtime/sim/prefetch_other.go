//go:build !amd64

package sim

import "unsafe"

// prefetch does nothing here (see prefetch_amd64.go).
func prefetch(unsafe.Pointer) {}
