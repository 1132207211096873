package rec

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/starsim/starsim/runtime/graph"
	"github.com/starsim/starsim/runtime/sim"
	"github.com/starsim/starsim/traces"
)

// Writer writes tasks.rec and data.rec as StarPU's starpu_fxt_tool does
// (field names, units: times in ms, GFlop = flops/1e9), from the runtime's
// event stream. It is a sim.Observer: set it as Options.Observer.
//
// Usage: NewWriter, then WriteData with the graph's handles before the
// run (the Observer's Start carries no handles, and a task's buffers are
// indexes into them), then the run, then Close. TaskDone writes the task's
// record at once (nothing is kept per task); writes are buffered and flushed
// by End and Close. Errors (a failed write, a task before WriteData or with a
// buffer outside the handles) are kept and returned by Close; the first
// one stops all writing.
//
// tasks.rec, one record per task, in completion order, fields in
// starpu_fxt_tool's order:
//
//	Name, Model        the kernel name and perf-model symbol (Model = Name when
//	                   the task has no model)
//	JobId, SubmitOrder both task ID + 1 (StarPU counts both from 1 and omits a
//	                   zero SubmitOrder)
//	Priority
//	DependsOn          JobIds of every predecessor (explicit and implicit data
//	                   dependencies, TaskState.Preds); absent when none
//	WorkerId           the worker's ID
//	MemoryNode         the worker's memory node
//	SubmitTime, ReadyTime, StartTime, EndTime
//	                   ms, to 15 significant digits, as a plain decimal
//	                   (StarPU prints %f: whole ns)
//	Footprint          %08x
//	GFlop              flops/1e9, to 15 significant digits
//	Parameters         one describe() per buffer, space-separated (see below)
//	Handles            per buffer, a synthetic address: hex of 0x1000 + ID*0x100
//	Modes              R, W or RW per buffer
//	Sizes              bytes per buffer
//
// StarPU's File, Line, DepLabels, Tag, Iteration, NumaNodes and MPIRank are
// not written (the simulator has no such data), nor are the Control: WontUse
// records (their SubmitOrder would take a slot between the tasks' ones).
//
// Parameters mirror StarPU's matrix describe(), "M<nx>x<ny>x<elemsize>":
// a tile has Rows rows of RowBytes bytes, and for the square tiles starsim's
// models make, nx = ny = Rows and elemsize = RowBytes/Rows ("M960x960x4" for
// a 960×960 float tile, as in the native trace). A non-square tile (RowBytes
// not a multiple of Rows) is written with elemsize 1, "M<RowBytes>x<Rows>x1",
// and a handle without rows as a vector, "V<SizeBytes>x1". The native trace
// shows the first entry empty ("Parameters:  M960x960x4" for two buffers),
// which this writer does not copy.
//
// data.rec, written by WriteData, one record per handle in order: Handle
// (as in Handles), HomeNode 0, Name, Size, Description (as in Parameters),
// ParentHandle 0 (every handle is a root) and, when the name ends in
// "[i][j]..." (models' "A[3][1]"), Coordinates "i j ...".
//
// Both files start with the Header as '#' comments, then a blank line.
// Values with newlines are written as recutils continuation lines ("+ ").
type Writer struct {
	sim.NopObserver

	tasks, data *bufio.Writer
	handles     []graph.Handle
	haveData    bool
	closed      bool
	err         error
	buf         []byte
}

// NewWriter writes to tasks (tasks.rec) and data (data.rec); either may
// be nil to skip that file. The header is written at once; the writers are
// not closed by Close.
func NewWriter(tasks, data io.Writer, h traces.Header) *Writer {
	w := &Writer{}
	if tasks != nil {
		w.tasks = bufio.NewWriterSize(tasks, 64<<10)
		w.header(w.tasks, "tasks.rec", h)
	}
	if data != nil {
		w.data = bufio.NewWriterSize(data, 16<<10)
		w.header(w.data, "data.rec", h)
	}
	return w
}

func (w *Writer) header(bw *bufio.Writer, file string, h traces.Header) {
	b := w.buf[:0]
	b = append(b, "# "+file+": StarPU starpu_fxt_tool format (recutils), times in ms\n"...)
	for _, kv := range [][2]string{{"Tool", h.Tool}, {"Version", h.Version}, {"Command", h.Command}, {"Machine", h.Machine}} {
		if kv[1] == "" {
			continue
		}
		b = append(b, "# "+kv[0]+": "...)
		b = append(b, strings.ReplaceAll(kv[1], "\n", " ")...)
		b = append(b, '\n')
	}
	b = append(b, "# Seed: "...)
	b = strconv.AppendUint(b, h.Seed, 10)
	b = append(b, "\n\n"...)
	w.write(bw, b)
	w.buf = b
}

