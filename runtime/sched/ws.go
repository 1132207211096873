package sched

import "github.com/starsim/starsim/runtime/machine"

// ws is work stealing: a ready task goes to the queue of the worker that
// last ended a kernel when that worker can run it, else round-robin; a
// worker pops its highest-priority task, else steals the lowest-priority
// task of the next worker with work (round-robin victims). It follows
// StarPU's ws (work_stealing_policy.c) loosely: StarPU pushes to the
// releasing thread's worker (round robin for the application thread's
// pushes), steals the highest-priority task and only from busy workers,
// as lws does here.
type ws struct {
	NopHooks
	v      *View
	q      [][]*Task
	rr     int
	victim int
	last   *machine.Worker
}

func (s *ws) Init(v *View) { s.v = v; s.q = make([][]*Task, len(v.Workers())) }

func (s *ws) PostExec(w *machine.Worker, t *Task) { s.last = w }

func (s *ws) Push(t *Task) Decision {
	ws := s.v.Workers()
	var w *machine.Worker
	if s.last != nil && s.v.CanExecute(t, s.last) {
		w = s.last
	} else {
		for i := 0; i < len(ws); i++ {
			c := ws[(s.rr+i)%len(ws)]
			if s.v.CanExecute(t, c) {
				w = c
				s.rr = (s.rr + i + 1) % len(ws)
				break
			}
		}
	}
	s.q[w.ID] = insertByPriority(s.q[w.ID], t)
	return Decision{Worker: w}
}

func (s *ws) Pop(w *machine.Worker) *Task {
	if q := s.q[w.ID]; len(q) > 0 {
		s.q[w.ID] = q[1:]
		return q[0]
	}
	ws := s.v.Workers()
	for i := 0; i < len(ws); i++ {
		v := ws[(s.victim+i)%len(ws)]
		q := s.q[v.ID]
		if v == w || len(q) == 0 {
			continue
		}
		for j := len(q) - 1; j >= 0; j-- {
			if s.v.CanExecute(q[j], w) {
				t := q[j]
				s.q[v.ID] = append(q[:j:j], q[j+1:]...)
				s.victim = (s.victim + i + 1) % len(ws)
				return t
			}
		}
	}
	return nil
}
