package sim

import (
	"io"

	"github.com/starsim/starsim/runtime/cost"
	"github.com/starsim/starsim/runtime/graph"
	"github.com/starsim/starsim/runtime/sched"
)

// Options of a run. Start from DefaultOptions, StarPU's defaults: in the
// zero value, NCPU and NCUDA 0 mean no worker of that kind (-1 is StarPU's
// default), ExplainTask 0 means task 0 only, and the parity options are off.
type Options struct {
	Sched string // scheduler name; default "dmda"
	// NewScheduler, when set, makes the run's scheduler instead of the
	// registry's entry for Sched (which then only names it): a scheduler
	// made per invocation, such as an external agent's.
	NewScheduler func() sched.Scheduler
	// NCPU and NCUDA are worker counts; -1 means StarPU's default (all GPUs;
	// CPU workers = cores - GPU workers).
	NCPU, NCUDA int
	Durations   cost.Durations
	Seed        uint64
	// GPUMemLimitBytes overrides every GPU's capacity (0: StarPU's default,
	// 90 % of the device memory, rounded down to whole MiB), as StarPU's
	// STARPU_LIMIT_CUDA_MEM does.
	GPUMemLimitBytes int64
	// GPUMemLimitByDevice overrides the capacity of the GPUs it names
	// (device name, "CUDA1", to bytes) when GPUMemLimitBytes is 0, as
	// StarPU's STARPU_LIMIT_CUDA_<id>_MEM does.
	GPUMemLimitByDevice map[string]int64
	// DMWeights, when set, replaces the dm family's fitness weights
	// (StarPU's STARPU_SCHED_ALPHA, _BETA, _GAMMA; sched.DefaultDMWeights).
	DMWeights *sched.DMWeights
	// NoPrefetch disables push-time prefetch (STARPU_PREFETCH=0).
	NoPrefetch bool
	// StarPUTransferFactor reproduces StarPU's transfer prediction, which
	// multiplies the bandwidth term by 2 × the number of GPUs on every
	// non-peer bus (starpu_transfer_predict). An accident of StarPU kept for
	// parity; on by default (see DefaultOptions).
	StarPUTransferFactor bool
	// StarPUHiddenHoles reproduces an accident of StarPU 1.4's suballocator
	// (malloc.c): a freed buffer that merges with no free neighbour does not
	// raise its chunk's available_max, so later searches skip that hole
	// and the device reclaims (or takes a new chunk) while room is left.
	// On by default (see DefaultOptions).
	StarPUHiddenHoles bool
	// StarPUPrioClamp clamps each task's priority, at submission, into its
	// scheduler's priority range, as StarPU 1.4's _starpu_task_submit does
	// (src/core/task.c: the priority-cap knobs start as the context's
	// STARPU_MIN_PRIO..STARPU_MAX_PRIO). Under dmda and dmdar (range 0..0)
	// every priority becomes 0, LU's bottom-level priorities included. On
	// by default (see DefaultOptions); only for the registry's schedulers.
	StarPUPrioClamp bool
	// StarPUPrefetchJoinLoss reproduces how StarPU 1.4 loses the eviction
	// protection of a task prefetch that finds its copy already being
	// loaded for another task: requests of different tasks are not merged
	// (coherency.c, _starpu_search_existing_data_request), and the second
	// one, handled while the first holds the replica's load_request, is
	// cancelled without adding its task to the copy's nb_tasks_prefetch
	// (data_request.c). The copy is then protected for the first task only,
	// and each task's fetch still takes one count off (coherency.c,
	// _starpu_fetch_task_input_tail, never below zero): under memory
	// pressure, prefetches evict copies that queued tasks still need. On by
	// default (see DefaultOptions).
	StarPUPrefetchJoinLoss bool
	// StarPUJoinTakeover: a task's prefetch request for a copy that another
	// task's request is to bring, reached by its driver before that request
	// has been, loads the copy itself, from the source it was posted with,
	// and the earlier request, reached later, waits for it. StarPU does not
	// merge the requests of different tasks (coherency.c), each names the
	// source that was best when it was posted (_starpu_select_src_node),
	// and the first one its driver handles becomes the copy's load_request
	// (data_request.c, starpu_handle_data_request). So a copy whose first
	// request waits behind the pending limit of a GPU-to-GPU link comes
	// from RAM once RAM has the data and a later task asks for it. With
	// StarPUPrefetchJoinLoss only (which keeps the tasks' requests apart).
	// On by default.
	StarPUJoinTakeover bool
	// StarPUPassPlaces: a driver's pass over a list of requests takes at
	// most as many as the pending limit leaves (data_request.c,
	// __starpu_handle_node_data_requests moves n − npending requests to a
	// local list before it handles any), a cancelled request (a task's
	// prefetch that finds its copy loaded or being loaded for another)
	// taking a place as a copy does; the driver comes back to the rest in
	// its loop's next iteration (_starpu_cuda_driver_run_once waits only
	// when its progress did nothing), after the iteration's pop and the
	// start of the job whose data is in. With Options.StarPUDriverLoop
	// only. On by default.
	StarPUPassPlaces bool
	// StarPUAllocOrder: a driver takes the device allocation lock (one
	// for every GPU, StarPU's cuda_alloc_mutex) for a copy when it reaches
	// the copy's allocation, busy issuing the copies before it until then,
	// so another driver that asks in between takes it first; off, the
	// lock goes in the order the passes are computed. On by default.
	StarPUAllocOrder bool
	// StarPUFetchCostAtPost: the per-buffer cost of a task's fetch
	// (Machine.Costs.FetchInputPerBufS) runs from when the driver posts
	// the fetches (coherency.c, _starpu_fetch_task_input sleeps as it
	// posts them), so data that lands later makes the task ready at once;
	// with Options.StarPUDriverLoop a GPU driver's thread is busy
	// meanwhile. Off, the cost follows the last input's arrival. On by
	// default.
	StarPUFetchCostAtPost bool
	// StarPUOwnAtFetch gives a task's copy of data it will write (RW)
	// ownership when the copy is fetched or prefetched for it, not when the
	// task ends: StarPU's data request carries the task's access mode, and
	// its completion, or a hit, updates the data state with it
	// (coherency.c, _starpu_update_data_state: the copy becomes the owner,
	// every other copy invalid, and its memory chunk dirty). A prefetched
	// copy then needs a write-back before it is evicted, and counts against
	// the clean-buffer target. On by default (see DefaultOptions).
	StarPUOwnAtFetch bool
	// NoWontUseWriteBack skips the idle write-back home that StarPU queues
	// on starpu_data_wont_use (the copies are still evicted first).
	NoWontUseWriteBack bool
	// NoTidy disables StarPU's background write-backs that keep 5-10 % of
	// the device copies clean.
	NoTidy bool
	// StarPUDriverLoop times a GPU driver's work as StarPU's CUDA driver
	// loop orders it (src/drivers/cuda/driver_cuda.c,
	// _starpu_cuda_driver_run_once: a kernel's end is handled, the tasks
	// it released pushed and their callbacks run, then the pass over the
	// node's requests, __starpu_datawizard_progress, then the pop): the
	// pass waits for the driver's thread (wakeDriver) and comes before the
	// pop after a kernel's end or a wake (completeKernel, workerPop); a
	// kernel's end is handled when the thread is free (endNoticedAt); a
	// job executes after the pass that completes its data (execDue), a
	// synchronous kernel without the queue cost; a wont_use costs its
	// callback's submit and push costs (runWontUse); a thread's pushes and
	// wont_use callbacks run in order (threadq.go), held back by the data
	// header locks drivers hold to issue copies (headerlock.go, start); the
	// memchunk tidy runs in the pass (progress); a fetch raises the copy
	// it joins as StarPU raises the task's own request (upgrade). Found
	// event by event against the peer (docs/fidelity.md). On by default
	// (see DefaultOptions): closer to the peer over its grid; off, a GPU
	// driver's pass, pop and kernel ends take no thread time of their own.
	StarPUDriverLoop bool
	// StarPUPushRace makes pushes of one simulated instant by different
	// threads race, as in StarPU over SimGrid: a dm scheduler's decision
	// does not see the tasks the other threads queue at that instant
	// (sched.View.PushRace), and, with StarPUDriverLoop, a thread whose
	// prefetch meets another's on a data header lock spins 1 µs
	// (racingPrefetch). On by default: closer to the peer over its grid
	// and its perturbed and 5/6-GPU what-ifs (docs/fidelity.md).
	StarPUPushRace bool
	// StarPURunnerStart starts the first copy of each (source,
	// destination) pair 1 µs after it could: StarPU's simulator creates
	// the pair's transfer runner actor then, and every actor sleeps 1 µs
	// as it starts (_starpu_simgrid_thread_start, a work-around for a
	// SimGrid bug). Default on.
	StarPURunnerStart bool
	// StarPULockSpin hands a data header lock to a thread that waited for
	// it 1 µs after its release, as StarPU's simulated spin lock does
	// (common/thread.h: it sleeps 1 µs, then waits for the simulated clock
	// to move on, which the releasing driver's next progress sleep does).
	// With Options.StarPUDriverLoop only. Default on.
	StarPULockSpin bool
	// StarPULockClock makes a thread's push or wont_use callback that
	// waits for a data header lock past its first 1 µs sleep take it when
	// the simulated clock next moves after the release (SimGrid's
	// time-advance signal, which StarPU's simulated spin lock waits on),
	// rather than 1 µs after it: the releasing driver may go on to a
	// 10 µs copy submission with nothing else due meanwhile. With
	// Options.StarPULockSpin only.
	StarPULockClock bool
	// StarPUSyncStart starts a synchronous kernel (Task.SyncGPU) queued
	// behind another when its GPU's driver thread has handled that one's
	// end (pushed the tasks it released, run their callbacks), not as the
	// device frees: StarPU's CUDA driver runs it on its thread then
	// (_starpu_cuda_driver_run_once, execute_job_on_cuda after
	// finish_job_on_cuda). With Options.StarPUDriverLoop only.
	StarPUSyncStart bool
	// StarPUFetchTail makes a GPU driver take each header lock of a job's
	// data before it executes the job (_starpu_fetch_task_input_tail):
	// one held by another driver's copy holds the job back as a push is.
	// With Options.StarPUDriverLoop and Options.StarPULockSpin only.
	StarPUFetchTail bool
	// StarPUHitExec executes the job of a task whose every input was on
	// its GPU, with no request of written data under way, when its driver
	// has posted its fetches, before the loop's next pass: StarPU's fetch
	// runs the callback of such data at once
	// (_starpu_create_request_to_fetch_data), and the loop's next
	// iteration executes the job first thing. With
	// Options.StarPUDriverLoop only.
	StarPUHitExec bool
	// StarPUHopNotice posts the second hop of a copy between two GPUs
	// through RAM when the first hop's driver notices that hop's end:
	// in its next pass (2 µs later) if it was idle, when it has issued the
	// copies of the pass it is in otherwise (StarPU's progress checks its
	// pending requests after issuing new ones). With
	// Options.StarPUDriverLoop only.
	StarPUHopNotice bool
	// StarPUPrefetchLockAtEnd times a push's prefetch as StarPU's: the
	// push decides at its end, then prefetches its task's data in order,
	// each under its header lock (_starpu_fetch_data_on_node takes it),
	// so a lock a driver took that instant holds back that data's
	// prefetch and the rest, not the decision; without it a push waits
	// for any lock held on its data when it began. With
	// Options.StarPUDriverLoop only.
	StarPUPrefetchLockAtEnd bool
	// StarPUTrylockProgress times a GPU driver thread's acquisition of a
	// released task's data as StarPU does (data_concurrency.c): it tries
	// each data header lock, and while one is held it makes a progress
	// pass of its node (without allocating: a pass issues only the copies
	// whose buffer is there) and tries again, up to 10 times
	// (STARPU_SPIN_MAXTRY), before it waits for the lock: its copies of
	// other data may reach the network before those of the drivers
	// waiting for that lock. With Options.StarPUDriverLoop only. Off by default: it brings
	// the traced rows closer but the perturbed ones further
	// (docs/fidelity.md).
	StarPUTrylockProgress bool
	// NoDriverStall lets a GPU's data requests progress while its driver
	// thread waits on a synchronous kernel (Task.SyncGPU). By default, as
	// in StarPU, the requests that driver handles (copies into its GPU, and
	// out of it to RAM) neither start nor complete until the kernel ends.
	NoDriverStall bool
	// Explain, when set, receives the decision log: one JSON line per
	// scheduling decision (dm family) and per eviction. ExplainTask >= 0
	// restricts it to that task's decisions (-1: all).
	Explain     io.Writer
	ExplainTask int
	// SampleIntervalS > 0 records each worker's busy fraction per interval
	// (Result.Utilization).
	SampleIntervalS float64
	// Observer (optional) receives every event of the run (traces).
	Observer Observer
	// Check verifies the run's invariants and fails on a violation.
	Check bool
	// Deps, when set, are the graph's dependencies as graph.DeriveDeps
	// derived them, for callers that run one graph (or graphs that differ
	// in priorities alone) many times: New then does not derive them
	// again. The run only reads them.
	Deps *graph.Deps
	// Spare, when set, lends New the buffers of a finished simulation
	// (Simulator.Spare) to reuse where they are large enough: for callers
	// that run many simulations one after the other, as sweeps do.
	// Results do not depend on it.
	Spare *Spare
}

// DefaultOptions are StarPU's defaults, with the parity options on.
func DefaultOptions() Options {
	return Options{Sched: "dmda", NCPU: -1, NCUDA: -1, Durations: cost.Mean, StarPUTransferFactor: true, StarPUHiddenHoles: true, StarPUPrioClamp: true, StarPUPrefetchJoinLoss: true, StarPUJoinTakeover: true, StarPUPassPlaces: true, StarPUAllocOrder: true, StarPUFetchCostAtPost: true, StarPUOwnAtFetch: true, StarPUDriverLoop: true, StarPURunnerStart: true, StarPULockSpin: true, StarPULockClock: true, StarPUSyncStart: true, StarPUFetchTail: true, StarPUHitExec: true, StarPUHopNotice: true, StarPUPushRace: true, ExplainTask: -1}
}