// WriteData writes data.rec, one record per handle, and keeps handles to
// resolve the tasks' buffers (Graph.Handles: a buffer's Handle is an index
// into it). Call it once, before the run.
func (w *Writer) WriteData(handles []graph.Handle) error {
	if w.err != nil {
		return w.err
	}
	if w.haveData {
		w.err = errors.New("traces: RecWriter.WriteData called twice")
		return w.err
	}
	w.haveData = true
	w.handles = handles
	if w.data == nil {
		return nil
	}
	for i := range handles {
		h := &handles[i]
		b := w.buf[:0]
		b = appendField(b, "Handle", handleAddr(h.ID))
		b = append(b, "HomeNode: 0\n"...)
		if h.Name != "" {
			b = appendField(b, "Name", h.Name)
		}
		b = append(b, "Size: "...)
		b = strconv.AppendInt(b, h.SizeBytes, 10)
		b = append(b, '\n')
		b = append(b, "Description: "...)
		b = appendDescribe(b, h)
		b = append(b, "\nParentHandle: 0\n"...)
		if c, ok := coordinates(h.Name); ok {
			b = append(b, "Coordinates: "+c+"\n"...)
		}
		b = append(b, '\n')
		w.write(w.data, b)
		w.buf = b
	}
	return w.err
}

// TaskDone writes task t's tasks.rec record.
func (w *Writer) TaskDone(t *sim.TaskState) {
	if w.err != nil || w.tasks == nil {
		return
	}
	spec := t.Spec()
	if !w.haveData {
		w.err = fmt.Errorf("traces: RecWriter: task %d done before WriteData", t.ID())
		return
	}
	for _, a := range spec.Buffers {
		if a.Handle < 0 || a.Handle >= len(w.handles) {
			w.err = fmt.Errorf("traces: RecWriter: task %d uses handle %d, not among the %d given to WriteData",
				t.ID(), a.Handle, len(w.handles))
			return
		}
	}
	b := w.buf[:0]
	model := spec.Model
	if model == "" {
		model = spec.Name
	}
	if spec.Name != "" {
		b = appendField(b, "Name", spec.Name)
	}
	if model != "" {
		b = appendField(b, "Model", model)
	}
	job := int64(t.ID()) + 1
	b = appendInt(b, "JobId", job)
	b = appendInt(b, "SubmitOrder", job)
	b = appendInt(b, "Priority", int64(spec.Priority))
	if preds := t.Preds(); len(preds) > 0 {
		b = append(b, "DependsOn:"...)
		for _, p := range preds {
			b = append(b, ' ')
			b = strconv.AppendInt(b, int64(p)+1, 10)
		}
		b = append(b, '\n')
	}
	if wk := t.Worker(); wk != nil {
		b = appendInt(b, "WorkerId", int64(wk.ID))
		b = appendInt(b, "MemoryNode", int64(wk.Node))
	}
	b = appendMS(b, "SubmitTime", t.SubmitS())
	b = appendMS(b, "ReadyTime", t.ReadyS())
	b = appendMS(b, "StartTime", t.StartS())
	b = appendMS(b, "EndTime", t.EndS())
	b = append(b, "Footprint: "...)
	b = fmt.Appendf(b, "%08x\n", spec.Footprint)
	b = append(b, "GFlop: "...)
	b = appendRecFloat(b, spec.Flops/1e9)
	b = append(b, '\n')
	if len(spec.Buffers) > 0 {
		b = append(b, "Parameters:"...)
		for _, a := range spec.Buffers {
			b = append(b, ' ')
			b = appendDescribe(b, &w.handles[a.Handle])
		}
		b = append(b, "\nHandles:"...)
		for _, a := range spec.Buffers {
			b = append(b, ' ')
			b = append(b, handleAddr(w.handles[a.Handle].ID)...)
		}
		b = append(b, "\nModes:"...)
		for _, a := range spec.Buffers {
			b = append(b, ' ')
			b = appendMode(b, a.Mode)
		}
		b = append(b, "\nSizes:"...)
		for _, a := range spec.Buffers {
			b = append(b, ' ')
			b = strconv.AppendInt(b, w.handles[a.Handle].SizeBytes, 10)
		}
		b = append(b, '\n')
	}
	b = append(b, '\n')
	// The application's starpu_data_wont_use calls right after this task's
	// submission: one control record each. StarPU gives them their own
	// SubmitOrder slot; here they share the task's, which replay reads the
	// same way (attached to the last task submitted at or before them).
	for _, hid := range spec.WontUse {
		if hid < 0 || hid >= len(w.handles) {
			continue
		}
		b = appendField(b, "Control", "WontUse")
		b = appendInt(b, "SubmitOrder", job)
		b = appendMS(b, "SubmitTime", t.SubmitS())
		b = appendField(b, "Handles", handleAddr(w.handles[hid].ID))
		b = append(b, '\n')
	}
	w.write(w.tasks, b)
	w.buf = b
}

