package chrome

import (
	"bufio"
	"io"
	"strconv"
	"unicode/utf8"

	"github.com/starsim/starsim/runtime/graph"
	"github.com/starsim/starsim/runtime/machine"
	"github.com/starsim/starsim/runtime/sim"
	"github.com/starsim/starsim/traces"
)

// Process ids of the Chrome trace.
const (
	chromeWorkers   = 1
	chromeTransfers = 2
	chromeSched     = 3
	chromeMemory    = 4
)

// Writer writes a trace in the Trace Event Format that Perfetto
// (ui.perfetto.dev) and chrome://tracing load. It implements
// sim.Observer; create it with NewWriter, run, then Close.
//
// The file is the JSON object form, which both viewers load and which
// carries metadata: {"traceEvents":[...],"displayTimeUnit":"ms",
// "metadata":{"tool","version","command","seed","time_unit",
// "memory_nodes"}}. Events are written one per line as they come; Close
// writes the closing part, so the document is valid JSON once closed.
// Times ("ts", "dur") are µs of simulated time with 3 decimals (whole ns).
// The order of the events is the order of the runtime's calls; viewers
// sort them.
//
//	pid 1 "workers": one thread per worker (tid = worker ID + 1,
//	  thread_name = CPU0, CUDA0..., thread_sort_index = worker ID).
//	  Kernels: complete events ("X", cat "kernel", name = kernel name,
//	  args task, model, footprint (%08x), priority, submit_us, ready_us),
//	  written when the task ends. Fetching: "X" slices named
//	  FetchingInput (cat "fetch", args task) while the worker waits for a
//	  popped task's inputs with no kernel running (any other non-idle state
//	  likewise, cat "state"). A thread's slices never overlap.
//	  Dependencies: one flow per (predecessor, task) pair: "s" on the
//	  predecessor's thread at its kernel's end and "f" ("bp":"e") on the
//	  task's thread at its kernel's start, both 1 ns inside the kernel so
//	  that viewers bind them to it; cat and name "dep", ids 1, 2, ...
//	pid 2 "transfers": each copy is an async slice ("b"/"e", cat
//	  "transfer", id = the runtime's transfer id, name = "SRC->DST", so one
//	  track per direction; args bytes, kind, handle); counters ("C")
//	  "in flight SRC->DST" {"bytes"}: bytes being copied per direction.
//	pid 3 "scheduler": counter "ready tasks" {"tasks"}: pushes - pops.
//	pid 4 "memory": counters "used NODE" {"bytes"}: bytes allocated.
//
// A counter sample is written once the time has moved on (changes at one
// instant make one sample) and only when its value changed.
//
// Memory: per worker, per direction and per open transfer, plus, for the
// flows, 12 bytes per task (the instant its flows leave from and its
// worker, in slices indexed by task ID): a task's predecessors have ended
// before it starts, but its successors may end much later.
type Writer struct {
	w      *bufio.Writer
	h      traces.Header
	buf    []byte
	first  bool // no event written yet
	ended  bool
	closed bool

	rc       *traces.Counters
	used     []*chromeCounter // per node index of rc
	dirs     []*chromeDir     // per direction index of rc
	workers  []chromeWorker
	ready    *chromeCounter
	counters []*chromeCounter // every series, to flush at the end

	// Per task ID, the instants its dependency flows leave from
	// (its kernel's end, 1 ns inside) and its worker: 12 bytes a task.
	flowAt     []int64
	flowWorker []int32
	nflow      uint64
}

type chromeWorker struct {
	state   string // current state, "" before Start
	sinceNs int64
	task    int // task of the current state, -1: none
}

type chromeDir struct {
	name     string // "RAM->CUDA0"
	tid      int
	inFlight *chromeCounter
}

// chromeCounter is one counter series. A sample is written once the time
// has moved on, so the changes of one instant (a push and its pop, a copy
// ending as the next starts) make one sample, and only if the value
// changed.
type chromeCounter struct {
	pid       int
	name, key string
	value, ns int64
	pending   bool
	written   bool
	last      int64
}

