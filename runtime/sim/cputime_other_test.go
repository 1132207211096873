//go:build !unix

package sim_test

// cpuSeconds is not measured here: the benchmarks report 0.
func cpuSeconds() float64 { return 0 }
