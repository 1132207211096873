package main

// The adversarial table: bad and edge inputs for every command, each
// refused cleanly (exit 2 for usage, 1 for input and run errors; one line
// "starsim CMD: ..." on stderr naming what was wrong; nothing on stdout; no
// file left behind, partial or temporary), and good ones accepted.

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/starsim/starsim/calibrate"
	"github.com/starsim/starsim/internal/synthsampling"
	"github.com/starsim/starsim/models/generation"
)

// advFixtures writes the inputs the cases refer to into dir and returns a
// replacer of the placeholders: $D (the directory), $CAL (the embedded
// calibration as a file), $REC (a run's tasks.rec), $CHROME (its Chrome
// trace), $PAJE (its Paje trace), $CSV (a sweep's CSV of 2 jobs), $SHARD1
// (its shard 1/2) and $SP (a synthetic StarPU sampling directory of host
// "synth", with an unreadable model no work uses).
func advFixtures(t *testing.T, dir string) *strings.Replacer {
	t.Helper()
	var cal bytes.Buffer
	require.NoError(t, calibrate.Default().Write(&cal))
	calPath := filepath.Join(dir, "default.calib.json")
	require.NoError(t, os.WriteFile(calPath, cal.Bytes(), 0o644))
	must := func(args ...string) {
		code, _, errs := runCLI(args...)
		require.Equal(t, 0, code, "%v: %s", args, errs)
	}
	must("run", "--n", "2880", "--trace-rec", filepath.Join(dir, "rec"), "--trace-chrome", filepath.Join(dir, "trace.json"), "--trace-paje", filepath.Join(dir, "trace.paje"))
	must("sweep", "--n", "1920,2880", "--sched", "dmda", "--csv", filepath.Join(dir, "all.csv"))
	must("sweep", "--n", "1920,2880", "--sched", "dmda", "--shard", "1/2", "--csv", filepath.Join(dir, "s1.csv"))
	sp := filepath.Join(dir, "sampling")
	require.NoError(t, synthsampling.Write(sp, synthsampling.Options{Host: "synth", Gen: generation.V14, CPUs: 3, GPUs: 2,
		Files: map[string]string{"unused_model.synth": "##################\n# garbage\n"}}))
	return strings.NewReplacer("$D", dir, "$CAL", calPath, "$REC", filepath.Join(dir, "rec", "tasks.rec"),
		"$CHROME", filepath.Join(dir, "trace.json"), "$PAJE", filepath.Join(dir, "trace.paje"), "$CSV", filepath.Join(dir, "all.csv"),
		"$SHARD1", filepath.Join(dir, "s1.csv"), "$SP", sp)
}

// advCase is one bad input: the command line (placeholders as in
// advFixtures), files to write first (path -> content, after
// replacement), the exit code and a part of the message.
type advCase struct {
	args  string
	files map[string]string
	code  int
	msg   string
}

// edit returns content with old replaced by new once (fixtures' text).
func edit(t *testing.T, path, old, new string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Contains(t, string(data), old, "fixture %s", path)
	return strings.Replace(string(data), old, new, 1)
}

