package dag

import (
	"fmt"
	"math"

	"github.com/starsim/starsim/runtime/graph"
)

// Options change how a file's tasks get their durations.
type Options struct {
	// FlopRates derives durations from flops: per arch ("cuda0") or arch
	// kind ("cpu", "cuda"), a rate in flop/s; a task with flops and no
	// duration of its own for that key runs there for flops/rate. DOT
	// files of DAGGEN and SimGrid give flops only.
	FlopRates map[string]float64
}

// apply adds the durations FlopRates derive to g's tasks.
func (o Options) apply(g *graph.Graph) error {
	if len(o.FlopRates) == 0 {
		return nil
	}
	keys := sortedKeys(o.FlopRates)
	for _, k := range keys {
		if r := o.FlopRates[k]; !archName(k) || !(r > 0) || math.IsInf(r, 0) {
			return fmt.Errorf("flop rate %s=%v: want an arch or kind and a rate > 0 (flop/s)", k, r)
		}
	}
	for i := range g.Tasks {
		t := &g.Tasks[i]
		if !(t.Flops > 0) {
			continue
		}
		// A new map per task: files may share one between tasks.
		d := make(map[string]float64, len(t.DurationsUS)+len(keys))
		for k, v := range t.DurationsUS {
			d[k] = v
		}
		for _, k := range keys {
			if _, ok := d[k]; !ok {
				d[k] = min(t.Flops/o.FlopRates[k]*1e6, MaxDurationUS)
			}
		}
		t.DurationsUS = d
	}
	return nil
}