// NewWriter returns an Observer writing a Chrome/Perfetto trace to w. Events
// are written as they arrive (through a bounded buffer); Close writes the
// metadata (the Header), ends the JSON object and flushes.
func NewWriter(w io.Writer, h traces.Header) *Writer {
	c := &Writer{w: bufio.NewWriterSize(w, 64<<10), h: h, first: true, rc: traces.NewCounters()}
	c.rc.OnNode = func(_ int, n string) {
		c.used = append(c.used, c.newCounter(chromeMemory, "used "+n, "bytes"))
	}
	c.rc.OnDir = func(idx int, name, _, _ string) {
		d := &chromeDir{name: name, tid: idx + 1}
		d.inFlight = c.newCounter(chromeTransfers, "in flight "+d.name, "bytes")
		c.dirs = append(c.dirs, d)
		c.meta("thread_name", chromeTransfers, d.tid, d.name, 0)
	}
	c.w.WriteString(`{"traceEvents":[`)
	return c
}

// Close ends the JSON document and flushes it; it returns the first write
// error. Call it after the run; calling it again only flushes.
func (c *Writer) Close() error {
	if c.closed {
		return c.w.Flush()
	}
	c.closed = true
	c.flushCounters()
	b := c.buf[:0]
	b = append(b, "\n],\n\"displayTimeUnit\":\"ms\",\n\"metadata\":{\"tool\":"...)
	b = appendJSONString(b, c.h.Tool)
	b = append(b, ",\"version\":"...)
	b = appendJSONString(b, c.h.Version)
	b = append(b, ",\"command\":"...)
	b = appendJSONString(b, c.h.Command)
	if c.h.Machine != "" {
		b = append(b, ",\"machine\":"...)
		b = appendJSONString(b, c.h.Machine)
	}
	b = append(b, ",\"seed\":"...)
	b = strconv.AppendUint(b, c.h.Seed, 10)
	b = append(b, ",\"time_unit\":\"us of simulated time\",\"memory_nodes\":["...)
	for i, n := range c.rc.Nodes {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, n)
	}
	b = append(b, "]}}\n"...)
	c.buf = b[:0]
	c.w.Write(b)
	return c.w.Flush()
}

// begin starts an event: {"ph":"X","pid":1,"tid":2,"ts":12.345
func (c *Writer) begin(ph string, pid, tid int, ns int64) []byte {
	b := c.buf[:0]
	if c.first {
		b = append(b, '\n')
		c.first = false
	} else {
		b = append(b, ",\n"...)
	}
	b = append(b, `{"ph":"`...)
	b = append(b, ph...)
	b = append(b, `","pid":`...)
	b = strconv.AppendInt(b, int64(pid), 10)
	b = append(b, `,"tid":`...)
	b = strconv.AppendInt(b, int64(tid), 10)
	b = append(b, `,"ts":`...)
	return appendUs(b, ns)
}

func (c *Writer) emit(b []byte) {
	c.buf = b[:0]
	c.w.Write(b) // the error sticks in the bufio.Writer: Close reports it
}

// meta writes a metadata event ("M") naming or ordering a process or thread.
func (c *Writer) meta(what string, pid, tid int, name string, sort int) {
	b := c.begin("M", pid, tid, 0)
	b = append(b, `,"name":"`...)
	b = append(b, what...)
	b = append(b, `","args":{`...)
	if what == "process_sort_index" || what == "thread_sort_index" {
		b = append(b, `"sort_index":`...)
		b = strconv.AppendInt(b, int64(sort), 10)
	} else {
		b = append(b, `"name":`...)
		b = appendJSONString(b, name)
	}
	b = append(b, "}}"...)
	c.emit(b)
}

// Start names the processes and one thread per worker.
func (c *Writer) Start(workers []*machine.Worker, nodes []string) {
	c.ready = c.newCounter(chromeSched, "ready tasks", "tasks")
	for _, n := range nodes {
		c.rc.Node(n)
	}
	procs := []struct {
		pid  int
		name string
	}{{chromeWorkers, "workers"}, {chromeTransfers, "transfers"}, {chromeSched, "scheduler"}, {chromeMemory, "memory"}}
	for _, p := range procs {
		c.meta("process_name", p.pid, 0, p.name, 0)
		c.meta("process_sort_index", p.pid, 0, "", p.pid)
	}
	c.workers = make([]chromeWorker, len(workers))
	for i, w := range workers {
		c.workers[i] = chromeWorker{task: -1}
		c.meta("thread_name", chromeWorkers, w.ID+1, w.Name, 0)
		c.meta("thread_sort_index", chromeWorkers, w.ID+1, "", w.ID)
	}
}

