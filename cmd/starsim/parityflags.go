package main

import (
	"github.com/spf13/pflag"

	"github.com/starsim/starsim/runtime/sim"
)

// A parity flag turns a StarPU behaviour of the runtime off (--no-starpu-…,
// the behaviour on by default) or on (--starpu-…, off by default); run,
// replay and sweep take them all, so a new one is one row here.
type parityFlag struct {
	name  string
	on    bool   // the flag turns the behaviour on (else off)
	help  string // run's and replay's help
	short string // sweep's help, after "as run --name: "
	set   func(o *sim.Options, v bool)
}

var parityFlags = []parityFlag{
	{"no-starpu-driver-loop", false, "do not time each GPU driver's work as StarPU's CUDA driver loop orders it (its pass over the requests, pop, kernel ends and pushes in turn on one thread; docs/fidelity.md)",
		"do not time each GPU driver's work as StarPU's CUDA driver loop orders it",
		func(o *sim.Options, v bool) { o.StarPUDriverLoop = v }},
	{"no-starpu-push-race", false, "let a dm scheduler's decision see what the other threads queue at the same simulated instant (in StarPU over SimGrid pushes of one instant by different threads race: each decides before the others queue; docs/fidelity.md)",
		"a dm decision sees what other threads queue at the same instant",
		func(o *sim.Options, v bool) { o.StarPUPushRace = v }},
	{"no-starpu-runner-start", false, "start the first copy between two memory nodes at once (StarPU's simulator starts it 1 µs late: the actor running that pair's copies is created then and sleeps 1 µs as it starts)",
		"start the first copy between two memory nodes at once",
		func(o *sim.Options, v bool) { o.StarPURunnerStart = v }},
	{"no-starpu-lock-spin", false, "hand a data header lock to a thread that waited for it as it frees (StarPU's simulator hands it over 1 µs later: its spin lock waits for the clock to move on)",
		"hand a data header lock to a waiting thread as it frees",
		func(o *sim.Options, v bool) { o.StarPULockSpin = v }},
	{"no-starpu-lock-clock", false, "hand a data header lock to a push or callback that waited past its first 1 µs sleep 1 µs after its release (StarPU's simulated spin lock waits for the simulated clock's next move, which may come later: the releasing driver may go on to its next copy)",
		"a push or callback waiting for a data header lock takes it 1 µs after its release",
		func(o *sim.Options, v bool) { o.StarPULockClock = v }},
	{"no-starpu-sync-start", false, "start a synchronous GPU kernel (LU's GETRF, Cholesky's POTRF) as soon as the kernel before it ends (StarPU's driver runs it once it has pushed the tasks that end released and run their callbacks)",
		"a synchronous GPU kernel starts as soon as the kernel before it ends",
		func(o *sim.Options, v bool) { o.StarPUSyncStart = v }},
	{"no-starpu-fetch-tail", false, "let a GPU driver execute a job without taking its data's header locks (StarPU takes each one first, and waits for one another driver's copy holds)",
		"a GPU driver executes a job without taking its data's header locks",
		func(o *sim.Options, v bool) { o.StarPUFetchTail = v }},
	{"no-starpu-hit-exec", false, "execute a job whose data was all on its GPU at the pop after its driver's next pass (StarPU executes it before that pass)",
		"a job whose data was all on its GPU at the pop waits for its driver's next pass",
		func(o *sim.Options, v bool) { o.StarPUHitExec = v }},
	{"no-starpu-hop-notice", false, "post the second hop of a GPU-to-GPU copy through RAM as the first lands (StarPU posts it when the first hop's driver notices the end: its next pass, or when it has issued the copies of the pass it is in)",
		"the second hop of a GPU-to-GPU copy through RAM is posted as the first lands",
		func(o *sim.Options, v bool) { o.StarPUHopNotice = v }},
	{"no-starpu-join-takeover", false, "let a copy come from the source its first request named even when a later task's request for it, from another source, reaches its driver first (StarPU's first request handled loads the copy)",
		"a copy comes from the source its first request named",
		func(o *sim.Options, v bool) { o.StarPUJoinTakeover = v }},
	{"no-starpu-pass-places", false, "let a driver's pass take every request its pending limits allow, a cancelled request taking no place (StarPU's pass takes as many as the limit leaves, cancelled ones included, and comes back to the rest after starting a job whose data is in)",
		"a driver's pass takes every request its pending limits allow",
		func(o *sim.Options, v bool) { o.StarPUPassPlaces = v }},
	{"no-starpu-alloc-order", false, "give the device allocation lock to a driver's copies in the order its passes are computed (StarPU's driver takes it when it reaches the allocation, after another driver that asked in between)",
		"the device allocation lock goes in the order the passes are computed",
		func(o *sim.Options, v bool) { o.StarPUAllocOrder = v }},
	{"no-starpu-fetch-cost-at-post", false, "start a task's per-buffer fetch cost when its last input lands (StarPU's driver spends it as it posts the fetches)",
		"a task's per-buffer fetch cost starts when its last input lands",
		func(o *sim.Options, v bool) { o.StarPUFetchCostAtPost = v }},
	{"starpu-trylock-progress", true, "a GPU driver that finds a data header lock taken while it acquires a released task's data makes progress passes (issuing the copies whose buffers are there) and tries again, up to 10 times, as StarPU does (docs/fidelity.md)",
		"a GPU driver waiting for a data header lock as it acquires a released task's data makes progress passes meanwhile",
		func(o *sim.Options, v bool) { o.StarPUTrylockProgress = v }},
	{"starpu-prefetch-lock-at-end", true, "a push decides at its end, then prefetches its task's data in order, each under its header lock: a lock held then holds back that data's prefetch and the rest, not the decision (without it a push waits for any lock held on its data when it began)",
		"a push decides at its end, then prefetches its task's data in order, each under its header lock",
		func(o *sim.Options, v bool) { o.StarPUPrefetchLockAtEnd = v }},
}

// parityValues holds the parity flags' values of one command line.
type parityValues []bool

// register adds the parity flags to fs, with sweep's short help when
// sweep is set.
func (p *parityValues) register(fs *pflag.FlagSet, sweep bool) {
	*p = make(parityValues, len(parityFlags))
	for i, f := range parityFlags {
		help := f.help
		if sweep {
			help = "as run --" + f.name + ": " + f.short
		}
		fs.BoolVar(&(*p)[i], f.name, false, help)
	}
}

// apply sets the behaviours the flags name on o.
func (p parityValues) apply(o *sim.Options) {
	for i, f := range parityFlags {
		f.set(o, p[i] == f.on)
	}
}
