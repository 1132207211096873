package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

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
	pos, err := f.parse(fs, args)
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
	br := bufio.NewReader(fh)
	if head, _ := br.Peek(64 << 10); traces.IsPaje(head) {
		fh.Close()
		return nil, fmt.Errorf("%s: a Paje trace holds no data accesses nor dependencies to replay: give the tasks.rec starpu_fxt_tool writes beside it", path)
	}
	recs, err := traces.ReadTasksRec(br, path)
	fh.Close()
	if err != nil {
		return nil, err
	}
	cal, err := loadCalibration(f.calib, f.starpuDir, f.host, stderr)
	if err != nil {
		return nil, err
	}
	pauseGC() // parsing's garbage is behind; the graph stays live
	defer resumeGC()
	symbols := map[string]bool{}
	for _, k := range cal.Kernels {
		symbols[k.Model] = true
	}
	g, warn, err := traces.Graph(recs, traces.ReplayOptions{StaticWorkerID: static, HasModel: func(s string) bool { return symbols[s] }})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for _, w := range warn {
		fmt.Fprintf(stderr, "starsim: warning: %s\n", w)
	}
	g.Name = "replay of " + arg
	f.machine, f.config = cal.Name, fmt.Sprintf("replay of %s (%d tasks)", arg, len(g.Tasks))
	return f.simulate(stderr, cal.RuntimeMachine(), g)
}
