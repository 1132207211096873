package gcpause

import (
	"runtime/debug"
	"testing"
)

// TestPauseResume: Pause turns the collector off, CollectLater bounds the
// memory instead, and Resume restores both settings; a second Pause or
// CollectLater changes nothing.
func TestPauseResume(t *testing.T) {
	before := debug.SetGCPercent(137)
	defer debug.SetGCPercent(before)
	limitBefore := debug.SetMemoryLimit(-1)

	Pause()
	Pause()
	if got := debug.SetGCPercent(-1); got != -1 {
		t.Fatalf("GOGC %d while paused, want off (-1)", got)
	}
	CollectLater()
	bound := debug.SetMemoryLimit(-1)
	if bound <= 0 || bound >= limitBefore {
		t.Fatalf("memory limit %d under CollectLater, want below %d", bound, limitBefore)
	}
	CollectLater()
	if got := debug.SetMemoryLimit(-1); got != bound {
		t.Fatalf("a second CollectLater moved the limit from %d to %d", bound, got)
	}
	Resume()
	if got := debug.SetGCPercent(137); got != 137 {
		t.Fatalf("GOGC %d after Resume, want 137", got)
	}
	if got := debug.SetMemoryLimit(-1); got != limitBefore {
		t.Fatalf("memory limit %d after Resume, want %d", got, limitBefore)
	}
}

// TestCollectLaterOff: with GOGC off before the pause, CollectLater sets
// no limit (the user asked for no collection).
func TestCollectLaterOff(t *testing.T) {
	before := debug.SetGCPercent(-1)
	defer debug.SetGCPercent(before)
	limitBefore := debug.SetMemoryLimit(-1)
	Pause()
	CollectLater()
	if got := debug.SetMemoryLimit(-1); got != limitBefore {
		t.Fatalf("memory limit %d with GOGC off, want %d", got, limitBefore)
	}
	Resume()
	if got := debug.SetGCPercent(-1); got != -1 {
		t.Fatalf("GOGC %d after Resume, want off", got)
	}
	if percent != notPaused || limit != -1 {
		t.Fatal("state not reset")
	}
}
