package main

// The run's settings from StarPU's environment and flags: GPU memory
// limits, the dm family's weights, scheduler and worker counts.

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/starsim/starsim/runtime/sched"
	"github.com/starsim/starsim/runtime/sim"
)

// gpuLimits sets mc's GPU memory limits: --gpu-mem, else StarPU's
// STARPU_LIMIT_CUDA_MEM, else STARPU_LIMIT_CUDA_<id>_MEM per CUDA device
// (MiB; StarPU reads the global variable first).
func (m *machineFlags) gpuLimits(s *machineSetup, mc *machine, stderr io.Writer) error {
	global := getenv("STARPU_LIMIT_CUDA_MEM")
	if mc.gpuMemLimit > 0 {
		if global != "" {
			s.note(stderr, "STARPU_LIMIT_CUDA_MEM=%s not used: --gpu-mem given", global)
		}
		return nil
	}
	if global != "" {
		mib, err := limitMiB("STARPU_LIMIT_CUDA_MEM", global)
		if err != nil {
			return err
		}
		mc.gpuMemLimit, mc.gpuMemFrom = mib<<20, "STARPU_LIMIT_CUDA_MEM="+showValue(global)
		s.env = append(s.env, "STARPU_LIMIT_CUDA_MEM="+global)
		return nil
	}
	for _, d := range mc.file.Machine.Devices {
		id, ok := strings.CutPrefix(d.Name, "CUDA")
		if !ok || d.Kind != "cuda" {
			continue
		}
		name := "STARPU_LIMIT_CUDA_" + id + "_MEM"
		v := getenv(name)
		if v == "" {
			continue
		}
		mib, err := limitMiB(name, v)
		if err != nil {
			return err
		}
		if mc.perGPU == nil {
			mc.perGPU, mc.perGPUFrom = map[string]int64{}, map[string]string{}
		}
		mc.perGPU[d.Name], mc.perGPUFrom[d.Name] = mib<<20, name+"="+showValue(v)
		s.env = append(s.env, name+"="+v)
	}
	return nil
}

// limitMiB reads a StarPU memory limit in MiB as StarPU does (a decimal
// integer, the whole value; starpu_getenv_number), refusing what StarPU
// would abort on and, as --gpu-mem, limits below 2 MiB (0 would leave the
// GPU no memory) or beyond 1 PiB.
func limitMiB(name, v string) (int64, error) {
	n, err := strconv.ParseInt(strings.TrimLeft(v, " \t\n"), 10, 64)
	switch {
	case err != nil:
		return 0, sourceError(name, v, "want a whole number of MiB")
	case n < minGPUMemBytes>>20 || n > maxGPUMemBytes>>20:
		return 0, sourceError(name, v, "want a limit from %d to %d MiB (2 MiB to 1 PiB)", minGPUMemBytes>>20, maxGPUMemBytes>>20)
	}
	return n, nil
}

// weights resolves the dm fitness weights: each of --sched-alpha, -beta,
// -gamma, else STARPU_SCHED_ALPHA, _BETA, _GAMMA, else StarPU's default.
// StarPU reads them as C floats (strtof): the value is rounded to float32.
func (m *machineFlags) weights(s *machineSetup, stderr io.Writer) (*sched.DMWeights, error) {
	w := sched.DefaultDMWeights
	given := false
	for _, k := range []struct {
		flag, env, val string
		dst            *float64
	}{{"sched-alpha", "STARPU_SCHED_ALPHA", m.alpha, &w.Alpha}, {"sched-beta", "STARPU_SCHED_BETA", m.beta, &w.Beta}, {"sched-gamma", "STARPU_SCHED_GAMMA", m.gamma, &w.Gamma}} {
		v, from := k.val, "--"+k.flag
		if ev := getenv(k.env); ev != "" {
			if m.set[k.flag] {
				s.note(stderr, "%s=%s not used: --%s given", k.env, ev, k.flag)
			} else {
				v, from = ev, k.env
				s.env = append(s.env, k.env+"="+ev)
			}
		}
		if v == "" {
			continue
		}
		x, err := parseWeight(from, v)
		if err != nil {
			return nil, err
		}
		*k.dst = x
		given = true
	}
	if !given {
		return nil, nil
	}
	return &w, nil
}

// applyStarPUEnv gives sched, ncpu and ncuda StarPU's STARPU_SCHED,
// STARPU_NCPU and STARPU_NCUDA when their flag is not set, and returns the
// variables used.
func applyStarPUEnv(set map[string]bool, sched *string, ncpu, ncuda *int, stderr io.Writer) ([]string, error) {
	var used []string
	if v := getenv("STARPU_SCHED"); v != "" {
		if set["sched"] {
			fmt.Fprintf(stderr, "starsim: note: STARPU_SCHED=%s not used: --sched given\n", v)
		} else {
			*sched = v
			used = append(used, "STARPU_SCHED="+v)
		}
	}
	for _, e := range []struct {
		name, flag string
		dst        *int
	}{{"STARPU_NCPU", "ncpu", ncpu}, {"STARPU_NCUDA", "ncuda", ncuda}} {
		v := getenv(e.name)
		if v == "" {
			continue
		}
		if set[e.flag] {
			fmt.Fprintf(stderr, "starsim: note: %s=%s not used: --%s given\n", e.name, v, e.flag)
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return nil, &usageError{fmt.Sprintf("%s=%q is not a count", e.name, v)}
		}
		*e.dst = n
		used = append(used, e.name+"="+v)
	}
	return used, nil
}

// apply sets the run options the machine and the knobs decide.
func (s *machineSetup) apply(mc *machine, o *sim.Options) {
	o.GPUMemLimitBytes, o.GPUMemLimitByDevice, o.DMWeights = mc.gpuMemLimit, mc.perGPU, s.weights
}
