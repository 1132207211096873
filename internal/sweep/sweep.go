// Package sweep runs many predictions — the cartesian product of machines,
// applications, schedulers, block sizes and matrix sizes — in parallel, with
// results that do not depend on the parallelism, and reads, writes, shards
// and merges their CSV.
package sweep

import (
	"fmt"
	"sort"
	"sync"

	"github.com/starsim/starsim/calibrate"
	"github.com/starsim/starsim/models"
	"github.com/starsim/starsim/models/generation"
	"github.com/starsim/starsim/runtime/graph"
	"github.com/starsim/starsim/runtime/machine"
	"github.com/starsim/starsim/runtime/sched"
	"github.com/starsim/starsim/runtime/sim"
)

// Machine is one calibration to sweep, after any what-if transform; Label
// names it in the output ("attila", "attila+gpus4").
type Machine struct {
	Label string
	File  *calibrate.File
	// Source says where the machine came from (a StarPU directory and
	// host, a calibration file, the built-in example), for the rows.
	Source string
	// Generation is the StarPU generation asked for (generation.Auto:
	// detected per application from the calibration's models).
	Generation generation.Gen
	// GPUMemLimitBytes, when > 0, replaces the plan's GPU memory limit on
	// this machine (a --gpu-mem what-if); GPUMemLimitByDevice, when set,
	// the plan's per-GPU limits.
	GPUMemLimitBytes    int64
	GPUMemLimitByDevice map[string]int64
	// PriceUnits is the machine's price (0: unknown).
	PriceUnits float64
	// Base names the calibration the machine derives from and WhatIfs
	// the what-if transforms applied to it, in order (none: the
	// calibration itself); figures read them.
	Base    string
	WhatIfs []WhatIf
}

// WhatIf is one what-if transform of a machine: its Kind (the flag:
// "gpus", "pci-bw-scale", "gpu-mem", "gpu-from") and value (Value; Text
// for gpu-from, the other calibration's name).
type WhatIf struct {
	Kind  string
	Value float64
	Text  string
}

// Plan is what to sweep. Options is the template of every run (its Sched is
// overridden per job).
type Plan struct {
	Machines []Machine
	Apps     []string
	Scheds   []string
	Blocks   []int
	Ns       []int
	Double   bool
	// InnerBlock is QR's inner block size (0: Chameleon's default).
	InnerBlock int
	// SYRKPrioRelease gives Cholesky's SYRK tasks StarPU 1.4 releases'
	// priority (models.Options.SYRKPrioRelease).
	SYRKPrioRelease bool
	Options         sim.Options
	// DAGs holds the task graphs read from files: an App that names one
	// runs it (once per machine and scheduler: it has no block size nor
	// N). The runs only read them.
	DAGs map[string]*graph.Graph
	// NewSchedulers makes the schedulers of Scheds the registry does not
	// hold (external agents), by name. They set no priority range: StarPU's
	// default for such a policy, 0..0.
	NewSchedulers map[string]func() sched.Scheduler
}

// Job is one run of a plan. Index is its place in the plan's fixed order:
// machine, app, scheduler, block, then N.
type Job struct {
	Index   int
	Machine int
	App     string
	Sched   string
	Block   int
	N       int
}

// Jobs lists the plan's runs in order.
func (p *Plan) Jobs() []Job {
	var jobs []Job
	for m := range p.Machines {
		for _, app := range p.Apps {
			if p.DAGs[app] != nil {
				for _, s := range p.Scheds {
					jobs = append(jobs, Job{Index: len(jobs), Machine: m, App: app, Sched: s})
				}
				continue
			}
			for _, s := range p.Scheds {
				for _, b := range p.Blocks {
					for _, n := range p.Ns {
						jobs = append(jobs, Job{Index: len(jobs), Machine: m, App: app, Sched: s, Block: b, N: n})
					}
				}
			}
		}
	}
	return jobs
}

// Shard returns the jobs of slice i (1-based) of n: those whose index is
// i-1 modulo n, so every slice gets a fair mix of small and large runs.
func Shard(jobs []Job, i, n int) ([]Job, error) {
	if n < 1 || i < 1 || i > n {
		return nil, fmt.Errorf("shard %d/%d: want 1 <= i <= n", i, n)
	}
	var out []Job
	for _, j := range jobs {
		if j.Index%n == i-1 {
			out = append(out, j)
		}
	}
	return out, nil
}

