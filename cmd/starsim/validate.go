package main

// Validation of flag values, output paths and the size of what a command
// is asked to do, before any work: a bad request fails at once with the
// flag, its value and the limit, never with a crash, a hang or a partial
// output after minutes of work.

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/starsim/starsim/calibrate"
	"github.com/starsim/starsim/internal/bytesize"
	"github.com/starsim/starsim/models"
	"github.com/starsim/starsim/runtime/cost"
	"github.com/starsim/starsim/runtime/sched"
	"github.com/starsim/starsim/runtime/sim"
	"github.com/starsim/starsim/traces/formats"
)

// Budgets of one command (documented in the README).
const (
	// maxRunTasks bounds the tasks, and the handles, of one simulated
	// graph: about 16 GiB at the ~480 bytes per task a run takes.
	maxRunTasks = 1 << 25
	// maxMatrixBytes bounds the matrix (N² elements): 1 PiB, so that byte
	// counts stay far from int64's range.
	maxMatrixBytes = 1 << 50
	// maxSweepJobs bounds the runs of one sweep (after sharding).
	maxSweepJobs = 100000
	// maxParallel bounds sweep -j.
	maxParallel = 1024
	// minSampleS is the shortest --sample-interval (1 µs, the runtime's
	// smallest cost); sim.MaxSamples bounds the series' length.
	minSampleS = 1e-6
	// minGPUMemBytes is the least GPU memory limit --gpu-mem and
	// STARPU_LIMIT_CUDA[_<id>]_MEM accept, as a device's memory must be
	// (sim.MinGPUMemoryBytes: StarPU uses 90 % of it in whole MiB,
	// which is 0, unlimited, below 2 MiB).
	minGPUMemBytes = 2 << 20
	// maxGPUMemBytes bounds the GPU memory limits (1 PiB).
	maxGPUMemBytes = 1 << 50
	// maxGPUs bounds --gpus: 64 memory nodes, RAM included.
	maxGPUs = 63
	// minPCIScale and maxPCIScale bound --pci-bw-scale.
	minPCIScale, maxPCIScale = 1e-6, 1e6
)

// flagError is a usage error about one flag's value: "--NAME VALUE: why"
// (name "-j": "-j 0: why", for a flag known by its letter).
func flagError(name string, value any, format string, args ...any) error {
	return sourceError(dashed(name), value, format, args...)
}

// dashed is a flag's name as it is written: "ncpu" is "--ncpu", "-j" is
// itself.
func dashed(name string) string {
	if strings.HasPrefix(name, "-") {
		return name
	}
	return "--" + name
}

// sourceError is flagError for a value from a flag ("--ncuda") or from
// StarPU's environment ("STARPU_NCUDA": "STARPU_NCUDA=VALUE: why").
func sourceError(src string, value any, format string, args ...any) error {
	sep := " "
	if !strings.HasPrefix(src, "-") {
		sep = "="
	}
	return &usageError{fmt.Sprintf("%s%s%s: %s", src, sep, showValue(value), fmt.Sprintf(format, args...))}
}

// envOf names the StarPU variable a flag falls back on.
var envOf = map[string]string{"sched": "STARPU_SCHED", "ncpu": "STARPU_NCPU", "ncuda": "STARPU_NCUDA"}

// source names where a flag's value came from: the flag, or StarPU's
// environment when the flag was not given.
func (f *runFlags) source(flag string) string {
	if env := envOf[flag]; env != "" && !f.set[flag] && getenv(env) != "" {
		return env
	}
	return "--" + flag
}

// checkWorkers checks the worker counts against a machine, as sim.New
// would, naming the flag (or variable): a GPU worker per GPU at most, a
// core for each CPU worker and each GPU's driver thread, and one worker
// at least.
func checkWorkers(ncpuSrc, ncudaSrc string, ncpu, ncuda int, cal *calibrate.File) error {
	gpus := 0
	for _, d := range cal.Machine.Devices {
		if d.Kind == "cuda" || d.Kind == "hip" {
			gpus++
		}
	}
	if ncuda > gpus {
		return sourceError(ncudaSrc, ncuda, "%s has %d GPUs", cal.Name, gpus)
	}
	used := gpus
	if ncuda >= 0 {
		used = ncuda
	}
	cores := cal.Machine.CPUCores
	if ncpu >= 0 && ncpu+used > cores {
		return sourceError(ncpuSrc, ncpu, "%d CPU workers and %d GPU drivers need %d cores, %s has %d: at most %d CPU workers", ncpu, used, ncpu+used, cal.Name, cores, max(cores-used, 0))
	}
	if used > cores {
		return sourceError(ncudaSrc, used, "%d GPU drivers need %d cores, %s has %d", used, used, cal.Name, cores)
	}
	if ncpu == 0 && used == 0 {
		return sourceError(ncpuSrc, 0, "with %d GPU workers, no worker would run the tasks (%s has %d GPUs)", used, cal.Name, gpus)
	}
	return nil
}

