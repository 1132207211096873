package main

// The sweep's flag parsers (lists, ranges, byte sizes, shards) and its
// checks before any job runs.

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/starsim/starsim/internal/sweep"
	"github.com/starsim/starsim/models"
)

// parseList splits a comma-separated list: no empty list, no entry twice.
func parseList(flag, s string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, x := range strings.Split(s, ",") {
		x = strings.TrimSpace(x)
		if x == "" {
			continue
		}
		if seen[x] {
			return nil, flagError(flag, s, "%q is listed twice", x)
		}
		seen[x] = true
		out = append(out, x)
	}
	if len(out) == 0 {
		return nil, flagError(flag, s, "empty list")
	}
	return out, nil
}

// parseInts reads "a,b,c" of positive integers or, when ranges is set, also
// "FROM:TO:STEP" ranges; max bounds the number of values (a range is
// counted before it is expanded).
func parseInts(flag, s string, ranges bool, max int) ([]int, error) {
	items, err := parseList(flag, s)
	if err != nil {
		return nil, err
	}
	var out []int
	seen := map[int]bool{}
	add := func(x int) error {
		if seen[x] {
			return flagError(flag, s, "%d is listed twice", x)
		}
		seen[x] = true
		out = append(out, x)
		return nil
	}
	for _, it := range items {
		if parts := strings.Split(it, ":"); ranges && len(parts) > 1 {
			if len(parts) != 3 {
				return nil, flagError(flag, s, "range %q: want FROM:TO:STEP", it)
			}
			var v [3]int
			for i, p := range parts {
				if v[i], err = strconv.Atoi(strings.TrimSpace(p)); err != nil || v[i] <= 0 {
					return nil, flagError(flag, s, "range %q: %q is not a positive integer", it, p)
				}
			}
			if v[1] < v[0] {
				return nil, flagError(flag, s, "range %q: want FROM <= TO", it)
			}
			if count := (v[1]-v[0])/v[2] + 1; count > max-len(out) {
				return nil, flagError(flag, s, "range %q has %d values: at most %d in all", it, count, max)
			}
			for x := v[0]; x <= v[1]; x += v[2] {
				if err := add(x); err != nil {
					return nil, err
				}
				if x > math.MaxInt-v[2] {
					break
				}
			}
			continue
		}
		x, err := strconv.Atoi(it)
		if err != nil || x <= 0 {
			return nil, flagError(flag, s, "%q is not a positive integer", it)
		}
		if len(out) >= max {
			return nil, flagError(flag, s, "more than %d values", max)
		}
		if err := add(x); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// parseFloats reads a list of finite numbers in [lo, hi].
func parseFloats(flag, s string, lo, hi float64) ([]float64, error) {
	items, err := parseList(flag, s)
	if err != nil {
		return nil, err
	}
	var out []float64
	for _, it := range items {
		x, err := strconv.ParseFloat(it, 64)
		if err != nil || math.IsNaN(x) || x < lo || x > hi {
			return nil, flagError(flag, s, "%q: want a number from %g to %g", it, lo, hi)
		}
		out = append(out, x)
	}
	return out, nil
}

// parseShard reads --shard I/N (1 <= I <= N, decimal integers only).
func parseShard(s string) (i, n int, err error) {
	a, b, ok := strings.Cut(s, "/")
	bad := func() (int, int, error) {
		return 0, 0, flagError("shard", s, "want I/N with 1 <= I <= N (slice I of N)")
	}
	if !ok || !allDigits(a) || !allDigits(b) {
		return bad()
	}
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if err1 != nil || err2 != nil || i < 1 || i > n {
		return bad()
	}
	return i, n, nil
}

func allDigits(s string) bool {
	if s == "" || len(s) > 9 {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// checkSweepSize checks the sweep's jobs against the budget: at most
// maxSweepJobs jobs, every graph within maxRunTasks, and the graphs run at
// once (-j of them) within maxRunTasks together.
func checkSweepSize(plan *sweep.Plan, jobs []sweep.Job, par int) error {
	if len(jobs) > maxSweepJobs {
		return &usageError{fmt.Sprintf("the sweep has %d jobs: at most %d per sweep (split it with --shard I/N)", len(jobs), maxSweepJobs)}
	}
	prec := models.Single
	if plan.Double {
		prec = models.Double
	}
	type key struct {
		app      string
		block, n int
	}
	size := map[key]int64{}
	for _, app := range plan.Apps {
		if g := plan.DAGs[app]; g != nil {
			size[key{app, 0, 0}] = int64(len(g.Tasks))
			continue
		}
		for _, b := range plan.Blocks {
			for _, n := range plan.Ns {
				if err := checkGraphSize(app, n, b, prec); err != nil {
					return err
				}
				t, _, _, _ := models.Size(app, models.Options{N: n, Block: b, Precision: prec})
				size[key{app, b, n}] = t
			}
		}
	}
	// The par largest graphs may be in memory at once.
	tasks := make([]int64, len(jobs))
	for i, j := range jobs {
		tasks[i] = size[key{j.App, j.Block, j.N}]
	}
	sort.Slice(tasks, func(a, b int) bool { return tasks[a] > tasks[b] })
	k := min(par, len(tasks))
	var sum int64
	for _, t := range tasks[:k] {
		sum += t
	}
	if sum > maxRunTasks {
		return flagError("-j", par, "%d runs at once hold up to %d tasks: at most %d (2^25) in memory; lower -j", k, sum, maxRunTasks)
	}
	return nil
}

// dryRun prepares, for every machine, app, block size and scheduler, a
// small job of the sweep (its graph and sim.New, as the sweep would:
// sweep.Plan.Check), so that what would fail in every job (too many
// workers, an uncalibrated kernel, GPU memory too small for one task's
// data) fails before any job runs. The job has min(largest N, 3 blocks)
// per side: enough for every kernel and for the largest task of the
// graphs. ncpuSrc and ncudaSrc name where the worker counts came from.
func dryRun(plan *sweep.Plan, machines []*machine, ncpuSrc, ncudaSrc string) error {
	for mi := range plan.Machines {
		if err := checkWorkers(ncpuSrc, ncudaSrc, plan.Options.NCPU, plan.Options.NCUDA, plan.Machines[mi].File); err != nil {
			return err
		}
		for _, app := range plan.Apps {
			if g := plan.DAGs[app]; g != nil {
				if err := checkDurations(app, plan.Machines[mi].File.RuntimeMachine(), g, plan.Options.NCPU, plan.Options.NCUDA); err != nil {
					return err
				}
				for _, sched := range plan.Scheds {
					j := sweep.Job{Machine: mi, App: app, Sched: sched}
					if err := plan.Check(j); err != nil {
						return fmt.Errorf("%s %s %s: %w", plan.Machines[mi].Label, app, sched, explainNew(machines[mi], err))
					}
				}
				continue
			}
			for _, b := range plan.Blocks {
				n := 0
				for _, x := range plan.Ns {
					if x%b == 0 {
						n = max(n, x)
					}
				}
				n = min(n, 3*b)
				if n == 0 {
					continue
				}
				for _, sched := range plan.Scheds {
					j := sweep.Job{Machine: mi, App: app, Sched: sched, Block: b, N: n}
					if err := plan.Check(j); err != nil {
						return fmt.Errorf("%s %s block=%d %s: %w", plan.Machines[mi].Label, app, b, sched, explainNew(machines[mi], err))
					}
				}
			}
		}
	}
	return nil
}
