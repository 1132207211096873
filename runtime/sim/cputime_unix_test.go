//go:build unix

package sim_test

import "syscall"

// cpuSeconds is the CPU time (user + system) the process has used, every
// thread counted: a figure that other jobs on the machine perturb less
// than wall time.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
