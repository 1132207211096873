package sim_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/starsim/starsim/calibrate"
	"github.com/starsim/starsim/models"
	"github.com/starsim/starsim/runtime/cost"
	"github.com/starsim/starsim/runtime/graph"
	"github.com/starsim/starsim/runtime/sched"
	"github.com/starsim/starsim/runtime/sim"
)

func run(t testing.TB, cal *calibrate.File, app string, n int, opts sim.Options) *sim.Result {
	t.Helper()
	g, err := models.New(app, models.Options{N: n, Block: 960, Prio: prioOf(opts.Sched)})
	require.NoError(t, err)
	s, err := sim.New(cal.RuntimeMachine(), g, opts)
	require.NoError(t, err)
	res, err := s.Run()
	require.NoError(t, err)
	return res
}

func opts(sched string) sim.Options {
	o := sim.DefaultOptions()
	o.Sched, o.Check = sched, true
	return o
}

// TestEverySchedulerChecked runs Cholesky and LU under every scheduler with
// the invariant checks on (dependencies, one kernel at a time per worker,
// memory within capacity, inputs valid at kernel start): every task runs
// once, on a worker whose arch is calibrated for it.
func TestEverySchedulerChecked(t *testing.T) {
	cal := calibrate.Default()
	for _, sched := range sched.Names() {
		for _, app := range []string{"cholesky", "lu"} {
			t.Run(sched+"/"+app, func(t *testing.T) {
				res := run(t, cal, app, 960*6, opts(sched))
				total := 0
				for _, w := range res.Workers {
					total += w.NTasks
				}
				assert.Equal(t, res.NTasks, total)
				assert.Greater(t, res.GFlops, 0.0)
			})
		}
	}
}

// TestDeterministic: same inputs and seed give the same result, byte for
// byte; another seed with random durations gives another one.
func TestDeterministic(t *testing.T) {
	cal := calibrate.Default()
	o := opts("dmdas")
	o.Durations = cost.Normal
	o.Seed = 7
	enc := func(r *sim.Result) string { b, _ := json.Marshal(r); return string(b) }
	a := enc(run(t, cal, "cholesky", 960*8, o))
	b := enc(run(t, cal, "cholesky", 960*8, o))
	assert.Equal(t, a, b)
	o.Seed = 8
	assert.NotEqual(t, a, enc(run(t, cal, "cholesky", 960*8, o)))
	o = opts("random")
	o.Seed = 3
	assert.Equal(t, enc(run(t, cal, "lu", 960*6, o)), enc(run(t, cal, "lu", 960*6, o)))
}

// TestQueueCounterSameResult: the dm schedulers count their queued tasks
// (sched.QueueCounter), so the runtime tells pops that find nothing
// without calling Pop; hiding the counts makes it call Pop every time, and
// must give the same result, byte for byte (on the embedded machine's 40
// cores, where most pops find nothing, and with random durations), with
// the driver loop's models too.
func TestQueueCounterSameResult(t *testing.T) {
	type hidden struct{ sched.Scheduler } // no QueuedCounts
	cal := calibrate.Default()
	enc := func(r *sim.Result) string { b, _ := json.Marshal(r); return string(b) }
	for _, c := range []struct {
		name string
		loop bool
	}{{"dmda", false}, {"dmdar", false}, {"dmdas", false}, {"dmda", true}, {"dmdas", true}} {
		name := c.name
		o := opts(name)
		o.Durations, o.Seed = cost.Normal, 5
		o.StarPUDriverLoop = c.loop
		counted := run(t, cal, "cholesky", 960*20, o)
		o.NewScheduler = func() sched.Scheduler {
			sc, ok := sched.New(name)
			require.True(t, ok)
			_, counts := sc.(sched.QueueCounter)
			require.True(t, counts, name)
			return hidden{sc}
		}
		assert.Equal(t, enc(counted), enc(run(t, cal, "cholesky", 960*20, o)), name)
	}
}

