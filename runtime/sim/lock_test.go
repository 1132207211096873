package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestHeldPushEnd: a push that begins while a driver holds the header lock
// of one of its task's data ends 1 µs after the lock is free; the thread's
// later pushes follow it; a lock taken after the push began, or already
// free, holds nothing back.
func TestHeldPushEnd(t *testing.T) {
	const us = 1e-6
	cases := []struct {
		name                 string
		endS, resumeS, lockS float64
		wantEndS             float64
		wantHeld             bool
	}{
		{"no lock, thread free", 10 * us, 0, 0, 10 * us, false},
		{"lock held when the push began", 10 * us, 0, 19 * us, 20 * us, true},
		{"lock free as the push began", 10 * us, 0, 9 * us, 10 * us, false},
		{"behind a held-back push", 11 * us, 20 * us, 0, 21 * us, true},
		{"behind it, lock later still", 11 * us, 20 * us, 30 * us, 21 * us, true},
		{"the thread caught up", 25 * us, 20 * us, 0, 25 * us, false},
		{"caught up, then a lock", 25 * us, 20 * us, 40 * us, 41 * us, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			end, held := heldPushEnd(c.endS, us, c.resumeS, c.lockS)
			assert.Equal(t, c.wantHeld, held)
			assert.InDelta(t, c.wantEndS, end, 1e-15)
		})
	}
}

// TestHeldCallback: a wont_use callback (3 µs) the thread queued behind a
// push later held back starts when that push ends (wontUseCallback asks
// heldPushEnd with the callback's length); behind a push that ended in
// time it keeps its place.
func TestHeldCallback(t *testing.T) {
	const us = 1e-6
	end, held := heldPushEnd(13*us, 3*us, 20*us, 0)
	assert.True(t, held)
	assert.InDelta(t, 23*us, end, 1e-15)
	end, held = heldPushEnd(13*us, 3*us, 10*us, 0)
	assert.False(t, held)
	assert.InDelta(t, 13*us, end, 1e-15)
}

func TestLockHeldAt(t *testing.T) {
	const us = 1e-6
	assert.True(t, lockHeldAt(5*us, 15*us, 5*us), "taken at that instant")
	assert.True(t, lockHeldAt(5*us, 15*us, 10*us))
	assert.False(t, lockHeldAt(5*us, 15*us, 15*us), "free at that instant")
	assert.False(t, lockHeldAt(12*us, 22*us, 10*us), "taken later")
	assert.False(t, lockHeldAt(0, 0, 10*us), "never taken")
}

// TestEndNoticedAt: a kernel's end is handled at once when the driver
// thread is free, when the thread is free otherwise, and behind ends not
// yet noticed even when the thread is free.
func TestEndNoticedAt(t *testing.T) {
	const us = 1e-6
	cases := []struct {
		name        string
		nowS, freeS float64
		unnoticed   int
		wantS       float64
		wantLater   bool
	}{
		{"thread free", 10 * us, 5 * us, 0, 10 * us, false},
		{"thread free that instant", 10 * us, 10 * us, 0, 10 * us, false},
		{"issuing a copy", 10 * us, 18 * us, 0, 18 * us, true},
		{"an earlier end not noticed", 10 * us, 5 * us, 1, 10 * us, true},
		{"both", 10 * us, 18 * us, 2, 18 * us, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			at, later := endNoticedAt(c.nowS, c.freeS, c.unnoticed)
			assert.Equal(t, c.wantLater, later)
			assert.InDelta(t, c.wantS, at, 1e-15)
		})
	}
}
