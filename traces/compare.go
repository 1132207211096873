package traces

// Trace comparison: load two traces (a native StarPU tasks.rec, a starsim
// tasks.rec or Chrome JSON) and compare what they executed.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"gonum.org/v1/gonum/stat"

	"github.com/starsim/starsim/internal/inputfile"
	"github.com/starsim/starsim/internal/srcerr"
	"github.com/starsim/starsim/internal/timeline"
)

// Worker types of KernelRow and DistRow.
const (
	WorkerCPU  = "cpu"
	WorkerCUDA = "cuda"
)

// Trace is the comparable content of a trace: the executed tasks, the
// workers and, when the trace says, the data transfers.
type Trace struct {
	// Name labels the trace (the path given to LoadTrace).
	Name string
	// Format is "tasks.rec", "chrome" or "paje".
	Format string
	// Tasks are the executed tasks only (records with a WorkerId and both
	// StartTime and EndTime; Control records and StarPU-internal tasks are
	// dropped), sorted by StartTime, then WorkerId, then line. Times in ms,
	// StartTime and EndTime rounded to whole ns.
	// From a Chrome trace they are rebuilt from the kernel slices: Name,
	// Model, JobId (task + 1), Priority, WorkerId, MemoryNode, SubmitTime,
	// ReadyTime, StartTime, EndTime, Footprint; no GFlop.
	Tasks []TaskRecord
	// Workers are sorted by ID: for tasks.rec, the workers that ran a task
	// (the file names no others); for Chrome, every named worker thread.
	Workers []WorkerInfo
	// TransferSource says where Transfers come from: "chrome" or "paje"
	// (the trace's copies, exact), "data.rec" (inferred, see LoadTrace) or
	// "" (unknown: Transfers is empty).
	TransferSource string
	// Transfers are per direction, sorted by source then destination.
	Transfers []Transfer

	// panel holds what Timeline draws besides the tasks (nil: nothing).
	panel *panelData
}

// WorkerInfo is one worker of a trace.
type WorkerInfo struct {
	ID int `json:"id"`
	// Name: for Chrome traces, the thread name ("CPU0", "CUDA1"); for
	// tasks.rec, which does not name workers, "CPU" for a worker on memory
	// node 0 and "CUDA<node-1>" for one on a device node.
	Name string `json:"name"`
	Type string `json:"type"` // WorkerCPU or WorkerCUDA
	Node int    `json:"node"` // memory node (0 = RAM); -1 when unknown
}

// Label is the worker's name and ID ("CPU0 (w0)").
func (w WorkerInfo) Label() string { return fmt.Sprintf("%s (w%d)", w.Name, w.ID) }

// Transfer is the data copied in one direction.
type Transfer struct {
	Src   string `json:"src"`
	Dst   string `json:"dst"`
	Count int    `json:"count"`
	Bytes int64  `json:"bytes"`
}

// LoadTrace reads a trace. path is a tasks.rec file, a directory holding
// tasks.rec (and, optionally, data.rec) or else paje.trace, a starsim
// Chrome JSON trace (see Chrome), or a Paje trace (StarPU's paje.trace or
// starsim's, see pajeread.go). The format is told by the content: a file
// whose first non-blank byte is '{' or '[' is read as Chrome JSON, one
// whose first line (past blanks and '#' comments) starts with %EventDef as
// Paje, anything else as tasks.rec. A tasks.rec file named "tasks.rec"
// picks up a data.rec beside it.
//
// Errors name the place: "FILE:LINE: reason" for a line that does not
// parse, for an executed task (a record with a WorkerId) without
// StartTime or EndTime (a truncated record), for a worker found on two
// memory nodes and, in Chrome JSON, for a syntax error (truncated file)
// or a kernel event without "dur"; "FILE: reason" for a file with no
// executed task or JSON without "traceEvents".
//
// Transfers: a Chrome trace carries every copy. tasks.rec does not; with
// a data.rec (home node of every handle), the copies are inferred by
// replaying the tasks in StartTime order with an MSI-like protocol: a task
// on node m reading a handle with no valid copy on m copies it there (from
// RAM if RAM holds a valid copy, else from the lowest-numbered valid node),
// and a task writing it leaves m the only valid copy. That is a lower
// bound: no eviction, no write-back at the end, no prefetch of data that
// went unused.
func LoadTrace(path string) (*Trace, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	file, dataFile := path, ""
	if fi.IsDir() {
		file = filepath.Join(path, "tasks.rec")
		if _, err := os.Stat(file); err != nil {
			file = filepath.Join(path, "paje.trace")
			if _, err := os.Stat(file); err != nil {
				return nil, srcerr.Errorf(path, 0, "directory holds no tasks.rec nor paje.trace")
			}
		}
	}
	if filepath.Base(file) == "tasks.rec" {
		d := filepath.Join(filepath.Dir(file), "data.rec")
		if st, err := os.Stat(d); err == nil && !st.IsDir() {
			dataFile = d
		}
	}
	data, err := inputfile.ReadFile(file)
	if err != nil {
		return nil, err
	}
	head := bytes.TrimLeft(data, " \t\r\n\ufeff")
	if len(head) > 0 && (head[0] == '{' || head[0] == '[') {
		return readChromeTrace(data, file, path)
	}
	if IsPaje(data) {
		return readPajeTrace(data, file, path)
	}
	return readRecTrace(data, file, dataFile, path)
}

