package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/starsim/starsim/models/generation"
	"github.com/starsim/starsim/runtime"
	"github.com/starsim/starsim/traces"
)

const replayDoc = `
Re-runs a recorded task graph, as starpu_replay does: every task of
TASKS.rec (a file, or a directory holding tasks.rec) with its model symbol,
footprint, priority, data (by handle, recorded size and access mode),
DependsOn plus implicit data dependencies, in submission order, under any
scheduler. Model names of both StarPU generations (chol_model_11/21/22 and
chol_model_potrf/trsm/syrk/gemm, LU likewise, with or without a BLAS suffix
such as _openblas) are matched to the calibration; a model it lacks runs on
its recorded worker for its recorded length. Output as for run.`

func runReplay(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("replay", "TASKS.rec", replayDoc, stderr)
	f := runFlags{}
	f.register(fs, "replay", args)
	static := fs.Bool("static-workerid", false, "pin every task to the worker that ran it")
	pos, err := f.parse(fs, args, stderr)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return &usageError{"want exactly one TASKS.rec (file or directory)"}
	}
	stop, err := f.startProfile()
	if err != nil {
		return err
	}
	res, err := f.replay(stderr, pos[0], *static)
	if err == nil {
		err = f.print(stdout, res)
	}
	return errors.Join(err, stop())
}

// replay simulates the tasks recorded in path (a tasks.rec or its directory).
func (f *runFlags) replay(stderr io.Writer, path string, static bool) (*runtime.Result, error) {
	arg := path
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		path = filepath.Join(path, "tasks.rec")
	}
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	recs, err := traces.ReadTasksRec(fh, path)
	fh.Close()
	if err != nil {
		return nil, err
	}
	mc, err := f.machine("replay", stderr)
	if err != nil {
		return nil, err
	}
	cal := mc.file
	pauseGC() // parsing's garbage is behind; the graph stays live
	defer resumeGC()
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
		if sym, ok := generation.ResolveModel(r.Model, readable); ok {
			used[sym] = true
		} else if sym, ok := generation.ResolveModel(r.Model, known); ok {
			for _, u := range cal.Unreadable {
				if u.Model == sym {
					return nil, fmt.Errorf("%w (model %s, needed by the trace's %s tasks, could not be read)", u.Err(), sym, r.Model)
				}
			}
		}
	}
	reportModels(stderr, mc, used)
	f.info = f.setup.info(mc, nil)
	g, warn, err := traces.Graph(recs, traces.ReplayOptions{StaticWorkerID: static, HasModel: readable})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for _, w := range warn {
		fmt.Fprintf(stderr, "starsim: warning: %s\n", w)
	}
	g.Name = "replay of " + arg
	return f.simulate(stderr, mc, g)
}