// Row is one run's result (seconds, GFlop/s).
type Row struct {
	Index, Jobs int
	Machine     string
	// MachineSource is the machine's Source; Generation the StarPU
	// generation whose graph and model names the run used ("1.3", "1.4").
	MachineSource, Generation string
	App, Sched                string
	N, Block                  int
	NCPU, NCUDA               int // as asked: -1 is StarPU's default
	NTasks                    int
	GFlops, MakespanS         float64
	SLR, Speedup, Eff         float64
	EnergyJ                   float64 // 0 when the calibration has no power figures
	BusyPct                   float64 // mean worker utilization
	PriceUnits                float64
	// Utilization is the busy-fraction time series (Options.SampleIntervalS
	// > 0); JSON output only.
	Utilization *sim.Utilization
}

// GFlopsPerPrice is GFlop/s per unit of money (0 without a price).
func (r Row) GFlopsPerPrice() float64 {
	if r.PriceUnits <= 0 {
		return 0
	}
	return r.GFlops / r.PriceUnits
}

// MaxSamples bounds the utilization samples all the rows of a sweep hold
// (each run is bounded by sim.MaxSamples): beyond it the sweep fails,
// and the series of later jobs are dropped as they end, so the memory
// stays bounded.
const MaxSamples = 1 << 25

// Run executes jobs on `workers` goroutines and returns their rows sorted by
// index. progress (may be nil) is called after each job, from one goroutine
// at a time.
//
// The jobs share work: each calibration's runtime machine and application
// resolution are made once, each task graph (application, N, block, model
// symbols and priority range) is built once, by the first job that needs
// it, and dropped after its last; so are its dependencies, shared by the
// graphs that differ in their priorities alone. Each goroutine's
// simulation reuses the largest buffers of its previous one (sim.Spare),
// so the collector has much less to free. The largest jobs start first,
// so that no long job is left to run alone at the end (and each reused
// buffer is large enough for the next job). None of this changes a row.
func Run(p *Plan, jobs []Job, workers int, progress func(done, total int)) ([]Row, error) {
	if workers < 1 {
		workers = 1
	}
	total := len(p.Jobs())
	rows := make([]Row, len(jobs))
	errs := make([]error, len(jobs))
	next := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	done, samples := 0, 0
	machines := make([]*machine.Machine, len(p.Machines))
	for i, m := range p.Machines {
		machines[i] = m.File.RuntimeMachine()
	}
	c := p.newCache(jobs)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var spare *sim.Spare // the last run's buffers, for the next
			for i := range next {
				rows[i], spare, errs[i] = p.run(jobs[i], machines[jobs[i].Machine], total, c, c.keys[i], c.depKeys[i], spare)
				mu.Lock()
				if u := rows[i].Utilization; u != nil {
					for _, b := range u.Busy {
						samples += len(b)
					}
					if samples > MaxSamples {
						rows[i].Utilization = nil
						if errs[i] == nil {
							errs[i] = fmt.Errorf("the sweep's utilization series exceed %d samples (2^25): use a longer sample interval", MaxSamples)
						}
					}
				}
				done++
				if progress != nil {
					progress(done, len(jobs))
				}
				mu.Unlock()
			}
		}()
	}
	for _, i := range c.order {
		next <- i
	}
	close(next)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			j := jobs[i]
			if p.DAGs[j.App] != nil {
				return nil, fmt.Errorf("%s %s %s: %w", p.Machines[j.Machine].Label, j.App, j.Sched, err)
			}
			return nil, fmt.Errorf("%s %s N=%d block=%d %s: %w", p.Machines[j.Machine].Label, j.App, j.N, j.Block, j.Sched, err)
		}
	}
	sort.Slice(rows, func(a, b int) bool { return rows[a].Index < rows[b].Index })
	return rows, nil
}

// cache is what a sweep's jobs share: resolutions by machine and app,
// graphs by key (graphKey) with the jobs left to use them.
type cache struct {
	// keys holds each job's graph key ("": built by the job alone, as
	// a graph from a file or a job whose preparation fails).
	keys []string
	// depKeys holds each job's dependencies' key: its graph's but for
	// the priorities, which the dependencies do not depend on ("" where
	// keys has "").
	depKeys []string
	order   []int // the jobs' indexes in jobs, largest first
	res     map[[2]string]resolved
	mu      sync.Mutex
	graph   map[string]*sharedGraph
	deps    map[string]*sharedDeps
}

type resolved struct {
	res *generation.Resolution
	err error
}

