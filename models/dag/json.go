package dag

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/starsim/starsim/calibrate/starpu"
	"github.com/starsim/starsim/internal/jsonpos"
	"github.com/starsim/starsim/internal/srcerr"
	"github.com/starsim/starsim/runtime/graph"
)

// Format and Version identify starsim's task graph files.
const (
	Format  = "starsim-dag"
	Version = 1
)

// Bounds of what a file may hold: as many tasks and data as a run may
// have (the CLI's budget), sizes far from int64's range, times and flop
// counts within what the rest of starsim reads.
const (
	MaxTasks      = 1 << 25
	MaxData       = 1 << 25
	MaxSizeBytes  = 1 << 50
	MaxFlops      = 1e18
	MaxDurationUS = 1e12
	MaxAccesses   = 1 << 16 // per task
)

// File is a task graph in starsim's JSON format (see dag.schema.json).
// Tasks are listed in submission order; they refer to data and to other
// tasks by index.
type File struct {
	Schema      string `json:"$schema,omitempty"`
	Format      string `json:"format"`
	Version     int    `json:"version"`
	Name        string `json:"name,omitempty"`
	Description string `json:"description,omitempty"`
	// TotalFlops is the flop count GFlop/s is computed from; absent, the
	// sum of the tasks' flops.
	TotalFlops *float64 `json:"total_flops,omitempty"`
	// SequentialConsistency turns StarPU's implicit dependencies on: a
	// task waits for the last writer of each data it accesses and, when
	// it writes, for the data's readers since (off by default: only deps
	// order tasks).
	SequentialConsistency bool   `json:"sequential_consistency,omitempty"`
	Data                  []Data `json:"data"`
	Tasks                 []Task `json:"tasks"`
}

// Data is one data handle, homed in RAM.
type Data struct {
	Name      string `json:"name,omitempty"`
	SizeBytes int64  `json:"size_bytes"`
	// A 2D layout (a matrix tile): Rows runs of RowBytes contiguous
	// bytes, PitchBytes apart (absent: RowBytes), which pitch-dependent
	// copy models read; absent, the data is one block.
	Rows       int64 `json:"rows,omitempty"`
	RowBytes   int64 `json:"row_bytes,omitempty"`
	PitchBytes int64 `json:"pitch_bytes,omitempty"`
	// Footprint is StarPU's handle footprint (hex); absent, the CRC-32C
	// of the size as StarPU hashes a size (SizeFootprint).
	Footprint string `json:"footprint,omitempty"`
	// Home is the memory node holding the data at the start: "RAM".
	Home string `json:"home,omitempty"`
	// SequentialConsistency overrides the file's setting for this data.
	SequentialConsistency *bool `json:"sequential_consistency,omitempty"`
	// PartitionOrder marks a piece of the application's partitioned matrix
	// and gives its path in the partition tree (graph.Handle's Tile and
	// Order): StarPU fetches a task's pieces written ones first, then by
	// this order.
	PartitionOrder *int `json:"partition_order,omitempty"`
}

// Task is one task, in submission order.
type Task struct {
	// Name is the kernel's name ("GEMM"); Model its perf-model symbol,
	// which the calibration is asked (absent: Name).
	Name  string `json:"name"`
	Model string `json:"model,omitempty"`
	// Footprint indexes the perf model (hex); absent, StarPU's rule: the
	// data footprints folded in access order.
	Footprint string   `json:"footprint,omitempty"`
	Flops     float64  `json:"flops,omitempty"`
	Priority  int      `json:"priority,omitempty"`
	Access    []Access `json:"access,omitempty"`
	// Deps are explicit dependencies: indexes of earlier tasks.
	Deps []int `json:"deps,omitempty"`
	// WontUse lists data the application will not use soon, declared
	// right after submitting the task (starpu_data_wont_use).
	WontUse []int `json:"wont_use,omitempty"`
	// DurationsUS gives the task's duration in µs per arch ("cuda0") or
	// arch kind ("cpu", "cuda"), used where the calibration has no entry
	// for its model and footprint.
	DurationsUS map[string]float64 `json:"durations_us,omitempty"`
	// SyncGPU says the GPU implementation is synchronous (no
	// STARPU_CUDA_ASYNC): a GPU driver waits on it.
	SyncGPU bool `json:"sync_gpu,omitempty"`
}

// Access is a task's access to one data.
type Access struct {
	Data int    `json:"data"`
	Mode string `json:"mode"` // "R", "W" or "RW"
}

// pathError is a validation fault at a JSON path (for its line).
type pathError struct {
	path []any
	msg  string
}

func (e *pathError) Error() string { return e.msg }

func errAt(msg string, path ...any) error { return &pathError{path, msg} }

