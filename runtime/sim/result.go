package sim

import (
	"fmt"
	"math"
	"sort"
	"sync"
)

// Result is what a run predicts. Times in seconds, sizes in bytes.
type Result struct {
	App       string         `json:"app"`
	Sched     string         `json:"sched"`
	NTasks    int            `json:"ntasks"`
	MakespanS float64        `json:"makespan_s"`
	GFlops    float64        `json:"gflops"`
	Workers   []WorkerResult `json:"workers"`
	Transfers []DirResult    `json:"transfers"`
	Memory    []MemoryResult `json:"memory"`
	// Allocations counts buffers obtained from devices (suballocator chunks
	// and large buffers); Evictions freed copies; WriteBacks evictions of
	// the only valid copy, written home first.
	Allocations int `json:"allocations"`
	Evictions   int `json:"evictions"`
	WriteBacks  int `json:"write_backs"`
	// SLR, Speedup and Efficiency as HetSim defines them, from the model
	// means: makespan / critical path (each task at its fastest arch);
	// fastest all-on-one-worker time / makespan; Speedup / number of workers.
	SLR        float64 `json:"slr"`
	Speedup    float64 `json:"speedup"`
	Efficiency float64 `json:"efficiency"`
	// EnergyJ is the workers' energy over the makespan from the
	// calibration's idle/load power (0 when some arch has none).
	EnergyJ float64 `json:"energy_j,omitempty"`
	// Utilization is each worker's busy fraction per interval (with
	// Options.SampleIntervalS).
	Utilization *Utilization `json:"utilization,omitempty"`
	// Uncalibrated lists (model, arch) pairs the run's tasks could not use.
	Uncalibrated []Uncalibrated `json:"uncalibrated"`
	Events       uint64         `json:"events"`
}

// WorkerResult is one worker's activity over the makespan.
type WorkerResult struct {
	Name     string         `json:"name"`
	Arch     string         `json:"arch"`
	NTasks   int            `json:"ntasks"`
	ByKernel map[string]int `json:"tasks_by_kernel"`
	BusyPct  float64        `json:"busy_pct"`
	// WaitPct is the time with tasks popped but none running: waiting for
	// their data.
	WaitPct float64 `json:"waiting_for_data_pct"`
	IdlePct float64 `json:"idle_pct"`
}

// DirResult is the traffic of one transfer direction.
type DirResult struct {
	Src       string  `json:"src"`
	Dst       string  `json:"dst"`
	Bytes     float64 `json:"bytes"`
	Transfers int     `json:"transfers"`
}

// MemoryResult summarizes one memory node.
type MemoryResult struct {
	Node          string `json:"node"`
	CapacityBytes int64  `json:"capacity_bytes"` // 0: unlimited
	// PeakBytes is the most device memory taken at once: whole 32 MiB
	// suballocator chunks plus direct buffers, as the capacity bounds it
	// (0 for RAM, whose copies are the application's).
	PeakBytes int64 `json:"peak_bytes"`
}

// Uncalibrated is a (kernel model, arch) pair without a usable model entry.
type Uncalibrated struct {
	Model string `json:"model"`
	Arch  string `json:"arch"`
}

func (s *Simulator) result() *Result {
	mk := s.lastEndS
	res := &Result{App: s.g.Name, Sched: s.opts.Sched, NTasks: len(s.tasks), MakespanS: mk, Events: s.eng.EventsRun(),
		Allocations: s.mem.Allocations, Evictions: s.mem.Evictions, WriteBacks: s.writeBacks}
	if mk > 0 {
		res.GFlops = s.g.TotalFlops / mk / 1e9
	}
	for _, w := range s.workers {
		byKernel := map[string]int{}
		for k, n := range w.perKernel {
			if n > 0 {
				byKernel[s.kernelNames[k]] = n
			}
		}
		wr := WorkerResult{Name: w.Name, Arch: w.Arch, NTasks: w.ntasks, ByKernel: byKernel}
		if mk > 0 {
			wr.BusyPct = 100 * w.busyS / mk
			wr.WaitPct = 100 * w.waitS / mk
			wr.IdlePct = max(0, 100-wr.BusyPct-wr.WaitPct)
		}
		res.Workers = append(res.Workers, wr)
	}
	for i := range s.nodes {
		for j := range s.nodes {
			if d := s.dir(i, j); d != nil && d.count > 0 {
				res.Transfers = append(res.Transfers, DirResult{Src: s.nodes[i].Name, Dst: s.nodes[j].Name, Bytes: d.bytes, Transfers: d.count})
			}
		}
	}
	for _, n := range s.nodes {
		res.Memory = append(res.Memory, MemoryResult{Node: n.Name, CapacityBytes: n.Capacity, PeakBytes: n.Peak()})
	}
	res.SLR, res.Speedup, res.Efficiency = s.hetsimMetrics(mk)
	res.EnergyJ = s.energyJ(mk)
	if s.opts.SampleIntervalS > 0 && mk > 0 {
		res.Utilization = s.utilization(mk)
	}
	for k := range s.uncal {
		res.Uncalibrated = append(res.Uncalibrated, Uncalibrated{Model: k[0], Arch: k[1]})
	}
	sort.Slice(res.Uncalibrated, func(i, j int) bool {
		a, b := res.Uncalibrated[i], res.Uncalibrated[j]
		if a.Model != b.Model {
			return a.Model < b.Model
		}
		return a.Arch < b.Arch
	})
	return res
}