// TestSpareSameResult: a simulation that reuses the buffers of a finished
// one (Options.Spare), larger or smaller, gives the result of one that
// allocates its own, byte for byte.
func TestSpareSameResult(t *testing.T) {
	cal := calibrate.Default()
	enc := func(r *sim.Result) string { b, _ := json.Marshal(r); return string(b) }
	o := opts("dmdas")
	newSim := func(app string, n int, spare *sim.Spare) *sim.Simulator {
		g, err := models.New(app, models.Options{N: n, Block: 960, Prio: prioOf(o.Sched)})
		require.NoError(t, err)
		o := o
		o.Spare = spare
		s, err := sim.New(cal.RuntimeMachine(), g, o)
		require.NoError(t, err)
		return s
	}
	fresh := enc(run(t, cal, "cholesky", 960*8, o))
	var spare *sim.Spare
	for _, n := range []int{960 * 4, 960 * 12, 960 * 8} { // smaller, larger
		s := newSim("lu", n, nil)
		_, err := s.Run()
		require.NoError(t, err)
		spare = s.Spare()
		s = newSim("cholesky", 960*8, spare)
		r, err := s.Run()
		require.NoError(t, err)
		assert.Equal(t, fresh, enc(r), "after lu N=%d", n)
	}
}

// TestMemoryPressure shrinks the GPUs to 40 tiles so data must be evicted;
// the checks must still pass and the peak stay within the limit, while the
// full-size GPUs (29 GiB each) never evict.
func TestMemoryPressure(t *testing.T) {
	cal := calibrate.Default()
	for _, sched := range []string{"dmda", "dmdar", "dmdas", "eager"} {
		t.Run(sched, func(t *testing.T) {
			o := opts(sched)
			big := run(t, cal, "cholesky", 960*16, o)
			o.GPUMemLimitBytes = 40 * 960 * 960 * 4
			small := run(t, cal, "cholesky", 960*16, o)
			assert.Zero(t, big.Evictions)
			assert.Greater(t, small.Evictions, 0)
			for _, m := range small.Memory[1:] {
				assert.LessOrEqual(t, m.PeakBytes, o.GPUMemLimitBytes)
			}
		})
	}
}

// TestGPUMemoryTooSmall: a limit below one task's data is refused before
// the run, naming the GPU, task and bytes; a limit of exactly one task's
// data runs to the end, although a GPU holds two tasks at once (one
// running, one fetching), for both applications and the dmda family (this
// deadlocked before copies retried stalled allocations on completion).
// Float tiles (3.7 MB) come out of 32 MiB suballocator chunks, nine to a
// chunk, so a GPU needs a whole chunk; double tiles (7.4 MB) are direct
// buffers, so one GEMM's data is three tiles.
func TestGPUMemoryTooSmall(t *testing.T) {
	const dtile = 960 * 960 * 8
	const chunk = 32 << 20
	m := calibrate.Default().RuntimeMachine()
	for _, tc := range []struct {
		name       string
		app, sched string
		prec       models.Precision
		limitBytes int64
		newErr     string
	}{
		{"below one chunk", "cholesky", "dmdas", models.Single, chunk - 1, "memory of CUDA0 (33554431 bytes) cannot hold the data of task 0 (POTRF), 33554432 bytes at once"},
		{"one chunk", "cholesky", "dmdas", models.Single, chunk, ""},
		{"one chunk, lu dmda", "lu", "dmda", models.Single, chunk, ""},
		{"below one double tile", "cholesky", "dmdas", models.Double, 1024, "memory of CUDA0 (1024 bytes) cannot hold the data of task 0 (POTRF), 7372800 bytes at once"},
		{"below one GEMM", "cholesky", "dmdas", models.Double, 3*dtile - 1, "cannot hold the data of task 11 (GEMM), 22118400 bytes at once"},
		{"one GEMM exactly, cholesky dmda", "cholesky", "dmda", models.Double, 3 * dtile, ""},
		{"one GEMM exactly, cholesky dmdar", "cholesky", "dmdar", models.Double, 3 * dtile, ""},
		{"one GEMM exactly, cholesky dmdas", "cholesky", "dmdas", models.Double, 3 * dtile, ""},
		{"one GEMM exactly, lu dmda", "lu", "dmda", models.Double, 3 * dtile, ""},
		{"one GEMM exactly, lu dmdas", "lu", "dmdas", models.Double, 3 * dtile, ""},
		{"four tiles", "cholesky", "dmdas", models.Double, 4 * dtile, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := models.New(tc.app, models.Options{N: 9600, Block: 960, Prio: prioOf(tc.sched), Precision: tc.prec})
			require.NoError(t, err)
			o := opts(tc.sched)
			o.GPUMemLimitBytes = tc.limitBytes
			s, err := sim.New(m, g, o)
			if tc.newErr != "" {
				require.ErrorContains(t, err, tc.newErr)
				return
			}
			require.NoError(t, err)
			res, err := s.Run()
			require.NoError(t, err)
			for _, mem := range res.Memory[1:] {
				assert.LessOrEqual(t, mem.PeakBytes, tc.limitBytes, mem.Node)
			}
		})
	}
}

