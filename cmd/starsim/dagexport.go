package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/starsim/starsim/internal/atomicfile"
	"github.com/starsim/starsim/internal/inputfile"
	"github.com/starsim/starsim/models"
	"github.com/starsim/starsim/models/dag"
	"github.com/starsim/starsim/models/generation"
	"github.com/starsim/starsim/runtime/graph"
	"github.com/starsim/starsim/traces/rec"
	"github.com/starsim/starsim/traces/replay"
)

func dagCmd() *cobra.Command {
	return group("dag", "task graph files: export a built-in application or a recorded trace", dagExportCmd())
}

const dagExportDoc = `
Writes a task graph in starsim's JSON format (models/dag/dag.schema.json,
docs/dag.md), to edit and run with run --dag: a built-in application
(--app, --n, --block, --double, --no-prio, with the priorities scheduler
--sched gives it, StarPU generation --starpu-generation and LU's BLAS
suffix --blas, as run builds it), or the tasks of a recorded tasks.rec (a
file or its directory) with their models, footprints, flops, priorities,
data, DependsOn and wont_use hints, and each task's recorded length as its
duration on the kind of worker that ran it (cpu, or cuda for a GPU's
memory node): where the calibration has no entry, the task runs for that.
Run back on the machine it was exported for, a built-in application's
graph gives the result run gives.`

func dagExportCmd() *cobra.Command {
	return leaf("export [TASKS.rec]", "write a built-in application's task graph, or a tasks.rec's, as JSON", dagExportDoc, func(fs *pflag.FlagSet) runner {
		app := fs.String("app", "cholesky", "application `APP`: "+strings.Join(models.Names(), " or "))
		n := fs.Int("n", 9600, "matrix order `N`")
		block := fs.Int("block", 960, "tile size `B`")
		double := fs.Bool("double", false, "double-precision tiles")
		noPrio := fs.Bool("no-prio", false, "all task priorities 0")
		ib := fs.Int("ib", 0, "QR's inner block size `IB` (default Chameleon's, 48)")
		sched := fs.String("sched", "dmda", "the scheduler `S` whose priority range the application reads")
		gen := fs.String("starpu-generation", "1.4", "the StarPU generation `G` whose graph and model names to write: 1.3 or 1.4")
		blas := fs.String("blas", "", "LU's model-symbol BLAS suffix `B`: atlas, goto or openblas (default none)")
		ignoreMissing := fs.Bool("ignore-missing-deps", false, "tasks.rec: drop DependsOn entries naming a JobId absent from the trace")
		out := fs.StringP("output", "o", "", "output `FILE` (- for stdout)")
		return func(pos []string, stdout, stderr io.Writer) error {
			set := flagsSet(fs)
			if *out == "" {
				return &usageError{"want -o FILE (- for stdout)"}
			}
			if *out != "-" {
				if err := checkOutput("-o", *out); err != nil {
					return err
				}
			}
			var g *graph.Graph
			var desc string
			switch len(pos) {
			case 0:
				a, err := lookupApp(*app)
				if err != nil {
					return err
				}
				gn, err := generation.Parse(*gen)
				if err != nil || gn == generation.Auto {
					return flagError("starpu-generation", *gen, "want 1.3 or 1.4")
				}
				if err := checkInnerBlock(set["ib"], *ib, []string{a}, []int{*block}); err != nil {
					return err
				}
				prec := models.Single
				if *double {
					prec = models.Double
				}
				if err := checkGraphSize(a, *n, *block, prec); err != nil {
					return err
				}
				prio, ok := prioRange(*sched)
				if !ok {
					return unknownScheduler("--sched", *sched)
				}
				g, err = models.New(a, models.Options{N: *n, Block: *block, Precision: prec, Prio: prio, NoPrio: *noPrio,
					Generation: gn, BLASVariant: *blas, InnerBlock: *ib})
				if err != nil {
					return &usageError{strings.TrimPrefix(err.Error(), "models: ")}
				}
				desc = fmt.Sprintf("exported by starsim %s: %s, priorities of %s", version, g.Name, *sched)
			case 1:
				for _, fl := range []string{"app", "n", "block", "double", "no-prio", "sched", "starpu-generation", "blas", "ib"} {
					if set[fl] {
						return &usageError{fmt.Sprintf("--%s: the graph is the trace's (%s)", fl, pos[0])}
					}
				}
				var err error
				if g, err = recGraph(pos[0], *ignoreMissing, stderr); err != nil {
					return err
				}
				desc = fmt.Sprintf("exported by starsim %s from %s: recorded lengths as durations", version, pos[0])
			default:
				return &usageError{fmt.Sprintf("unexpected argument %q (want at most one TASKS.rec)", pos[1])}
			}
			write := func(w io.Writer) error { return dag.Write(w, g, desc) }
			if *out == "-" {
				bw := bufio.NewWriter(stdout)
				if err := write(bw); err != nil {
					return err
				}
				return bw.Flush()
			}
			if err := atomicfile.Write(*out, write); err != nil {
				return err
			}
			fmt.Fprintf(stderr, "starsim: %s: %d tasks, %d data\n", *out, len(g.Tasks), len(g.Handles))
			return nil
		}
	})
}

// recGraph is the task graph of a recorded tasks.rec (path: the file or
// its directory), as replay builds it, each task with its recorded length
// as its duration on the kind of worker that ran it.
func recGraph(path string, ignoreMissing bool, stderr io.Writer) (*graph.Graph, error) {
	arg := path
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		path = filepath.Join(path, "tasks.rec")
	}
	fh, err := inputfile.Open(path)
	if err != nil {
		return nil, err
	}
	recs, err := rec.ReadTasks(bufio.NewReader(fh), path)
	fh.Close()
	if err != nil {
		return nil, explainFormat(err, "a tasks.rec (starpu_fxt_tool's, or run --trace-rec's), or a directory holding one")
	}
	g, warn, err := replay.Graph(recs, replay.Options{HasModel: func(string) bool { return true }, File: path, IgnoreMissingDeps: ignoreMissing})
	if err != nil {
		return nil, err
	}
	for _, w := range warn {
		fmt.Fprintf(stderr, "starsim: warning: %s\n", w)
	}
	ex := replay.Executed(recs) // in the graph's order
	if len(ex) != len(g.Tasks) {
		return nil, fmt.Errorf("%s: %d executed records for %d tasks", path, len(ex), len(g.Tasks))
	}
	for i, r := range ex {
		kind := "cpu"
		if r.MemoryNode != nil && *r.MemoryNode > 0 {
			kind = "cuda"
		}
		if us := (*r.EndTime - *r.StartTime) * 1e3; us > 0 {
			g.Tasks[i].DurationsUS = map[string]float64{kind: us}
		}
	}
	g.Name = "replay of " + arg
	return g, nil
}