func adversarialCases(t *testing.T, r *strings.Replacer, dir string) []advCase {
	rec := r.Replace("$REC")
	chrome := r.Replace("$CHROME")
	cal := r.Replace("$CAL")
	paje := r.Replace("$PAJE")

	f := func(kv ...string) map[string]string {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	// A tasks.rec of two tasks, for the graph checks.
	task := func(job, deps string) string {
		s := "Name: T\nModel: chol_model_gemm\nJobId: " + job + "\nSubmitOrder: " + job + "\n"
		if deps != "" {
			s += "DependsOn: " + deps + "\n"
		}
		return s + "WorkerId: 0\nStartTime: " + job + "\nEndTime: " + job + ".5\nFootprint: 24c84a50\nHandles: 1" + job + "\nModes: RW\nSizes: 3686400\n\n"
	}
	fifo, sparse := "\x00FIFO", "\x00SPARSE" // made as a named pipe, a sparse 3 GiB file
	priceOK := `{"Tesla V100-PCIE-32GB": 9000, "cpu": 3000}`
	csvHead := "index,jobs,machine,machine_source,starpu_generation,app,sched,n,block,ncpu,ncuda,ntasks,gflops,makespan_s,slr,speedup,efficiency,energy_j,busy_pct,price,gflops_per_price\n"
	csvRow := "0,2,m,the built-in example machine,1.4,cholesky,dmda,1920,960,-1,-1,4,100,0.1,1,1,0.1,0,10,0,0\n"
	cases := []advCase{
		// run: sizes and budgets.
		{"run --n 1152 --block 1", nil, 2, "--n 1152 --block 1: cholesky with 1152 tiles per side has 255467904 tasks and 664128 tiles: at most 33554432 (2^25)"},
		{"run --n 4000000 --block 1", nil, 2, "more than 2^60 tasks"},
		{"run --n 2147483647 --block 2147483647 --double", nil, 2, "--n 2147483647: a double matrix"},
		{"run --sample-interval 1e-12 --json", nil, 2, "--sample-interval 1e-12: want an interval of at least 1e-06 s"},
		{"run --sample-interval -1", nil, 2, "--sample-interval -1:"},
		{"run --sample-interval NaN", nil, 2, "--sample-interval NaN:"},
		{"run --sample-interval +Inf --json", nil, 2, "--sample-interval +Inf:"},
		{"run --sample-interval 1e-6 --json --n 38400", nil, 1, "at most 8388608 (2^23): use an interval of at least"},
		{"run --ncpu -5", nil, 2, "--ncpu -5: want a worker count >= 0"},
		{"run --ncuda -1", nil, 2, "--ncuda -1: want a worker count >= 0"},
		{"run --ncuda 99", nil, 2, "--ncuda 99: starsim-default-2s-4v100 has 4 GPUs"},
		{"run --ncpu 1000", nil, 2, "--ncpu 1000: 1000 CPU workers and 4 GPU drivers need 1004 cores, starsim-default-2s-4v100 has 40: at most 36 CPU workers"},
		{"run --ncpu 0 --ncuda 0", nil, 2, "--ncpu 0: with 0 GPU workers, no worker would run the tasks"},
		{"run --ncpu 1e3", nil, 2, "--ncpu 1e3: want an integer (see starsim run --help)"},
		{"run --gpu-mem -1", nil, 2, "--gpu-mem -1: negative; want a GPU memory limit from 2MiB to 1PiB"},
		{"run --gpu-mem -1MiB", nil, 2, "--gpu-mem -1MiB: negative; want a GPU memory limit"},
		{"run --gpu-mem 1e300", nil, 2, "--gpu-mem 1e300: unknown unit \"e300\"; want a GPU memory limit from 2MiB to 1PiB"},
		{"run --gpu-mem 400M", nil, 2, "--gpu-mem 400M: unit \"M\" is ambiguous: write MiB (powers of 1024) or MB (powers of 1000)"},
		{"run --gpu-mem 1.5B", nil, 2, "--gpu-mem 1.5B: not a whole number of bytes"},
		{"run --gpu-mem 99999999999PiB", nil, 2, "--gpu-mem 99999999999PiB: too large"},
		{"run --gpu-mem 0", nil, 2, "--gpu-mem 0: want a GPU memory limit from 2MiB to 1PiB"},
		{"run --gpu-mem 1MiB", nil, 2, "--gpu-mem 1MiB: want a GPU memory limit from 2MiB"},
		{"run --gpu-mem 2000000000000000", nil, 2, "--gpu-mem 2000000000000000: want a GPU memory limit from 2MiB to 1PiB"},
		{"run --gpu-mem 20MiB", nil, 1, "--gpu-mem 20MiB: CUDA0 cannot hold the data of task 0 (POTRF), 33554432 bytes at once"},
		{"run --gpu-mem 20000000 --double", nil, 1, "--gpu-mem 20000000: CUDA0 cannot hold the data of task 11 (GEMM), 22118400 bytes at once (whole 32 MiB suballocator chunks and large buffers): want at least 22118400"},
		{"run --n 0", nil, 2, "--n 0: want a matrix order > 0"},
		{"run --n -960", nil, 2, "--n -960: want a matrix order > 0"},
		{"run --block 0", nil, 2, "--block 0: want a tile size > 0"},
		{"run --n 9601", nil, 2, "--n 9601: not a multiple of --block 960"},
		{"run --n abc", nil, 2, "--n abc: want an integer"},
		{"run --n 99999999999999999999", nil, 2, "--n 99999999999999999999: out of range"},
		{"run --block 960 --n 3840 --app svd", nil, 2, "--app svd: unknown application"},
		{"run --sched fifo2", nil, 2, "--sched fifo2: unknown scheduler"},
		{"run --durations uniform", nil, 2, "--durations uniform: want mean, normal or histogram"},
		{"run --seed -1", nil, 2, "--seed -1: want an integer >= 0"},
		{"run --explain-task 3", nil, 2, "--explain-task needs --explain FILE"},
		{"run --explain-task -5 --explain $D/e.log", nil, 2, "--explain-task -5: want a task id >= 0"},
		{"run --n 1920 --explain-task 999 --explain $D/e.log", nil, 2, "--explain-task 999: the graph has 4 tasks (ids 0 to 3)"},
		{"run --explain $D/missing/e.log", nil, 1, "--explain $D/missing/e.log: directory $D/missing does not exist"},
		{"run --explain $D", nil, 1, "--explain $D: is a directory, want a file name"},
		{"run --explain $D/", nil, 1, "is a directory"},
		{"run --ncuda 99 --trace-paje $D/t.paje", nil, 2, "--ncuda 99"},
		{"run --n 1920 --block 480 --trace-paje $D/t.paje", nil, 1, "is calibrated on none of the workers' archs (not written: $D/t.paje)"},
		{"run --n 1920 --block 480 --trace-chrome $D/t.json --trace-rec $D/newrec", nil, 1, "(not written: $D/t.json, $D/newrec/tasks.rec, $D/newrec/data.rec)"},
		{"run --trace-chrome $D/x.json --trace-paje $D/x.json", nil, 2, "--trace-chrome $D/x.json: also the output of --trace-paje"},
		{"run --trace-rec $D/afile", f("afile", "x"), 1, "--trace-rec $D/afile: not a directory"},
		{"run --trace-rec $D/afile/sub", f("afile", "x"), 1, "--trace-rec $D/afile/sub: $D/afile is not a directory"},
		{"run --trace-paje /proc/starsim.paje", nil, 1, "cannot create files in /proc"},
		{"run --cpuprofile $D/missing/cpu.prof", nil, 1, "directory $D/missing does not exist"},
		{"run extra", nil, 2, "unexpected argument \"extra\""},
		{"run --bogus", nil, 2, "--bogus: unknown flag (see starsim run --help)"},
		{"run --calib $D/missing.json", nil, 1, "$D/missing.json: no such file or directory"},
		{"run --calib $D", nil, 1, "$D: is a directory"},
		{"run --calib $D/empty.json", f("empty.json", ""), 1, "$D/empty.json:1: truncated JSON"},
		{"run --calib $D/m.json", f("m.json", edit(t, cal, `"memory_bytes": 34359738368`, `"memory_bytes": 1000000`)), 1, "memory_bytes must be at least 2097152"},
		{"run --calib $D/m.json", f("m.json", edit(t, cal, `"cpu_speed_flops": 2000000000`, `"cpu_speed_flops": 1e999`)), 1, "$D/m.json:"},
		{"run --calib $D/m.json", f("m.json", edit(t, cal, `"cpu_cores": 40`, `"cpu_cores": 40000000`)), 1, "cpu_cores must be from 1 to"},
		{"run --calib $D/m.json", f("m.json", edit(t, cal, `"task_push_s": 0.000001`, `"task_push_s": 1e300`)), 1, "task_push_s must be"},
		{"run --calib $D/m.json", f("m.json", edit(t, cal, `"mean_us": `, `"mean_us": 1e300, "x_mean_us": `)), 1, "$D/m.json:"},
		{"run --calib $D/m.json", f("m.json", edit(t, cal, `"format": "starsim-calibration"`, `"format": "other"`)), 1, "format must be"},
		{"run --calib $CAL --starpu $D", nil, 2, "not both"},
		{"run --starpu $D", nil, 1, "$D: no calibration for host \"starsim-test-host\": the directory has no bus/HOST.config for any host"},
		{"run --starpu $D/nowhere --host attila", nil, 1, "nowhere"},
		{"run --starpu $SP --host atila", nil, 1, "no calibration for host \"atila\" (no bus/atila.config); hosts here: synth"},
		{"run --host atila", nil, 1, "no StarPU calibration for host \"atila\""},
		{"run --starpu $SP --host synth --n 1920 --starpu-generation 1.3", nil, 1, "calibration synth: the calibration has no model for cholesky's POTRF (chol_model_11)"},
		{"run --starpu-generation 2.0", nil, 2, "--starpu-generation 2.0: unknown StarPU generation \"2.0\""},
		{"run --starpu-generation 1.4,1.3", nil, 2, "--starpu-generation 1.4,1.3: unknown StarPU generation"},
		{"run --gpus 0", nil, 2, "--gpus 0: \"0\" is not a positive integer"},
		{"run --gpus 64", nil, 2, "--gpus 64: 64 GPUs: at most 63"},
		{"run --gpus 2,3", nil, 2, "--gpus 2,3: want one value (only sweep takes lists)"},
		{"run --pci-bw-scale 0", nil, 2, "--pci-bw-scale 0: \"0\": want a number from 1e-06 to 1e+06"},
		{"run --pci-bw-scale NaN", nil, 2, "--pci-bw-scale NaN"},
		{"run --gpu-from $D/nope.json", nil, 1, "$D/nope.json: no such file or directory"},
		{"run --sched-alpha NaN", nil, 2, "--sched-alpha NaN: want a finite number"},
		{"run --sched-gamma 1e99", nil, 2, "--sched-gamma 1e99: want a finite number"},
		{"run --plot $D/x.gif", nil, 2, "--plot $D/x.gif: unsupported extension \".gif\" (want .png or .svg)"},
		{"run --plot $D", nil, 2, "--plot $D: unsupported extension"},
		{"run --plot $D/p.png", f("p.png/.keep", ""), 1, "--plot $D/p.png: is a directory"},
		{"run --plot $D/missing/p.png", nil, 1, "--plot $D/missing/p.png: directory $D/missing does not exist"},
		{"run --plot $D/p.png --trace-paje $D/p.png", nil, 2, "--plot $D/p.png: also the output of --trace-paje"},
		{"run --n 1920 --block 480 --plot $D/p.png --trace-paje $D/t.paje", nil, 1, "is calibrated on none of the workers' archs (not written: $D/t.paje)"},

		// replay: the graph and the numbers.
		{"replay", nil, 2, "want exactly one TASKS.rec"},
		{"replay $REC $REC", nil, 2, "want exactly one TASKS.rec"},
		{"replay --calib default $D/nope.rec", nil, 1, "$D/nope.rec: no such file or directory"},
		{"replay --calib default $D/emptydir", f("emptydir/.keep", ""), 1, "$D/emptydir/tasks.rec: no such file or directory"},
		{"replay --calib default $D/e.rec", f("e.rec", ""), 1, "$D/e.rec: no executed task"},
		{"replay --calib default $D/t.rec", f("t.rec", edit(t, rec, "StartTime: 0.003", "StartTime: 1e308")), 1, "$D/t.rec:17: StartTime: 1e+308 is beyond 1e+12"},
		{"replay --calib default $D/t.rec", f("t.rec", edit(t, rec, "StartTime: 0.003", "StartTime: NaN")), 1, "$D/t.rec:17: StartTime: \"NaN\" is not a finite number"},
		{"replay --calib default $D/t.rec", f("t.rec", edit(t, rec, "EndTime: 4.05142", "EndTime: 0.001")), 1, "$D/t.rec:18: EndTime 0.001 is before StartTime 0.003"},
		{"replay --calib default $D/t.rec", f("t.rec", edit(t, rec, "JobId: 2\n", "JobId: 1\n")), 1, "$D/t.rec:50: JobId 1 repeated (first on line 8)"},
		{"replay --calib default $D/t.rec", f("t.rec", edit(t, rec, "DependsOn: 1\n", "DependsOn: 3\n")), 1, "job 3 depends on itself"},
		{"replay --calib default $D/t.rec", f("t.rec", edit(t, rec, "DependsOn: 1\n", "DependsOn: 1 999\n")), 1, "depends on job 999, which no record of the trace has (--ignore-missing-deps drops such dependencies)"},
		{"replay --calib default $D/t.rec", f("t.rec", task("1", "2")+task("2", "1")), 1, "dependency cycle"},
		{"replay --calib default $D/t.rec", f("t.rec", task("1", "2")+task("2", "")), 1, "$D/t.rec:1: T (job 1) depends on T (job 2) (line 14), submitted after it"},
		{"replay --calib default $D/t.rec", f("t.rec", edit(t, rec, "Modes: RW\n", "Modes: RW R\n")), 1, "Modes has 2 entries but Handles"},
		{"replay --calib default $D/t.rec", f("t.rec", edit(t, rec, "Modes: RW\n", "Modes: SCRATCH\n")), 1, "access mode \"SCRATCH\" not supported"},
		{"replay --calib default $D/t.rec", f("t.rec", edit(t, rec, "Sizes: 3686400\n", "Sizes: 99999999999999999999\n")), 1, "is not an integer"},
		{"replay --calib default $D/t.rec", f("t.rec", edit(t, rec, "Sizes: 3686400\n", "Sizes: 9000000000000000000\n")), 1, "is beyond 1125899906842624"},
		{"replay --calib default $D/t.rec", f("t.rec", edit(t, rec, "Priority: 0\n", "Priority: 99999999999\n")), 1, "priority 99999999999 is out of range"},
		{"replay --calib default $D/t.rec", f("t.rec", edit(t, rec, "GFlop: 0.29537296", "GFlop: -1")), 1, "GFlop: -1 is negative"},
		{"replay --calib default $D/t.rec", f("t.rec", edit(t, rec, "Name: POTRF\n", "garbage line\n")), 1, "$D/t.rec:8: expected \"Field: value\""},
		{"replay --calib default --static-workerid $D/t.rec", f("t.rec", edit(t, rec, "WorkerId: 0\n", "WorkerId: 9999\n")), 1, "pinned to worker 9999"},
		{"replay --calib default --ncpu -3 $REC", nil, 2, "--ncpu -3"},
		{"replay --calib default --ncuda 5 $REC", nil, 2, "--ncuda 5: starsim-default-2s-4v100 has 4 GPUs"},
		{"replay --calib default --sample-interval 1e-300 $REC", nil, 2, "--sample-interval 1e-300"},
		{"replay $REC", nil, 2, "replay needs the machine the trace ran on: give --calib FILE.calib.json, or --starpu DIR --host NAME"},
		{"replay --calib $D/nope.json $REC", nil, 1, "$D/nope.json: no such file or directory"},
		{"replay --calib default --gpu-mem 400M $REC", nil, 2, "--gpu-mem 400M: unit \"M\" is ambiguous"},
		{"replay --calib default --gpus 99 $REC", nil, 2, "--gpus 99: 99 GPUs: at most 63"},
		{"replay --calib default --starpu-generation 1.3 $REC", nil, 2, "--starpu-generation: unknown flag (see starsim replay --help)"},
		{"replay --calib default --plot $D/x.gif $REC", nil, 2, "--plot $D/x.gif: unsupported extension \".gif\""},
		{"replay --calib default $PAJE", nil, 1, "$PAJE: a Paje trace holds no data accesses nor dependencies to replay"},

		// compare.
		{"compare $REC", nil, 2, "want two traces A B, got 1 argument(s)"},
		{"compare $D/t.rec $REC", f("t.rec", edit(t, rec, "StartTime: 0.003", "StartTime: 1e308")), 1, "$D/t.rec:17: StartTime: 1e+308 is beyond"},
		{"compare $D/p.trace $REC", f("p.trace", cutPaje(t, paje)), 1, "$D/p.trace:"},
		{"compare $D/p.trace $REC", f("p.trace", (func() string { d, _ := os.ReadFile(paje); return string(d[:bytes.Index(d, []byte("\n%EndEventDef"))]) })()), 1, "$D/p.trace:"},
		{"compare $D/p.trace $REC", f("p.trace", "%EventDef PajeDefineContainerType 1\n% Alias string\n%EndEventDef\ngarbage\n"), 1, "$D/p.trace:4: event id \"garbage\" is not defined by a %EventDef"},
		{"compare $D/p.trace $REC", f("p.trace", edit(t, paje, "\n20\t0.003000\t", "\n20\t1e306\t")), 1, "is not a number of ms from 0 to 1e+12"},
		{"compare $D/p.trace $REC", f("p.trace", "%EventDef PajeDefineContainerType 1\n% Alias string\n% Type string\n% Name string\n%EndEventDef\n"), 1, "$D/p.trace: no kernel on any worker"},
		{"compare $CHROME $D/c.json", f("c.json", edit(t, chrome, `"ph":"X","pid":1,"tid":1,"ts":3.000`, `"ph":"X","pid":1,"tid":1,"ts":1e306`)), 1, "ends at 1e+306 µs, beyond 1e+15 µs"},
		{"compare $CHROME $D/c.json", f("c.json", (func() string { d, _ := os.ReadFile(chrome); return string(d[:len(d)/2]) })()), 1, "invalid JSON"},
		{"compare $CHROME $D/c.json", f("c.json", `{"other": 1}`), 1, "$D/c.json:1: JSON object without \"traceEvents\""},
		{"compare $CHROME $D/c.json", f("c.json", ""), 1, "$D/c.json: no executed task"},
		{"compare $REC $D/emptydir", f("emptydir/.keep", ""), 1, "$D/emptydir: directory holds no tasks.rec"},
		{"compare $REC $D/none", nil, 1, "$D/none: no such file or directory"},
		{"compare --plot $D/g.gif $REC $REC", nil, 2, "--plot $D/g.gif: unsupported extension \".gif\" (want .png or .svg)"},
		{"compare --plot $D $REC $REC", nil, 2, "unsupported extension"},
		{"compare --plot $D/d.png $REC $REC", f("d.png/.keep", ""), 1, "--plot $D/d.png: is a directory"},
		{"compare --plot $D/missing/g.png $REC $REC", nil, 1, "directory $D/missing does not exist"},

		// sweep: flags, budgets, outputs, prices, what-ifs.
		{"sweep --n 1:100000000:1", nil, 2, "--n 1:100000000:1: range \"1:100000000:1\" has 100000000 values: at most 100000"},
		{"sweep --n 960:96000000:960 --block 960", nil, 2, "the sweep has 300000 jobs: at most 100000 per sweep (split it with --shard I/N)"},
		{"sweep --n 10:20:0", nil, 2, "range \"10:20:0\": \"0\" is not a positive integer"},
		{"sweep --n 20:10:1", nil, 2, "want FROM <= TO"},
		{"sweep --n 1:2:3:4", nil, 2, "want FROM:TO:STEP"},
		{"sweep --n 9601", nil, 2, "--n 9601: not a multiple of --block 960"},
		{"sweep --n 9600,9600", nil, 2, "\"9600\" is listed twice"},
		{"sweep --n ,", nil, 2, "--n ,: empty list"},
		{"sweep --n 480000 --sched dmda,dmdar -j 2", nil, 2, "-j 2: 2 runs at once hold up to 41917000 tasks: at most 33554432 (2^25) in memory; lower -j"},
		{"sweep --n 1920000", nil, 2, "has 1335334000 tasks"},
		{"sweep -j 0", nil, 2, "-j 0: want 1 to 1024 parallel runs"},
		{"sweep -j -1", nil, 2, "-j -1: want 1 to 1024"},
		{"sweep -j 100000", nil, 2, "-j 100000"},
		{"sweep --shard 1/2junk", nil, 2, "--shard 1/2junk: want I/N with 1 <= I <= N"},
		{"sweep --shard 0/2", nil, 2, "--shard 0/2"},
		{"sweep --shard 3/2", nil, 2, "--shard 3/2"},
		{"sweep --shard 1/0", nil, 2, "--shard 1/0"},
		{"sweep --shard /", nil, 2, "--shard /"},
		{"sweep --shard -1/2", nil, 2, "--shard -1/2"},
		{"sweep --shard 1/99999999999", nil, 2, "--shard 1/99999999999"},
		{"sweep --n 1920 --sched dmda --shard 2/5", nil, 2, "--shard 2/5: the sweep has 1 jobs: at most 1 shards"},
		{"sweep --gpu-mem 1e300", nil, 2, "--gpu-mem 1e300: unknown unit \"e300\"; want a GPU memory limit from 2MiB to 1PiB"},
		{"sweep --gpu-mem 1000000", nil, 2, "--gpu-mem 1000000: want a GPU memory limit from 2MiB to 1PiB"},
		{"sweep --gpu-mem -1", nil, 2, "--gpu-mem -1: negative"},
		{"sweep --gpu-mem 1GiB,-1MiB", nil, 2, "--gpu-mem -1MiB: negative"},
		{"sweep --gpu-mem 400M", nil, 2, "--gpu-mem 400M: unit \"M\" is ambiguous: write MiB (powers of 1024) or MB (powers of 1000)"},
		{"sweep --gpu-mem 3500000.5", nil, 2, "--gpu-mem 3500000.5: not a whole number of bytes (3500000.500 B)"},
		{"sweep --gpu-mem lots", nil, 2, "--gpu-mem lots: no number; want a GPU memory limit"},
		{"sweep --gpu-mem NaN", nil, 2, "--gpu-mem NaN: no number"},
		{"sweep --gpu-mem 2GiB,2GiB", nil, 2, "\"2GiB\" is listed twice"},
		{"sweep --gpu-mem 20000000 --n 1920 --sched dmda", nil, 1, "--gpu-mem 20000000: CUDA0 cannot hold the data of task 0 (POTRF), 33554432 bytes at once"},
		{"sweep --starpu-generation 1.2", nil, 2, "--starpu-generation 1.2: unknown StarPU generation"},
		{"sweep --pci-bw-scale 0", nil, 2, "--pci-bw-scale 0: \"0\": want a number from 1e-06 to 1e+06"},
		{"sweep --pci-bw-scale -1", nil, 2, "--pci-bw-scale -1"},
		{"sweep --pci-bw-scale NaN", nil, 2, "--pci-bw-scale NaN"},
		{"sweep --pci-bw-scale 1e300", nil, 2, "--pci-bw-scale 1e300"},
		{"sweep --gpus 0", nil, 2, "--gpus 0: \"0\" is not a positive integer"},
		{"sweep --gpus 64", nil, 2, "--gpus 64: 64 GPUs: at most 63"},
		{"sweep --gpus 41 --n 1920 --sched dmda", nil, 1, "WithGPUs(41): cannot add CUDA40: every one of the 40 CPU cores already drives a device"},
		{"sweep --sched dmda,fifo2", nil, 2, "--sched dmda,fifo2: unknown scheduler \"fifo2\""},
		{"sweep --sched dmda,dmda", nil, 2, "\"dmda\" is listed twice"},
		{"sweep --app svd", nil, 2, "--app svd: unknown application"},
		{"sweep --block 0", nil, 2, "--block 0: \"0\" is not a positive integer"},
		{"sweep --ncpu -5", nil, 2, "--ncpu -5"},
		{"sweep --ncuda 99 --n 1920 --sched dmda", nil, 2, "--ncuda 99: starsim-default-2s-4v100 has 4 GPUs"},
		{"sweep --gpus 8 --ncpu 35 --n 1920", nil, 2, "--ncpu 35: 35 CPU workers and 8 GPU drivers need 43 cores, starsim-default-2s-4v100+gpus8 has 40: at most 32 CPU workers"},
		{"sweep --durations x", nil, 2, "--durations x"},
		{"sweep --sample-interval 1e-12", nil, 2, "--sample-interval 1e-12"},
		{"sweep --plot $D/x.gif", nil, 2, "--plot $D/x.gif: unsupported extension \".gif\""},
		{"sweep --plot $D/p.png", f("p.png/.keep", ""), 1, "--plot $D/p.png: is a directory"},
		{"sweep --plot $D", nil, 2, "--plot $D: unsupported extension"},
		{"sweep --plot-price $D/p.png", nil, 2, "--plot-price needs --price FILE"},
		{"sweep --currency EUR", nil, 2, "--currency needs --price FILE"},
		{"sweep --price $D/p.json --currency=", f("p.json", priceOK), 2, "--currency \"\": want a currency label (EUR, USD, €), not an empty one"},
		{"sweep --price $D/p.json --currency=\x01EUR", f("p.json", priceOK), 2, "--currency \"\\x01EUR\": want a currency label of printable characters"},
		{"sweep --price $D/p.json --currency ABCDEFGHIJKLMNOPQRSTUVWXYZ", f("p.json", priceOK), 2, "--currency ABCDEFGHIJKLMNOPQRSTUVWXYZ: 26 characters: a currency label has at most 16"},
		{"sweep --csv /missing/x.csv", nil, 1, "--csv /missing/x.csv: directory /missing does not exist"},
		{"sweep --json $D", nil, 1, "--json $D: is a directory"},
		{"sweep --csv $D/a.csv --json $D/a.csv", nil, 2, "--json $D/a.csv: also the output of --csv"},
		{"sweep --price $D/p.json", f("p.json", `{"Tesla V100-PCIE-32GB": 0, "cpu": 1}`), 1, "$D/p.json:1: price of \"Tesla V100-PCIE-32GB\" is 0: want a number > 0"},
		{"sweep --price $D/p.json", f("p.json", "{\"Tesla V100-PCIE-32GB\": 9000,\n\"cpu\": -5}"), 1, "$D/p.json:2: price of \"cpu\" is -5"},
		{"sweep --price $D/p.json", f("p.json", priceOK+"\ngarbage"), 1, "$D/p.json:2: unexpected data after the price object"},
		{"sweep --price $D/p.json", f("p.json", priceOK+"\n{}"), 1, "$D/p.json:2: unexpected data after the price object"},
		{"sweep --price $D/p.json", f("p.json", `{"cpu": 1}`), 1, "$D/p.json: no price for device model \"Tesla V100-PCIE-32GB\" (of starsim-default-2s-4v100)"},
		{"sweep --price $D/p.json", f("p.json", ""), 1, "$D/p.json:1: truncated JSON"},
		{"sweep --price $D/p.json", f("p.json", `{"cpu": NaN}`), 1, "invalid JSON"},
		{"sweep --price $D/nope.json", nil, 1, "$D/nope.json: no such file or directory"},
		{"sweep --gpu-from $D/nope.json", nil, 1, "$D/nope.json: no such file or directory"},
		{"sweep --calib $D/nope.json", nil, 1, "$D/nope.json: no such file or directory"},
		{"sweep --calib $CAL,$CAL", nil, 2, "is listed twice"},
		{"sweep --host attila", nil, 1, "no StarPU calibration for host \"attila\""},
		{"sweep --starpu $SP --host synth,atila", nil, 1, "no calibration for host \"atila\" (no bus/atila.config); hosts here: synth"},
		{"sweep --starpu $SP --host synth,synth", nil, 2, "\"synth\" is listed twice"},
		{"sweep extra", nil, 2, "unexpected argument \"extra\""},

		// sweep merge.
		{"sweep merge --csv $D/out.csv", nil, 2, "want shard CSV files and --csv OUT"},
		{"sweep merge $CSV", nil, 2, "want shard CSV files and --csv OUT"},
		{"sweep merge $D/e.csv --csv $D/out.csv", f("e.csv", ""), 1, "$D/e.csv: empty file: want sweep CSV"},
		{"sweep merge $D/h.csv --csv $D/out.csv", f("h.csv", csvHead), 1, "$D/h.csv: no rows after the header"},
		{"sweep merge $D/n.csv --csv $D/out.csv", f("n.csv", csvHead+strings.Replace(csvRow, ",100,", ",NaN,", 1)), 1, "$D/n.csv:2: column gflops: \"NaN\" is not a finite number >= 0"},
		{"sweep merge $D/n.csv --csv $D/out.csv", f("n.csv", csvHead+strings.Replace(csvRow, "0,2,", "7,2,", 1)), 1, "$D/n.csv:2: index 7 out of [0, 2)"},
		{"sweep merge $D/n.csv --csv $D/out.csv", f("n.csv", csvHead+"1,2,3\n"), 1, "$D/n.csv:2: not sweep CSV: wrong number of fields"},
		{"sweep merge $D/n.csv --csv $D/out.csv", f("n.csv", "a,b\n"), 1, "$D/n.csv:1: not sweep CSV"},
		{"sweep merge $CSV $CSV --csv $D/out.csv", nil, 1, "$CSV:2: job 0 appears twice (also $CSV:2)"},
		{"sweep merge $SHARD1 --csv $D/out.csv", nil, 1, "1 of 2 jobs present (a shard not given?)"},
		{"sweep merge $CSV --csv $D", nil, 1, "--csv $D: is a directory"},
		{"sweep merge $CSV --csv /missing/o.csv", nil, 1, "directory /missing does not exist"},
		{"sweep merge $D/none.csv --csv $D/out.csv", nil, 1, "$D/none.csv: no such file or directory"},

		// calibrate.
		{"calibrate frobnicate", nil, 2, "unknown subcommand \"frobnicate\""},
		{"calibrate import", nil, 2, "want --starpu DIR --host NAME -o FILE.calib.json"},
		{"calibrate import --starpu $D/none --host h -o $D", nil, 1, "-o $D: is a directory"},
		{"calibrate import --starpu $D/none --host h -o /missing/x.json", nil, 1, "directory /missing does not exist"},
		{"calibrate import --starpu $D/none --host h -o $D/x.json", nil, 1, "none"},
		{"calibrate import --starpu $SP --host atila -o $D/x.json", nil, 1, "no calibration for host \"atila\" (no bus/atila.config); hosts here: synth"},
		{"calibrate import --strict --starpu $SP --host synth -o $D/x.json", nil, 1, "$SP/codelets/45/unused_model.synth:"},
		{"calibrate show --model NOPE", nil, 2, "calibration starsim-default-2s-4v100 has no model \"NOPE\" (models: chol_model_gemm"},
		{"calibrate show --arch cuda0", nil, 2, "--arch goes with --model SYMBOL"},
		{"calibrate show --model chol_model_gemm --arch gpu7", nil, 2, "gpu7"},
		{"calibrate plot --model chol_model_gemm -o $D/x.gif", nil, 2, "-o $D/x.gif: unsupported extension \".gif\" (want .png or .svg)"},
		{"calibrate plot --model chol_model_gemm -o $D", nil, 2, "-o $D: unsupported extension"},
		{"calibrate plot --model chol_model_gemm -o $D/missing/x.png", nil, 1, "-o $D/missing/x.png: directory $D/missing does not exist"},
		{"calibrate plot --model chol_model_gemm -o $D/d.png", f("d.png/.keep", ""), 1, "-o $D/d.png: is a directory"},
		{"calibrate plot --model NOPE -o $D/x.png", nil, 2, "has no model \"NOPE\""},
		{"calibrate plot -o $D/x.png", nil, 2, "want --model SYMBOL -o F.png|F.svg"},
		{"calibrate plot --model chol_model_gemm -o $D/x.png $D/none.json", nil, 1, "$D/none.json: no such file or directory"},
		{"calibrate show $D/none.json", nil, 1, "$D/none.json: no such file or directory"},
		{"calibrate show $CAL $CAL", nil, 2, "want at most one calibration FILE"},
		{"calibrate show $D/bad.json", f("bad.json", "{\"format\": \"starsim-calibration\",\n\"version\": 1, \"name\": \"x\", \"bogus\": 1}"), 1, "$D/bad.json:2: unknown key \"bogus\""},
		{"calibrate fit --kernels $D/k.csv", f("k.csv", "chol,cuda0,24c84a50,10,1\n"), 2, "want -o FILE.calib.json"},
		{"calibrate fit -o $D/o.json --kernels $D/k.csv", f("k.csv", ""), 1, "$D/k.csv: no kernel samples"},
		{"calibrate fit -o $D/o.json --transfers $D/t.csv", f("t.csv", "src,dst,bytes,pitch,duration_us\n"), 1, "$D/t.csv: no transfer samples"},
		{"calibrate fit -o $D/o.json --kernels $D/k.csv", f("k.csv", "chol,cuda0,24c84a50,10,NaN\n"), 1, "$D/k.csv:1: duration_us must be a finite number"},
		{"calibrate fit -o $D/o.json --kernels $D/k.csv", f("k.csv", "chol,cuda0,24c84a50,10,-1\n"), 1, "$D/k.csv:1: duration_us must be >= 0"},
		{"calibrate fit -o $D/o.json --kernels $D/k.csv", f("k.csv", "chol,gpu0,24c84a50,10,1\n"), 1, "$D/k.csv:1: unknown arch \"gpu0\""},
		{"calibrate fit -o $D/o.json --transfers $D/t.csv", f("t.csv", "RAM,CUDA0,1048576,3840,95\nRAM,CUDA0,2097152,3840,180\nRAM,CUDA9,1048576,3840,95\n"), 1, "$D/t.csv:3: \"CUDA9\" is not a memory node"},
		{"calibrate fit -o $D/o.json --transfers $D/t.csv", f("t.csv", "RAM,CUDA0,1e300,3840,95\n"), 1, "$D/t.csv:1: bytes must be at most"},
		{"calibrate fit -o $D --kernels $D/k.csv", f("k.csv", "chol,cuda0,24c84a50,10,1\n"), 1, "-o $D: is a directory"},
		{"calibrate fit -o $D/o.json --base $D/none.json --kernels $D/k.csv", f("k.csv", "chol,cuda0,24c84a50,10,1\n"), 1, "$D/none.json: no such file or directory"},

		// platform.
		{"platform show", nil, 2, "want exactly one platform FILE"},
		{"platform show $D/none.xml", nil, 1, "$D/none.xml"},
		{"platform show $D/p.xml", f("p.xml", "<platform version=\"4.1\"><zone id=\"z\" routing=\"Full\">"), 1, "$D/p.xml:"},
		{"platform show $D/p.xml", f("p.xml", ""), 1, "$D/p.xml"},
		{"platform build", nil, 2, "want [FILE.calib.json] -o platform.xml"},
		{"platform build -o $D", nil, 1, "-o $D: is a directory"},
		{"platform build -o /missing/p.xml", nil, 1, "directory /missing does not exist"},
		{"platform build $D/none.json -o $D/p.xml", nil, 1, "$D/none.json: no such file or directory"},

		// netsim.
		{"netsim", nil, 2, "want exactly one SCENARIO.json, or --demo"},
		{"netsim --demo $D/s.json", nil, 2, "want exactly one SCENARIO.json, or --demo"},
		{"netsim $D/none.json", nil, 1, "$D/none.json: no such file or directory"},
		{"netsim $D/s.json", f("s.json", "{\"links\": [\n{\"id\": \"L\",\n\"bandwidth\": 1"), 1, "$D/s.json:3: truncated JSON in link"},
		{"netsim $D/s.json", f("s.json", `{"links":[{"id":"L","bandwidth":1e9}],"routes":[{"src":"A","dst":"B","links":["L"]}],"flows":[{"id":"f","src":"A","dst":"B","bytes":1000,"start":1e308}]}`), 1, "start must be >= 0 and at most 1e+09 s, got 1e+308"},
		{"netsim $D/s.json", f("s.json", `{"links":[{"id":"L","bandwidth":1e9}],"routes":[{"src":"A","dst":"B","links":["L"]}],"flows":[{"id":"f","src":"A","dst":"B","bytes":1,"start":1e9}]}`), 1, "its duration is lost to float64 rounding"},
		{"netsim $D/s.json", f("s.json", `{"links":[{"id":"L","bandwidth":1e-300}],"routes":[{"src":"A","dst":"B","links":["L"]}],"flows":[{"id":"f","src":"A","dst":"B","bytes":1e18}]}`), 1, "flow \"f\""},
		{"netsim $D/s.json", f("s.json", ""), 1, "$D/s.json:1: truncated JSON"},

		// inputs that are not regular files, or too large to be one.
		{"replay /dev/zero", nil, 1, "/dev/zero: not a regular file (a device, pipe or socket)"},
		{"compare /dev/zero $REC", nil, 1, "/dev/zero: not a regular file"},
		{"compare $REC $D/fifo", f("fifo", fifo), 1, "$D/fifo: not a regular file"},
		{"calibrate show /dev/zero", nil, 1, "/dev/zero: not a regular file"},
		{"run --calib /dev/urandom", nil, 1, "/dev/urandom: not a regular file"},
		{"platform show /dev/zero", nil, 1, "/dev/zero: not a regular file"},
		{"netsim $D/fifo", f("fifo", fifo), 1, "$D/fifo: not a regular file"},
		{"sweep merge /dev/zero --csv $D/o.csv", nil, 1, "/dev/zero: not a regular file"},
		{"sweep --price /dev/zero", nil, 1, "/dev/zero: not a regular file"},
		{"calibrate fit -o $D/o.json --kernels /dev/zero", nil, 1, "/dev/zero: not a regular file"},
		{"replay $D/big.rec", f("big.rec", sparse), 1, "$D/big.rec: 3221225472 bytes, more than 2147483648 (2 GiB)"},
		{"compare $D/big.rec $REC", f("big.rec", sparse), 1, "more than 2147483648 (2 GiB)"},

		// the command itself (a bare command prints its usage: cli_test.go).
		{"frobnicate", nil, 2, "unknown command \"frobnicate\" (want calibrate, compare, dag, netsim, platform, replay, run, sweep, version; see starsim --help)"},
		{"compare $D/n.txt $REC", f("n.txt", "\nsome notes\n"), 1, "$D/n.txt:2: expected \"Field: value\", got \"some notes\"; not a trace starsim reads: want a tasks.rec (a file, or a directory holding it or paje.trace), a Chrome JSON trace or a Paje trace"},
		{"replay --calib default $D/n.txt", f("n.txt", "some notes\n"), 1, "; not a trace starsim reads: want a tasks.rec"},
		{"calibrate frob", nil, 2, "unknown subcommand \"frob\" (want fit, import, plot, show; see starsim calibrate --help)"},
		{"platform show --bogus", nil, 2, "--bogus: unknown flag (see starsim platform show --help)"},
		{"sweep -ncpu 2", nil, 2, "-ncpu: unknown flag: long flags take two dashes, --ncpu"},
		{"sweep -j", nil, 2, "-j: needs a value"},
		{"sweep -j x", nil, 2, "-j x: want an integer"},
		{"run --json=maybe", nil, 2, "--json maybe: want true or false"},
		{"help frob", nil, 2, "unknown command \"frob\" (want calibrate,"},
		{"version extra", nil, 2, "unexpected argument \"extra\""},
	}
	return cases
}

// docLocation finds a location said twice ("f.json: f.json:3:").
var docLocation = regexp.MustCompile(`(\S+?):(\d+:)? (\S+?):`)

// cutPaje is the Paje trace at path cut two thirds in, inside an event line
// (after its event id): wherever the cut falls, the trace ends with a line
// that lacks its fields. A cut at a fixed byte count could fall between
// lines and leave a valid trace, since the header's length varies with the
// temporary directory's name.
func cutPaje(t *testing.T, path string) string {
	t.Helper()
	d, err := os.ReadFile(path)
	require.NoError(t, err)
	at := len(d) * 2 / 3
	start := bytes.LastIndexByte(d[:at], '\n') + 1
	tab := bytes.IndexByte(d[start:], '\t')
	require.Positive(t, tab, "an event line with fields at two thirds of %s", path)
	return string(d[:start+tab])
}

func TestAdversarialInputs(t *testing.T) {
	dir := t.TempDir()
	r := advFixtures(t, dir)
	cases := adversarialCases(t, r, dir)
	t.Logf("%d adversarial cases", len(cases))
	for i, c := range cases {
		args := strings.Fields(r.Replace(c.args))
		t.Run(fmt.Sprintf("%03d %s", i, c.args), func(t *testing.T) {
			for name, content := range c.files {
				p := filepath.Join(dir, name)
				require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
				switch content {
				case "\x00FIFO":
					require.NoError(t, syscall.Mkfifo(p, 0o644))
				case "\x00SPARSE":
					require.NoError(t, os.WriteFile(p, nil, 0o644))
					require.NoError(t, os.Truncate(p, 3<<30))
				default:
					require.NoError(t, os.WriteFile(p, []byte(r.Replace(content)), 0o644))
				}
			}
			before := listTree(t, dir)
			start := time.Now()
			code, out, errs := runCLI(args...)
			assert.Less(t, time.Since(start), 60*time.Second, "refused without a hang (generous: the machine may be loaded)")
			assert.Equal(t, c.code, code, "exit code; stderr: %s", errs)
			assert.Empty(t, out, "nothing on stdout on failure")
			assert.True(t, strings.HasSuffix(errs, "\n") && strings.Count(errs, "\n") == 1, "one line on stderr, got %q", errs)
			prefix := prefix(commandName(args)) + ": "
			assert.True(t, strings.HasPrefix(errs, prefix), "prefix %q, got %q", prefix, errs)
			assert.Contains(t, errs, r.Replace(c.msg))
			if m := docLocation.FindStringSubmatch(errs); m != nil && m[1] == m[3] && strings.Contains(m[1], "/") {
				t.Errorf("location said twice: %q", errs)
			}
			assert.Equal(t, before, listTree(t, dir), "no file left behind (partial or temporary)")
			for name := range c.files {
				os.RemoveAll(filepath.Join(dir, strings.Split(name, "/")[0]))
			}
		})
	}
}

// listTree lists every path under dir with its size.
func listTree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	require.NoError(t, filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		out = append(out, fmt.Sprintf("%s %d", strings.TrimPrefix(p, dir), info.Size()))
		return nil
	}))
	sort.Strings(out)
	return out
}

