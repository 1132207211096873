package main

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/starsim/starsim/calibrate"
	"github.com/starsim/starsim/internal/gcpause"
	"github.com/starsim/starsim/internal/inputfile"
	"github.com/starsim/starsim/models"
	"github.com/starsim/starsim/models/generation"
	"github.com/starsim/starsim/runtime/sim"
	"github.com/starsim/starsim/traces"
	"github.com/starsim/starsim/traces/paje"
	"github.com/starsim/starsim/traces/rec"
	"github.com/starsim/starsim/traces/replay"
)

const replayDoc = `
Re-runs a recorded task graph, as starpu_replay does: every task of
TASKS.rec (a file, or a directory holding tasks.rec) with its model symbol,
footprint, priority, data (by handle, recorded size and access mode),
DependsOn plus implicit data dependencies, in submission order, under any
scheduler. Model names of both StarPU generations (chol_model_11/21/22 and
chol_model_potrf/trsm/syrk/gemm, LU likewise, with or without a BLAS suffix
such as _openblas) are matched to the calibration; a model it lacks runs on
its recorded worker for its recorded length. GFlop/s counts the tasks'
flops: their GFlop fields, else (StarPU's LU example sets none) the
application's kernel formula on their tile size, else the calibration's
flop count for their footprint, as a note on stderr says; with none known
it is "unknown". A Paje trace cannot be replayed (it has no data accesses).
Output as for run.`

// replayCmd is `starsim replay`; cmdline is the whole command line, for
// the traces' headers.
func replayCmd(cmdline string) *cobra.Command {
	return leaf("replay TASKS.rec", "re-run a recorded tasks.rec under any scheduler (starpu_replay)", replayDoc, func(fs *pflag.FlagSet) runner {
		f := &runFlags{}
		f.register(fs, "replay", cmdline)
		static := fs.Bool("static-workerid", false, "pin every task to the worker that ran it")
		ignoreMissing := fs.Bool("ignore-missing-deps", false, "drop DependsOn entries naming a JobId absent from the trace (and say how many) instead of failing")
		return func(pos []string, stdout, stderr io.Writer) error {
			if err := f.parse(fs, stderr); err != nil {
				return err
			}
			if len(pos) != 1 {
				return &usageError{"want exactly one TASKS.rec (file or directory)"}
			}
			if err := f.validateCommon("replay"); err != nil {
				return err
			}
			out := &outputSet{}
			if err := f.startProfile(out); err != nil {
				return err
			}
			res, err := f.replay(stderr, pos[0], *static, *ignoreMissing, out)
			return f.finish(stdout, res, err, out)
		}
	})
}

// replay simulates the tasks recorded in path (a tasks.rec or its directory).
func (f *runFlags) replay(stderr io.Writer, path string, static, ignoreMissing bool, out *outputSet) (*sim.Result, error) {
	arg := path
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		path = filepath.Join(path, "tasks.rec")
	}
	fh, err := inputfile.Open(path)
	if err != nil {
		return nil, err
	}
	br := bufio.NewReader(fh)
	if head, _ := br.Peek(64 << 10); paje.Is(head) {
		fh.Close()
		return nil, fmt.Errorf("%s: a Paje trace holds no data accesses nor dependencies to replay: give the tasks.rec starpu_fxt_tool writes beside it", path)
	}
	recs, err := rec.ReadTasks(br, path)
	fh.Close()
	if err != nil {
		return nil, explainFormat(err, "a tasks.rec (starpu_fxt_tool's, or run --trace-rec's), or a directory holding one")
	}
	mc, err := f.machine("replay", stderr)
	if err != nil {
		return nil, err
	}
	cal := mc.file
	if err := checkWorkers(f.source("ncpu"), f.source("ncuda"), f.ncpu, f.ncuda, cal); err != nil {
		return nil, err
	}
	gcpause.Pause() // parsing's garbage is behind; the graph stays live
	defer gcpause.Resume()
	// The models the trace needs: a recorded model whose only match in the
	// calibration is an unreadable file is an error with its FILE:LINE.
	status := cal.ModelStatuses()
	readable := func(s string) bool { return status(s) == generation.Readable }
	known := func(s string) bool { return status(s) != generation.Absent }
	used := map[string]bool{}
	for _, r := range recs {
		if r.Model == "" || used[r.Model] {
			continue
		}
		if sym, ok := models.ResolveModel(r.Model, readable); ok {
			used[sym] = true
		} else if sym, ok := models.ResolveModel(r.Model, known); ok {
			for _, u := range cal.Unreadable {
				if u.Model == sym {
					return nil, fmt.Errorf("%w (model %s, needed by the trace's %s tasks, could not be read)", u.Err(), sym, r.Model)
				}
			}
		}
	}
	flops := traces.FillGFlop(recs, calibrationFlops(cal, readable))
	f.info = f.setup.info(mc, nil)
	g, warn, err := replay.Graph(recs, replay.Options{StaticWorkerID: static, HasModel: readable,
		File: path, IgnoreMissingDeps: ignoreMissing})
	if err != nil {
		return nil, err
	}
	// Said once the trace is known to replay: a failure is one line.
	reportModels(stderr, mc, used)
	reportFlops(stderr, flops)
	for _, w := range warn {
		fmt.Fprintf(stderr, "starsim: warning: %s\n", w)
	}
	g.Name = "replay of " + arg
	f.config = fmt.Sprintf("replay of %s (%d tasks)", arg, len(g.Tasks))
	return f.simulate(stderr, mc, g, out)
}

// calibrationFlops looks up the flops a calibration records for a model
// (under any StarPU name of it) and footprint, on any arch.
func calibrationFlops(cal *calibrate.File, readable func(string) bool) func(string, uint32) (float64, bool) {
	flops := map[string]float64{}
	for _, k := range cal.Kernels {
		for _, e := range k.Entries {
			if f := float64(e.Flops); f > 0 && !math.IsInf(f, 0) {
				flops[k.Model+"/"+e.Footprint] = f
			}
		}
	}
	return func(model string, fp uint32) (float64, bool) {
		sym, ok := models.ResolveModel(model, readable)
		if !ok {
			return 0, false
		}
		f, ok := flops[fmt.Sprintf("%s/%08x", sym, fp)]
		return f, ok
	}
}

// reportFlops says on stderr where the replay's flop counts come from when
// the trace lacks some.
func reportFlops(stderr io.Writer, src traces.FlopSources) {
	if src.Calibration+src.Formula > 0 {
		fmt.Fprintf(stderr, "starsim: note: %d of %d tasks have no GFlop in the trace: their flops come from the application's kernel formulas on their tile size (%d) and from the calibration (%d)\n",
			src.Calibration+src.Formula+src.Unknown, src.Recorded+src.Calibration+src.Formula+src.Unknown, src.Formula, src.Calibration)
	}
	if src.Unknown > 0 {
		if src.Recorded+src.Calibration+src.Formula == 0 {
			fmt.Fprintf(stderr, "starsim: warning: no task has a known flop count: GFlop/s unknown\n")
		} else {
			fmt.Fprintf(stderr, "starsim: warning: %d tasks have no known flop count: GFlop/s counts the others' flops only\n", src.Unknown)
		}
	}
}