// hetsimMetrics computes SLR, speedup and efficiency (HetSim §4.3) with the
// kernels' model means: the critical path weighs each task at its fastest
// worker; the sequential time is the best single worker's total.
func (s *Simulator) hetsimMetrics(makespanS float64) (slr, speedup, eff float64) {
	if makespanS <= 0 {
		return 0, 0, 0
	}
	p := s.hetsim()
	slr = makespanS / (p.cpUS * 1e-6)
	if !math.IsInf(p.seqUS, 1) {
		speedup = p.seqUS * 1e-6 / makespanS
		eff = speedup / float64(len(s.workers))
	}
	return slr, speedup, eff
}

// hetsimPaths is what hetsimMetrics needs of the graph (µs): the critical
// path, and the best single worker's total (+Inf: none runs every task).
type hetsimPaths struct{ cpUS, seqUS float64 }

// startHetsimPaths computes the hetsimPaths on another core while the
// simulation runs (they depend on the graph and the models alone, which
// the run does not change) and sets s.hetsim to wait for them.
func (s *Simulator) startHetsimPaths() {
	c := make(chan hetsimPaths, 1)
	go func() { c <- s.computeHetsimPaths() }()
	s.hetsim = sync.OnceValue(func() hetsimPaths { return <-c })
}

func (s *Simulator) computeHetsimPaths() hetsimPaths {
	// Tasks are in submission order, a topological order of the DAG.
	longest := make([]float64, len(s.tasks))
	perWorker := make([]float64, len(s.workers))
	runnable := make([]bool, len(s.workers))
	for i := range runnable {
		runnable[i] = true
	}
	cp := 0.0
	// Tasks sharing model entries (sched.Task.Entries), mostly in runs,
	// share their best and per-worker means: means and best are those of
	// the entries row, a worker that cannot run them adding 0 to a total
	// that is not used.
	var row *workerStats
	means := make([]float64, len(s.workers))
	best := 0.0
	for i := range s.tasks {
		t := &s.tasks[i]
		if r := t.Entries(); r != row {
			row, best = r, math.Inf(1)
			for wi := range runnable {
				k := t.Stats(wi)
				if k == nil {
					runnable[wi], means[wi] = false, 0
					continue
				}
				best = min(best, k.MeanUS)
				means[wi] = k.MeanUS
			}
		}
		for wi, us := range means {
			perWorker[wi] += us
		}
		// longest[i] already holds the max over t's dependencies: each
		// pushed its own to its successors (dense indices, where reading
		// each dependency's id would miss the cache).
		longest[i] += best
		cp = max(cp, longest[i])
		for _, q := range s.succ[s.succOff[i]:s.succOff[i+1]] {
			longest[q] = max(longest[q], longest[i])
		}
	}
	seq := math.Inf(1)
	for wi, tot := range perWorker {
		if runnable[wi] {
			seq = min(seq, tot)
		}
	}
	return hetsimPaths{cp, seq}
}

// Utilization is a time series of busy fractions: Busy[w][i] is worker w's
// busy share of [i·IntervalS, (i+1)·IntervalS).
type Utilization struct {
	IntervalS float64     `json:"interval_s"`
	Workers   []string    `json:"workers"`
	Busy      [][]float64 `json:"busy"`
}

// MaxSamples bounds a run's utilization series (workers × intervals), so
// that a tiny sample interval fails before the series is allocated
// rather than exhausting the memory.
const MaxSamples = 1 << 23

// checkSamples fails when the utilization series would exceed MaxSamples.
func (s *Simulator) checkSamples() error {
	iv, mk := s.opts.SampleIntervalS, s.lastEndS
	if !(iv > 0) || !(mk > 0) {
		return nil
	}
	if n := math.Ceil(mk/iv) * float64(len(s.workers)); n > MaxSamples {
		return fmt.Errorf("sample interval %v s: %.3g samples over the %v s makespan and %d workers, at most %d (2^23): use an interval of at least %.3g s",
			iv, n, mk, len(s.workers), MaxSamples, mk*float64(len(s.workers))/float64(MaxSamples-len(s.workers))*1.001)
	}
	return nil
}

func (s *Simulator) utilization(mk float64) *Utilization {
	iv := s.opts.SampleIntervalS
	nb := int(math.Ceil(mk / iv))
	u := &Utilization{IntervalS: iv}
	for _, w := range s.workers {
		u.Workers = append(u.Workers, w.Name)
		busy := make([]float64, nb)
		for _, k := range w.intervals {
			for b := int(k[0] / iv); b < nb && float64(b)*iv < k[1]; b++ {
				lo, hi := max(k[0], float64(b)*iv), min(k[1], float64(b+1)*iv)
				if hi > lo {
					busy[b] += (hi - lo) / iv
				}
			}
		}
		u.Busy = append(u.Busy, busy)
	}
	return u
}

// energyJ integrates each worker's load power while busy and idle power
// otherwise, over the makespan.
func (s *Simulator) energyJ(mk float64) float64 {
	if len(s.m.Power) == 0 {
		return 0
	}
	total := 0.0
	for _, w := range s.workers {
		p, ok := s.m.Power[w.Arch]
		if !ok {
			return 0
		}
		total += p.LoadW*w.busyS + p.IdleW*(mk-w.busyS)
	}
	return total
}