// readRecTrace reads tasks.rec (and data.rec when dataFile is not "").
func readRecTrace(data []byte, file, dataFile, name string) (*Trace, error) {
	recs, err := ReadTasksRec(bytes.NewReader(data), file)
	if err != nil {
		return nil, err
	}
	t := &Trace{Name: name, Format: "tasks.rec", panel: &panelData{absent: map[string]string{
		timeline.GroupReady: "not in tasks.rec", timeline.GroupMemory: "not in tasks.rec", timeline.GroupInFlight: "not in tasks.rec"}}}
	workers := map[int]WorkerInfo{}
	workerLine := map[int]int{}
	for _, r := range recs {
		if r.WorkerID == nil || r.Control != "" {
			continue
		}
		if r.StartTime == nil || r.EndTime == nil {
			return nil, srcerr.Errorf(file, r.Line, "task %s has a WorkerId but no StartTime or EndTime (truncated record?)", taskLabel(r))
		}
		node := 0
		if r.MemoryNode != nil {
			node = *r.MemoryNode
		}
		id := *r.WorkerID
		if w, ok := workers[id]; ok {
			if w.Node != node {
				return nil, srcerr.Errorf(file, r.Line, "worker %d on memory node %d, but on node %d in the record of line %d",
					id, node, w.Node, workerLine[id])
			}
		} else {
			w := WorkerInfo{ID: id, Name: "CPU", Type: WorkerCPU, Node: node}
			if node != 0 {
				w.Name, w.Type = "CUDA"+strconv.Itoa(node-1), WorkerCUDA
			}
			workers[id] = w
			workerLine[id] = r.Line
		}
		if r.Name == "" {
			r.Name = r.Model
		}
		r.StartTime, r.EndTime = toNs(*r.StartTime), toNs(*r.EndTime)
		t.Tasks = append(t.Tasks, r)
	}
	if len(t.Tasks) == 0 {
		return nil, srcerr.Errorf(file, 0, "no executed task (no record with WorkerId, StartTime and EndTime): not a tasks.rec trace?")
	}
	t.Workers = sortedWorkers(workers)
	sortTasks(t.Tasks)
	if dataFile != "" {
		fh, err := inputfile.Open(dataFile)
		if err != nil {
			return nil, err
		}
		defer fh.Close()
		drecs, err := ReadDataRec(fh, dataFile)
		if err != nil {
			return nil, err
		}
		if t.Transfers, err = inferTransfers(t.Tasks, drecs); err != nil {
			return nil, srcerr.Errorf(file, 0, "%v", err)
		}
		t.TransferSource = "data.rec"
	}
	return t, nil
}

// toNs rounds a time in ms to whole ns, the resolution of StarPU's traces
// (FxT ns) and of starsim's Chrome traces: the same run read from its
// tasks.rec (15 significant digits) and from its Chrome JSON (whole ns)
// then gives bit-identical times and durations.
func toNs(ms float64) *float64 {
	v := math.Round(ms*1e6) / 1e6
	return &v
}

func taskLabel(r TaskRecord) string {
	s := r.Name
	if s == "" {
		s = r.Model
	}
	if r.JobID != nil {
		s += " (job " + strconv.FormatInt(*r.JobID, 10) + ")"
	}
	if s == "" {
		return "record"
	}
	return s
}

