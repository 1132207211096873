package compare

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// WriteText writes the report as text tables.
func (r *Report) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	left := tw
	fmt.Fprintf(left, "A: %s (%s, %d tasks, %d workers)\n", r.A.Name, r.A.Format, r.A.Tasks, r.A.Workers)
	fmt.Fprintf(left, "B: %s (%s, %d tasks, %d workers)\n\n", r.B.Name, r.B.Format, r.B.Tasks, r.B.Workers)
	fmt.Fprintf(left, "\tA\tB\tB-A %%\n")
	fmt.Fprintf(left, "makespan (ms)\t%.3f\t%.3f\t%+.2f\n", r.MakespanA, r.MakespanB, r.MakespanErrPct)
	fmt.Fprintf(left, "GFlop/s\t%s\t%s\t%+.2f\n\n", orDash(r.GFlopsA, "%.1f"), orDash(r.GFlopsB, "%.1f"), r.GFlopsErrPct)
	if err := left.Flush(); err != nil {
		return err
	}

	fmt.Fprintf(tw, "KERNEL\tTYPE\tCOUNT A\tCOUNT B\tTOTAL A ms\tTOTAL B ms\tMEAN A ms\tMEAN B ms\tMEAN B-A %%\n")
	for _, k := range r.Kernels {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%.3f\t%.3f\t%.3f\t%.3f\t%+.2f\n", k.Kernel, k.WorkerType,
			k.CountA, k.CountB, k.TotalMsA, k.TotalMsB, k.MeanMsA, k.MeanMsB, k.MeanErrPct)
	}
	fmt.Fprintf(tw, "\n")
	fmt.Fprintf(tw, "WORKER\tNAME A\tNAME B\tTASKS A\tTASKS B\tBUSY A ms\tBUSY B ms\tBUSY A %%\tBUSY B %%\tIDLE A %%\tIDLE B %%\n")
	for _, x := range r.Workers {
		// A worker missing from a side (a tasks.rec names only the workers
		// that ran a task) shows "-" there.
		side := func(name string, v float64, format string) string {
			if name == "" {
				return "-"
			}
			return fmt.Sprintf(format, v)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", x.ID, orNone(x.NameA), orNone(x.NameB),
			x.TasksA, x.TasksB, side(x.NameA, x.BusyMsA, "%.3f"), side(x.NameB, x.BusyMsB, "%.3f"),
			side(x.NameA, x.BusyPctA, "%.1f"), side(x.NameB, x.BusyPctB, "%.1f"),
			side(x.NameA, x.IdlePctA, "%.1f"), side(x.NameB, x.IdlePctB, "%.1f"))
	}
	fmt.Fprintf(tw, "\n")
	if err := tw.Flush(); err != nil {
		return err
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
	fmt.Fprintf(left, "transfers: A %s, B %s\n", src(r.A.TransferSource), src(r.B.TransferSource))
	if err := left.Flush(); err != nil {
		return err
	}
	if len(r.Transfers) == 0 {
		fmt.Fprintf(tw, "no copies\n")
	} else {
		fmt.Fprintf(tw, "TRANSFER\tCOPIES A\tCOPIES B\tMB A\tMB B\n")
		for _, x := range r.Transfers {
			fmt.Fprintf(tw, "%s -> %s\t%d\t%d\t%.1f\t%.1f\n", x.Src, x.Dst, x.CountA, x.CountB, float64(x.BytesA)/1e6, float64(x.BytesB)/1e6)
		}
	}
	fmt.Fprintf(tw, "\n")
	fmt.Fprintf(tw, "DURATIONS ms\tTYPE\tN A\tN B\tP10 A\tP10 B\tP50 A\tP50 B\tP90 A\tP90 B\tP99 A\tP99 B\tKS\n")
	for _, d := range r.Distributions {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\n", d.Kernel, d.WorkerType, d.NA, d.NB,
			d.A.P10, d.B.P10, d.A.P50, d.B.P50, d.A.P90, d.B.P90, d.A.P99, d.B.P99, d.KS)
	}
	return tw.Flush()
}

func orDash(v float64, format string) string {
	if v == 0 {
		return "-"
	}
	return fmt.Sprintf(format, v)
}

func orNone(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
