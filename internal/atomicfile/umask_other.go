//go:build !unix

package atomicfile

// umask is the usual mask where the system has none to read.
const umask = 0o022
