package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/starsim/starsim/internal/srcerr"
	"github.com/starsim/starsim/traces/compare"
	"github.com/starsim/starsim/traces/formats"
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
		return func(pos []string, stdout, _ io.Writer) error { return compareTraces(pos, *asJSON, *plotPath, stdout) }
	})
}

func compareTraces(pos []string, asJSON bool, plotPath string, stdout io.Writer) error {
	if len(pos) != 2 {
		return &usageError{fmt.Sprintf("want two traces A B, got %d argument(s)", len(pos))}
	}
	if plotPath != "" {
		if err := checkOutput("plot", plotPath, ".png", ".svg"); err != nil {
			return err
		}
	}
	a, err := formats.Load(pos[0])
	if err != nil {
		return explainFormat(err, traceFormats)
	}
	b, err := formats.Load(pos[1])
	if err != nil {
		return explainFormat(err, traceFormats)
	}
	rep := compare.Compare(a, b)
	if plotPath != "" {
		if err := compare.SaveGantt(a, b, plotPath); err != nil {
			return err
		}
	}
	var buf bytes.Buffer
	if asJSON {
		enc := json.NewEncoder(&buf)
		enc.SetIndent("", "  ")
		err = enc.Encode(rep)
	} else {
		err = writeReport(&buf, rep)
	}
	if err != nil {
		return err
	}
	_, err = stdout.Write(buf.Bytes())
	return err
}

// writeReport prints a trace comparison as tables: the totals, kernels,
// workers, transfers and duration distributions.
func writeReport(w io.Writer, r *compare.Report) error {
	fmt.Fprintf(w, "A: %s (%s, %d tasks, %d workers)\n", r.A.Name, r.A.Format, r.A.Tasks, r.A.Workers)
	fmt.Fprintf(w, "B: %s (%s, %d tasks, %d workers)\n\n", r.B.Name, r.B.Format, r.B.Tasks, r.B.Workers)
	totals := newTable("", "A", "B", "B-A %")
	totals.row("makespan (ms)", fmt.Sprintf("%.3f", r.MakespanA), fmt.Sprintf("%.3f", r.MakespanB), fmt.Sprintf("%+.2f", r.MakespanErrPct))
	totals.row("GFlop/s", orDash(r.GFlopsA, "%.1f"), orDash(r.GFlopsB, "%.1f"), fmt.Sprintf("%+.2f", r.GFlopsErrPct))
	kernels := newTable("KERNEL", "TYPE", "COUNT A", "COUNT B", "TOTAL A ms", "TOTAL B ms", "MEAN A ms", "MEAN B ms", "MEAN B-A %")
	for _, k := range r.Kernels {
		kernels.row(k.Kernel, k.WorkerType, strconv.Itoa(k.CountA), strconv.Itoa(k.CountB), fmt.Sprintf("%.3f", k.TotalMsA), fmt.Sprintf("%.3f", k.TotalMsB),
			fmt.Sprintf("%.3f", k.MeanMsA), fmt.Sprintf("%.3f", k.MeanMsB), fmt.Sprintf("%+.2f", k.MeanErrPct))
	}
	workers := newTable("WORKER", "NAME A", "NAME B", "TASKS A", "TASKS B", "BUSY A ms", "BUSY B ms", "BUSY A %", "BUSY B %", "IDLE A %", "IDLE B %")
	for _, x := range r.Workers {
		// A worker missing from a side (a tasks.rec names only the workers
		// that ran a task) shows "-" there.
		side := func(name string, v float64, format string) string {
			if name == "" {
				return "-"
			}
			return fmt.Sprintf(format, v)
		}
		workers.row(strconv.Itoa(x.ID), orNone(x.NameA), orNone(x.NameB), strconv.Itoa(x.TasksA), strconv.Itoa(x.TasksB),
			side(x.NameA, x.BusyMsA, "%.3f"), side(x.NameB, x.BusyMsB, "%.3f"), side(x.NameA, x.BusyPctA, "%.1f"), side(x.NameB, x.BusyPctB, "%.1f"),
			side(x.NameA, x.IdlePctA, "%.1f"), side(x.NameB, x.IdlePctB, "%.1f"))
	}
	for _, t := range []*table{totals, kernels, workers} {
		if err := t.write(w); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	src := func(s string) string {
		switch s {
		case "":
			return "unknown"
		case "data.rec":
			return "inferred from data.rec"
		}
		return s
	}
	fmt.Fprintf(w, "transfers: A %s, B %s\n", src(r.A.TransferSource), src(r.B.TransferSource))
	if len(r.Transfers) == 0 {
		fmt.Fprintf(w, "no copies\n")
	} else {
		transfers := newTable("TRANSFER", "COPIES A", "COPIES B", "MB A", "MB B")
		for _, x := range r.Transfers {
			transfers.row(x.Src+" -> "+x.Dst, strconv.Itoa(x.CountA), strconv.Itoa(x.CountB), fmt.Sprintf("%.1f", float64(x.BytesA)/1e6), fmt.Sprintf("%.1f", float64(x.BytesB)/1e6))
		}
		if err := transfers.write(w); err != nil {
			return err
		}
	}
	fmt.Fprintln(w)
	dists := newTable("DURATIONS ms", "TYPE", "N A", "N B", "P10 A", "P10 B", "P50 A", "P50 B", "P90 A", "P90 B", "P99 A", "P99 B", "KS")
	for _, d := range r.Distributions {
		f := func(v float64) string { return fmt.Sprintf("%.3f", v) }
		dists.row(d.Kernel, d.WorkerType, strconv.Itoa(d.NA), strconv.Itoa(d.NB), f(d.A.P10), f(d.B.P10), f(d.A.P50), f(d.B.P50), f(d.A.P90), f(d.B.P90), f(d.A.P99), f(d.B.P99), f(d.KS))
	}
	return dists.write(w)
}

// orDash formats v, or "-" when it is 0 (unknown).
func orDash(v float64, format string) string {
	if v == 0 {
		return "-"
	}
	return fmt.Sprintf(format, v)
}

// orNone is s, or "-" when empty.
func orNone(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// traceFormats are the formats compare reads.
const traceFormats = "a tasks.rec (a file, or a directory holding it or paje.trace), a Chrome JSON trace or a Paje trace"

// explainFormat says what a command reads (want) after the error of a file
// that is none of it: read as a tasks.rec, its first line is no "Field:
// value".
func explainFormat(err error, want string) error {
	var se *srcerr.Error
	if !errors.As(err, &se) || !strings.HasPrefix(se.Msg, `expected "Field: value"`) {
		return err
	}
	fh, ferr := os.Open(se.File)
	if ferr != nil {
		return err
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	sc.Buffer(nil, 1<<20)
	first := 0
	for n := 1; sc.Scan(); n++ {
		if strings.TrimSpace(sc.Text()) != "" {
			first = n
			break
		}
	}
	if se.Line != first {
		return err
	}
	return fmt.Errorf("%w; not a trace starsim reads: want %s", err, want)
}