// sharedGraph is one graph of the sweep, built once.
type sharedGraph struct {
	once  sync.Once
	g     *graph.Graph
	err   error
	users int // jobs that have not yet released it
}

// sharedDeps is the dependencies of the graphs of one depKeys key,
// derived once, from the first of them a job builds.
type sharedDeps struct {
	once  sync.Once
	d     *graph.Deps // nil: deriving failed (sim.New derives and reports it)
	users int
}

// newCache resolves each machine's apps, keys the jobs' graphs and orders
// the jobs by size, largest first (the graph's tasks; ties in index order).
func (p *Plan) newCache(jobs []Job) *cache {
	c := &cache{keys: make([]string, len(jobs)), depKeys: make([]string, len(jobs)), order: make([]int, len(jobs)), res: map[[2]string]resolved{},
		graph: map[string]*sharedGraph{}, deps: map[string]*sharedDeps{}}
	size := make([]int64, len(jobs))
	for i, j := range jobs {
		c.order[i] = i
		if g := p.DAGs[j.App]; g != nil {
			size[i] = int64(len(g.Tasks))
			continue
		}
		r := c.resolve(p, j)
		if r.err != nil {
			continue
		}
		o, err := p.modelOptions(j, r.res)
		if err != nil {
			continue
		}
		if size[i], _, _, err = models.Size(j.App, o); err != nil {
			continue
		}
		c.keys[i] = graphKey(j.App, o)
		sg := c.graph[c.keys[i]]
		if sg == nil {
			sg = &sharedGraph{}
			c.graph[c.keys[i]] = sg
		}
		sg.users++
		d := o
		d.Prio, d.NoPrio = graph.PrioRange{}, false
		c.depKeys[i] = graphKey(j.App, d)
		sd := c.deps[c.depKeys[i]]
		if sd == nil {
			sd = &sharedDeps{}
			c.deps[c.depKeys[i]] = sd
		}
		sd.users++
	}
	sort.SliceStable(c.order, func(a, b int) bool { return size[c.order[a]] > size[c.order[b]] })
	return c
}

// resolve is job j's machine's resolution of its app, made once.
func (c *cache) resolve(p *Plan, j Job) resolved {
	mach := p.Machines[j.Machine]
	k := [2]string{fmt.Sprint(j.Machine), j.App}
	r, ok := c.res[k]
	if !ok {
		r.res, r.err = mach.File.ResolveApp(j.App, p.Double, mach.Generation)
		c.res[k] = r
	}
	return r
}

// graphKey names the graph models.New(app, o) builds: every option that
// shapes it.
func graphKey(app string, o models.Options) string {
	syms := make([]string, 0, len(o.Symbols))
	for k, v := range o.Symbols {
		syms = append(syms, k+"="+v)
	}
	sort.Strings(syms)
	return fmt.Sprintf("%s|%d|%d|%d|%v|%v|%s|%d|%d|%v|%q", app, o.N, o.Block, o.Precision, o.Prio, o.NoPrio, o.BLASVariant, o.Generation, o.InnerBlock, o.SYRKPrioRelease, syms)
}

// get returns the graph of key, built by build on first use.
func (c *cache) get(key string, build func() (*graph.Graph, error)) (*graph.Graph, error) {
	c.mu.Lock()
	sg := c.graph[key]
	c.mu.Unlock()
	sg.once.Do(func() { sg.g, sg.err = build() })
	return sg.g, sg.err
}

// getDeps returns the dependencies of depKey's graphs, derived from g on
// first use (nil if that fails).
func (c *cache) getDeps(depKey string, g *graph.Graph) *graph.Deps {
	c.mu.Lock()
	sd := c.deps[depKey]
	c.mu.Unlock()
	sd.once.Do(func() {
		if d, err := graph.DeriveDeps(g); err == nil {
			sd.d = d
		}
	})
	return sd.d
}

// release says a job is done with key's graph and depKey's dependencies:
// the last one drops them.
func (c *cache) release(key, depKey string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if sg := c.graph[key]; sg != nil {
		if sg.users--; sg.users == 0 {
			delete(c.graph, key)
		}
	}
	if sd := c.deps[depKey]; sd != nil {
		if sd.users--; sd.users == 0 {
			delete(c.deps, depKey)
		}
	}
}

