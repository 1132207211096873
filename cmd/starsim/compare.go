package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/starsim/starsim/traces"
)

const compareDoc = `
Compares two traces of the same application, A (the reference, e.g. a native
StarPU run) and B (e.g. starsim's prediction of it): makespan and GFlop/s,
per-kernel counts and times (per worker type, cpu or cuda), per-worker busy
and idle time, transfers per direction, and per-kernel duration
distributions (quantiles and the two-sample Kolmogorov-Smirnov distance).
Relative errors are (B - A) / A.

A and B are each a tasks.rec file, a directory holding tasks.rec (and
data.rec, from which transfers are inferred) or paje.trace, a starsim
Chrome JSON trace (run --trace-chrome; exact transfers), or a Paje trace:
StarPU's paje.trace as starpu_fxt_tool writes it, or starsim's (run
--trace-paje; exact transfers). The format is told by the content. Times
are ms; the makespan runs from the first task start to the last task end.`

// compareCmd is `starsim compare`.
func compareCmd() *cobra.Command {
	return leaf("compare A B", "compare two traces (native vs simulated): makespan, kernels, workers, transfers, distributions", compareDoc, func(fs *pflag.FlagSet) runner {
		asJSON := fs.Bool("json", false, "print the report as JSON")
		plotPath := fs.String("plot", "", "draw both traces (A on top, B below): Gantt of the workers, ready tasks, GPU memory, bytes in flight, as each trace records them, to `FILE` (.png or .svg)")
		return func(pos []string, stdout, _ io.Writer) error { return compare(pos, *asJSON, *plotPath, stdout) }
	})
}

func compare(pos []string, asJSON bool, plotPath string, stdout io.Writer) error {
	if len(pos) != 2 {
		return &usageError{fmt.Sprintf("want two traces A B, got %d argument(s)", len(pos))}
	}
	if plotPath != "" {
		if err := checkOutput("plot", plotPath, ".png", ".svg"); err != nil {
			return err
		}
	}
	a, err := traces.LoadTrace(pos[0])
	if err != nil {
		return err
	}
	b, err := traces.LoadTrace(pos[1])
	if err != nil {
		return err
	}
	rep := traces.Compare(a, b)
	if plotPath != "" {
		if err := traces.SaveGantt(a, b, plotPath); err != nil {
			return err
		}
	}
	var buf bytes.Buffer
	if asJSON {
		enc := json.NewEncoder(&buf)
		enc.SetIndent("", "  ")
		err = enc.Encode(rep)
	} else {
		err = rep.WriteText(&buf)
	}
	if err != nil {
		return err
	}
	_, err = stdout.Write(buf.Bytes())
	return err
}