// ReadJSON reads a task graph in starsim's JSON format; name labels errors
// ("FILE:LINE: reason").
func ReadJSON(data []byte, name string) (*graph.Graph, error) {
	f, err := parseJSON(data, name)
	if err != nil {
		return nil, err
	}
	g, err := f.Graph()
	if err != nil {
		var pe *pathError
		if errors.As(err, &pe) {
			return nil, srcerr.Errorf(name, jsonpos.Line(data, pe.path...), "%s", pe.msg)
		}
		return nil, srcerr.Errorf(name, 0, "%v", err)
	}
	return g, nil
}

func parseJSON(data []byte, name string) (*File, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f File
	if err := dec.Decode(&f); err != nil {
		return nil, jsonpos.DecodeError(data, name, "", err, -1)
	}
	if dec.More() {
		return nil, srcerr.Errorf(name, srcerr.LineOf(data, dec.InputOffset()), "unexpected data after the task graph object")
	}
	return &f, nil
}

// ParseMode reads StarPU's spelling of an access mode.
func ParseMode(s string) (graph.Mode, bool) {
	switch s {
	case "R":
		return graph.R, true
	case "W":
		return graph.W, true
	case "RW":
		return graph.RW, true
	}
	return 0, false
}

// parseHex reads a 32-bit footprint written in hexadecimal (1 to 8
// digits, no prefix).
func parseHex(s string) (uint32, bool) {
	if len(s) == 0 || len(s) > 8 {
		return 0, false
	}
	v, err := strconv.ParseUint(s, 16, 32)
	return uint32(v), err == nil
}

func finiteIn(v, lo, hi float64) bool { return !math.IsNaN(v) && v >= lo && v <= hi }

// Graph checks the file and builds its task graph. Errors carry the JSON
// path of the fault (ReadJSON turns it into a line).
func (f *File) Graph() (*graph.Graph, error) {
	if f.Format != Format {
		return nil, errAt(fmt.Sprintf("format %q: want %q", f.Format, Format), "format")
	}
	if f.Version != Version {
		return nil, errAt(fmt.Sprintf("version %d: this starsim reads version %d", f.Version, Version), "version")
	}
	if len(f.Tasks) > MaxTasks {
		return nil, errAt(fmt.Sprintf("%d tasks: at most %d", len(f.Tasks), MaxTasks), "tasks")
	}
	if len(f.Data) > MaxData {
		return nil, errAt(fmt.Sprintf("%d data: at most %d", len(f.Data), MaxData), "data")
	}
	g := &graph.Graph{Name: f.Name, Handles: make([]graph.Handle, len(f.Data)), Tasks: make([]graph.Task, len(f.Tasks))}
	if g.Name == "" {
		g.Name = fmt.Sprintf("task graph of %d tasks", len(f.Tasks))
	}
	for i := range f.Data {
		d := &f.Data[i]
		h, err := d.handle(i, f.SequentialConsistency)
		if err != nil {
			return nil, err
		}
		g.Handles[i] = h
	}
	var sum float64
	for i := range f.Tasks {
		t, err := f.Tasks[i].task(i, g.Handles)
		if err != nil {
			return nil, err
		}
		g.Tasks[i] = t
		sum += t.Flops
	}
	g.TotalFlops = sum
	if f.TotalFlops != nil {
		if !finiteIn(*f.TotalFlops, 0, MaxFlops*MaxTasks) {
			return nil, errAt(fmt.Sprintf("total_flops %v: want a finite count >= 0", *f.TotalFlops), "total_flops")
		}
		g.TotalFlops = *f.TotalFlops
	}
	return g, nil
}

func (d *Data) handle(i int, sc bool) (graph.Handle, error) {
	at := func(field, format string, args ...any) error {
		return errAt(fmt.Sprintf("data %d: %s", i, fmt.Sprintf(format, args...)), "data", i, field)
	}
	h := graph.Handle{ID: i, Name: d.Name, SizeBytes: d.SizeBytes}
	if h.Name == "" {
		h.Name = fmt.Sprintf("d%d", i)
	}
	if d.SizeBytes < 0 || d.SizeBytes > MaxSizeBytes {
		return h, at("size_bytes", "size_bytes %d: want 0 to 2^50", d.SizeBytes)
	}
	switch {
	case d.Rows == 0 && d.RowBytes == 0 && d.PitchBytes == 0:
		// No layout: copied as one block (no pitch-dependent model).
	case d.Rows <= 0 || d.RowBytes <= 0 || d.Rows > MaxSizeBytes || d.RowBytes > MaxSizeBytes:
		return h, at("rows", "rows %d and row_bytes %d: a 2D layout needs both, positive", d.Rows, d.RowBytes)
	case d.Rows*d.RowBytes != d.SizeBytes || d.SizeBytes/d.Rows != d.RowBytes:
		return h, at("rows", "rows %d x row_bytes %d is not size_bytes %d", d.Rows, d.RowBytes, d.SizeBytes)
	default:
		h.Rows, h.RowBytes, h.PitchBytes = d.Rows, d.RowBytes, d.PitchBytes
		if h.PitchBytes == 0 {
			h.PitchBytes = d.RowBytes
		}
		if h.PitchBytes < h.RowBytes || h.PitchBytes > MaxSizeBytes {
			return h, at("pitch_bytes", "pitch_bytes %d: want row_bytes (%d) to 2^50", h.PitchBytes, h.RowBytes)
		}
	}
	if d.Footprint == "" {
		h.Footprint = starpu.SizeFootprint(uint64(d.SizeBytes))
	} else if fp, ok := parseHex(d.Footprint); ok {
		h.Footprint = fp
	} else {
		return h, at("footprint", "footprint %q: want 1 to 8 hexadecimal digits", d.Footprint)
	}
	if d.Home != "" && d.Home != "RAM" {
		return h, at("home", "home %q: data start in RAM (the only home the runtime takes)", d.Home)
	}
	if d.SequentialConsistency != nil {
		sc = *d.SequentialConsistency
	}
	h.NoSeqConsistency = !sc
	if d.PartitionOrder != nil {
		if *d.PartitionOrder < 0 {
			return h, at("partition_order", "partition_order %d: want >= 0", *d.PartitionOrder)
		}
		h.Tile, h.Order = true, *d.PartitionOrder
	}
	return h, nil
}