// TestWorkerCounts: --ncpu/--ncuda select the workers.
func TestWorkerCounts(t *testing.T) {
	cal := calibrate.Default()
	o := opts("dmda")
	o.NCPU, o.NCUDA = 2, 1
	res := run(t, cal, "cholesky", 960*4, o)
	require.Len(t, res.Workers, 3)
	assert.Equal(t, "CPU0", res.Workers[0].Name)
	assert.Equal(t, "CUDA0", res.Workers[2].Name)
	o.NCUDA = 9
	g, _ := models.New("cholesky", models.Options{N: 960, Block: 960})
	_, err := sim.New(cal.RuntimeMachine(), g, o)
	assert.Error(t, err)
}

// TestAttilaAgainstStarPUSimGrid compares with what StarPU over SimGrid
// predicts for attila, Cholesky GPU-only (../shared/reference): every row
// within 3 % but those named in attilaKnownPct (within their own bound;
// docs/fidelity.md lists them), and the mean |error| below 1.2 % (go test
// -v prints each row). (Earlier states had StarPU's transfer prediction and request
// issuing wrong, checked against StarPU 1.4.10 over
// SimGrid, see TestFirstStepCopiesMatchStarPU; then its GPU suballocator
// and the releasing thread's pushes.)
// attilaKnownPct bounds the rows known to be further off (%), as
// cmd/starsim's peerGridKnown does for the whole grid.
// None now: dmdar N=28800 (+2.1 %; the peer itself spans 1303 to 1350
// GFlop/s there under bandwidth perturbations of 1e-4, docs/fidelity.md)
// was the last.
var attilaKnownPct = map[string]float64{}

func TestAttilaAgainstStarPUSimGrid(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	f, err := os.Open("../../../shared/reference/ssg-attila-cholesky.tsv")
	if err != nil {
		t.Skip("../shared/reference not found")
	}
	defer f.Close()
	cal, _, err := calibrate.Import("../../../shared/calibrations/starpu-sampling", "attila")
	require.NoError(t, err)
	sc := bufio.NewScanner(f)
	var sumAbs float64
	var rows, within3 int
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || strings.HasPrefix(line, "host") {
			continue
		}
		col := strings.Split(line, "\t")
		n, _ := strconv.Atoi(col[5])
		ref, _ := strconv.ParseFloat(col[8], 64)
		o := opts(col[2])
		o.NCPU, o.NCUDA = 0, 3
		res := run(t, cal, "cholesky", n, o)
		e := (res.GFlops - ref) / ref
		t.Logf("%-6s N=%-6d starsim %7.1f  StarPU-SimGrid %7.1f  %+6.1f%%", col[2], n, res.GFlops, ref, 100*e)
		bound := 0.03
		if b, ok := attilaKnownPct[fmt.Sprintf("%s N=%d", col[2], n)]; ok {
			bound = b / 100
		}
		assert.Less(t, math.Abs(e), bound, fmt.Sprintf("%s N=%d", col[2], n))
		if math.Abs(e) < bound {
			within3++
		}
		sumAbs += math.Abs(e)
		rows++
	}
	require.Equal(t, 24, rows)
	t.Logf("%d of %d rows within their bound, mean |error| %.2f %%", within3, rows, 100*sumAbs/float64(rows))
	assert.Equal(t, rows, within3)
	assert.Less(t, sumAbs/float64(rows), 0.012)
}