// showValue writes a flag value for a message: as is, unless it is empty
// or holds characters beyond letters, digits and . _ : / , + - (then
// quoted, so that a message stays one line).
func showValue(v any) string {
	s := fmt.Sprint(v)
	if s == "" {
		return `""`
	}
	for _, c := range s {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("._:/,+-", c)
		if !ok {
			return strconv.Quote(s)
		}
	}
	return s
}

// validateCommon checks the flags run and replay share (cmd: "run" or
// "replay"), the machine flags' values included.
func (f *runFlags) validateCommon(cmd string) error {
	if err := f.mf.check(cmd, f.set); err != nil {
		return err
	}
	for _, c := range []struct {
		name string
		v    int
	}{{"ncpu", f.ncpu}, {"ncuda", f.ncuda}} {
		if f.set[c.name] && c.v < 0 {
			return flagError(c.name, c.v, "want a worker count >= 0 (leave the flag out for StarPU's default)")
		}
	}
	if isExternal(f.sched) {
		timeout, err := checkTimeout(f.schedTimeout)
		if err != nil {
			return err
		}
		if f.newSched, err = externalScheduler(f.source("sched"), f.sched, f.stderr, timeout); err != nil {
			return err
		}
	} else if !slices.Contains(sched.Names(), f.sched) {
		return unknownScheduler(f.source("sched"), f.sched)
	} else if f.set["sched-timeout"] {
		return flagError("sched-timeout", f.schedTimeout, "only with --sched external:COMMAND")
	}
	switch cost.Durations(f.durations) {
	case cost.Mean, cost.Normal, cost.Histogram:
	default:
		return flagError("durations", f.durations, "want mean, normal or histogram")
	}
	if err := checkSampleInterval(f.sampleS); err != nil {
		return err
	}
	if f.explainTask < -1 {
		return flagError("explain-task", f.explainTask, "want a task id >= 0")
	}
	if f.explainTask >= 0 && f.explain == "" {
		return &usageError{"--explain-task needs --explain FILE"}
	}
	outs := outputList{}
	if f.explain != "-" {
		outs.add("explain", f.explain)
	}
	// The single-file traces, then the other outputs, then the trace
	// directories, whose files are checked for clashes only.
	for i, w := range formats.Writers {
		if w.Files == nil {
			outs.add("trace-"+w.Name, f.traceOut[i])
		}
	}
	outs.add("cpuprofile", f.cpuProfile)
	outs.add("plot", f.plot, ".png", ".svg")
	for i, w := range formats.Writers {
		if w.Files == nil || f.traceOut[i] == "" {
			continue
		}
		flag := "trace-" + w.Name
		if err := checkOutputDir(flag, f.traceOut[i]); err != nil {
			return err
		}
		for _, name := range w.Files {
			outs.addInDir(flag, filepath.Join(f.traceOut[i], name))
		}
	}
	return outs.check()
}

// validateRun checks run's flags, and the size of the graph they ask for.
func (f *runFlags) validateRun() error {
	if err := f.validateCommon("run"); err != nil {
		return err
	}
	app, err := lookupApp(f.app)
	if err != nil {
		return err
	}
	if err := checkInnerBlock(f.set["ib"], f.ib, []string{app}, []int{f.block}); err != nil {
		return err
	}
	prec := models.Single
	if f.double {
		prec = models.Double
	}
	return checkGraphSize(f.app, f.n, f.block, prec)
}

