package rec

import (
	"path/filepath"

	"github.com/starsim/starsim/runtime/graph"
	"github.com/starsim/starsim/runtime/sim"
	"github.com/starsim/starsim/traces"
)

// Format is StarPU's tasks.rec and data.rec, in a directory.
var Format = traces.Format{
	Name:    "rec",
	Usage:   "write StarPU's tasks.rec and data.rec into `DIR`",
	Files:   []string{"tasks.rec", "data.rec"},
	Open:    open,
	DirFile: "tasks.rec",
	Read:    Read,
}

func open(out traces.Output, dir string, h traces.Header, g *graph.Graph) (sim.Observer, error) {
	if err := out.Mkdir(dir); err != nil {
		return nil, err
	}
	tf, err := out.Create(filepath.Join(dir, "tasks.rec"))
	if err != nil {
		return nil, err
	}
	df, err := out.Create(filepath.Join(dir, "data.rec"))
	if err != nil {
		return nil, err
	}
	w := NewWriter(tf, df, h)
	if err := w.WriteData(g.Handles); err != nil {
		return nil, err
	}
	out.OnClose(w.Close)
	return w, nil
}
