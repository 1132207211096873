package sched

import (
	"sort"

	"github.com/starsim/starsim/runtime/machine"
)

// lws is StarPU's locality work stealing (src/sched_policies/
// work_stealing_policy.c, _starpu_sched_lws_policy), StarPU's default
// scheduler:
//
//   - push (ws_push_task): a ready task goes to the queue of the worker
//     whose thread pushes it (the one that ended its last dependency) if
//     that worker can run it; else (the application thread, or a worker
//     that cannot run it) to the next worker in round robin after the
//     last one chosen so (select_worker_round_robin) that can run it;
//   - each worker's queue is a priority list (starpu_st_prio_deque):
//     highest priority first, oldest first within a priority;
//   - pop (ws_pop_task): a worker takes the first task of its own queue it
//     can run; failing that it steals from a victim, taking the victim's
//     highest-priority task, newest first within a priority, that it can
//     run (starpu_st_prio_deque_deque_task_for_worker). The victim is the
//     first worker, in round robin from where this worker's last search
//     stopped, with tasks queued that is busy (its last pop found a task:
//     it will not pop its queue soon) (select_victim_round_robin).
//
// With hwloc, StarPU's lws takes the victim from a proximity list built
// from the hwloc tree of the workers' cores (lws_select_victim) instead;
// StarPU over SimGrid, which starsim reproduces, is built without hwloc,
// so its lws victims are ws's round robin.
type lws struct {
	NopHooks
	v *View
	q []lwsQueue // by worker ID
	// busy[w]: w's last pop found a task.
	busy []bool
	// lastPush is the worker the push's round robin chose last;
	// lastPop[w] where w's victim search starts.
	lastPush int
	lastPop  []int
}

// lwsQueue is one worker's priority list: levels by decreasing priority,
// each a FIFO.
type lwsQueue struct {
	levels []lwsLevel
	n      int
}

type lwsLevel struct {
	prio  int
	tasks []*Task
}

func (l *lws) Init(v *View) {
	l.v = v
	l.q = make([]lwsQueue, len(v.Workers()))
	l.busy = make([]bool, len(v.Workers()))
	l.lastPop = make([]int, len(v.Workers()))
}

func (l *lws) Push(t *Task) Decision {
	ws := l.v.Workers()
	w := l.v.Pusher()
	if w == nil || !l.v.CanExecute(t, w) {
		i := l.lastPush
		for {
			i = (i + 1) % len(ws)
			if l.v.CanExecute(t, ws[i]) {
				break
			}
		}
		l.lastPush = i
		w = ws[i]
	}
	l.q[w.ID].push(t)
	return Decision{Worker: w}
}

// push appends t at the end of its priority's level.
func (q *lwsQueue) push(t *Task) {
	p := t.Priority()
	i := sort.Search(len(q.levels), func(i int) bool { return q.levels[i].prio <= p })
	if i == len(q.levels) || q.levels[i].prio != p {
		q.levels = append(q.levels, lwsLevel{})
		copy(q.levels[i+1:], q.levels[i:])
		q.levels[i] = lwsLevel{prio: p}
	}
	q.levels[i].tasks = append(q.levels[i].tasks, t)
	q.n++
}

// take removes task k of level i.
func (q *lwsQueue) take(i, k int) *Task {
	l := &q.levels[i]
	t := l.tasks[k]
	l.tasks = append(l.tasks[:k], l.tasks[k+1:]...)
	if len(l.tasks) == 0 {
		q.levels = append(q.levels[:i], q.levels[i+1:]...)
	}
	q.n--
	return t
}

// pop takes the first task, by priority then age, that w can run.
func (l *lws) pop(q *lwsQueue, w *machine.Worker) *Task {
	for i := range q.levels {
		for k, t := range q.levels[i].tasks {
			if l.v.CanExecute(t, w) {
				return q.take(i, k)
			}
		}
	}
	return nil
}

// steal takes the highest-priority task, newest first within a priority,
// that w can run.
func (l *lws) steal(q *lwsQueue, w *machine.Worker) *Task {
	for i := range q.levels {
		ts := q.levels[i].tasks
		for k := len(ts) - 1; k >= 0; k-- {
			if l.v.CanExecute(ts[k], w) {
				return q.take(i, k)
			}
		}
	}
	return nil
}

func (l *lws) Pop(w *machine.Worker) *Task {
	l.busy[w.ID] = false
	if q := &l.q[w.ID]; q.n > 0 {
		if t := l.pop(q, w); t != nil {
			l.busy[w.ID] = true
			return t
		}
	}
	var t *Task
	if v := l.victim(w); v != nil {
		t = l.steal(&l.q[v.ID], w)
	}
	l.busy[w.ID] = t != nil
	return t
}

// victim is the first worker, in round robin from lastPop[w], with tasks
// queued that is busy; nil if none. w itself is never busy here (a pop
// clears its own flag first). The next search starts after the worker
// this one stopped at (the start, when none was found).
func (l *lws) victim(w *machine.Worker) *machine.Worker {
	ws := l.v.Workers()
	start := l.lastPop[w.ID]
	i, found := start, false
	for {
		if l.q[i].n > 0 && l.busy[i] {
			found = true
			break
		}
		if i = (i + 1) % len(ws); i == start {
			break
		}
	}
	l.lastPop[w.ID] = (i + 1) % len(ws)
	if !found {
		return nil
	}
	return ws[i]
}