func (t *Task) task(i int, hs []graph.Handle) (graph.Task, error) {
	at := func(path []any, format string, args ...any) error {
		return errAt(fmt.Sprintf("task %d (%s): %s", i, t.Name, fmt.Sprintf(format, args...)), append([]any{"tasks", i}, path...)...)
	}
	g := graph.Task{ID: i, Name: t.Name, Model: t.Model, Flops: t.Flops, Priority: t.Priority, SyncGPU: t.SyncGPU}
	if t.Name == "" {
		return g, errAt(fmt.Sprintf("task %d: no name", i), "tasks", i)
	}
	if g.Model == "" {
		g.Model = t.Name
	}
	if !finiteIn(t.Flops, 0, MaxFlops) {
		return g, at([]any{"flops"}, "flops %v: want 0 to 1e18", t.Flops)
	}
	if t.Priority != int(int32(t.Priority)) {
		return g, at([]any{"priority"}, "priority %d: want a 32-bit integer", t.Priority)
	}
	if len(t.Access) > MaxAccesses {
		return g, at([]any{"access"}, "%d accesses: at most %d", len(t.Access), MaxAccesses)
	}
	fps := make([]uint32, 0, len(t.Access))
	if len(t.Access) > 0 {
		g.Buffers = make([]graph.Access, len(t.Access))
	}
	for j, a := range t.Access {
		if a.Data < 0 || a.Data >= len(hs) {
			return g, at([]any{"access", j, "data"}, "access %d: data %d: want 0 to %d", j, a.Data, len(hs)-1)
		}
		m, ok := ParseMode(a.Mode)
		if !ok {
			return g, at([]any{"access", j, "mode"}, "access %d: mode %q: want R, W or RW", j, a.Mode)
		}
		g.Buffers[j] = graph.Access{Handle: a.Data, Mode: m}
		fps = append(fps, hs[a.Data].Footprint)
	}
	if t.Footprint == "" {
		g.Footprint = starpu.TaskFootprint(fps)
	} else if fp, ok := parseHex(t.Footprint); ok {
		g.Footprint = fp
	} else {
		return g, at([]any{"footprint"}, "footprint %q: want 1 to 8 hexadecimal digits", t.Footprint)
	}
	for j, d := range t.Deps {
		if d < 0 || d >= i {
			return g, at([]any{"deps", j}, "depends on task %d: want an earlier task (0 to %d)", d, i-1)
		}
	}
	g.Deps = t.Deps
	for j, d := range t.WontUse {
		if d < 0 || d >= len(hs) {
			return g, at([]any{"wont_use", j}, "wont_use data %d: want 0 to %d", d, len(hs)-1)
		}
	}
	g.WontUse = t.WontUse
	if t.DurationsUS != nil {
		for _, arch := range sortedKeys(t.DurationsUS) {
			us := t.DurationsUS[arch]
			if arch == "" || !archName(arch) {
				return g, at([]any{"durations_us"}, "durations_us: arch %q: want an arch (cuda0) or kind (cuda), letters then digits", arch)
			}
			if !finiteIn(us, 0, MaxDurationUS) || us == 0 {
				return g, at([]any{"durations_us", arch}, "durations_us[%s] %v: want a duration > 0 and <= 1e12 us", arch, us)
			}
		}
		g.DurationsUS = t.DurationsUS
	}
	return g, nil
}

// archName reports whether s reads as an arch or an arch kind: lower-case
// letters (and underscores), then optional digits.
func archName(s string) bool {
	i := 0
	for i < len(s) && (s[i] >= 'a' && s[i] <= 'z' || s[i] == '_') {
		i++
	}
	if i == 0 {
		return false
	}
	for ; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
