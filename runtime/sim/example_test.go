package sim_test

import (
	"fmt"

	"github.com/starsim/starsim/calibrate"
	"github.com/starsim/starsim/models"
	"github.com/starsim/starsim/runtime/graph"
	"github.com/starsim/starsim/runtime/machine"
	"github.com/starsim/starsim/runtime/sched"
	"github.com/starsim/starsim/runtime/sim"
)

// roundRobin is a user scheduler: tasks go to the calibrated workers in
// turn; each worker pops its own FIFO.
type roundRobin struct {
	sched.NopHooks
	v    *sched.View
	next int
	q    map[*machine.Worker][]*sched.Task
}

func (r *roundRobin) Init(v *sched.View) { r.v, r.q = v, map[*machine.Worker][]*sched.Task{} }

func (r *roundRobin) Push(t *sched.Task) sched.Decision {
	ws := r.v.Workers()
	for i := range ws {
		w := ws[(r.next+i)%len(ws)]
		if r.v.CanExecute(t, w) {
			r.q[w] = append(r.q[w], t)
			r.next = (r.next + i + 1) % len(ws)
			return sched.Decision{Worker: w}
		}
	}
	return sched.Decision{}
}

func (r *roundRobin) Pop(w *machine.Worker) *sched.Task {
	if len(r.q[w]) == 0 {
		return nil
	}
	t := r.q[w][0]
	r.q[w] = r.q[w][1:]
	return t
}

// Example_customScheduler registers a scheduler and runs a Cholesky with it.
func Example_customScheduler() {
	sched.Register("roundrobin", graph.PrioRange{}, func() sched.Scheduler { return &roundRobin{} })
	g, _ := models.New("cholesky", models.Options{N: 960 * 4, Block: 960})
	o := sim.DefaultOptions()
	o.Sched, o.NCPU, o.Check = "roundrobin", 0, true
	sim, err := sim.New(calibrate.Default().RuntimeMachine(), g, o)
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := sim.Run()
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, w := range res.Workers {
		fmt.Println(w.Name, w.NTasks)
	}
	// Output:
	// CUDA0 5
	// CUDA1 5
	// CUDA2 5
	// CUDA3 5
}
