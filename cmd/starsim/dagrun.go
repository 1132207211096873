package main

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/starsim/starsim/internal/gcpause"
	"github.com/starsim/starsim/internal/srcerr"
	"github.com/starsim/starsim/internal/sweep"
	"github.com/starsim/starsim/models/dag"
	"github.com/starsim/starsim/runtime/graph"
	rtm "github.com/starsim/starsim/runtime/machine"
	"github.com/starsim/starsim/runtime/sim"
)

// dagReplaces lists the flags that describe a built-in application, which
// --dag replaces.
var dagReplaces = []string{"app", "n", "block", "double", "no-prio", "ib"}

// validateDAG checks --dag's companions: no flag of a built-in
// application, and --dag-rate's list.
func (f *runFlags) validateDAG() error {
	if f.dag == "" {
		if f.set["dag-rate"] {
			return flagError("dag-rate", f.dagRate, "only with --dag")
		}
		return nil
	}
	for _, fl := range dagReplaces {
		if f.set[fl] {
			return &usageError{fmt.Sprintf("--%s: the task graph is --dag's (%s): --%s describes a built-in application", fl, f.dag, fl)}
		}
	}
	if err := f.validateCommon("run"); err != nil {
		return err
	}
	_, err := parseRates(f.dagRate)
	return err
}

// parseRates reads --dag-rate: ARCH=FLOPS pairs, comma-separated, an arch
// (cuda0) or kind (cpu, cuda) and a rate in flop/s.
func parseRates(s string) (map[string]float64, error) {
	if s == "" {
		return nil, nil
	}
	out := map[string]float64{}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		r, err := strconv.ParseFloat(v, 64)
		if !ok || err != nil || !(r > 0) || r > 1e18 || k == "" || strings.TrimRight(strings.TrimLeft(k, "abcdefghijklmnopqrstuvwxyz_"), "0123456789") != "" || strings.TrimLeft(k, "abcdefghijklmnopqrstuvwxyz_") == k {
			return nil, flagError("dag-rate", s, "%q: want ARCH=FLOPS, an arch (cuda0) or kind (cpu, cuda) and a rate in flop/s, such as cpu=2e10,cuda=7e12", kv)
		}
		if _, dup := out[k]; dup {
			return nil, flagError("dag-rate", s, "%s given twice", k)
		}
		out[k] = r
	}
	return out, nil
}

// readDAG reads --dag's file and writes its notes on stderr.
func readDAG(path, rates string, stderr io.Writer) (*graph.Graph, dag.Kind, error) {
	r, err := parseRates(rates)
	if err != nil {
		return nil, "", err
	}
	g, kind, notes, err := dag.ReadFile(path, dag.Options{FlopRates: r})
	if err != nil {
		return nil, "", err
	}
	for _, n := range notes {
		fmt.Fprintf(stderr, "starsim: note: %s: %s\n", path, n)
	}
	return g, kind, nil
}

// runDAG runs --dag's task graph on the machine the flags name.
func (f *runFlags) runDAG(stderr io.Writer, out *outputSet) (*sim.Result, error) {
	gcpause.Pause()
	defer gcpause.Resume()
	g, kind, err := readDAG(f.dag, f.dagRate, stderr)
	if err != nil {
		return nil, err
	}
	mc, err := f.machine("run", stderr)
	if err != nil {
		return nil, err
	}
	if err := checkWorkers(f.source("ncpu"), f.source("ncuda"), f.ncpu, f.ncuda, mc.file); err != nil {
		return nil, err
	}
	m := mc.file.RuntimeMachine()
	if err := checkDurations(f.dag, m, g, f.ncpu, f.ncuda); err != nil {
		return nil, err
	}
	used := map[string]bool{}
	for i := range g.Tasks {
		used[g.Tasks[i].Model] = true
	}
	reportModels(stderr, mc, used)
	f.info = f.setup.info(mc, nil)
	f.info.Generation, f.info.GenerationReason = "", fmt.Sprintf("task graph from %s (%s)", f.dag, kind)
	f.config = g.Name
	return f.simulate(stderr, mc, g, out)
}

// checkDurations refuses a graph with a task that no worker of the run
// can run: neither the calibration models its kernel on the worker's arch
// nor the file gives it a duration there. The error names the task.
func checkDurations(file string, m *rtm.Machine, g *graph.Graph, ncpu, ncuda int) error {
	groups := workerArchs(m, ncpu, ncuda)
	archs := make([]string, len(groups))
	for i, grp := range groups {
		archs[i] = grp.arch
	}
	type key struct {
		model string
		fp    uint32
	}
	ok := map[key]bool{} // models and footprints calibrated on some arch
	for i := range g.Tasks {
		t := &g.Tasks[i]
		if t.FixedUS > 0 {
			continue
		}
		k := key{t.Model, t.Footprint}
		runs, seen := ok[k]
		if !seen {
			for _, a := range archs {
				if e, has := m.Kernels[rtm.KernelKey{Model: t.Model, Arch: a, Footprint: t.Footprint}]; has && e.MeanUS > 0 {
					runs = true
					break
				}
			}
			ok[k] = runs
		}
		if runs {
			continue
		}
		for _, a := range archs {
			if us, has := t.DurationOn(a); has && us > 0 {
				runs = true
				break
			}
		}
		if !runs {
			given := "gives none"
			if len(t.DurationsUS) > 0 {
				keys := make([]string, 0, len(t.DurationsUS))
				for a := range t.DurationsUS {
					keys = append(keys, a)
				}
				sort.Strings(keys)
				given = "gives some for " + strings.Join(keys, ", ") + " only"
			}
			return srcerr.Errorf(file, 0, "task %d (%s) has no duration on this run's workers (%s): the calibration has no entry of model %s footprint %08x on their archs, and the file %s (durations_us, duration_us_<arch>, runtimes, or --dag-rate from its flops)",
				i, t.Name, strings.Join(archs, ", "), t.Model, t.Footprint, given)
		}
	}
	return nil
}

// dagPlan takes sweep's --dag list as the plan's applications (read later,
// by readDAGs): the flags of built-in applications and the plots, whose
// axis is N, do not go with it.
func (f *sweepFlags) dagPlan(plan *sweep.Plan, set map[string]bool) error {
	if f.dags == "" {
		if set["dag-rate"] {
			return flagError("dag-rate", f.dagRate, "only with --dag")
		}
		return nil
	}
	for _, fl := range []string{"app", "n", "block", "double", "ib", "plot", "plot-price"} {
		if set[fl] {
			return &usageError{fmt.Sprintf("--%s does not go with --dag (the task graphs are the files'; plots draw against N)", fl)}
		}
	}
	if _, err := parseRates(f.dagRate); err != nil {
		return err
	}
	files, err := parseList("dag", f.dags)
	if err != nil {
		return err
	}
	plan.Apps = files
	plan.DAGs = map[string]*graph.Graph{}
	for _, p := range files {
		if _, dup := plan.DAGs[p]; dup {
			return flagError("dag", f.dags, "%s given twice", p)
		}
		plan.DAGs[p] = nil
	}
	return nil
}

// readDAGs reads the plan's task graph files.
func (f *sweepFlags) readDAGs(plan *sweep.Plan, stderr io.Writer) error {
	for _, p := range plan.Apps {
		if _, ok := plan.DAGs[p]; !ok {
			continue
		}
		g, _, err := readDAG(p, f.dagRate, stderr)
		if err != nil {
			return err
		}
		plan.DAGs[p] = g
	}
	return nil
}
