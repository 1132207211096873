package sched

import (
	"testing"

	"github.com/starsim/starsim/runtime/machine"
	"github.com/stretchr/testify/assert"
)

// testWorkers are two CPU workers and a GPU.
func testWorkers() []*machine.Worker {
	return []*machine.Worker{{ID: 0, Name: "CPU0"}, {ID: 1, Name: "CPU1"}, {ID: 2, Name: "CUDA0", Kind: machine.GPUWorker, Node: 1}}
}

// testTask is a task of priority prio that runs on the workers listed
// (all when none).
func testTask(id, prio int, on ...int) *Task {
	k := &machine.KernelStats{MeanUS: 1}
	stats := make([]*machine.KernelStats, 3)
	for w := range stats {
		if len(on) == 0 {
			stats[w] = k
		}
	}
	for _, w := range on {
		stats[w] = k
	}
	t := &Task{}
	t.Set(id, int32(prio), nil, &stats)
	return t
}

func TestLWSPush(t *testing.T) {
	ws := testWorkers()
	v := NewView(ViewConfig{Workers: ws})
	l := &lws{}
	l.Init(v)
	// The application thread's pushes go round robin, starting after
	// worker 0, to workers that can run them.
	assert.Equal(t, ws[1], l.Push(testTask(0, 0)).Worker)
	assert.Equal(t, ws[2], l.Push(testTask(1, 0)).Worker)
	assert.Equal(t, ws[0], l.Push(testTask(2, 0)).Worker)
	assert.Equal(t, ws[2], l.Push(testTask(3, 0, 2)).Worker, "only the GPU runs it")
	assert.Equal(t, ws[0], l.Push(testTask(4, 0)).Worker)
	// A worker's own releases stay with it, if it can run them.
	v.SetPusher(ws[1])
	assert.Equal(t, ws[1], l.Push(testTask(5, 0)).Worker)
	d := l.Push(testTask(6, 0, 0))
	assert.Equal(t, ws[0], d.Worker, "CPU1 cannot run it: round robin")
	assert.False(t, d.Prefetch)
}

func TestLWSPopAndSteal(t *testing.T) {
	ws := testWorkers()
	v := NewView(ViewConfig{Workers: ws})
	l := &lws{}
	l.Init(v)
	v.SetPusher(ws[2])
	low, hi1, hi2, cpuOnly := testTask(0, 1), testTask(1, 5), testTask(2, 5), testTask(3, 9, 0, 1)
	for _, tk := range []*Task{low, hi1, hi2} {
		assert.Equal(t, ws[2], l.Push(tk).Worker)
	}
	assert.Equal(t, ws[1], l.Push(cpuOnly).Worker, "the GPU cannot run it: round robin")
	// The GPU pops its highest priority, oldest first.
	assert.Equal(t, hi1, l.Pop(ws[2]))
	// CPU0 has nothing: it steals from the first busy worker with tasks
	// (not CPU1, which has not popped yet) the highest priority, newest
	// first within a priority.
	assert.Equal(t, hi2, l.Pop(ws[0]))
	assert.Equal(t, low, l.Pop(ws[0]))
	assert.Equal(t, cpuOnly, l.Pop(ws[1]))
	assert.Nil(t, l.Pop(ws[2]))
}

// The GPU, its pop empty-handed, is no victim until its next pop finds
// a task; victims are searched round robin from where the last search
// stopped.
func TestLWSVictims(t *testing.T) {
	ws := testWorkers()
	v := NewView(ViewConfig{Workers: ws})
	l := &lws{}
	l.Init(v)
	v.SetPusher(ws[2])
	a, b := testTask(0, 0), testTask(1, 0)
	l.Push(a)
	l.Push(b)
	assert.Nil(t, l.Pop(ws[0]), "the GPU has not popped yet: not busy")
	assert.Equal(t, a, l.Pop(ws[2]))
	assert.Equal(t, b, l.Pop(ws[0]), "now it is")
	assert.Equal(t, 0, l.lastPop[1])
	assert.Nil(t, l.Pop(ws[1]))
	assert.Equal(t, 1, l.lastPop[1], "no victim: the next search starts one further")
}