// WorkerState closes the worker's previous state: a state other than Idle
// and Executing (FetchingInput, ...) becomes a slice of its own on the
// worker's thread (kernels are written by TaskDone).
func (c *Writer) WorkerState(tS float64, w *machine.Worker, state string, task *sim.TaskState) {
	if w.ID < 0 || w.ID >= len(c.workers) {
		return
	}
	ns := traces.Nanos(tS)
	c.closeState(w.ID, ns)
	cw := &c.workers[w.ID]
	cw.state, cw.sinceNs, cw.task = state, ns, -1
	if task != nil {
		cw.task = task.ID()
	}
}

func (c *Writer) closeState(id int, ns int64) {
	cw := &c.workers[id]
	if cw.state == "" || cw.state == "Idle" || cw.state == "Executing" || ns == cw.sinceNs {
		cw.state = ""
		return
	}
	b := c.begin("X", chromeWorkers, id+1, cw.sinceNs)
	b = append(b, `,"dur":`...)
	b = appendUs(b, ns-cw.sinceNs)
	b = append(b, `,"name":`...)
	b = appendJSONString(b, cw.state)
	b = append(b, `,"cat":"`...)
	if cw.state == "FetchingInput" {
		b = append(b, "fetch"...)
	} else {
		b = append(b, "state"...)
	}
	b = append(b, '"')
	if cw.task >= 0 {
		b = append(b, `,"args":{"task":`...)
		b = strconv.AppendInt(b, int64(cw.task), 10)
		b = append(b, '}')
	}
	b = append(b, '}')
	c.emit(b)
	cw.state = ""
}

// TransferStart begins an async slice named after the direction.
func (c *Writer) TransferStart(tS float64, id uint64, src, dst string, bytes int64, kind string, h *graph.Handle) {
	ns := traces.Nanos(tS)
	d := c.dirs[c.rc.TransferStart(id, src, dst, bytes)]
	b := c.begin("b", chromeTransfers, d.tid, ns)
	b = append(b, `,"name":`...)
	b = appendJSONString(b, d.name)
	b = append(b, `,"cat":"transfer","id":`...)
	b = strconv.AppendUint(b, id, 10)
	b = append(b, `,"args":{"bytes":`...)
	b = strconv.AppendInt(b, bytes, 10)
	b = append(b, `,"kind":`...)
	b = appendJSONString(b, kind)
	if h != nil {
		b = append(b, `,"handle":`...)
		b = appendJSONString(b, h.Name)
	}
	b = append(b, "}}"...)
	c.emit(b)
	c.set(d.inFlight, ns, c.rc.InFlight[d.tid-1])
}

// TransferEnd ends it.
func (c *Writer) TransferEnd(tS float64, id uint64) {
	di, ok := c.rc.TransferEnd(id)
	if !ok {
		return
	}
	d := c.dirs[di]
	ns := traces.Nanos(tS)
	b := c.begin("e", chromeTransfers, d.tid, ns)
	b = append(b, `,"name":`...)
	b = appendJSONString(b, d.name)
	b = append(b, `,"cat":"transfer","id":`...)
	b = strconv.AppendUint(b, id, 10)
	b = append(b, '}')
	c.emit(b)
	c.set(d.inFlight, ns, c.rc.InFlight[di])
}

func (c *Writer) newCounter(pid int, name, key string) *chromeCounter {
	k := &chromeCounter{pid: pid, name: name, key: key}
	c.counters = append(c.counters, k)
	return k
}

// set gives k a new value at ns.
func (c *Writer) set(k *chromeCounter, ns, value int64) {
	if k.pending && ns != k.ns {
		c.sample(k)
	}
	k.value = value
	k.ns, k.pending = ns, true
}

// sample writes k's pending value.
func (c *Writer) sample(k *chromeCounter) {
	k.pending = false
	if k.written && k.last == k.value {
		return
	}
	k.written, k.last = true, k.value
	b := c.begin("C", k.pid, 0, k.ns)
	b = append(b, `,"name":`...)
	b = appendJSONString(b, k.name)
	b = append(b, `,"args":{`...)
	b = appendJSONString(b, k.key)
	b = append(b, ':')
	b = strconv.AppendInt(b, k.value, 10)
	b = append(b, "}}"...)
	c.emit(b)
}

// flushCounters writes every pending sample.
func (c *Writer) flushCounters() {
	for _, k := range c.counters {
		if k.pending {
			c.sample(k)
		}
	}
}