func sortedWorkers(m map[int]WorkerInfo) []WorkerInfo {
	out := make([]WorkerInfo, 0, len(m))
	for _, w := range m {
		out = append(out, w)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

func sortTasks(ts []TaskRecord) {
	sort.SliceStable(ts, func(i, j int) bool {
		a, b := &ts[i], &ts[j]
		if *a.StartTime != *b.StartTime {
			return *a.StartTime < *b.StartTime
		}
		if *a.WorkerID != *b.WorkerID {
			return *a.WorkerID < *b.WorkerID
		}
		return a.Line < b.Line
	})
}

// nodeName names memory node n as starsim does ("RAM", "CUDA0", ...).
func nodeName(n int) string {
	if n == 0 {
		return "RAM"
	}
	return "CUDA" + strconv.Itoa(n-1)
}

// inferTransfers replays tasks (in StartTime order) against the handles'
// home nodes; see LoadTrace.
func inferTransfers(tasks []TaskRecord, data []DataRecord) ([]Transfer, error) {
	home := map[string]int{}
	for _, d := range data {
		if d.Handle != "" && d.HomeNode != nil && *d.HomeNode >= 0 {
			home[d.Handle] = *d.HomeNode
		}
	}
	valid := map[string]map[int]bool{}
	type dir struct{ src, dst int }
	acc := map[dir]*Transfer{}
	for _, t := range tasks {
		node := 0
		if t.MemoryNode != nil {
			node = *t.MemoryNode
		}
		for i, h := range t.Handles {
			mode := ""
			if i < len(t.Modes) {
				mode = t.Modes[i]
			}
			v := valid[h]
			if v == nil {
				v = map[int]bool{home[h]: true}
				valid[h] = v
			}
			if strings.Contains(mode, "R") && !v[node] {
				src := -1
				if v[0] {
					src = 0
				} else {
					for n := range v {
						if src < 0 || n < src {
							src = n
						}
					}
				}
				k := dir{src, node}
				x := acc[k]
				if x == nil {
					x = &Transfer{Src: nodeName(src), Dst: nodeName(node)}
					acc[k] = x
				}
				x.Count++
				if i < len(t.Sizes) {
					if x.Bytes > math.MaxInt64-t.Sizes[i] {
						return nil, fmt.Errorf("copies %s->%s add up to more than 2^63 bytes", x.Src, x.Dst)
					}
					x.Bytes += t.Sizes[i]
				}
				v[node] = true
			}
			if strings.Contains(mode, "W") {
				valid[h] = map[int]bool{node: true}
			}
		}
	}
	keys := make([]dir, 0, len(acc))
	for k := range acc {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].src != keys[j].src {
			return keys[i].src < keys[j].src
		}
		return keys[i].dst < keys[j].dst
	})
	out := make([]Transfer, 0, len(keys))
	for _, k := range keys {
		out = append(out, *acc[k])
	}
	return out, nil
}

// cmpChromeEvent is one trace event, as Chrome writes them.
type cmpChromeEvent struct {
	Ph   string          `json:"ph"`
	Pid  int             `json:"pid"`
	Tid  int             `json:"tid"`
	Ts   float64         `json:"ts"`
	Dur  *float64        `json:"dur"`
	Name string          `json:"name"`
	Cat  string          `json:"cat"`
	Args json.RawMessage `json:"args"`
}

type cmpChromeKernelArgs struct {
	Task      *int64   `json:"task"`
	Model     string   `json:"model"`
	Footprint string   `json:"footprint"`
	Priority  *int     `json:"priority"`
	SubmitUs  *float64 `json:"submit_us"`
	ReadyUs   *float64 `json:"ready_us"`
}

// maxTimeUs bounds a Chrome trace's times (µs), as MaxTimeMs a tasks.rec's.
const maxTimeUs = MaxTimeMs * 1e3

