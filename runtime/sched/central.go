package sched

import (
	"sort"

	"github.com/starsim/starsim/runtime/machine"
)

// central is eager (one FIFO) or prio (one priority list, FIFO within a
// level): a pop takes the first task the worker can execute (StarPU's
// eager_central_policy.c and eager_central_priority_policy.c).
type central struct {
	NopHooks
	v    *View
	prio bool
	q    []*Task
}

func (c *central) Init(v *View) { c.v = v }

func (c *central) Push(t *Task) Decision {
	if !c.prio {
		c.q = append(c.q, t)
		return Decision{}
	}
	i := sort.Search(len(c.q), func(i int) bool { return c.q[i].Priority() < t.Priority() })
	c.q = append(c.q, nil)
	copy(c.q[i+1:], c.q[i:])
	c.q[i] = t
	return Decision{}
}

func (c *central) Pop(w *machine.Worker) *Task {
	for i, t := range c.q {
		if c.v.CanExecute(t, w) {
			c.q = append(c.q[:i], c.q[i+1:]...)
			return t
		}
	}
	return nil
}

// insertByPriority keeps q sorted by decreasing priority, FIFO within one.
func insertByPriority(q []*Task, t *Task) []*Task {
	i := sort.Search(len(q), func(i int) bool { return q[i].Priority() < t.Priority() })
	q = append(q, nil)
	copy(q[i+1:], q[i:])
	q[i] = t
	return q
}
