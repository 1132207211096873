package paje

import (
	"github.com/starsim/starsim/runtime/graph"
	"github.com/starsim/starsim/runtime/sim"
	"github.com/starsim/starsim/traces"
)

// Format is the Paje trace, one file; a StarPU trace directory holds it
// as paje.trace.
var Format = traces.Format{
	Name:    "paje",
	Usage:   "write a Paje trace (StarPU's vocabulary; ViTE, pajeng, StarVZ) to `FILE`",
	Open:    open,
	DirFile: "paje.trace",
	Detect:  Is,
	Read:    Read,
}

func open(out traces.Output, path string, h traces.Header, g *graph.Graph) (sim.Observer, error) {
	fh, err := out.Create(path)
	if err != nil {
		return nil, err
	}
	w := NewWriter(fh, h)
	w.SetHandles(g.Handles)
	out.OnClose(w.Close)
	return w, nil
}