// readChromeTrace reads starsim's Chrome JSON (the object form, or a bare
// array of events).
func readChromeTrace(data []byte, file, name string) (*Trace, error) {
	// A syntax error (a truncated file) is located by Unmarshal, which
	// reports offsets into the whole document.
	var probe any
	if err := json.Unmarshal(data, &probe); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, srcerr.Errorf(file, srcerr.LineOf(data, se.Offset), "invalid JSON: %v", se)
		}
		return nil, srcerr.Errorf(file, 0, "invalid JSON: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	var events []json.RawMessage
	var offsets []int64
	readEvents := func() error {
		for dec.More() {
			off := dec.InputOffset()
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return srcerr.Errorf(file, srcerr.LineOf(data, off), "%v", err)
			}
			// InputOffset is where the previous value ended: skip the
			// separators to the event's first byte.
			for off < int64(len(data)) && strings.IndexByte(" \t\r\n,", data[off]) >= 0 {
				off++
			}
			events = append(events, raw)
			offsets = append(offsets, off)
		}
		_, err := dec.Token() // ']'
		return err
	}
	var nodes []string
	tok, _ := dec.Token()
	switch tok {
	case json.Delim('['):
		if err := readEvents(); err != nil {
			return nil, err
		}
	case json.Delim('{'):
		found := false
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, srcerr.Errorf(file, 0, "%v", err)
			}
			switch key, _ := kt.(string); key {
			case "traceEvents":
				if t, err := dec.Token(); err != nil || t != json.Delim('[') {
					return nil, srcerr.Errorf(file, srcerr.LineOf(data, dec.InputOffset()), "traceEvents is not an array")
				}
				found = true
				if err := readEvents(); err != nil {
					return nil, err
				}
			case "metadata":
				var md struct {
					MemoryNodes []string `json:"memory_nodes"`
				}
				off := dec.InputOffset()
				if err := dec.Decode(&md); err != nil {
					return nil, srcerr.Errorf(file, srcerr.LineOf(data, off), "metadata: %v", err)
				}
				nodes = md.MemoryNodes
			default:
				var skip json.RawMessage
				if err := dec.Decode(&skip); err != nil {
					return nil, srcerr.Errorf(file, 0, "%v", err)
				}
			}
		}
		if !found {
			return nil, srcerr.Errorf(file, 1, "JSON object without \"traceEvents\": not a Chrome trace")
		}
	default:
		return nil, srcerr.Errorf(file, 1, "not a Chrome trace (want a JSON object or array)")
	}

	t := &Trace{Name: name, Format: "chrome", TransferSource: "chrome", panel: &panelData{}}
	series := map[string]int{} // counter name -> index in t.panel.levels
	names := map[int]string{}
	type dir struct{ src, dst string }
	xfers := map[dir]*Transfer{}
	used := map[int]bool{}
	for i, raw := range events {
		line := srcerr.LineOf(data, offsets[i])
		var ev cmpChromeEvent
		if err := json.Unmarshal(raw, &ev); err != nil {
			return nil, srcerr.Errorf(file, line, "event: %v", err)
		}
		switch {
		case ev.Ph == "M" && ev.Pid == chromeWorkers && ev.Name == "thread_name":
			var a struct {
				Name string `json:"name"`
			}
			if err := json.Unmarshal(ev.Args, &a); err != nil {
				return nil, srcerr.Errorf(file, line, "thread_name args: %v", err)
			}
			names[ev.Tid-1] = a.Name
		case ev.Ph == "X" && ev.Pid == chromeWorkers && ev.Cat == "kernel":
			if ev.Dur == nil || !(*ev.Dur >= 0) || !(ev.Ts >= 0) {
				return nil, srcerr.Errorf(file, line, "kernel event %q without a non-negative \"dur\" and \"ts\"", ev.Name)
			}
			if ev.Ts+*ev.Dur > maxTimeUs {
				return nil, srcerr.Errorf(file, line, "kernel event %q ends at %v µs, beyond %g µs (about 31.7 years)", ev.Name, ev.Ts+*ev.Dur, maxTimeUs)
			}
			if ev.Tid < 1 {
				return nil, srcerr.Errorf(file, line, "kernel event %q on thread %d: worker threads are numbered from 1", ev.Name, ev.Tid)
			}
			var a cmpChromeKernelArgs
			if len(ev.Args) > 0 {
				if err := json.Unmarshal(ev.Args, &a); err != nil {
					return nil, srcerr.Errorf(file, line, "kernel args: %v", err)
				}
			}
			if a.Task != nil && (*a.Task < 0 || *a.Task >= math.MaxInt64) {
				return nil, srcerr.Errorf(file, line, "kernel event %q: task %d is not a task id (>= 0)", ev.Name, *a.Task)
			}
			for _, us := range []*float64{a.SubmitUs, a.ReadyUs} {
				if us != nil && !(*us >= 0 && *us <= maxTimeUs) {
					return nil, srcerr.Errorf(file, line, "kernel event %q: submit_us and ready_us must be from 0 to %g µs, got %v", ev.Name, maxTimeUs, *us)
				}
			}
			id := ev.Tid - 1
			r := TaskRecord{Line: line, Name: ev.Name, Model: a.Model, Priority: a.Priority,
				WorkerID: &id, StartTime: toNs(ev.Ts / 1e3), EndTime: toNs((ev.Ts + *ev.Dur) / 1e3)}
			if a.Task != nil {
				j := *a.Task + 1
				r.JobID = &j
			}
			if a.SubmitUs != nil {
				v := *a.SubmitUs / 1e3
				r.SubmitTime = &v
			}
			if a.ReadyUs != nil {
				v := *a.ReadyUs / 1e3
				r.ReadyTime = &v
			}
			if a.Footprint != "" {
				if x, err := strconv.ParseUint(a.Footprint, 16, 32); err == nil {
					fp := uint32(x)
					r.Footprint = &fp
				}
			}
			used[id] = true
			t.Tasks = append(t.Tasks, r)
		case ev.Ph == "X" && ev.Pid == chromeWorkers && (ev.Cat == "fetch" || ev.Cat == "state"):
			if ev.Dur == nil || !(*ev.Dur >= 0) || math.IsInf(*ev.Dur, 0) || !(ev.Ts >= 0) || math.IsInf(ev.Ts, 0) {
				return nil, srcerr.Errorf(file, line, "state event %q without a non-negative \"dur\" and \"ts\"", ev.Name)
			}
			st := timeline.StateRuntime
			if ev.Cat == "fetch" {
				st = timeline.StateFetch
			}
			t.panel.spans = append(t.panel.spans, stateSpan{worker: ev.Tid - 1, state: st, s: ev.Ts / 1e3, e: (ev.Ts + *ev.Dur) / 1e3})
		case ev.Ph == "C":
			if err := chromeCounterSample(t.panel, series, &ev, file, line); err != nil {
				return nil, err
			}
		case ev.Ph == "b" && ev.Pid == chromeTransfers && ev.Cat == "transfer":
			var a struct {
				Bytes int64 `json:"bytes"`
			}
			if len(ev.Args) > 0 {
				if err := json.Unmarshal(ev.Args, &a); err != nil {
					return nil, srcerr.Errorf(file, line, "transfer args: %v", err)
				}
			}
			src, dst, ok := strings.Cut(ev.Name, "->")
			if !ok {
				return nil, srcerr.Errorf(file, line, "transfer %q is not named SRC->DST", ev.Name)
			}
			if a.Bytes < 0 || a.Bytes > MaxSizeByte {
				return nil, srcerr.Errorf(file, line, "transfer %q of %d bytes: want 0 to %d", ev.Name, a.Bytes, int64(MaxSizeByte))
			}
			k := dir{src, dst}
			x := xfers[k]
			if x == nil {
				x = &Transfer{Src: src, Dst: dst}
				xfers[k] = x
			}
			if x.Bytes > math.MaxInt64-a.Bytes {
				return nil, srcerr.Errorf(file, line, "transfers %s add up to more than 2^63 bytes", ev.Name)
			}
			x.Count++
			x.Bytes += a.Bytes
		}
	}
	if len(t.Tasks) == 0 {
		return nil, srcerr.Errorf(file, 0, "no kernel event (\"ph\":\"X\", pid 1, cat \"kernel\"): not a starsim Chrome trace?")
	}
	t.panel.sortLevels()
	workers := map[int]WorkerInfo{}
	for id := range used {
		if _, ok := names[id]; !ok {
			names[id] = "" // a worker without a thread_name
		}
	}
	for id, n := range names {
		if n == "" {
			n = "w" + strconv.Itoa(id)
		}
		w := WorkerInfo{ID: id, Name: n, Type: WorkerCPU, Node: 0}
		if !strings.HasPrefix(strings.ToUpper(n), "CPU") {
			w.Type, w.Node = WorkerCUDA, -1
			for i, nn := range nodes {
				if nn == n {
					w.Node = i
				}
			}
		}
		workers[id] = w
	}
	t.Workers = sortedWorkers(workers)
	for i := range t.Tasks {
		w := workers[*t.Tasks[i].WorkerID]
		node := w.Node
		if node < 0 {
			node = 1
		}
		t.Tasks[i].MemoryNode = &node
	}
	sortTasks(t.Tasks)
	keys := make([]dir, 0, len(xfers))
	for k := range xfers {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].src != keys[j].src {
			return nodeLess(keys[i].src, keys[j].src)
		}
		return nodeLess(keys[i].dst, keys[j].dst)
	})
	for _, k := range keys {
		t.Transfers = append(t.Transfers, *xfers[k])
	}
	return t, nil
}

