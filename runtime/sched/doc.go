// Package sched holds the schedulers: StarPU's policies as starsim runs
// them, behind one small interface and a registry.
//
// # Key concepts
//
//   - Scheduler: Init once with the run's View; Push a ready task and say
//     where it went (a Decision: the worker whose queue took it, and
//     whether the runtime should prefetch its inputs there); Pop a task
//     for a worker with room; PreExec and PostExec around each kernel. A
//     scheduler keeps its own queues and acts only through what Push
//     returns: the runtime carries the decision out.
//   - View: what a scheduler may read of the run — the clock, the
//     workers, a task's model entries (CanExecute, ExpectedLengthUS), where
//     its data is (NonReadyBytes) and what bringing it would cost
//     (ExpectedTransferUS), the run's seeded generator, the decision log.
//     A concrete struct, so its queries compile to direct calls.
//   - Task: a ready task as schedulers see it (ID, priority, buffers).
//   - The registry (registry.go): a scheduler's name, its factory and the
//     priority range it sets for its context (STARPU_MIN_PRIO..MAX_PRIO),
//     which applications read to choose their priorities. A new scheduler
//     is one file and one Register call.
//
// # The schedulers
//
//	eager, prio         central.go  one shared FIFO / priority list
//	random              random.go   a worker drawn by relative speed
//	ws                  ws.go       per-worker queues, work stealing
//	lws                 lws.go      StarPU's default: locality work stealing
//	dm, dmda, dmdap,    dmda.go     StarPU's deque model: each task to the
//	dmdar, dmdas,                   worker of least fitness (expected end,
//	dmdasd                          transfer penalty, energy); queues and
//	                                ready-first scans in dmqueue.go
//
// The dm fitness is fitness (dmda.go): a pure function of a candidate's
// terms, table-tested without a run.
package sched
