// Package sim is the runtime's orchestrator: it runs one graph.Graph on one
// machine.Machine in simulated time, as StarPU over SimGrid would, and
// returns the Result. The policies are elsewhere: what a scheduler
// decides (package sched), which copy a full GPU gives up and what the
// copies' states become (package memory), what a copy or a kernel costs
// (package cost); the engine and the fluid network are package emulator.
// sim builds the run, derives the dependencies, drives each task's and
// each copy's life cycle and the GPU drivers' progress passes, and reports
// to an Observer.
//
// # Files
//
//	sim.go       Simulator, New, Run
//	build.go     memory nodes, workers, network routes, task states, model entries
//	task.go      a task's life cycle and the workers' threads
//	fetch.go     getting data where a task needs it: fetch, allocation, reclaim,
//	             write-back, wont_use, tidy, device frees
//	transfer.go  copies: requests, directions, the drivers' progress passes,
//	             flows on the network, completion
//	threadq.go   with the driver loop: each thread's queue of pushes and callbacks,
//	             and the header-lock waits on the simulated clock's moves
//	headerlock.go  the data header locks' holds and when a waiting thread takes one
//	check.go     Options.Check's invariants; result.go the Result; observer.go,
//	             explain.go, options.go
//	prefault_*.go, prefetch_*    memory hints for the task slabs and the
//	             hot reads (no effect on results; prefetch is PREFETCHT0 on amd64)
//
// # The life of a task
//
// Every step is an engine event; the name is the function that runs it.
//
//	submit        the application thread submits task i (TaskSubmitS each, in
//	              submission order); a task whose dependencies are done is
//	              released
//	release       the releasing thread (the application's, or the worker whose
//	              kernel ended the last dependency) pays TaskPushS and posts
//	push          the scheduler's Push: its Decision may ask for a prefetch of
//	              the task's inputs on the chosen worker's node; idle workers wake
//	workerPop     a worker with room pops a task (after its node's pending
//	              progress pass, for a GPU driver) and ...
//	fetchInputs   ... fetches every buffer on its node (fetch.go); each arrival
//	              counts down; the last one, after FetchInputPerBufS per buffer,
//	inputsReady   makes it ready; a GPU driver then pays DeviceTaskQueueS
//	deviceQueued  and submits it to its device (submitKernel), where it waits
//	startKernel   for the device; the scheduler's PreExec; the kernel runs for
//	              the model's duration (cost.SampleUS)
//	endKernel     the device is free; the driver completes the task
//	completeKernel (unless blocked in a reclaim): writes make the node's copy
//	              the owner (memory.Write), PostExec, successors released,
//	              wont_use hints armed by it applied, the next kernel started,
//	              the worker pops again, the node tidied.
//
// # The life of a copy
//
//	fetch         a valid copy on the node is a hit; a copy under way is joined
//	              (and upgraded to the more urgent level); otherwise a request
//	              from the best source (cost.Model.BestSource), or through RAM
//	enqueue       joins its direction's queue (level, priority, age) and wakes
//	              the driver that handles the direction (kick)
//	progress      the driver's pass, progressDelayS later: per peer group,
//	              fetches, then prefetches, then idle requests, within the
//	              per-level pending limits (issue); each takes its buffer on the
//	              destination (reserve: memory.Allocate, possibly a reclaim)
//	start         the driver pays the allocation (under the lock all GPUs share)
//	              and TransferQueueS, then
//	send          the copy waits for those issued before it on its direction and
//	              on serialized ones, then
//	flow          its bytes (cost.Model.Payload) go on the network's route
//	              (the first copy between two nodes 1 µs later: StarPU's
//	              simulator starts that pair's transfer actor then,
//	              Options.StarPURunnerStart); the fluid network shares the
//	              links and says when it ends
//	sent          the flow ended; copies waiting for it may flow; the request
//	              completes when its driver notices (at once, or when the driver
//	              returns from a synchronous kernel)
//	finish        the copy's states (memory.CopyDone or WriteBackDone), its
//	              waiters run, the direction issues more, allocations waiting
//	              for memory are retried.
//
// A full GPU's allocation either reuses the buffer of a victim the memory
// package chooses, or runs StarPU's generic reclaim on the driver thread
// (syncReclaimStep): victims in LRU order, dropped or written back home
// one after the other, while the GPU's worker is blocked.
package sim