// Memory updates the node's "memory used" counter (bytes).
func (c *Writer) Memory(tS float64, node string, event string, h *graph.Handle) {
	if i, ok := c.rc.Memory(node, event, h); ok {
		c.set(c.used[i], traces.Nanos(tS), c.rc.Used[i])
	}
}

// Push and Pop update the "ready tasks" counter (pushes - pops).
func (c *Writer) Push(tS float64, _ *sim.TaskState) {
	c.rc.Push()
	c.set(c.ready, traces.Nanos(tS), c.rc.Ready)
}

// Pop is a worker taking a task.
func (c *Writer) Pop(tS float64, _ *machine.Worker, _ *sim.TaskState) {
	c.rc.Pop()
	c.set(c.ready, traces.Nanos(tS), c.rc.Ready)
}

// TaskDone writes the kernel's complete event and a flow from each
// predecessor's kernel end to this kernel's start.
func (c *Writer) TaskDone(t *sim.TaskState) {
	w := t.Worker()
	if w == nil {
		return
	}
	spec := t.Spec()
	start, end := traces.Nanos(t.StartS()), traces.Nanos(t.EndS())
	if end < start {
		end = start
	}
	tid := w.ID + 1
	b := c.begin("X", chromeWorkers, tid, start)
	b = append(b, `,"dur":`...)
	b = appendUs(b, end-start)
	b = append(b, `,"name":`...)
	b = appendJSONString(b, spec.Name)
	b = append(b, `,"cat":"kernel","args":{"task":`...)
	b = strconv.AppendInt(b, int64(t.ID()), 10)
	b = append(b, `,"model":`...)
	b = appendJSONString(b, spec.Model)
	b = append(b, `,"footprint":"`...)
	b = traces.AppendHex8(b, spec.Footprint)
	b = append(b, `","priority":`...)
	b = strconv.AppendInt(b, int64(spec.Priority), 10)
	b = append(b, `,"submit_us":`...)
	b = appendUs(b, traces.Nanos(t.SubmitS()))
	b = append(b, `,"ready_us":`...)
	b = appendUs(b, traces.Nanos(t.ReadyS()))
	b = append(b, "}}"...)
	c.emit(b)

	// Flow anchors 1 ns inside the slices, so viewers bind them to the
	// kernels (a slice's end instant may already count as outside it).
	in := min(int64(1), (end-start)/2) // 1 ns, or 0 for a kernel shorter than 2 ns
	for _, p := range t.Preds() {
		if p < 0 || p >= len(c.flowAt) || c.flowWorker[p] < 0 {
			continue
		}
		c.nflow++
		b := c.begin("s", chromeWorkers, int(c.flowWorker[p])+1, c.flowAt[p])
		b = append(b, `,"name":"dep","cat":"dep","id":`...)
		b = strconv.AppendUint(b, c.nflow, 10)
		b = append(b, '}')
		c.emit(b)
		b = c.begin("f", chromeWorkers, tid, start+in)
		b = append(b, `,"name":"dep","cat":"dep","id":`...)
		b = strconv.AppendUint(b, c.nflow, 10)
		b = append(b, `,"bp":"e"}`...)
		c.emit(b)
	}
	id := t.ID()
	for len(c.flowAt) <= id {
		c.flowAt = append(c.flowAt, 0)
		c.flowWorker = append(c.flowWorker, -1)
	}
	c.flowAt[id], c.flowWorker[id] = end-in, int32(w.ID)
}

// End closes the workers' open states at the makespan (or the last event).
func (c *Writer) End(makespanS float64) {
	if c.ended {
		return
	}
	c.ended = true
	ns := traces.Nanos(makespanS)
	for i := range c.workers {
		if c.workers[i].sinceNs > ns {
			ns = c.workers[i].sinceNs
		}
	}
	for i := range c.workers {
		c.closeState(i, ns)
	}
	c.flushCounters()
}

// appendUs appends ns as microseconds with 3 decimals (exact).
func appendUs(b []byte, ns int64) []byte { return traces.AppendDecimal(b, ns, 1000, 3) }

// appendJSONString appends s as a JSON string (invalid UTF-8 becomes U+FFFD).
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\t':
				b = append(b, '\\', 't')
			case c < 0x20 || c == 0x7f:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, `\ufffd`...)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}
