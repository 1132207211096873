package main

import (
	"fmt"
	"io"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/starsim/starsim/runtime/graph"
	"github.com/starsim/starsim/runtime/sim"
)

const (
	// ensembleStep is the relative bandwidth step between the members of
	// an ensemble: far below any calibration's precision, yet enough to
	// move a copy's end past another event and so change a scheduling
	// decision where two were within microseconds.
	ensembleStep = 1e-4
	// maxEnsemble bounds --ensemble.
	maxEnsemble = 64
	// ensembleNote is the range (relative to the median) above which the
	// run notes on stderr that its single prediction is fragile.
	ensembleNote = 0.01
)

// ensembleFactors are the bandwidth factors of an ensemble of k runs:
// 1, 1+s, 1-s, 1+2s, 1-2s, ... (s = ensembleStep).
func ensembleFactors(k int) []float64 {
	out := make([]float64, k)
	for i := range out {
		step := float64((i + 1) / 2)
		if i%2 == 0 {
			step = -step
		}
		out[i] = 1 + step*ensembleStep
	}
	return out
}

// ensembleInfo is what --ensemble adds to a run's output: the run again
// with every link bandwidth scaled by factors within 1e-3 of 1, and the
// spread of their GFlop/s.
type ensembleInfo struct {
	// Runs is the number of members (the run itself is the first).
	Runs int `json:"runs"`
	// BandwidthFactors are each member's factor on every link and
	// predicted transfer bandwidth.
	BandwidthFactors []float64 `json:"bandwidth_factors"`
	// GFlops and MakespanS are each member's, in BandwidthFactors' order.
	GFlops    []float64 `json:"gflops"`
	MakespanS []float64 `json:"makespan_s"`
	// GFlopsMedian, GFlopsMin and GFlopsMax summarise GFlops (the median
	// of an even count is the mean of the middle two).
	GFlopsMedian float64 `json:"gflops_median"`
	GFlopsMin    float64 `json:"gflops_min"`
	GFlopsMax    float64 `json:"gflops_max"`
}

// checkEnsemble validates --ensemble: off (0), or 2 to maxEnsemble runs of
// a built-in scheduler (an external agent would be asked to decide every
// member's run).
func (f *runFlags) checkEnsemble() error {
	if !f.set["ensemble"] {
		return nil
	}
	if f.ensemble < 2 || f.ensemble > maxEnsemble {
		return flagError("ensemble", f.ensemble, "want a run count from 2 to %d", maxEnsemble)
	}
	if strings.HasPrefix(f.sched, "external:") {
		return flagError("ensemble", f.ensemble, "does not go with an external scheduler (each member would ask the agent again)")
	}
	return nil
}

// runEnsemble runs the other k-1 members of an ensemble whose first
// member is first (run with opts on mc): the same graph and options on mc
// with every link bandwidth scaled by ensembleFactors(k)[i]. Members run
// on every core; each is deterministic, so the result does not depend on
// their order.
func runEnsemble(mc *machine, g *graph.Graph, opts sim.Options, first *sim.Result, k int) (*ensembleInfo, error) {
	opts.Explain, opts.ExplainTask, opts.SampleIntervalS, opts.Observer = nil, -1, 0, nil
	opts.Spare = nil // (a simulation's buffers serve one run at a time)
	if opts.Deps == nil {
		d, err := graph.DeriveDeps(g)
		if err != nil {
			return nil, err
		}
		opts.Deps = d
	}
	e := &ensembleInfo{Runs: k, BandwidthFactors: ensembleFactors(k), GFlops: make([]float64, k), MakespanS: make([]float64, k)}
	e.GFlops[0], e.MakespanS[0] = first.GFlops, first.MakespanS
	errs := make([]error, k)
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), k-1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				errs[i] = e.member(mc, g, opts, i)
			}
		}()
	}
	for i := 1; i < k; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("--ensemble: the run with bandwidths x%s: %w", strconv.FormatFloat(e.BandwidthFactors[i], 'g', -1, 64), err)
		}
	}
	sorted := slices.Clone(e.GFlops)
	slices.Sort(sorted)
	e.GFlopsMin, e.GFlopsMax = sorted[0], sorted[k-1]
	e.GFlopsMedian = sorted[k/2]
	if k%2 == 0 {
		e.GFlopsMedian = (sorted[k/2-1] + sorted[k/2]) / 2
	}
	return e, nil
}

// member runs member i of e and records its result.
func (e *ensembleInfo) member(mc *machine, g *graph.Graph, opts sim.Options, i int) error {
	f, err := mc.file.ScalePCIBandwidth(e.BandwidthFactors[i])
	if err != nil {
		return err
	}
	s, err := sim.New(f.RuntimeMachine(), g, opts)
	if err != nil {
		return err
	}
	r, err := s.Run()
	if err != nil {
		return err
	}
	e.GFlops[i], e.MakespanS[i] = r.GFlops, r.MakespanS
	return nil
}

// spread is the ensemble's GFlop/s range relative to its median (0 when
// the median is not positive: no flop count).
func (e *ensembleInfo) spread() float64 {
	if e.GFlopsMedian <= 0 {
		return 0
	}
	return (e.GFlopsMax - e.GFlopsMin) / e.GFlopsMedian
}

// text is the ensemble's line in run's table output.
func (e *ensembleInfo) text() string {
	fs := make([]string, 0, min(len(e.BandwidthFactors), 3))
	for _, x := range e.BandwidthFactors[:cap(fs)] {
		fs = append(fs, "x"+strconv.FormatFloat(x, 'g', -1, 64))
	}
	if len(e.BandwidthFactors) > len(fs) {
		fs = append(fs, "...")
	}
	if e.GFlopsMedian <= 0 {
		return fmt.Sprintf("ensemble of %d runs (every link bandwidth %s): GFlop/s unknown (no flop count); makespan %s ms", e.Runs, strings.Join(fs, ", "), msRange(e.MakespanS))
	}
	pct := 100 * e.spread() / 2
	if pct < 0.005 {
		pct = 0
	}
	return fmt.Sprintf("ensemble of %d runs (every link bandwidth %s): GFlop/s median %.1f, range %.1f to %.1f (±%.2f%% of the median)",
		e.Runs, strings.Join(fs, ", "), e.GFlopsMedian, e.GFlopsMin, e.GFlopsMax, pct)
}

// msRange is "a to b" of makespans in ms.
func msRange(s []float64) string {
	return fmt.Sprintf("%.3f to %.3f", slices.Min(s)*1e3, slices.Max(s)*1e3)
}

// note says on stderr when the members disagree by more than ensembleNote:
// the single run's figure then rests on near-ties between events.
func (e *ensembleInfo) note(stderr io.Writer) {
	if e.spread() > ensembleNote {
		fmt.Fprintf(stderr, "starsim: note: the ensemble's GFlop/s span %.1f%% of its median: decisions in this run hinge on events microseconds apart, so its single figure is uncertain by about that much (docs/fidelity.md, Sensitivity)\n", 100*e.spread())
	}
}