// TestNativeCPUTrace predicts the recorded native run of
// ../shared/reference/native-cpu-trace (Cholesky N=7680, 2 CPU workers,
// dmda; its own calibration): the native makespan, first start to last
// end, was 706.3 ms. starsim's window starts at submission, as the
// example's timer does.
func TestNativeCPUTrace(t *testing.T) {
	dir := "../../../shared/reference/native-cpu-trace/sampling"
	if _, err := os.Stat(dir); err != nil {
		t.Skip("../shared/reference not found")
	}
	cal, _, err := calibrate.Import(dir, "nativecpu")
	require.NoError(t, err)
	o := opts("dmda")
	o.NCPU = 2
	res := run(t, cal, "cholesky", 7680, o)
	t.Logf("starsim %.1f ms, native 706.3 ms", res.MakespanS*1e3)
	assert.InEpsilon(t, 0.7063, res.MakespanS, 0.05)
}

// taskTimes records each finished task's kernel start and end (seconds).
type taskTimes struct {
	sim.NopObserver
	start, end map[int]float64
}

func (o *taskTimes) TaskDone(t *sim.TaskState) {
	o.start[t.ID()], o.end[t.ID()] = t.StartS(), t.EndS()
}

// TestSyncGPUKernelBlocksDriver: one GPU, two independent GEMMs whose data
// start in RAM. With asynchronous kernels the driver fetches the second
// task's inputs while the first runs, so the second starts when the first
// ends; with a synchronous first kernel (Task.SyncGPU, like POTRF) the
// driver pops nothing until it ends, so the second start also waits for
// its inputs' copies.
func TestSyncGPUKernelBlocksDriver(t *testing.T) {
	m := calibrate.Default().RuntimeMachine()
	build := func(sync bool) *graph.Graph {
		// Task i updates tile 3i from tiles 3i+1 and 3i+2: no dependency.
		g := synthetic(0, 6)
		base := synthetic(1, 3).Tasks[0]
		for i := 0; i < 2; i++ {
			tk := base
			tk.ID = i
			tk.Buffers = []graph.Access{{Handle: 3*i + 1, Mode: graph.R}, {Handle: 3*i + 2, Mode: graph.R}, {Handle: 3 * i, Mode: graph.RW}}
			g.Tasks = append(g.Tasks, tk)
			g.TotalFlops += tk.Flops
		}
		g.Tasks[0].SyncGPU = sync
		g.Tasks[0].FixedUS = 10e3 // long enough to hide the second fetch
		return g
	}
	gap := map[bool]float64{}
	for _, sync := range []bool{false, true} {
		o := opts("eager")
		o.NCPU, o.NCUDA = 0, 1
		obs := &taskTimes{start: map[int]float64{}, end: map[int]float64{}}
		o.Observer = obs
		s, err := sim.New(m, build(sync), o)
		require.NoError(t, err)
		_, err = s.Run()
		require.NoError(t, err)
		require.Len(t, obs.end, 2)
		gap[sync] = obs.start[1] - obs.end[0]
	}
	assert.InDelta(t, 0, gap[false], 1e-9, "async: the second kernel follows the first at once")
	// Three 3.7 MB tiles cross PCIe after the first kernel: well over 0.5 ms.
	assert.Greater(t, gap[true], 0.5e-3, "sync: the second task's tiles are copied after the first ends")
}

// TestSyncGPUKernelStallsDriverCopies: a GPU driver thread handles its
// node's copies (into the GPU, and out of it to RAM). While it waits on a
// synchronous kernel, a CPU task's input held only on that GPU is not
// copied: the CPU task starts after the kernel, unless NoDriverStall. The
// synchronous kernel starts when the driver has pushed what the kernel
// before released.
func TestSyncGPUKernelStallsDriverCopies(t *testing.T) {
	m := calibrate.Default().RuntimeMachine()
	g := synthetic(0, 3)
	base := synthetic(1, 3).Tasks[0]
	// Workers: CPU0 (0), CUDA0 (1). Task 0 writes tile 0 on the GPU; task
	// 1, synchronous, follows it there; task 2 reads tile 0 on the CPU.
	for i, tc := range []struct {
		worker int
		bufs   []graph.Access
		us     float64
	}{
		{1, []graph.Access{{Handle: 0, Mode: graph.RW}}, 2e3},
		{1, []graph.Access{{Handle: 1, Mode: graph.RW}}, 10e3},
		{0, []graph.Access{{Handle: 0, Mode: graph.R}, {Handle: 2, Mode: graph.RW}}, 100},
	} {
		tk := base
		tk.ID, tk.Buffers, tk.FixedUS, tk.Pinned, tk.Worker = i, tc.bufs, tc.us, true, tc.worker
		g.Tasks = append(g.Tasks, tk)
	}
	g.Tasks[1].SyncGPU = true
	for _, stall := range []bool{true, false} {
		o := opts("eager")
		o.NCPU, o.NCUDA, o.NoDriverStall = 1, 1, !stall
		obs := &taskTimes{start: map[int]float64{}, end: map[int]float64{}}
		o.Observer = obs
		s, err := sim.New(m, g, o)
		require.NoError(t, err)
		_, err = s.Run()
		require.NoError(t, err)
		require.Len(t, obs.end, 3)
		// (once the driver has pushed task 2, which the first released:
		// Options.StarPUSyncStart)
		require.InDelta(t, obs.end[0]+m.Costs.TaskPushS, obs.start[1], 1e-9, "the sync kernel follows the first on the driver thread")
		if stall {
			assert.GreaterOrEqual(t, obs.start[2], obs.end[1], "the copy out of the GPU waits for the sync kernel")
		} else {
			assert.Less(t, obs.start[2], obs.end[1]-5e-3, "without the stall the copy overlaps the sync kernel")
		}
	}
}