// End flushes what is buffered.
func (w *Writer) End(float64) { w.flush() }

// Close flushes both files and returns the first error of the writer's
// life. It does not close the underlying writers; later calls return the
// same error.
func (w *Writer) Close() error {
	if !w.closed {
		w.closed = true
		w.flush()
	}
	return w.err
}

func (w *Writer) flush() {
	for _, bw := range []*bufio.Writer{w.tasks, w.data} {
		if bw != nil && w.err == nil {
			if err := bw.Flush(); err != nil {
				w.err = fmt.Errorf("traces: writing rec file: %w", err)
			}
		}
	}
}

func (w *Writer) write(bw *bufio.Writer, b []byte) {
	if w.err != nil || bw == nil {
		return
	}
	if _, err := bw.Write(b); err != nil {
		w.err = fmt.Errorf("traces: writing rec file: %w", err)
	}
}

// handleAddr is the synthetic address of handle id, StarPU's Handles and
// Handle fields being pointers printed in hex.
func handleAddr(id int) string {
	return strconv.FormatUint(uint64(0x1000)+uint64(id)*0x100, 16)
}

// appendField writes "name: value", continuation lines for newlines.
func appendField(b []byte, name, value string) []byte {
	b = append(b, name...)
	b = append(b, ": "...)
	b = append(b, strings.ReplaceAll(value, "\n", "\n+ ")...)
	return append(b, '\n')
}

func appendInt(b []byte, name string, v int64) []byte {
	b = append(b, name...)
	b = append(b, ": "...)
	b = strconv.AppendInt(b, v, 10)
	return append(b, '\n')
}

// appendMS writes a time given in seconds as ms.
func appendMS(b []byte, name string, s float64) []byte {
	b = append(b, name...)
	b = append(b, ": "...)
	b = appendRecFloat(b, s*1e3)
	return append(b, '\n')
}

// appendRecFloat writes v rounded to 15 significant digits (so that the
// noise of unit conversions, 0.10199999999999998, reads 0.102) as the
// shortest plain decimal of that value: relative error at most 5e-15.
func appendRecFloat(b []byte, v float64) []byte {
	r, err := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 15, 64), 64)
	if err != nil { // NaN, ±Inf: written as they are
		r = v
	}
	return strconv.AppendFloat(b, r, 'f', -1, 64)
}

// appendMode writes StarPU's mode flags (R, W).
func appendMode(b []byte, m graph.Mode) []byte {
	if m&graph.R != 0 {
		b = append(b, 'R')
	}
	if m&graph.W != 0 {
		b = append(b, 'W')
	}
	return b
}

// appendDescribe writes StarPU's describe() of h (see Writer).
func appendDescribe(b []byte, h *graph.Handle) []byte {
	switch {
	case h.Rows <= 0 || h.RowBytes <= 0:
		b = append(b, 'V')
		b = strconv.AppendInt(b, h.SizeBytes, 10)
		return append(b, "x1"...)
	case h.RowBytes%h.Rows == 0:
		b = append(b, 'M')
		b = strconv.AppendInt(b, h.Rows, 10)
		b = append(b, 'x')
		b = strconv.AppendInt(b, h.Rows, 10)
		b = append(b, 'x')
		return strconv.AppendInt(b, h.RowBytes/h.Rows, 10)
	default:
		b = append(b, 'M')
		b = strconv.AppendInt(b, h.RowBytes, 10)
		b = append(b, 'x')
		b = strconv.AppendInt(b, h.Rows, 10)
		return append(b, "x1"...)
	}
}

// coordinates returns "i j" for a name ending in "[i][j]" (any number of
// bracketed decimal indexes after a non-empty prefix).
func coordinates(name string) (string, bool) {
	var idx []string
	for strings.HasSuffix(name, "]") {
		open := strings.LastIndexByte(name, '[')
		if open < 0 {
			return "", false
		}
		n := name[open+1 : len(name)-1]
		if n == "" || strings.Trim(n, "0123456789") != "" {
			return "", false
		}
		idx = append(idx, n)
		name = name[:open]
	}
	if name == "" || len(idx) == 0 {
		return "", false
	}
	for i, j := 0, len(idx)-1; i < j; i, j = i+1, j-1 {
		idx[i], idx[j] = idx[j], idx[i]
	}
	return strings.Join(idx, " "), true
}
