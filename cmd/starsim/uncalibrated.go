package main

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/starsim/starsim/runtime/graph"
	rtm "github.com/starsim/starsim/runtime/machine"
)

// archGroup is a run's workers of one perf-model arch.
type archGroup struct {
	arch string
	cpu  bool
	// names are the workers, first is the index of the first one (StarPU
	// numbers CPU workers first, then one worker per GPU).
	names []string
	first int
}

// workerArchs groups the workers a run on m gets (ncpu, ncuda: the run's
// options, -1 for StarPU's defaults) by arch, as runtime builds them.
func workerArchs(m *rtm.Machine, ncpu, ncuda int) []archGroup {
	var gpus []archGroup
	for _, d := range m.Devices {
		if d.Kind != "cuda" && d.Kind != "hip" {
			continue
		}
		if ncuda >= 0 && len(gpus) >= ncuda {
			break
		}
		gpus = append(gpus, archGroup{arch: d.Arch, names: []string{d.Name}})
	}
	if ncpu < 0 {
		ncpu = max(m.CPUCores-len(gpus), 0)
	}
	var out []archGroup
	if ncpu > 0 {
		cpu := archGroup{arch: m.CPUArch, cpu: true}
		if cpu.arch == "" {
			cpu.arch = "cpu0"
		}
		for i := range ncpu {
			cpu.names = append(cpu.names, fmt.Sprintf("CPU%d", i))
		}
		out = append(out, cpu)
	}
	for i, g := range gpus {
		g.first = ncpu + i
		out = append(out, g)
	}
	return out
}

// uncalibratedModels lists, for each group of workers, the kernel models
// of g's tasks that cannot run there for want of a model entry: runtime's
// rule (a task runs on a worker whose arch has an entry of positive mean
// for its model and footprint, or which the graph gives a duration on that
// arch; a task of fixed duration runs anywhere; a pinned one only on its
// worker). The result is indexed as groups; each
// list is sorted.
func uncalibratedModels(m *rtm.Machine, g *graph.Graph, groups []archGroup) [][]string {
	missing := make([]map[string]bool, len(groups))
	for i := range missing {
		missing[i] = map[string]bool{}
	}
	type key struct {
		model string
		fp    uint32
	}
	seen := map[key]bool{}
	// Tasks mostly come in runs of one model and footprint: a shared
	// task of the previous shared key needs no map lookup (hashing its
	// model name costs more than the rest of the check).
	var prev key
	prevOK := false
	for ti := range g.Tasks {
		t := &g.Tasks[ti]
		if t.FixedUS > 0 {
			continue
		}
		// A task with its own durations is checked on its own.
		shared := !t.Pinned && t.DurationsUS == nil
		if shared && prevOK && t.Footprint == prev.fp && t.Model == prev.model {
			continue
		}
		k := key{t.Model, t.Footprint}
		if shared && seen[k] {
			prev, prevOK = k, true
			continue
		}
		seen[k] = shared
		prev, prevOK = k, shared
		for i, grp := range groups {
			if t.Pinned && (t.Worker < grp.first || t.Worker >= grp.first+len(grp.names)) {
				continue
			}
			if e, ok := m.Kernels[rtm.KernelKey{Model: t.Model, Arch: grp.arch, Footprint: t.Footprint}]; !ok || !(e.MeanUS > 0) {
				if us, ok := t.DurationOn(grp.arch); !ok || !(us > 0) {
					missing[i][t.Model] = true
				}
			}
		}
	}
	out := make([][]string, len(groups))
	for i, ms := range missing {
		for model := range ms {
			out[i] = append(out[i], model)
		}
		sort.Strings(out[i])
	}
	return out
}

// graphModels lists the kernel models of g's tasks that take a model
// entry (not of fixed duration), sorted.
func graphModels(g *graph.Graph) []string {
	set := map[string]bool{}
	prev, prevOK := "", false // the last model added: tasks come in runs of one
	for ti := range g.Tasks {
		if t := &g.Tasks[ti]; t.FixedUS <= 0 && (!prevOK || t.Model != prev) {
			set[t.Model] = true
			prev, prevOK = t.Model, true
		}
	}
	var out []string
	for m := range set {
		out = append(out, m)
	}
	sort.Strings(out)
	return out
}

// warnUncalibrated writes uncalibratedWarnings on stderr, each once,
// after what (naming the run among others; "" for none).
func warnUncalibrated(stderr io.Writer, what string, m *rtm.Machine, g *graph.Graph, ncpu, ncuda int, said map[string]bool) {
	for _, w := range uncalibratedWarnings(m, g, ncpu, ncuda) {
		if line := fmt.Sprintf("starsim: warning: %s%s\n", what, w); !said[line] {
			said[line] = true
			io.WriteString(stderr, line)
		}
	}
}

// uncalibratedWarnings says which workers of a run will sit idle because
// the calibration has no model for any of the run's kernels on their
// arch, and which kernels will not run on some workers for want of a
// model there (StarPU over SimGrid would abort on either). Groups of GPUs
// that lack the same models are named together.
func uncalibratedWarnings(m *rtm.Machine, g *graph.Graph, ncpu, ncuda int) []string {
	groups := workerArchs(m, ncpu, ncuda)
	missing := uncalibratedModels(m, g, groups)
	all := strings.Join(graphModels(g), ", ")
	type merged struct {
		archs, names []string
		cpu          bool
		models       string
	}
	var out []*merged
	index := map[string]*merged{}
	for i, grp := range groups {
		if len(missing[i]) == 0 {
			continue
		}
		models := strings.Join(missing[i], ", ")
		k := fmt.Sprint(grp.cpu, models)
		mg := index[k]
		if mg == nil {
			mg = &merged{cpu: grp.cpu, models: models}
			index[k] = mg
			out = append(out, mg)
		}
		mg.archs = append(mg.archs, grp.arch)
		mg.names = append(mg.names, grp.names...)
	}
	var warnings []string
	for _, mg := range out {
		who := fmt.Sprintf("the %d CPU workers (%s)", len(mg.names), strings.Join(mg.archs, ", "))
		if len(mg.names) == 1 {
			who = fmt.Sprintf("the CPU worker (%s)", mg.archs[0])
		}
		hint := "; --ncpu 0 leaves them out"
		if !mg.cpu {
			who = fmt.Sprintf("GPU worker %s (%s)", mg.names[0], mg.archs[0])
			if len(mg.names) > 1 {
				who = fmt.Sprintf("GPU workers %s (%s)", strings.Join(mg.names, ", "), strings.Join(mg.archs, ", "))
			}
			hint = ""
		}
		if mg.models == all {
			warnings = append(warnings, fmt.Sprintf("%s will sit idle: the calibration has no model on their arch for any of this run's kernels (%s)%s", who, mg.models, hint))
			continue
		}
		warnings = append(warnings, fmt.Sprintf("%s will not run %s: the calibration has no model of it on their arch (StarPU over SimGrid would abort)", who, mg.models))
	}
	return warnings
}
