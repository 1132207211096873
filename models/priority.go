package models

import (
	"fmt"
	"math"
	"strings"
)

// Priority range of a StarPU scheduling context, as STARPU_MIN_PRIO and
// STARPU_MAX_PRIO return it once the scheduler is initialised.
//
// What the StarPU source does (github.com/starpu-runtime/starpu):
//   - STARPU_MIN_PRIO/STARPU_MAX_PRIO are not constants but
//     starpu_sched_get_min/max_priority() (include/starpu_scheduler.h,
//     starpu_sched_ctx.h); STARPU_DEFAULT_PRIO is 0.
//   - A context whose policy does not set a range keeps min = max = 0
//     (_starpu_create_sched_ctx, src/core/sched_ctx.c: "else
//     sched_ctx->max_priority = 0").
//   - Policies that keep priority-sorted queues set INT_MIN..INT_MAX
//     ("The application may use any integer"): dmdap/dmdas/dmdasd
//     (initialize_dmda_sorted_policy), prio (eager_central_priority_policy.c),
//     ws/lws (initialize_ws_policy), and the modular schedulers with prio
//     components (modular_heft.c, modular_prio*.c).
//   - dm, dmda, dmdar (initialize_dmda_policy), eager and random set
//     nothing: 0..0.
//   - heteroprio raises max to HETEROPRIO_MAX_PRIO-1 = 99 (min 0); pheft
//     uses DEFAULT_MIN/MAX_PRIORITY = 0..1 (parallel_heft.c).
//   - Any name beginning with "heft" selects dmda; no STARPU_SCHED selects
//     lws (_starpu_select_sched_policy).
//   - An external scheduler (external:COMMAND, an agent process) is a
//     policy that sets no range: 0..0.
//
// No clamping of task->priority to the range happens at submission (none
// found in the source); the range matters because cholesky_implicit.c reads
// it to choose its priority formulas.

// Unbounded priority range: C's INT_MIN..INT_MAX.
const (
	PrioMinUnbounded = math.MinInt32
	PrioMaxUnbounded = math.MaxInt32
)

// PriorityRange is the [min, max] priority range StarPU's scheduler sched
// sets. "" is StarPU's default, lws. Unknown names are an error: the range,
// and hence Cholesky's priorities, would be a guess.
func PriorityRange(sched string) (min, max int, err error) {
	s := sched
	if s == "" {
		s = "lws"
	}
	if strings.HasPrefix(s, "heft") {
		s = "dmda"
	}
	if strings.HasPrefix(s, "external:") {
		// An agent's policy sets no range: StarPU's default for such a
		// context, 0..0.
		return 0, 0, nil
	}
	switch s {
	case "dmdap", "dmdas", "dmdasd", "prio", "ws", "lws",
		"modular-heft", "modular-prio", "modular-prio-prefetching":
		return PrioMinUnbounded, PrioMaxUnbounded, nil
	case "dm", "dmda", "dmdar", "eager", "random":
		return 0, 0, nil
	case "heteroprio":
		return 0, 99, nil
	case "pheft":
		return 0, 1, nil
	}
	return 0, 0, fmt.Errorf("models: unknown scheduler %q: its priority range is not known", sched)
}

// cholPrio is cholesky_implicit.c's priority choice (the default
// "-priority 0" attribution):
//
//	priority = noprio ? STARPU_DEFAULT_PRIO
//	         : unbound_prio ? <bottom-level formula>
//	         : <STARPU_MAX_PRIO for the critical path, else STARPU_DEFAULT_PRIO>
//
// with unbound_prio = STARPU_MAX_PRIO == INT_MAX && STARPU_MIN_PRIO ==
// INT_MIN, read once before the submission loop. Per task (nb = N/Block):
//
//	          unbound                 bounded
//	POTRF(k)  2nb-2k                  MAX
//	TRSM(k,m) 2nb-2k-m                m == k+1 ? MAX : 0
//	SYRK(k,n) 2nb-2k-n-n (= 2nb-2k-2n) n == k+1 ? MAX : 0
//	GEMM(k,m,n) 2nb-2k-m-n            (m == k+1 && n == k+1) ? MAX : 0
//
// Two corrections to the reference doc (§6): SYRK's unbound priority is
// 2nb-2k-2n, not 2nb-2k-n (the source writes "2*nblocks - 2*k - n - n");
// and a GEMM never gets MAX, because GEMMs have m > n >= k+1 so the
// condition m == n == k+1 cannot hold (only SYRK(n=k+1) does). With the
// 0..0 range of dm, dmda, dmdar, eager and random, MAX is 0 and every
// priority is 0, as the doc says (and as the native dmda trace shows). The
// C arithmetic is unsigned then cast to int; the wrap-around gives the same
// (possibly negative) values as the signed formulas used here.
type cholPrio struct {
	noprio, unbound bool
	max, nb         int
}

func newCholPrio(o Options, nb int) cholPrio {
	min, max, _ := PriorityRange(o.PrioritySched)
	return cholPrio{
		noprio:  o.NoPrio,
		unbound: min == PrioMinUnbounded && max == PrioMaxUnbounded,
		max:     max,
		nb:      nb,
	}
}

func (p cholPrio) potrf(k int) int {
	switch {
	case p.noprio:
		return 0
	case p.unbound:
		return 2*p.nb - 2*k
	}
	return p.max
}

func (p cholPrio) trsm(k, m int) int {
	switch {
	case p.noprio:
		return 0
	case p.unbound:
		return 2*p.nb - 2*k - m
	case m == k+1:
		return p.max
	}
	return 0
}

func (p cholPrio) syrk(k, n int) int {
	switch {
	case p.noprio:
		return 0
	case p.unbound:
		return 2*p.nb - 2*k - n - n
	case n == k+1:
		return p.max
	}
	return 0
}

func (p cholPrio) gemm(k, m, n int) int {
	switch {
	case p.noprio:
		return 0
	case p.unbound:
		return 2*p.nb - 2*k - m - n
	case m == k+1 && n == k+1:
		return p.max
	}
	return 0
}