// TestBadGraph: a graph whose dependencies cannot be honoured is rejected by
// New with an error naming the task, not discovered (or panicking) mid-run.
func TestBadGraph(t *testing.T) {
	m := calibrate.Default().RuntimeMachine()
	for _, tc := range []struct {
		name string
		edit func(g *graph.Graph)
		want string
	}{
		{"forward dependency", func(g *graph.Graph) { g.Tasks[0].Deps = []int{1} }, "task 0 (GEMM) depends on task 1, not submitted before it"},
		{"negative dependency", func(g *graph.Graph) { g.Tasks[1].Deps = []int{-1} }, "task 1 (GEMM) depends on task -1"},
		{"unknown wont_use handle", func(g *graph.Graph) { g.Tasks[1].WontUse = []int{99} }, "task 1 (GEMM): wont_use of unknown handle 99"},
		{"unknown buffer handle", func(g *graph.Graph) { g.Tasks[1].Buffers[0].Handle = 99 }, "task 1 (GEMM): unknown handle 99"},
		{"priority beyond 32 bits", func(g *graph.Graph) { g.Tasks[1].Priority = math.MaxInt32 + 1 }, "task 1 (GEMM): priority 2147483648 is out of range"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := synthetic(2, 6)
			tc.edit(g)
			_, err := sim.New(m, g, opts("dmda"))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// TestDeviceFreeCost: with double tiles (direct buffers) on a GPU that holds
// eight of them, the synchronous reclaim frees buffers for real, each
// paying the calibration's device free cost (and a new cudaMalloc when
// reallocated): a costlier free lengthens the run, while a run that fits
// in memory frees nothing and is unchanged.
func TestDeviceFreeCost(t *testing.T) {
	const dtile = 960 * 960 * 8
	for _, tc := range []struct {
		name       string
		limitBytes int64
		slower     bool
	}{
		{"full GPU", 8 * dtile, true},
		{"room to spare", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			makespan := map[float64]float64{}
			for _, freeS := range []float64{0, 10e-3} {
				cal := calibrate.Default()
				cal.Costs.DeviceFreeS = freeS
				g, err := models.New("cholesky", models.Options{N: 9600, Block: 960, Prio: graph.UnboundedPrio, Precision: models.Double})
				require.NoError(t, err)
				o := opts("dmdas")
				o.NCPU, o.NCUDA = 0, 1
				o.GPUMemLimitBytes = tc.limitBytes
				s, err := sim.New(cal.RuntimeMachine(), g, o)
				require.NoError(t, err)
				res, err := s.Run()
				require.NoError(t, err)
				makespan[freeS] = res.MakespanS
				if tc.slower {
					assert.Greater(t, res.Allocations, 55, "tiles reallocated after frees")
				}
			}
			if tc.slower {
				assert.Greater(t, makespan[10e-3], makespan[0]+10e-3)
			} else {
				assert.Equal(t, makespan[0], makespan[10e-3])
			}
		})
	}
}

// prioOf is the priority range of a registered scheduler.
func prioOf(name string) graph.PrioRange {
	p, ok := sched.PriorityRange(name)
	if !ok {
		panic("unknown scheduler " + name)
	}
	return p
}