// nodeLess orders node names: RAM first, then by name with numbers in
// numeric order (CUDA2 before CUDA10).
func nodeLess(a, b string) bool {
	if (a == "RAM") != (b == "RAM") {
		return a == "RAM"
	}
	pa, na := splitNum(a)
	pb, nb := splitNum(b)
	if pa != pb {
		return pa < pb
	}
	if na != nb {
		return na < nb
	}
	return a < b
}

func splitNum(s string) (string, int) {
	i := len(s)
	for i > 0 && s[i-1] >= '0' && s[i-1] <= '9' {
		i--
	}
	n, err := strconv.Atoi(s[i:])
	if err != nil {
		return s, -1
	}
	return s[:i], n
}

// WorkerType is the worker type of an executed task: "cpu" on memory node
// 0 (RAM) or with no MemoryNode, "cuda" on a device node.
func WorkerType(t *TaskRecord) string {
	if t.MemoryNode == nil || *t.MemoryNode == 0 {
		return WorkerCPU
	}
	return WorkerCUDA
}

// Start is the first StartTime and Makespan the time from it to the last
// EndTime, in ms (0 for no task). This is how the native trace's 706.3 ms
// is measured.
func (t *Trace) Start() float64 {
	if len(t.Tasks) == 0 {
		return 0
	}
	return *t.Tasks[0].StartTime // sorted by StartTime
}

