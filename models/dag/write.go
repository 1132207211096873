package dag

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/starsim/starsim/runtime/graph"
)

// Write writes g in starsim's JSON format, one data and one task per line,
// with everything the runtime reads of it (layouts, footprints, flops,
// priorities, accesses, explicit dependencies, wont_use hints, durations,
// synchronous kernels, the total flop count), so that reading it back
// gives the same graph and the same run. Sequential consistency is on, as
// the built-in applications and replayed traces rely on it (data that
// have it off say so). A task pinned to a worker or of a fixed duration
// (a replay's) has no place in the format: an error.
func Write(w io.Writer, g *graph.Graph, description string) error {
	for i := range g.Tasks {
		t := &g.Tasks[i]
		if t.Pinned || t.FixedUS > 0 {
			return fmt.Errorf("task %d (%s) is pinned to a worker or of fixed duration: the format has neither", i, t.Name)
		}
		if t.ID != i {
			return fmt.Errorf("task %d has ID %d: tasks must be listed in submission order", i, t.ID)
		}
	}
	bw := bufio.NewWriter(w)
	enc := func(v any) []byte {
		var b bytes.Buffer
		e := json.NewEncoder(&b)
		e.SetEscapeHTML(false)
		_ = e.Encode(v) // plain structs of strings and numbers: cannot fail
		return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
	}
	fmt.Fprintf(bw, "{\n \"format\": %q,\n \"version\": %d,\n", Format, Version)
	fmt.Fprintf(bw, " \"name\": %s,\n", enc(g.Name))
	if description != "" {
		fmt.Fprintf(bw, " \"description\": %s,\n", enc(description))
	}
	fmt.Fprintf(bw, " \"total_flops\": %s,\n \"sequential_consistency\": true,\n \"data\": [", enc(g.TotalFlops))
	no := false
	for i := range g.Handles {
		h := &g.Handles[i]
		d := Data{Name: h.Name, SizeBytes: h.SizeBytes, Footprint: fmt.Sprintf("%08x", h.Footprint)}
		d.Rows, d.RowBytes, d.PitchBytes = h.Rows, h.RowBytes, h.PitchBytes
		if h.NoSeqConsistency {
			d.SequentialConsistency = &no
		}
		if h.Tile {
			d.PartitionOrder = &h.Order
		}
		sep := ","
		if i == 0 {
			sep = ""
		}
		fmt.Fprintf(bw, "%s\n  %s", sep, enc(d))
	}
	bw.WriteString("\n ],\n \"tasks\": [")
	for i := range g.Tasks {
		t := &g.Tasks[i]
		o := Task{Name: t.Name, Model: t.Model, Footprint: fmt.Sprintf("%08x", t.Footprint), Flops: t.Flops,
			Priority: t.Priority, Deps: t.Deps, WontUse: t.WontUse, DurationsUS: t.DurationsUS, SyncGPU: t.SyncGPU}
		if o.Model == o.Name {
			o.Model = ""
		}
		for _, a := range t.Buffers {
			o.Access = append(o.Access, Access{Data: a.Handle, Mode: a.Mode.String()})
		}
		sep := ","
		if i == 0 {
			sep = ""
		}
		fmt.Fprintf(bw, "%s\n  %s", sep, enc(o))
	}
	bw.WriteString("\n ]\n}\n")
	return bw.Flush()
}