// run runs job j, reusing spare's buffers (nil: none), and returns its row
// and the buffers the next run may reuse.
func (p *Plan) run(j Job, m *machine.Machine, total int, c *cache, key, depKey string, spare *sim.Spare) (Row, *sim.Spare, error) {
	s, res, o, err := p.prepare(j, m, c, key, depKey, spare)
	if key != "" {
		// The simulator holds the graph and dependencies it needs; the
		// sweep's hold ends.
		c.release(key, depKey)
	}
	if err != nil {
		return Row{}, nil, err
	}
	mach := p.Machines[j.Machine]
	out, err := s.Run()
	if err != nil {
		return Row{}, nil, err
	}
	spare = s.Spare()
	gen := ""
	if res != nil {
		gen = res.Gen.String()
	}
	return Row{Index: j.Index, Jobs: total, Machine: mach.Label, MachineSource: mach.Source, Generation: gen, App: j.App, Sched: j.Sched, N: j.N, Block: j.Block,
		NCPU: o.NCPU, NCUDA: o.NCUDA, NTasks: out.NTasks, GFlops: out.GFlops, MakespanS: out.MakespanS,
		SLR: out.SLR, Speedup: out.Speedup, Eff: out.Efficiency, EnergyJ: out.EnergyJ, BusyPct: meanBusy(out),
		PriceUnits: mach.PriceUnits, Utilization: out.Utilization}, spare, nil
}

// Check prepares job j as Run would (its machine, graph and simulator)
// without running it, so that what would fail in the job fails at once.
func (p *Plan) Check(j Job) error {
	_, _, _, err := p.prepare(j, p.Machines[j.Machine].File.RuntimeMachine(), nil, "", "", nil)
	return err
}

// modelOptions are the options of job j's graph, res its machine's
// resolution of the app.
func (p *Plan) modelOptions(j Job, res *generation.Resolution) (models.Options, error) {
	prec := models.Single
	if p.Double {
		prec = models.Double
	}
	prio, ok := sched.PriorityRange(j.Sched)
	if p.NewSchedulers[j.Sched] != nil {
		prio, ok = graph.PrioRange{}, true
	}
	if !ok {
		return models.Options{}, fmt.Errorf("unknown scheduler %q", j.Sched)
	}
	return models.Options{N: j.N, Block: j.Block, Precision: prec, Prio: prio, NoPrio: false, InnerBlock: p.InnerBlock,
		Generation: res.Gen, Symbols: res.Symbols(), SYRKPrioRelease: p.SYRKPrioRelease}, nil
}

// prepare builds job j's graph and simulator on m, and returns them with
// the generation resolution (nil for a graph from a file) and the options
// of the run. With a cache c, a job whose graph has a key takes its
// resolution, graph and dependencies (depKey's) from c. The simulator may
// reuse spare's buffers (Options.Spare).
func (p *Plan) prepare(j Job, m *machine.Machine, c *cache, key, depKey string, spare *sim.Spare) (*sim.Simulator, *generation.Resolution, sim.Options, error) {
	mach := p.Machines[j.Machine]
	o := p.Options
	o.Spare = spare
	o.Sched = j.Sched
	o.NewScheduler = p.NewSchedulers[j.Sched]
	if mach.GPUMemLimitBytes > 0 {
		o.GPUMemLimitBytes = mach.GPUMemLimitBytes
	}
	if mach.GPUMemLimitByDevice != nil {
		o.GPUMemLimitByDevice = mach.GPUMemLimitByDevice
	}
	if g := p.DAGs[j.App]; g != nil {
		s, err := sim.New(m, g, o)
		return s, nil, o, err
	}
	var res *generation.Resolution
	var err error
	if key != "" {
		res = c.res[[2]string{fmt.Sprint(j.Machine), j.App}].res // resolved without error
	} else if res, err = mach.File.ResolveApp(j.App, p.Double, mach.Generation); err != nil {
		return nil, nil, o, err
	}
	mo, err := p.modelOptions(j, res)
	if err != nil {
		return nil, nil, o, err
	}
	build := func() (*graph.Graph, error) { return models.New(j.App, mo) }
	var g *graph.Graph
	if key != "" {
		if g, err = c.get(key, build); err == nil {
			o.Deps = c.getDeps(depKey, g)
		}
	} else {
		g, err = build()
	}
	if err != nil {
		return nil, nil, o, err
	}
	s, err := sim.New(m, g, o)
	return s, res, o, err
}

func meanBusy(r *sim.Result) float64 {
	if len(r.Workers) == 0 {
		return 0
	}
	t := 0.0
	for _, w := range r.Workers {
		t += w.BusyPct
	}
	return t / float64(len(r.Workers))
}