// TestGoodInputsAccepted: edge inputs that are valid run and write what
// they are asked to.
func TestGoodInputsAccepted(t *testing.T) {
	dir := t.TempDir()
	r := advFixtures(t, dir)
	rec := r.Replace("$REC")
	missing := edit(t, rec, "DependsOn: 1\n", "DependsOn: 1 999\n")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "missing.rec"), []byte(missing), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "p.json"), []byte(`{"Tesla V100-PCIE-32GB": 9000, "cpu": 3000}`), 0o644))
	for _, c := range []struct {
		args   string
		writes []string
		stderr string
	}{
		{"run --n 1920", nil, ""},
		{"run --n 1920 --ncpu 0 --ncuda 1 --gpu-mem 33554432 --check", nil, ""},
		{"run --n 1920 --json --sample-interval 1e-6", nil, ""},
		{"run --n 1920 --explain $D/e.log --explain-task 3 --trace-rec $D/new/deep/rec --trace-paje $D/t.paje --cpuprofile $D/cpu.prof", []string{"e.log", "new/deep/rec/tasks.rec", "t.paje", "cpu.prof"}, ""},
		{"replay --calib default $REC --json", nil, ""},
		{"replay --calib default --ignore-missing-deps $D/missing.rec", nil, "1 DependsOn entries name a JobId absent from the trace: dropped (--ignore-missing-deps)"},
		{"compare $REC $CHROME --plot $D/g.svg", []string{"g.svg"}, ""},
		{"sweep --n 1920:2880:960 --sched dmda -j 1 --shard 2/2 --csv $D/s2.csv", []string{"s2.csv"}, ""},
		{"sweep merge $SHARD1 $D/s2.csv --csv $D/merged.csv", []string{"merged.csv"}, ""},
		{"run --n 1920 --trace-chrome /dev/null --explain /dev/null", nil, ""},
		{"sweep --n 1920 --sched dmda --gpu-mem 2MiB,37.25GiB,1PiB --ncuda 0", nil, ""},
		{"sweep --n 1920 --sched dmda --gpu-mem 2097152,40000000000 --ncuda 0", nil, ""},
		{"run --n 1920 --gpu-mem 1.5GiB --plot $D/panel.png", []string{"panel.png"}, ""},
		{"replay --calib default $REC --plot $D/rpanel.svg", []string{"rpanel.svg"}, ""},
		{"compare $PAJE $REC", nil, ""},
		{"sweep --n 1920 --sched dmda --price $D/p.json --currency € --plot-price $D/ppe.svg", []string{"ppe.svg"}, ""},
		{"calibrate show --model chol_model_gemm --arch cuda", nil, ""},
		{"calibrate plot --model chol_model_gemm -o $D/m.png", []string{"m.png"}, ""},
		{"calibrate import --starpu $SP --host synth -o $D/synth.calib.json", []string{"synth.calib.json"}, "starsim: warning: model unused_model skipped"},
		{"sweep --n 1920 --sched dmda --price $D/p.json --plot-price $D/pp.png --plot $D/p.svg --json $D/r.json", []string{"pp.png", "p.svg", "r.json"}, "starsim: note: prices have no currency (--currency)"},
		{"calibrate show $CAL", nil, ""},
		{"platform build $CAL -o -", nil, ""},
		{"netsim --demo", nil, ""},
	} {
		args := strings.Fields(r.Replace(c.args))
		t.Run(c.args, func(t *testing.T) {
			code, out, errs := runCLI(args...)
			require.Equal(t, 0, code, errs)
			if args[0] != "sweep" || args[1] != "merge" {
				assert.NotEmpty(t, out)
			}
			if c.stderr == "" {
				assert.Empty(t, errs)
			} else {
				assert.Contains(t, errs, c.stderr)
			}
			for _, w := range c.writes {
				assert.FileExists(t, filepath.Join(dir, w))
			}
		})
	}
	if d, err := os.ReadFile(filepath.Join(dir, "merged.csv")); assert.NoError(t, err) {
		all, err := os.ReadFile(r.Replace("$CSV"))
		require.NoError(t, err)
		assert.Equal(t, string(all), string(d), "merged shards give the unsharded sweep's bytes")
	}
	leftovers, _ := filepath.Glob(filepath.Join(dir, ".*.tmp"))
	assert.Empty(t, leftovers)
	st, err := os.Stat("/dev/null")
	require.NoError(t, err)
	assert.True(t, st.Mode()&os.ModeCharDevice != 0, "/dev/null written in place, not replaced")
}

