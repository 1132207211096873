// Package gcpause holds the garbage collector off while a simulation is
// built, and lets it run only when the run's garbage grows large.
//
// What a simulation's build allocates (calibration, task graph,
// simulator) mostly stays live to the end, so collections during the
// build only scan it again and again; and turned back on at once, the
// collector finds the heap far beyond the goal it set before the pause
// and marks the whole simulator, all of it live, right away. Profile a
// large run (starsim run --cpuprofile, on attila N=76800) with and
// without the pause to see what both cost.
//
// The settings are process-wide: not for concurrent use. A command builds
// one simulation at a time: Pause, build, CollectLater, run, Resume.
package gcpause

import (
	"math"
	"runtime/debug"
	"runtime/metrics"
)

// percent is the collector's setting while Pause holds it off (notPaused
// otherwise); limit the memory limit while CollectLater's holds (else -1).
var (
	percent = notPaused
	limit   = int64(-1)
)

const notPaused = math.MinInt

// Pause turns the collector off (GOGC=off) until CollectLater or Resume.
// A second Pause before Resume does nothing.
func Pause() {
	if percent == notPaused {
		percent = debug.SetGCPercent(-1)
	}
}

// CollectLater lets the run collect its garbage, but not at once: the
// collector stays off under a memory limit of what its GOGC setting
// allows over the memory in use now (twice it for GOGC=100), so the run
// collects only if its garbage grows that large. It does nothing when not
// paused, when GOGC was off already, or a second time.
func CollectLater() {
	if percent == notPaused || percent < 0 || limit >= 0 {
		return
	}
	// runtime/metrics, unlike ReadMemStats, does not stop the world.
	m := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(m)
	inUse := int64(m[0].Value.Uint64() - m[1].Value.Uint64())
	limit = debug.SetMemoryLimit(-1)
	debug.SetMemoryLimit(min(limit, inUse+inUse/100*int64(percent)))
}

// Resume restores the collector's settings (GOGC and the memory limit)
// as Pause found them.
func Resume() {
	if limit >= 0 {
		debug.SetMemoryLimit(limit)
		limit = -1
	}
	if percent != notPaused {
		debug.SetGCPercent(percent)
		percent = notPaused
	}
}
