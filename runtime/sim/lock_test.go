package sim

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestItemEnd: a thread's item (a 1 µs push, a 3 µs wont_use callback)
// runs when due unless the item before it ended after it was to begin, or
// a header lock holds it back: a push pushes once it has taken the lock,
// a callback ends as it takes it (lockTakenAt says when).
func TestItemEnd(t *testing.T) {
	const us = 1e-6
	cases := []struct {
		name                    string
		endS, costS, lastS, lkS float64
		push                    bool
		wantS                   float64
		wantLater               bool
	}{
		{"push, thread and data free", 10 * us, us, 9 * us, 0, true, 10 * us, false},
		{"push behind a held-back push", 10 * us, us, 20 * us, 0, true, 21 * us, true},
		{"push, its data's lock held", 10 * us, us, 9 * us, 19 * us, true, 20 * us, true},
		{"push, the lock frees as it ends", 10 * us, us, 9 * us, 10 * us, true, 11 * us, true},
		{"push, the lock freed as it began", 10 * us, us, 9 * us, 9 * us, true, 10 * us, false},
		{"callback behind a held-back push", 13 * us, 3 * us, 20 * us, 0, false, 23 * us, true},
		{"callback, the data's lock held", 13 * us, 3 * us, 10 * us, 19 * us, false, 19 * us, true},
		{"callback, in time", 13 * us, 3 * us, 10 * us, 0, false, 13 * us, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			end, later := itemEnd(c.endS, c.costS, c.lastS, c.lkS, c.push)
			assert.Equal(t, c.wantLater, later)
			assert.InDelta(t, c.wantS, end, 1e-15)
		})
	}
}

// TestThreadArg: an item's event argument carries the thread, the item
// (a task, or a callback's negative index) and whether it is a re-post.
func TestThreadArg(t *testing.T) {
	for _, c := range []struct {
		p        int
		id       int32
		reposted bool
	}{{0, 0, false}, {3, 12345, true}, {7, -1, false}, {70, -99, true}, {1, 1<<31 - 1, false}} {
		p, id, r := splitThreadArg(threadArg(c.p, c.id, c.reposted))
		assert.Equal(t, c.p, p)
		assert.Equal(t, c.id, id)
		assert.Equal(t, c.reposted, r)
	}
}

// TestLockTakenAt: a thread takes a header lock when it wants it unless a
// hold covers that instant; then after each hold it meets in turn, 1 µs
// after its release with the spin (or 1 µs after it wanted it, when the
// hold ends within its first sleep), as the release without.
func TestLockTakenAt(t *testing.T) {
	const us = 1e-6
	holds := []lockHold{{fromS: 5 * us, toS: 15 * us}, {fromS: 16 * us, toS: 26 * us}, {fromS: 40 * us, toS: 50 * us}}
	cases := []struct {
		name  string
		holds []lockHold
		want  float64
		spin  bool
		at    float64
	}{
		{"never held", nil, 10 * us, true, 10 * us},
		{"before the first hold", holds, 3 * us, true, 3 * us},
		{"taken at that instant", holds, 5 * us, false, 15 * us},
		{"held: taken as it frees, before the next hold", holds, 10 * us, false, 15 * us},
		{"with the spin: the next hold starts within the handoff", holds, 10 * us, true, 27 * us},
		{"free at that instant", holds, 26 * us, true, 26 * us},
		{"in a gap", holds, 30 * us, true, 30 * us},
		{"the hold ends within the first sleep", []lockHold{{fromS: 5 * us, toS: 10.5 * us}}, 10 * us, true, 11 * us},
		{"holds one after the other", []lockHold{{fromS: 5 * us, toS: 15 * us}, {fromS: 15 * us, toS: 20 * us}}, 10 * us, false, 20 * us},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.InDelta(t, c.at, lockTakenAt(c.holds, c.want, c.spin), 1e-15)
		})
	}
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

// TestPrefetchMarkMeet: a prefetch meets another thread's prefetch of the
// same instant on a handle's header lock only if that one posted a
// request (it holds the lock while it waits on the request list); a
// prefetch that posts one leaves its mark for the others.
func TestPrefetchMarkMeet(t *testing.T) {
	const now = 0.091
	cases := []struct {
		name      string
		mark      prefetchMark
		p         int32
		posts     bool
		met       bool
		markAfter prefetchMark
	}{
		{"no mark", prefetchMark{atS: math.Inf(-1)}, 2, true, false, prefetchMark{now, 2}},
		{"another thread posted this instant", prefetchMark{now, 1}, 2, true, true, prefetchMark{now, 2}},
		{"another thread posted, this one finds the data", prefetchMark{now, 1}, 2, false, true, prefetchMark{now, 1}},
		{"the same thread posted", prefetchMark{now, 2}, 2, true, false, prefetchMark{now, 2}},
		{"another thread posted earlier", prefetchMark{now - 1e-6, 1}, 2, false, false, prefetchMark{now - 1e-6, 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := c.mark
			assert.Equal(t, c.met, m.meet(now, c.p, c.posts))
			assert.Equal(t, c.markAfter, m)
		})
	}
}

// TestLockRetryAt: a taker that waits on the clock's moves learns, when a
// hold outlasts its first sleep, that hold and its release (it tries again
// when the clock next moves after it); free, or free again after that
// sleep, it takes the lock as lockTakenAt says; once waiting, it sleeps no
// more: any hold at its try sends it back to the clock.
func TestLockRetryAt(t *testing.T) {
	const us = 1e-6
	long := lockHold{fromS: 5 * us, toS: 15 * us, node: 2}
	short := lockHold{fromS: 5 * us, toS: 10.5 * us, node: 3}
	cases := []struct {
		name           string
		holds          []lockHold
		want           float64
		waiting, clock bool
		at             float64
		held           lockHold
	}{
		{"free", []lockHold{long}, 3 * us, false, false, 3 * us, lockHold{}},
		{"held past the first sleep", []lockHold{long}, 10 * us, false, true, 15 * us, long},
		{"free again after the first sleep", []lockHold{short}, 10 * us, false, false, 11 * us, lockHold{}},
		{"waiting: held at the try", []lockHold{short}, 10 * us, true, true, 10.5 * us, short},
		{"waiting: free at the try", []lockHold{long}, 15 * us, true, false, 15 * us, lockHold{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			at, held, clock := lockRetryAt(c.holds, c.want, true, true, c.waiting)
			assert.InDelta(t, c.at, at, 1e-15)
			assert.Equal(t, c.clock, clock)
			assert.Equal(t, c.held, held)
		})
	}
}