// Makespan: see Start.
func (t *Trace) Makespan() float64 {
	if len(t.Tasks) == 0 {
		return 0
	}
	end := math.Inf(-1)
	for i := range t.Tasks {
		end = math.Max(end, *t.Tasks[i].EndTime)
	}
	return end - t.Start()
}

// GFlop sums the tasks' GFlop fields; ok is false when no task has one.
func (t *Trace) GFlop() (sum float64, ok bool) {
	for i := range t.Tasks {
		if g := t.Tasks[i].GFlop; g != nil {
			sum += *g
			ok = true
		}
	}
	return sum, ok
}

// Report is the comparison of trace A (the reference, e.g. native) with
// trace B (e.g. simulated). Times in ms. Relative errors are signed,
// (B - A) / A in %, and 0 where A is 0.
type Report struct {
	A TraceSummary `json:"a"`
	B TraceSummary `json:"b"`

	MakespanA      float64 `json:"makespan_a_ms"`
	MakespanB      float64 `json:"makespan_b_ms"`
	MakespanErrPct float64 `json:"makespan_err_pct"`

	// GFlops: the summed GFlop fields over the makespan, GFlop/s; 0 when
	// the trace has none (Chrome traces), and then GFlopsErrPct is 0.
	GFlopsA      float64 `json:"gflops_a"`
	GFlopsB      float64 `json:"gflops_b"`
	GFlopsErrPct float64 `json:"gflops_err_pct"`

	Kernels       []KernelRow   `json:"kernels"`
	Workers       []WorkerRow   `json:"workers"`
	Transfers     []TransferRow `json:"transfers"`
	Distributions []DistRow     `json:"distributions"`
}

// TraceSummary describes one side of a Report.
type TraceSummary struct {
	Name    string `json:"name"`
	Format  string `json:"format"`
	Tasks   int    `json:"tasks"`
	Workers int    `json:"workers"`
	// TransferSource is the Trace's: "chrome", "data.rec" or "".
	TransferSource string `json:"transfer_source"`
}

// KernelRow compares one kernel on one worker type.
type KernelRow struct {
	Kernel     string  `json:"kernel"`
	WorkerType string  `json:"worker_type"`
	CountA     int     `json:"count_a"`
	CountB     int     `json:"count_b"`
	TotalMsA   float64 `json:"total_a_ms"`
	TotalMsB   float64 `json:"total_b_ms"`
	MeanMsA    float64 `json:"mean_a_ms"`
	MeanMsB    float64 `json:"mean_b_ms"`
	MeanErrPct float64 `json:"mean_err_pct"`
}

// WorkerRow compares one worker (by ID). Busy is the union of its tasks'
// [StartTime, EndTime) intervals; percentages are of the trace's makespan,
// idle = 100 - busy.
type WorkerRow struct {
	ID       int     `json:"id"`
	NameA    string  `json:"name_a"`
	NameB    string  `json:"name_b"`
	TasksA   int     `json:"tasks_a"`
	TasksB   int     `json:"tasks_b"`
	BusyMsA  float64 `json:"busy_a_ms"`
	BusyMsB  float64 `json:"busy_b_ms"`
	BusyPctA float64 `json:"busy_a_pct"`
	BusyPctB float64 `json:"busy_b_pct"`
	IdlePctA float64 `json:"idle_a_pct"`
	IdlePctB float64 `json:"idle_b_pct"`
}

