package main

// What the outputs say of the machine: the first line, --json's "machine",
// and the models a run could not find.

import (
	"fmt"
	"io"
	"strings"

	"github.com/starsim/starsim/models/generation"
)

// machineInfo is what the outputs say of the machine (--json: "machine").
type machineInfo struct {
	Name   string `json:"name"`
	Source string `json:"source"`
	// Generation is the StarPU generation of the models and graph ("1.3",
	// "1.4"; "" when a replay's calibration names neither), and why.
	Generation       string `json:"generation"`
	GenerationReason string `json:"generation_reason"`
	BLASVariant      string `json:"blas_variant,omitempty"`
	CPUCores         int    `json:"cpu_cores"`
	GPUs             int    `json:"gpus"`
	GPUModel         string `json:"gpu_model,omitempty"`
	// Environment lists the StarPU variables that took effect.
	Environment []string `json:"environment,omitempty"`
}

// info describes mc; res is the run's resolution (nil for a replay, whose
// generation is the calibration's names').
func (s *machineSetup) info(mc *machine, res *generation.Resolution) *machineInfo {
	in := &machineInfo{Name: mc.label(), Source: mc.source, CPUCores: mc.file.Machine.CPUCores, Environment: s.env}
	models := map[string]bool{}
	for _, d := range mc.file.Machine.Devices {
		if d.Kind == "cuda" || d.Kind == "hip" {
			in.GPUs++
			models[d.Model] = true
		}
	}
	if len(models) == 1 {
		for k := range models {
			in.GPUModel = k
		}
	}
	switch {
	case res != nil:
		in.Generation, in.GenerationReason, in.BLASVariant = res.Gen.String(), res.Why, res.Variant
		if res.Why == "asked" {
			in.GenerationReason = "--starpu-generation " + res.Gen.String()
		}
	default:
		g, why := mc.file.Generation()
		if g != generation.Auto {
			in.Generation = g.String()
		}
		in.GenerationReason = why
	}
	return in
}

// line is the one-line description outputs start with.
func (in *machineInfo) line() string {
	var b strings.Builder
	fmt.Fprintf(&b, "machine: %s, %s; %d CPU cores, %d GPUs", in.Name, in.Source, in.CPUCores, in.GPUs)
	if in.GPUModel != "" && in.GPUs > 0 {
		fmt.Fprintf(&b, " (%s)", in.GPUModel)
	}
	if in.Generation != "" {
		fmt.Fprintf(&b, "; StarPU %s models and task graph (%s)", in.Generation, in.GenerationReason)
	} else {
		fmt.Fprintf(&b, "; %s", in.GenerationReason)
	}
	if in.BLASVariant != "" {
		fmt.Fprintf(&b, "; LU models: %s", in.BLASVariant)
	}
	return b.String()
}

// writeHeader writes the machine line and, when StarPU variables took
// effect, a line naming them.
func (in *machineInfo) writeHeader(w io.Writer) {
	fmt.Fprintln(w, in.line())
	if len(in.Environment) > 0 {
		fmt.Fprintf(w, "environment: %s\n", strings.Join(in.Environment, ", "))
	}
}

// maxListed is how many unused unreadable models are listed one per line
// before they are summed up in one.
const maxListed = 3

// reportModels writes mc's import warnings to stderr: those about the
// machine and the models the work uses (used) each on a line; those about
// models it does not use, and unreadable model files it does not need,
// each on a line when few, else in one summary line.
func reportModels(stderr io.Writer, mc *machine, used map[string]bool) {
	var unused []string
	for _, w := range mc.warnings {
		if w.Model == "" || used[w.Model] {
			fmt.Fprintf(stderr, "starsim: warning: %s\n", w)
		} else {
			unused = append(unused, fmt.Sprintf("model %s (not used): %s", w.Model, w))
		}
	}
	for _, u := range mc.file.Unreadable {
		if !used[u.Model] {
			unused = append(unused, fmt.Sprintf("model %s not read (not used): %v", u.Model, u.Err()))
		}
	}
	if len(unused) <= maxListed {
		for _, u := range unused {
			fmt.Fprintf(stderr, "starsim: warning: %s\n", u)
		}
		return
	}
	fmt.Fprintf(stderr, "starsim: warning: %d model files this work does not use could not be read or were read only as StarPU's reader tolerates (first: %s); `starsim calibrate import` lists them\n", len(unused), unused[0])
}