// TestStarPUEnvRefused: bad values from StarPU's environment are refused
// like bad flags, naming the variable.
func TestStarPUEnvRefused(t *testing.T) {
	sp := filepath.Join(t.TempDir(), "sampling")
	require.NoError(t, synthsampling.Write(sp, synthsampling.Options{Host: "synth", Gen: generation.V14, CPUs: 3, GPUs: 2}))
	for _, c := range []struct {
		env  map[string]string
		code int
		msg  string
	}{
		{map[string]string{"STARPU_SCHED": "bogus"}, 2, "starsim run: STARPU_SCHED=bogus: unknown scheduler"},
		{map[string]string{"STARPU_NCPU": "-1"}, 2, "starsim run: STARPU_NCPU=\"-1\" is not a count"},
		{map[string]string{"STARPU_NCUDA": "12"}, 2, "starsim run: STARPU_NCUDA=12: starsim-default-2s-4v100 has 4 GPUs"},
		{map[string]string{"STARPU_NCPU": "99"}, 2, "starsim run: STARPU_NCPU=99: 99 CPU workers and 4 GPU drivers need 103 cores"},
		{map[string]string{"STARPU_LIMIT_CUDA_MEM": "400M"}, 2, "starsim run: STARPU_LIMIT_CUDA_MEM=400M: want a whole number of MiB"},
		{map[string]string{"STARPU_LIMIT_CUDA_MEM": "4GiB"}, 2, "starsim run: STARPU_LIMIT_CUDA_MEM=4GiB: want a whole number of MiB"},
		{map[string]string{"STARPU_LIMIT_CUDA_MEM": "-5"}, 2, "starsim run: STARPU_LIMIT_CUDA_MEM=-5: want a limit from 2 to 1073741824 MiB (2 MiB to 1 PiB)"},
		{map[string]string{"STARPU_LIMIT_CUDA_MEM": "0"}, 2, "starsim run: STARPU_LIMIT_CUDA_MEM=0: want a limit from 2 to"},
		{map[string]string{"STARPU_LIMIT_CUDA_MEM": "1"}, 2, "starsim run: STARPU_LIMIT_CUDA_MEM=1: want a limit from 2 to"},
		{map[string]string{"STARPU_LIMIT_CUDA_MEM": "99999999999999"}, 2, "starsim run: STARPU_LIMIT_CUDA_MEM=99999999999999: want a limit from 2 to"},
		{map[string]string{"STARPU_LIMIT_CUDA_MEM": "1e300"}, 2, "starsim run: STARPU_LIMIT_CUDA_MEM=1e300: want a whole number of MiB"},
		{map[string]string{"STARPU_LIMIT_CUDA_1_MEM": "1"}, 2, "starsim run: STARPU_LIMIT_CUDA_1_MEM=1: want a limit from 2 to"},
		{map[string]string{"STARPU_LIMIT_CUDA_2_MEM": "many"}, 2, "starsim run: STARPU_LIMIT_CUDA_2_MEM=many: want a whole number of MiB"},
		{map[string]string{"STARPU_LIMIT_CUDA_0_MEM": "20"}, 1, "starsim run: STARPU_LIMIT_CUDA_0_MEM=20: CUDA0 cannot hold the data of task 0 (POTRF), 33554432 bytes at once"},
		{map[string]string{"STARPU_LIMIT_CUDA_MEM": "20"}, 1, "starsim run: STARPU_LIMIT_CUDA_MEM=20: CUDA0 cannot hold the data of task 0 (POTRF)"},
		{map[string]string{"STARPU_SCHED_ALPHA": "fast"}, 2, "starsim run: STARPU_SCHED_ALPHA=fast: want a finite number"},
		{map[string]string{"STARPU_SCHED_BETA": "NaN"}, 2, "starsim run: STARPU_SCHED_BETA=NaN: want a finite number"},
		{map[string]string{"STARPU_SCHED_GAMMA": "1e99"}, 2, "starsim run: STARPU_SCHED_GAMMA=1e99: want a finite number"},
		{map[string]string{"STARPU_PERF_MODEL_DIR": sp, "STARPU_HOSTNAME": "atila"}, 1, "starsim run: no StarPU calibration for host \"atila\""},
	} {
		var keys []string
		for k, v := range c.env {
			keys = append(keys, k+"="+v)
		}
		t.Run(strings.Join(keys, " "), func(t *testing.T) {
			withEnv(t, c.env)
			code, out, errs := runCLI("run", "--n", "1920")
			assert.Equal(t, c.code, code, errs)
			assert.Empty(t, out)
			assert.True(t, strings.HasPrefix(errs, c.msg) && strings.Count(errs, "\n") == 1, "got %q", errs)
		})
	}
	// Sweep reads them too.
	withEnv(t, map[string]string{"STARPU_LIMIT_CUDA_MEM": "1"})
	code, out, errs := runCLI("sweep", "--n", "1920", "--sched", "dmda")
	assert.Equal(t, 2, code, errs)
	assert.Empty(t, out)
	assert.Equal(t, "starsim sweep: STARPU_LIMIT_CUDA_MEM=1: want a limit from 2 to 1073741824 MiB (2 MiB to 1 PiB)\n", errs)
}