// checkInnerBlock checks --ib: QR's only, from 1 to every block size.
func checkInnerBlock(set bool, ib int, apps []string, blocks []int) error {
	if !set {
		return nil
	}
	if !slices.Contains(apps, "qr") {
		return flagError("ib", ib, "QR's inner block size: only with --app qr")
	}
	for _, b := range blocks {
		if ib < 1 || ib > b {
			return flagError("ib", ib, "want an inner block size from 1 to the block size (%d)", b)
		}
	}
	return nil
}

// lookupApp checks an application name.
func lookupApp(app string) (string, error) {
	if a, ok := models.Lookup(app); ok {
		return a.Name, nil
	}
	return "", flagError("app", app, "unknown application (want %s)", strings.Join(models.Names(), " or "))
}

// checkGraphSize checks --n and --block, and the graph's size against the
// budget, without building it.
func checkGraphSize(app string, n, block int, prec models.Precision) error {
	if n <= 0 {
		return flagError("n", n, "want a matrix order > 0")
	}
	if block <= 0 {
		return flagError("block", block, "want a tile size > 0")
	}
	if n%block != 0 {
		return flagError("n", n, "not a multiple of --block %d", block)
	}
	if b := float64(n) * float64(n) * float64(prec.ElemBytes()); b > maxMatrixBytes {
		return flagError("n", n, "a %s matrix of %.3g bytes: at most %d (1 PiB)", prec, b, int64(maxMatrixBytes))
	}
	tasks, handles, _, err := models.Size(app, models.Options{N: n, Block: block, Precision: prec})
	if err != nil {
		return &usageError{strings.TrimPrefix(err.Error(), "models: ")}
	}
	if tasks > maxRunTasks || handles > maxRunTasks {
		what := fmt.Sprintf("%d tasks", tasks)
		if tasks == math.MaxInt64 {
			what = "more than 2^60 tasks"
		}
		return &usageError{fmt.Sprintf("--n %d --block %d: %s with %d tiles per side has %s and %d tiles: at most %d (2^25) of each per run; use larger tiles or a smaller N",
			n, block, app, n/block, what, handles, maxRunTasks)}
	}
	return nil
}

// checkSampleInterval checks --sample-interval (0: off).
func checkSampleInterval(s float64) error {
	if s == 0 {
		return nil
	}
	if math.IsNaN(s) || math.IsInf(s, 0) || s < minSampleS {
		return flagError("sample-interval", strconv.FormatFloat(s, 'g', -1, 64), "want an interval of at least %g s (or 0: no sampling); at most %d samples per run", minSampleS, sim.MaxSamples)
	}
	return nil
}

// outputList collects a command's output paths, to check them all and
// find one given twice.
type outputList struct {
	flags, paths []string
	exts         [][]string
	inNewDir     []bool // in a directory the command makes: not checked
}

// add records an output path ("" is skipped); exts, when given, are the
// accepted extensions.
func (o *outputList) add(flag, path string, exts ...string) {
	if path == "" {
		return
	}
	o.flags = append(o.flags, flag)
	o.paths = append(o.paths, path)
	o.exts = append(o.exts, exts)
	o.inNewDir = append(o.inNewDir, false)
}

// addInDir records a file of an output directory, checked with it
// (checkOutputDir), for clashes only.
func (o *outputList) addInDir(flag, path string) {
	o.add(flag, path)
	o.inNewDir[len(o.inNewDir)-1] = true
}

// check checks every output path (checkOutput) and that no two coincide.
func (o *outputList) check() error {
	for i, p := range o.paths {
		if st, err := os.Stat(p); err == nil && !st.IsDir() && !st.Mode().IsRegular() {
			continue // a device or pipe (/dev/null) takes several outputs
		}
		for j := 0; j < i; j++ {
			if filepath.Clean(o.paths[j]) == filepath.Clean(p) {
				return flagError(o.flags[i], p, "also the output of %s: give each output its own file", dashed(o.flags[j]))
			}
		}
		if o.inNewDir[i] {
			continue
		}
		if err := checkOutput(o.flags[i], p, o.exts[i]...); err != nil {
			return err
		}
	}
	return nil
}

