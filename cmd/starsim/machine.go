package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/starsim/starsim/calibrate"
	"github.com/starsim/starsim/calibrate/starpu"
	"github.com/starsim/starsim/internal/bytesize"
	"github.com/starsim/starsim/internal/sweep"
	"github.com/starsim/starsim/models/generation"
	"github.com/starsim/starsim/runtime/sched"
)

// environ is where the CLI reads StarPU's variables and the host name.
// Tests replace it, so that a developer's own STARPU_* variables or home
// never change their results.
var environ = starpu.Env{Getenv: os.Getenv, Hostname: os.Hostname}

// builtinCalib is the --calib value that names the embedded example
// machine.
const builtinCalib = "default"

// machineFlags are the flags that name the machine (a calibration file, a
// StarPU sampling directory and host, the generation of its models),
// alter it (what-ifs) and set StarPU's knobs, the same for run, replay and
// sweep. In sweep the calibration, host and what-if flags take
// comma-separated lists whose product makes the machines.
type machineFlags struct {
	lists                           bool
	calib, starpuDir, host          string
	generation                      string
	gpus, pciScale, gpuMem, gpuFrom string
	alpha, beta, gamma              string
	set                             map[string]bool
	// The what-ifs' values, read by check: GPU counts, PCI factors, GPU
	// memory limits (bytes, and as given).
	gpusV   []int
	pciV    []float64
	memV    []int64
	memText []string
}

// register declares the machine flags on fs; lists makes the calibration,
// host and what-if flags lists (sweep); gen adds --starpu-generation (run
// and sweep build the graph of a generation; replay maps the trace's names).
func (m *machineFlags) register(fs *pflag.FlagSet, lists, gen bool) {
	m.lists = lists
	list := func(what string) string {
		if lists {
			return what + ", comma-separated"
		}
		return what
	}
	fs.StringVar(&m.calib, "calib", "", list("calibration `FILE` (*.calib.json); \"default\" for the built-in example machine"))
	fs.StringVar(&m.starpuDir, "starpu", "", "StarPU sampling directory `DIR` (default: StarPU's: STARPU_PERF_MODEL_DIR, else $STARPU_HOME/.starpu/sampling, ...)")
	fs.StringVar(&m.host, "host", "", list("host `NAME` of the StarPU calibration (default: STARPU_HOSTNAME, else this machine's name)"))
	if gen {
		fs.StringVar(&m.generation, "starpu-generation", "auto", "StarPU generation `G` of the calibration's models and of the task graph: 1.3, 1.4 or auto (from the model names)")
	}
	fs.StringVar(&m.gpus, "gpus", "", list("what-if: CUDA GPU count `K` (clone the last GPU, or drop the highest-numbered)"))
	fs.StringVar(&m.pciScale, "pci-bw-scale", "", list("what-if: factor `X` on every link bandwidth and predicted transfer bandwidth"))
	fs.StringVar(&m.gpuMem, "gpu-mem", "", list("GPU memory StarPU may use per GPU, `SIZE` such as 400MiB, 3GiB or bytes (STARPU_LIMIT_CUDA_MEM; default: 90% of each GPU's memory)"))
	fs.StringVar(&m.gpuFrom, "gpu-from", "", "what-if: calibration `FILE` whose first GPU (kernel models, memory, model name) replaces every GPU")
	fs.StringVar(&m.alpha, "sched-alpha", "", "dm schedulers' weight `A` of the expected end (STARPU_SCHED_ALPHA, default 1)")
	fs.StringVar(&m.beta, "sched-beta", "", "dm schedulers' weight `B` of the transfer time (STARPU_SCHED_BETA, default 1)")
	fs.StringVar(&m.gamma, "sched-gamma", "", "dm schedulers' weight `G` of the energy, µs per joule (STARPU_SCHED_GAMMA, default 1000)")
}

