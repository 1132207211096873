package sched

import "github.com/starsim/starsim/runtime/machine"

// random pushes each task to a worker drawn with probability proportional
// to its relative speed (StarPU's random_policy.c: CPU 0.5, CUDA 13.33),
// among those that can run it; each worker keeps a priority list. Unlike
// StarPU's (seeded by time(NULL)), it draws from the run's seed.
type random struct {
	NopHooks
	v *View
	q map[*machine.Worker][]*Task
}

func (r *random) Init(v *View) { r.v = v; r.q = map[*machine.Worker][]*Task{} }

func relativeSpeedup(w *machine.Worker) float64 {
	if w.Kind == machine.GPUWorker {
		return 13.33
	}
	return 0.5
}

func (r *random) Push(t *Task) Decision {
	var cands []*machine.Worker
	total := 0.0
	for _, w := range r.v.Workers() {
		if r.v.CanExecute(t, w) {
			cands = append(cands, w)
			total += relativeSpeedup(w)
		}
	}
	x := r.v.Rand().Float64() * total
	pick := cands[len(cands)-1]
	for _, w := range cands {
		x -= relativeSpeedup(w)
		if x < 0 {
			pick = w
			break
		}
	}
	r.q[pick] = insertByPriority(r.q[pick], t)
	return Decision{Worker: pick}
}

func (r *random) Pop(w *machine.Worker) *Task {
	q := r.q[w]
	if len(q) == 0 {
		return nil
	}
	r.q[w] = q[1:]
	return q[0]
}