// checkOutput checks an output file path before any work: a known
// extension (when exts are given; a usage error), not a directory, and a
// directory that exists and takes new files.
func checkOutput(flag, path string, exts ...string) error {
	if err := checkExt(flag, path, exts...); err != nil {
		return err
	}
	if strings.HasSuffix(path, "/") || strings.HasSuffix(path, string(filepath.Separator)) {
		return fmt.Errorf("%s %s: is a directory, want a file name", dashed(flag), path)
	}
	if st, err := os.Stat(path); err == nil {
		switch {
		case st.IsDir():
			return fmt.Errorf("%s %s: is a directory, want a file name", dashed(flag), path)
		case !st.Mode().IsRegular():
			return nil // a device or pipe (/dev/null), written in place
		}
	}
	dir := filepath.Dir(path)
	st, err := os.Stat(dir)
	switch {
	case err != nil:
		return fmt.Errorf("%s %s: directory %s does not exist", dashed(flag), path, dir)
	case !st.IsDir():
		return fmt.Errorf("%s %s: %s is not a directory", dashed(flag), path, dir)
	}
	return checkWritable(flag, path, dir)
}

// checkExt checks that path ends in one of exts (any letter case; none
// given: any), a usage error.
func checkExt(flag, path string, exts ...string) error {
	if len(exts) == 0 {
		return nil
	}
	ext := strings.ToLower(filepath.Ext(path))
	if !slices.Contains(exts, ext) {
		return flagError(flag, path, "unsupported extension %q (want %s)", filepath.Ext(path), strings.Join(exts, " or "))
	}
	return nil
}

// checkWritable checks that dir takes new files (by making one).
func checkWritable(flag, path, dir string) error {
	tmp, err := os.CreateTemp(dir, ".starsim-check-*")
	if err != nil {
		return fmt.Errorf("%s %s: cannot create files in %s", dashed(flag), path, dir)
	}
	tmp.Close()
	os.Remove(tmp.Name())
	return nil
}

// checkOutputDir checks an output directory: an existing directory that
// takes new files, or a path whose nearest existing parent is one.
func checkOutputDir(flag, dir string) error {
	p := filepath.Clean(dir)
	for {
		st, err := os.Stat(p)
		if err == nil {
			if !st.IsDir() {
				if p == filepath.Clean(dir) {
					return fmt.Errorf("%s %s: not a directory", dashed(flag), dir)
				}
				return fmt.Errorf("%s %s: %s is not a directory", dashed(flag), dir, p)
			}
			return checkWritable(flag, dir, p)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return fmt.Errorf("%s %s: cannot create the directory", dashed(flag), dir)
		}
		p = parent
	}
}

// explainNew names the flag or variable behind an error of sim.New
// where one is: the GPU memory limit a task's data does not fit in.
func explainNew(mc *machine, err error) error {
	var fe *sim.FitError
	if !errors.As(err, &fe) {
		return err
	}
	src := mc.gpuMemFrom
	if s, ok := mc.perGPUFrom[fe.Node]; ok && mc.gpuMemLimit == 0 {
		src = s
	}
	if src == "" {
		return err
	}
	return fmt.Errorf("%s: %s cannot hold the data of task %d (%s), %d bytes at once (whole 32 MiB suballocator chunks and large buffers): want at least %d bytes (%s)",
		src, fe.Node, fe.Task, fe.Name, fe.NeedBytes, fe.NeedBytes, bytesize.Format(roundUpMiB(fe.NeedBytes)))
}

// roundUpMiB rounds b up to whole MiB.
func roundUpMiB(b int64) int64 { return (b + 1<<20 - 1) >> 20 << 20 }

// gpuMemWant says what a GPU memory limit may be.
const gpuMemWant = "want a GPU memory limit from 2MiB to 1PiB, such as 400MiB, 3GiB or 1610612736 (bytes)"

// parseGPUMem reads a GPU memory limit (--gpu-mem; src names it) with
// internal/bytesize, from 2 MiB to 1 PiB.
func parseGPUMem(src, v string) (int64, error) {
	b, err := bytesize.Parse(v)
	var be *bytesize.Error
	if errors.As(err, &be) {
		reason, _, _ := strings.Cut(be.Reason, "; want ")
		if !strings.Contains(reason, "write ") {
			reason += "; " + gpuMemWant
		}
		return 0, sourceError(src, v, "%s", reason)
	}
	if err != nil {
		return 0, sourceError(src, v, "%v", err)
	}
	if b < minGPUMemBytes || b > maxGPUMemBytes {
		return 0, sourceError(src, v, "%s", gpuMemWant)
	}
	return b, nil
}