// machine is one machine a command runs on.
type machine struct {
	file *calibrate.File
	// source says where it came from, for people; builtin marks the
	// embedded example.
	source  string
	builtin bool
	// gpuMemLimit and perGPU are the GPU memory limits (bytes; 0 / nil:
	// StarPU's default), from --gpu-mem or STARPU_LIMIT_CUDA[_<id>]_MEM;
	// gpuMemFrom and perGPUFrom say which ("--gpu-mem 400MiB",
	// "STARPU_LIMIT_CUDA_1_MEM=200"), for messages.
	gpuMemLimit int64
	perGPU      map[string]int64
	gpuMemFrom  string
	perGPUFrom  map[string]string
	warnings    []calibrate.Warning
	// whatIfs are the what-ifs applied to the calibration it derives from
	// (base: that calibration's name), in order; figures read them.
	base    string
	whatIfs []sweep.WhatIf
}

// machineSetup is what the machine flags and StarPU's variables resolve to.
type machineSetup struct {
	machines []*machine
	// gen is the generation asked for (Auto: detect per calibration).
	gen generation.Gen
	// weights are the dm fitness weights (nil: StarPU's).
	weights *sched.DMWeights
	// env lists the StarPU variables that took effect, "NAME=value".
	env []string
	// noted are the notes already written (once per command).
	noted map[string]bool
}

// note writes a note to stderr once.
func (s *machineSetup) note(stderr io.Writer, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if s.noted == nil {
		s.noted = map[string]bool{}
	}
	if !s.noted[msg] {
		s.noted[msg] = true
		fmt.Fprintf(stderr, "starsim: note: %s\n", msg)
	}
}

// getenv reads a variable of environ.
func getenv(name string) string { return environ.Getenv(name) }

// resolve loads the machines. cmd is "run", "replay" or "sweep": run and
// sweep fall back on the built-in example machine when no machine is named
// (saying so), replay refuses. Flags win over StarPU's variables; stderr
// gets a note for each variable a flag overrode.
func (m *machineFlags) resolve(cmd string, set map[string]bool, stderr io.Writer) (*machineSetup, error) {
	if err := m.check(cmd, set); err != nil {
		return nil, err
	}
	s := &machineSetup{}
	var err error
	s.gen, _ = generation.Parse(m.generation)
	if s.weights, err = m.weights(s, stderr); err != nil {
		return nil, err
	}
	bases, err := m.bases(cmd, s, stderr)
	if err != nil {
		return nil, err
	}
	machines, err := m.whatIfs(bases)
	if err != nil {
		return nil, err
	}
	for _, mc := range machines {
		if err := m.gpuLimits(s, mc, stderr); err != nil {
			return nil, err
		}
	}
	s.machines = machines
	sort.Strings(s.env)
	s.env = dedupe(s.env)
	return s, nil
}

// check reads the machine flags' values, before any file is read: the
// generation, the what-ifs (GPU counts 1 to 63, PCI factors 1e-6 to 1e6,
// GPU memory limits 2 MiB to 1 PiB with internal/bytesize's units), the
// dm weights, and the number of machines they make (sweep).
func (m *machineFlags) check(cmd string, set map[string]bool) error {
	m.set = set
	if _, err := generation.Parse(m.generation); err != nil {
		return flagError("starpu-generation", m.generation, "%v", err)
	}
	m.gpusV, m.pciV, m.memV, m.memText = nil, nil, nil, nil
	machines := 1
	if m.calib != "" || m.host != "" {
		v := m.calib
		if v == "" {
			v = m.host
		}
		vs, err := m.values(map[bool]string{true: "calib", false: "host"}[m.calib != ""], v)
		if err != nil {
			return err
		}
		machines = len(vs)
	}
	if m.gpus != "" {
		vs, err := m.values("gpus", m.gpus)
		if err != nil {
			return err
		}
		if m.gpusV, err = parseInts("gpus", strings.Join(vs, ","), false, maxGPUs); err != nil {
			return err
		}
		for _, k := range m.gpusV {
			if k > maxGPUs {
				return flagError("gpus", m.gpus, "%d GPUs: at most %d (64 memory nodes with RAM)", k, maxGPUs)
			}
		}
		machines *= len(m.gpusV)
	}
	if m.pciScale != "" {
		vs, err := m.values("pci-bw-scale", m.pciScale)
		if err != nil {
			return err
		}
		if m.pciV, err = parseFloats("pci-bw-scale", strings.Join(vs, ","), minPCIScale, maxPCIScale); err != nil {
			return err
		}
		machines *= len(m.pciV)
	}
	if m.gpuMem != "" {
		vs, err := m.values("gpu-mem", m.gpuMem)
		if err != nil {
			return err
		}
		for _, v := range vs {
			b, err := parseGPUMem("--gpu-mem", v)
			if err != nil {
				return err
			}
			m.memV, m.memText = append(m.memV, b), append(m.memText, v)
		}
		machines *= len(m.memV)
	}
	if machines > maxSweepJobs {
		return &usageError{fmt.Sprintf("--calib/--host x --gpus x --pci-bw-scale x --gpu-mem: %d machines: at most %d", machines, maxSweepJobs)}
	}
	for _, k := range []struct{ flag, val string }{{"sched-alpha", m.alpha}, {"sched-beta", m.beta}, {"sched-gamma", m.gamma}} {
		if k.val != "" {
			if _, err := parseWeight("--"+k.flag, k.val); err != nil {
				return err
			}
		}
	}
	return nil
}