// TransferRow compares the copies in one direction.
type TransferRow struct {
	Src    string `json:"src"`
	Dst    string `json:"dst"`
	CountA int    `json:"count_a"`
	CountB int    `json:"count_b"`
	BytesA int64  `json:"bytes_a"`
	BytesB int64  `json:"bytes_b"`
}

// Quantiles of a duration sample, ms (stat.Empirical: the smallest sample
// value whose empirical CDF reaches p). All 0 for an empty sample.
type Quantiles struct {
	P10 float64 `json:"p10_ms"`
	P50 float64 `json:"p50_ms"`
	P90 float64 `json:"p90_ms"`
	P99 float64 `json:"p99_ms"`
}

// DistRow compares the duration distributions of one kernel on one worker
// type. KS is the two-sample Kolmogorov–Smirnov distance, sup |F_A - F_B|
// over the empirical CDFs: 0 for identical samples, 1 when one side has no
// sample.
type DistRow struct {
	Kernel     string    `json:"kernel"`
	WorkerType string    `json:"worker_type"`
	NA         int       `json:"n_a"`
	NB         int       `json:"n_b"`
	A          Quantiles `json:"a"`
	B          Quantiles `json:"b"`
	KS         float64   `json:"ks"`
}

// errPct is (b - a) / a in %, 0 when a is 0.
func errPct(a, b float64) float64 {
	if a == 0 {
		return 0
	}
	return (b - a) / a * 100
}

type kernelKey struct{ name, wtype string }

// durations groups the tasks' durations (ms) by kernel and worker type.
func durations(t *Trace) map[kernelKey][]float64 {
	m := map[kernelKey][]float64{}
	for i := range t.Tasks {
		r := &t.Tasks[i]
		k := kernelKey{r.Name, WorkerType(r)}
		m[k] = append(m[k], *r.EndTime-*r.StartTime)
	}
	return m
}

// Compare compares trace a (the reference) with trace b.
func Compare(a, b *Trace) *Report {
	r := &Report{A: summary(a), B: summary(b)}
	r.MakespanA, r.MakespanB = a.Makespan(), b.Makespan()
	r.MakespanErrPct = errPct(r.MakespanA, r.MakespanB)
	gflops := func(t *Trace, ms float64) float64 {
		g, ok := t.GFlop()
		if !ok || ms <= 0 {
			return 0
		}
		return g / (ms / 1e3)
	}
	r.GFlopsA, r.GFlopsB = gflops(a, r.MakespanA), gflops(b, r.MakespanB)
	if r.GFlopsA > 0 && r.GFlopsB > 0 {
		r.GFlopsErrPct = errPct(r.GFlopsA, r.GFlopsB)
	}

	da, db := durations(a), durations(b)
	keys := make([]kernelKey, 0, len(da)+len(db))
	for k := range da {
		keys = append(keys, k)
	}
	for k := range db {
		if _, ok := da[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].name != keys[j].name {
			return keys[i].name < keys[j].name
		}
		return keys[i].wtype < keys[j].wtype
	})
	for _, k := range keys {
		xa, xb := da[k], db[k]
		kr := KernelRow{Kernel: k.name, WorkerType: k.wtype, CountA: len(xa), CountB: len(xb),
			TotalMsA: sum(xa), TotalMsB: sum(xb)}
		if kr.CountA > 0 {
			kr.MeanMsA = kr.TotalMsA / float64(kr.CountA)
		}
		if kr.CountB > 0 {
			kr.MeanMsB = kr.TotalMsB / float64(kr.CountB)
		}
		kr.MeanErrPct = errPct(kr.MeanMsA, kr.MeanMsB)
		r.Kernels = append(r.Kernels, kr)

		sa, sb := sorted(xa), sorted(xb)
		r.Distributions = append(r.Distributions, DistRow{Kernel: k.name, WorkerType: k.wtype,
			NA: len(sa), NB: len(sb), A: quantiles(sa), B: quantiles(sb), KS: KSDistance(sa, sb)})
	}

	r.Workers = compareWorkers(a, b, r.MakespanA, r.MakespanB)
	r.Transfers = compareTransfers(a, b)
	return r
}

func summary(t *Trace) TraceSummary {
	return TraceSummary{Name: t.Name, Format: t.Format, Tasks: len(t.Tasks), Workers: len(t.Workers), TransferSource: t.TransferSource}
}

func sum(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s
}

