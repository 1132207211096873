//go:build unix

package atomicfile

import "syscall"

// umask is the process's file mode creation mask, read once: os.Create's
// files get 0666 less it, and so do the outputs written here.
var umask = func() uint32 {
	m := syscall.Umask(0)
	syscall.Umask(m)
	return uint32(m)
}()
