package compare

import (
	"errors"
	"fmt"

	"github.com/starsim/starsim/internal/plot"
	"github.com/starsim/starsim/traces"
)

// SaveGantt draws a and b in one panel (internal/plot.Panel), a on top and
// b below, on the same time axis (ms since each trace's first task start,
// from 0 to the longer makespan) and writes it to path: PNG or SVG by the
// extension (.png, .svg, any letter case). Each trace has a Gantt chart
// (a row per worker, Trace.Workers labelled with WorkerInfo.Label, colored
// by kernel, fetching input and other runtime states where the trace
// records them) and the rows its format holds: ready tasks, GPU memory
// used, bytes in flight per direction (Chrome and Paje traces; a tasks.rec
// has none, which its rows say). One legend lists the kernels of both. The
// output is deterministic.
func SaveGantt(a, b *traces.Trace, path string) error {
	if a == nil || b == nil {
		return errors.New("traces: SaveGantt needs two traces")
	}
	if err := plot.CheckExt(path); err != nil {
		return fmt.Errorf("traces: %w", err)
	}
	p := plot.Panel{Title: "A: " + shortName(a.Name) + " vs B: " + shortName(b.Name)}
	for i, t := range []*traces.Trace{a, b} {
		tl, absent := t.Timeline()
		if len(tl.Rows()) == 0 {
			tl.AddRow("(no worker)", "")
		}
		p.Blocks = append(p.Blocks, plot.Block{
			Title:  fmt.Sprintf("%s: %s (%s), makespan %.1f ms, %d tasks", "AB"[i:i+1], shortName(t.Name), t.Format, t.Makespan(), len(t.Tasks)),
			TL:     tl,
			XLabel: "time since the first task start (ms)",
			Absent: absent,
		})
	}
	return plot.SavePanel(p, path)
}

// shortName keeps the end of a long trace name.
func shortName(s string) string {
	const max = 70
	if r := []rune(s); len(r) > max {
		return "…" + string(r[len(r)-max+1:])
	}
	return s
}