// parseWeight reads a dm weight as StarPU does (strtof: rounded to a C
// float), refusing what is not a finite number.
func parseWeight(src, v string) (float64, error) {
	x, err := strconv.ParseFloat(strings.TrimSpace(v), 32)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, sourceError(src, v, "want a finite number")
	}
	return float64(float32(x)), nil
}

func dedupe(s []string) []string {
	var out []string
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// values splits a flag's value into its list (one value unless lists).
func (m *machineFlags) values(name, v string) ([]string, error) {
	if !m.lists {
		if strings.Contains(v, ",") {
			return nil, flagError(name, v, "want one value (only sweep takes lists)")
		}
		return []string{strings.TrimSpace(v)}, nil
	}
	return parseList(name, v)
}

// bases are the machines before what-ifs: calibration files, StarPU
// calibrations found as StarPU finds them, or the built-in example.
func (m *machineFlags) bases(cmd string, s *machineSetup, stderr io.Writer) ([]*machine, error) {
	var out []*machine
	if m.calib != "" {
		if m.starpuDir != "" || m.host != "" {
			return nil, &usageError{"give --calib FILE or --starpu DIR --host NAME, not both"}
		}
		for _, v := range []string{"STARPU_PERF_MODEL_DIR", "STARPU_HOSTNAME", "STARPU_MPI_HOSTNAMES"} {
			if e := getenv(v); e != "" {
				s.note(stderr, "%s=%s not used: --calib given", v, e)
			}
		}
		files, err := m.values("calib", m.calib)
		if err != nil {
			return nil, err
		}
		for _, p := range files {
			if p == builtinCalib {
				out = append(out, &machine{file: calibrate.Default(), builtin: true, source: "the built-in example machine (--calib default)"})
				continue
			}
			f, err := calibrate.ReadFile(p)
			if err != nil {
				return nil, err
			}
			out = append(out, &machine{file: f, source: "calibration file " + p})
		}
		return out, nil
	}
	envDir := getenv("STARPU_PERF_MODEL_DIR") != "" || getenv("STARPU_HOSTNAME") != "" || getenv("STARPU_MPI_HOSTNAMES") != ""
	if m.starpuDir == "" && m.host == "" && !envDir {
		if cmd == "replay" {
			return nil, &usageError{"replay needs the machine the trace ran on: give --calib FILE.calib.json, or --starpu DIR --host NAME (or set STARPU_PERF_MODEL_DIR and STARPU_HOSTNAME); --calib default replays on the built-in example machine"}
		}
		src := "the built-in example machine (no machine given: name yours with --calib FILE, --starpu DIR --host NAME or STARPU_HOSTNAME)"
		if loc, err := starpu.Locate(environ, "", ""); err == nil {
			s.note(stderr, "StarPU's calibration of this host is in %s (host %s); it is not used unless named (--host %s or STARPU_HOSTNAME)", loc.Dir, loc.Host, loc.Host)
		}
		return []*machine{{file: calibrate.Default(), builtin: true, source: src}}, nil
	}
	hosts := []string{""}
	if m.host != "" {
		var err error
		if hosts, err = m.values("host", m.host); err != nil {
			return nil, err
		}
	}
	for _, h := range hosts {
		loc, err := starpu.Locate(environ, m.starpuDir, h)
		if err != nil {
			return nil, err
		}
		for _, from := range []string{loc.DirFrom, loc.HostFrom} {
			if v := strings.TrimPrefix(strings.SplitN(from, "/", 2)[0], "$"); strings.HasPrefix(v, "STARPU_") {
				v = strings.Fields(v)[0]
				s.env = append(s.env, v+"="+getenv(v))
			}
		}
		if m.starpuDir != "" && getenv("STARPU_PERF_MODEL_DIR") != "" {
			s.note(stderr, "STARPU_PERF_MODEL_DIR=%s not used: --starpu given", getenv("STARPU_PERF_MODEL_DIR"))
		}
		if h != "" && getenv("STARPU_HOSTNAME") != "" {
			s.note(stderr, "STARPU_HOSTNAME=%s not used: --host given", getenv("STARPU_HOSTNAME"))
		}
		f, warn, err := calibrate.Import(loc.Dir, loc.Host)
		if err != nil {
			return nil, err
		}
		out = append(out, &machine{file: f, warnings: warn,
			source: fmt.Sprintf("StarPU sampling directory %s (%s), host %s (%s)", loc.Dir, loc.DirFrom, loc.Host, loc.HostFrom)})
	}
	return out, nil
}

// whatIfs multiplies the machines by the what-ifs, in this order: GPU
// count, PCI bandwidth, GPU memory limit, GPU swap.
func (m *machineFlags) whatIfs(bases []*machine) ([]*machine, error) {
	type stage []func(*machine) (*machine, error)
	var stages []stage
	fileStage := func(what sweep.WhatIf, apply func(*calibrate.File) (*calibrate.File, error)) func(*machine) (*machine, error) {
		return func(mc *machine) (*machine, error) {
			g, err := apply(mc.file)
			if err != nil {
				return nil, fmt.Errorf("what-if on %s: %w", mc.file.Name, err)
			}
			c := *mc
			c.file = g
			c.whatIfs = append(append([]sweep.WhatIf(nil), mc.whatIfs...), what)
			return &c, nil
		}
	}
	if len(m.gpusV) > 0 {
		var st stage
		for _, k := range m.gpusV {
			st = append(st, fileStage(sweep.WhatIf{Kind: "gpus", Value: float64(k)}, func(f *calibrate.File) (*calibrate.File, error) { return f.WithGPUs(k) }))
		}
		stages = append(stages, st)
	}
	if len(m.pciV) > 0 {
		var st stage
		for _, x := range m.pciV {
			st = append(st, fileStage(sweep.WhatIf{Kind: "pci-bw-scale", Value: x}, func(f *calibrate.File) (*calibrate.File, error) { return f.ScalePCIBandwidth(x) }))
		}
		stages = append(stages, st)
	}
	if len(m.memV) > 0 {
		var st stage
		for i, b := range m.memV {
			from := "--gpu-mem " + showValue(m.memText[i])
			st = append(st, func(mc *machine) (*machine, error) {
				c := *mc
				c.gpuMemLimit, c.gpuMemFrom = b, from
				c.whatIfs = append(append([]sweep.WhatIf(nil), mc.whatIfs...), sweep.WhatIf{Kind: "gpu-mem", Value: float64(b)})
				return &c, nil
			})
		}
		stages = append(stages, st)
	}
	if m.gpuFrom != "" {
		other, err := calibrate.ReadFile(m.gpuFrom)
		if err != nil {
			return nil, err
		}
		stages = append(stages, stage{fileStage(sweep.WhatIf{Kind: "gpu-from", Text: other.Name}, func(f *calibrate.File) (*calibrate.File, error) { return f.WithGPUFrom(other) })})
	}
	ms := bases
	for _, mc := range ms {
		mc.base = mc.file.Name
	}
	for _, st := range stages {
		var next []*machine
		for _, mc := range ms {
			for _, apply := range st {
				c, err := apply(mc)
				if err != nil {
					return nil, err
				}
				next = append(next, c)
			}
		}
		ms = next
	}
	return ms, nil
}

// label is the machine's name in outputs: the calibration's name (with its
// what-ifs) and the memory limit asked for.
func (mc *machine) label() string {
	if mc.gpuMemLimit > 0 {
		return mc.file.Name + "+mem" + bytesize.Format(mc.gpuMemLimit)
	}
	return mc.file.Name
}
