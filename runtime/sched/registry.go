package sched

import (
	"sort"
	"strings"
	"sync"

	"github.com/starsim/starsim/runtime/graph"
)

// entry is a registered scheduler: how to make one, and the priority range
// it sets.
type entry struct {
	factory func() Scheduler
	prio    graph.PrioRange
}

var (
	mu       sync.Mutex
	registry = map[string]entry{}
)

// Register makes a scheduler available under name (e.g. for --sched), with
// the priority range it sets for its context (StarPU's
// STARPU_MIN_PRIO..STARPU_MAX_PRIO, which applications read: a policy
// that sets none leaves 0..0, those with priority-sorted queues set
// graph.UnboundedPrio). Registering a name twice replaces the first.
func Register(name string, prio graph.PrioRange, factory func() Scheduler) {
	mu.Lock()
	defer mu.Unlock()
	registry[name] = entry{factory, prio}
}

// canonical is the registered name StarPU would run for name: any name
// starting with "heft" (and longer) selects dmda
// (_starpu_select_sched_policy).
func canonical(name string) string {
	if len(name) > 4 && strings.HasPrefix(name, "heft") {
		return "dmda"
	}
	return name
}

// New makes the scheduler registered as name; ok is false for an unknown
// name.
func New(name string) (s Scheduler, ok bool) {
	mu.Lock()
	defer mu.Unlock()
	e, ok := registry[canonical(name)]
	if !ok {
		return nil, false
	}
	return e.factory(), true
}

// PriorityRange is the priority range the scheduler name sets; ok is false
// for an unknown scheduler.
func PriorityRange(name string) (prio graph.PrioRange, ok bool) {
	mu.Lock()
	defer mu.Unlock()
	e, ok := registry[canonical(name)]
	return e.prio, ok
}

// Names lists the registered schedulers, sorted.
func Names() []string {
	mu.Lock()
	defer mu.Unlock()
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// The built-in schedulers, one file each, with StarPU's priority ranges:
// eager, random, dm, dmda and dmdar set none (0..0: _starpu_create_sched_ctx
// keeps max_priority = 0); prio (eager_central_priority_policy.c), ws and
// lws (initialize_ws_policy), dmdap, dmdas and dmdasd
// (initialize_dmda_sorted_policy) set INT_MIN..INT_MAX.
func init() {
	Register("eager", graph.PrioRange{}, func() Scheduler { return &central{} })
	Register("prio", graph.UnboundedPrio, func() Scheduler { return &central{prio: true} })
	Register("random", graph.PrioRange{}, func() Scheduler { return &random{} })
	Register("ws", graph.UnboundedPrio, func() Scheduler { return &ws{} })
	Register("lws", graph.UnboundedPrio, func() Scheduler { return &lws{} })
	Register("dm", graph.PrioRange{}, func() Scheduler { return &dmda{} })
	Register("dmda", graph.PrioRange{}, func() Scheduler { return &dmda{dataAware: true} })
	Register("dmdap", graph.UnboundedPrio, func() Scheduler { return &dmda{dataAware: true, sorted: true} })
	Register("dmdar", graph.PrioRange{}, func() Scheduler { return &dmda{dataAware: true, readyFirst: true} })
	Register("dmdas", graph.UnboundedPrio, func() Scheduler { return &dmda{dataAware: true, sorted: true, readyFirst: true} })
	Register("dmdasd", graph.UnboundedPrio, func() Scheduler { return &dmda{dataAware: true, sorted: true, readyFirst: true, sortedDec: true} })
}