func sorted(xs []float64) []float64 {
	out := append([]float64(nil), xs...)
	sort.Float64s(out)
	return out
}

func quantiles(sorted []float64) Quantiles {
	if len(sorted) == 0 {
		return Quantiles{}
	}
	q := func(p float64) float64 { return stat.Quantile(p, stat.Empirical, sorted, nil) }
	return Quantiles{P10: q(0.10), P50: q(0.50), P90: q(0.90), P99: q(0.99)}
}

// KSDistance is the two-sample Kolmogorov–Smirnov statistic of two sorted
// samples: the largest gap between their empirical CDFs, ties counted
// together (gonum's stat.KolmogorovSmirnov, unit weights). It is 0 when
// both are empty, 1 when only one is, and NaN when a sample holds a NaN
// (returned at once: nothing loops on it).
func KSDistance(a, b []float64) float64 {
	return stat.KolmogorovSmirnov(a, nil, b, nil)
}

type workerStat struct {
	name  string
	tasks int
	busy  float64
}

// workerStats sums each worker's busy time: the union of its tasks'
// intervals (a device worker's tasks may overlap).
func workerStats(t *Trace) map[int]*workerStat {
	m := map[int]*workerStat{}
	for _, w := range t.Workers {
		m[w.ID] = &workerStat{name: w.Name}
	}
	last := map[int][2]float64{} // current merged interval per worker
	flush := func(id int) {
		if iv, ok := last[id]; ok {
			m[id].busy += iv[1] - iv[0]
		}
	}
	for i := range t.Tasks { // sorted by StartTime
		r := &t.Tasks[i]
		id := *r.WorkerID
		ws := m[id]
		if ws == nil {
			ws = &workerStat{name: "w" + strconv.Itoa(id)}
			m[id] = ws
		}
		ws.tasks++
		s, e := *r.StartTime, *r.EndTime
		iv, ok := last[id]
		switch {
		case !ok:
			last[id] = [2]float64{s, e}
		case s <= iv[1]:
			last[id] = [2]float64{iv[0], math.Max(iv[1], e)}
		default:
			flush(id)
			last[id] = [2]float64{s, e}
		}
	}
	ids := make([]int, 0, len(last))
	for id := range last {
		ids = append(ids, id)
	}
	sort.Ints(ids) // fixed summation order
	for _, id := range ids {
		flush(id)
	}
	return m
}

func compareWorkers(a, b *Trace, msA, msB float64) []WorkerRow {
	sa, sb := workerStats(a), workerStats(b)
	idset := map[int]bool{}
	for id := range sa {
		idset[id] = true
	}
	for id := range sb {
		idset[id] = true
	}
	ids := make([]int, 0, len(idset))
	for id := range idset {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	pct := func(busy, ms float64) float64 {
		if ms <= 0 {
			return 0
		}
		return busy / ms * 100
	}
	rows := make([]WorkerRow, 0, len(ids))
	for _, id := range ids {
		row := WorkerRow{ID: id}
		if w := sa[id]; w != nil {
			row.NameA, row.TasksA, row.BusyMsA = w.name, w.tasks, w.busy
			row.BusyPctA = pct(w.busy, msA)
			row.IdlePctA = 100 - row.BusyPctA
		}
		if w := sb[id]; w != nil {
			row.NameB, row.TasksB, row.BusyMsB = w.name, w.tasks, w.busy
			row.BusyPctB = pct(w.busy, msB)
			row.IdlePctB = 100 - row.BusyPctB
		}
		rows = append(rows, row)
	}
	return rows
}

func compareTransfers(a, b *Trace) []TransferRow {
	type dir struct{ src, dst string }
	m := map[dir]*TransferRow{}
	var keys []dir
	get := func(x Transfer) *TransferRow {
		k := dir{x.Src, x.Dst}
		if m[k] == nil {
			m[k] = &TransferRow{Src: x.Src, Dst: x.Dst}
			keys = append(keys, k)
		}
		return m[k]
	}
	for _, x := range a.Transfers {
		r := get(x)
		r.CountA += x.Count
		r.BytesA += x.Bytes
	}
	for _, x := range b.Transfers {
		r := get(x)
		r.CountB += x.Count
		r.BytesB += x.Bytes
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].src != keys[j].src {
			return nodeLess(keys[i].src, keys[j].src)
		}
		return nodeLess(keys[i].dst, keys[j].dst)
	})
	rows := make([]TransferRow, 0, len(keys))
	for _, k := range keys {
		rows = append(rows, *m[k])
	}
	return rows
}

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
