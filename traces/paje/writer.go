package paje

import (
	"bufio"
	"hash/fnv"
	"io"
	"strconv"
	"strings"

	"github.com/starsim/starsim/runtime/graph"
	"github.com/starsim/starsim/runtime/machine"
	"github.com/starsim/starsim/runtime/sim"
	"github.com/starsim/starsim/traces"
)

// Writer writes a Paje trace that pajeng's pj_dump reads, in StarPU's
// vocabulary (starpu_paje.c, starpu_fxt.c) so that ViTE and StarVZ users
// find their way. It implements sim.Observer; create it with NewWriter,
// run, then Close.
//
// The file starts with comment lines (# tool version, command, seed), then
// the event definitions with StarPU's numbering and field sets (1-15, 18,
// 19, and StarPU's extended PajeSetState 20), then the types and values:
//
//	container type      alias        name           inside
//	MPIP "MPI Program"  MPIroot      root           0
//	P "Program"         p            program        MPIroot
//	Sc "Scheduler State" sched       scheduler      p
//	Mn "Memory Node"    mn<i>        MEMNODE<i>     p    (i: node index, 0 = RAM;
//	                                                      a comment names the node)
//	Mm "Memory Manager" mm<i>        MEMMANAGER<i>  mn<i>
//	T "Thread"          t<w>         T<w>           mn<worker's node>
//	W "Worker"          w<w>         CPU0, CUDA0... t<w>
//
// Worker states: state type WS "Worker State" on W, with all of StarPU's
// values (I Idle, Fi FetchingInput, B Overhead, E Executing, Po, C, Sc, ...)
// defined up front. As in StarPU, an executing worker's state value is the
// codelet name (POTRF, GEMM...), defined with PajeDefineEntityValue when
// first run, and set with record 20, whose extra fields are Size (the
// bytes of the task's buffers, each buffer counted, as StarPU's
// _starpu_job_get_data_size; 0 unless SetHandles gave the graph's handles)
// and Params (-); Footprint (%08x); Tag
// (0); JobId and SubmitOrder (task ID + 1, as StarPU counts from 1 and
// tasks are submitted in ID order); Priority; GFlop; X, Y, Iteration,
// Subiteration (-1); NumaNodes (the worker's memory node). No field is
// empty: pj_dump rejects StarPU's own "" fields. A kernel's alias is its
// name with characters other than [A-Za-z0-9_.-] made '_'; pajeng finds a
// value by alias or name, so an alias or name already taken (say a kernel
// named "E") gets a suffix ("E_1", shown "E [1]"). A non-executing state
// repeated (fetching the next task's inputs) is written once.
//
// Transfers: link types F, TF, PF and IF (StarPU's "Intra-node data Fetch",
// "TaskPreFetch", "PreFetch", "IdleFetch": the runtime's fetch,
// task-prefetch, prefetch and idle-fetch requests) and WB ("Intra-node
// data WriteBack", the eviction write-backs, which StarPU shows as a memory
// state instead), in container p from mm<src> to mm<dst>, value the size in
// bytes, key com_<transfer id>.
//
// Variables: nready on sched (pushes - pops: the ready tasks not taken
// yet) and use on each mm<i> (MiB allocated on the node, StarPU's "Used
// (MB)").
//
// Times are ms of simulated time (StarPU's unit) with 6 decimals (whole
// ns), non-decreasing: records are written as the events arrive, which
// the runtime sends in time order. End destroys the containers at the
// makespan. Memory: per worker, per node and per open transfer only (plus
// one entry per kernel name); nothing per task, through a 64 KiB buffer.
type Writer struct {
	w   *bufio.Writer
	h   traces.Header
	buf []byte

	started bool
	ended   bool
	lastNs  int64

	nodeIdx map[string]int
	used    []int64  // bytes allocated per memory node
	state   []string // per worker: alias of its last state ("" after Executing)
	ready   int

	// Entity values of the worker-state type "WS": state name or kernel
	// name -> alias, defined on first use (as StarPU does).
	values map[string]string
	taken  map[string]bool // aliases and names of the WS values
	// Open transfers: what their PajeEndLink needs.
	open map[uint64]pajeLink
	// handles resolve a task's buffers (SetHandles).
	handles []graph.Handle
}

type pajeLink struct {
	typ  string
	size int64
	dst  int
}

// NewWriter returns an Observer writing a Paje trace to w in StarPU's
// vocabulary. The header comments and the event and type definitions are
// written at once; the rest is written as the events arrive (through a
// bounded buffer). Close flushes it.
func NewWriter(w io.Writer, h traces.Header) *Writer {
	p := &Writer{w: bufio.NewWriterSize(w, 64<<10), h: h, nodeIdx: map[string]int{},
		values: map[string]string{}, taken: map[string]bool{}, open: map[uint64]pajeLink{}}
	for _, v := range pajeWorkerStates {
		p.values[v.name] = v.alias
		p.taken[v.alias], p.taken[v.name] = true, true
	}
	p.writeHeader()
	return p
}

// SetHandles gives the graph's handles (graph.Graph.Handles), so that
// each task's Size is its buffers' bytes; call it before the run.
func (p *Writer) SetHandles(handles []graph.Handle) { p.handles = handles }

// dataSize is the bytes of a task's buffers (0 without handles).
func (p *Writer) dataSize(spec *graph.Task) int64 {
	var n int64
	for _, a := range spec.Buffers {
		if a.Handle >= 0 && a.Handle < len(p.handles) {
			n += p.handles[a.Handle].SizeBytes
		}
	}
	return n
}

// Close flushes the trace; it returns the first write error.
func (p *Writer) Close() error { return p.w.Flush() }

func (p *Writer) write(b []byte) {
	p.buf = b[:0]
	_, _ = p.w.Write(b) // the error sticks in the bufio.Writer: Close reports it
}

// line starts a timed record: "code\ttime".
func (p *Writer) line(code string, tS float64) []byte {
	ns := traces.Nanos(tS)
	if ns < p.lastNs {
		ns = p.lastNs // the runtime's events come in time order; guard rounding
	}
	p.lastNs = ns
	b := append(p.buf[:0], code...)
	b = append(b, '\t')
	return appendPajeTime(b, ns)
}

// Start creates the containers: the program, one memory node with its
// memory manager per node, one thread with its worker per worker.
func (p *Writer) Start(workers []*machine.Worker, nodes []string) {
	p.started = true
	p.used = make([]int64, len(nodes))
	p.state = make([]string, len(workers))
	b := p.line("7", 0)
	b = append(b, "\tMPIroot\tMPIP\t0\troot\n"...)
	b = p.cont(b, "7", 0)
	b = append(b, "\tp\tP\tMPIroot\tprogram\n"...)
	b = p.cont(b, "7", 0)
	b = append(b, "\tsched\tSc\tp\tscheduler\n"...)
	b = p.cont(b, "13", 0)
	b = append(b, "\tsched\tnready\t0\n"...)
	for i, n := range nodes {
		p.nodeIdx[n] = i
		b = append(b, "# memory node "...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, ": "...)
		b = append(b, headerLine(n)...)
		b = append(b, '\n')
		b = p.cont(b, "7", 0)
		b = append(b, "\tmn"...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, "\tMn\tp\tMEMNODE"...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, '\n')
		b = p.cont(b, "7", 0)
		b = append(b, "\tmm"...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, "\tMm\tmn"...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, "\tMEMMANAGER"...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, '\n')
		b = p.cont(b, "13", 0)
		b = append(b, "\tmm"...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, "\tuse\t0\n"...)
	}
	for _, w := range workers {
		b = p.cont(b, "7", 0)
		b = append(b, "\tt"...)
		b = strconv.AppendInt(b, int64(w.ID), 10)
		b = append(b, "\tT\tmn"...)
		b = strconv.AppendInt(b, int64(w.Node), 10)
		b = append(b, "\tT"...)
		b = strconv.AppendInt(b, int64(w.ID), 10)
		b = append(b, '\n')
		b = p.cont(b, "7", 0)
		b = append(b, "\tw"...)
		b = strconv.AppendInt(b, int64(w.ID), 10)
		b = append(b, "\tW\tt"...)
		b = strconv.AppendInt(b, int64(w.ID), 10)
		b = append(b, "\t\""...)
		b = append(b, pajeQuote(w.Name)...)
		b = append(b, "\"\n"...)
	}
	p.write(b)
}

// cont appends another timed record to b.
func (p *Writer) cont(b []byte, code string, tS float64) []byte {
	ns := max(traces.Nanos(tS), p.lastNs)
	p.lastNs = ns
	b = append(b, code...)
	b = append(b, '\t')
	return appendPajeTime(b, ns)
}

// WorkerState sets the worker's "WS" state. Executing uses StarPU's
// extended record (20) whose value is the codelet name, with the task's
// footprint, job id, submit order, priority and GFlop.
func (p *Writer) WorkerState(tS float64, w *machine.Worker, state string, task *sim.TaskState) {
	var b []byte
	if state == "Executing" && task != nil {
		spec := task.Spec()
		alias := p.value(spec.Name)
		b = p.line("20", tS)
		b = appendWorker(b, w)
		b = append(b, alias...)
		b = append(b, '\t')
		b = strconv.AppendInt(b, p.dataSize(spec), 10) // Size
		b = append(b, "\t-\t"...)                      // Params
		b = traces.AppendHex8(b, spec.Footprint)
		b = append(b, "\t0\t"...)                        // Tag
		b = strconv.AppendInt(b, int64(task.ID())+1, 10) // JobId: StarPU counts from 1
		b = append(b, '\t')
		b = strconv.AppendInt(b, int64(task.ID())+1, 10) // SubmitOrder: tasks are submitted in id order
		b = append(b, '\t')
		b = strconv.AppendInt(b, int64(spec.Priority), 10)
		b = append(b, '\t')
		b = strconv.AppendFloat(b, spec.Flops/1e9, 'f', 6, 64)
		b = append(b, "\t-1\t-1\t-1\t-1\t"...) // X, Y, Iteration, Subiteration
		b = strconv.AppendInt(b, int64(w.Node), 10)
		b = append(b, '\n')
		p.setLast(w, "")
	} else {
		alias := p.value(state)
		if p.setLast(w, alias) {
			return // same value again (e.g. fetching the next task's inputs)
		}
		b = p.line("10", tS)
		b = appendWorker(b, w)
		b = append(b, alias...)
		b = append(b, '\n')
	}
	p.write(b)
}

// setLast records w's state value and says whether it was already so.
func (p *Writer) setLast(w *machine.Worker, alias string) bool {
	if w.ID < 0 || w.ID >= len(p.state) {
		return false
	}
	same := alias != "" && p.state[w.ID] == alias
	p.state[w.ID] = alias
	return same
}

func appendWorker(b []byte, w *machine.Worker) []byte {
	b = append(b, "\tw"...)
	b = strconv.AppendInt(b, int64(w.ID), 10)
	return append(b, "\tWS\t"...)
}

// value returns the alias of a "WS" entity value, defining it first if it
// is new (kernel names, as StarPU defines codelet names when first run).
func (p *Writer) value(name string) string {
	if a, ok := p.values[name]; ok {
		return a
	}
	// pajeng identifies a value by its alias or its name: both must be
	// new among every alias and name of the type.
	shown := pajeQuote(name)
	for base, i := shown, 1; p.taken[shown]; i++ {
		shown = base + " [" + strconv.Itoa(i) + "]"
	}
	p.taken[shown] = true
	alias := pajeAlias(name)
	for base, i := alias, 1; p.taken[alias]; i++ {
		alias = base + "_" + strconv.Itoa(i)
	}
	p.taken[alias] = true
	p.values[name] = alias
	p.write(appendValueDef(p.buf[:0], alias, shown, pajeColor(name)))
	return alias
}

// TransferStart starts a link between the memory managers: type F, TF, PF,
// IF or WB, value the size in bytes, key com_<id>.
func (p *Writer) TransferStart(tS float64, id uint64, src, dst string, bytes int64, kind string, _ *graph.Handle) {
	typ, ok := pajeLinkTypes[kind]
	if !ok {
		typ = "F"
	}
	l := pajeLink{typ: typ, size: bytes, dst: p.nodeIdx[dst]}
	p.open[id] = l
	b := p.line("18", tS)
	b = append(b, '\t')
	b = append(b, typ...)
	b = append(b, "\tp\t"...)
	b = strconv.AppendInt(b, bytes, 10)
	b = append(b, "\tmm"...)
	b = strconv.AppendInt(b, int64(p.nodeIdx[src]), 10)
	b = append(b, "\tcom_"...)
	b = strconv.AppendUint(b, id, 10)
	b = append(b, '\n')
	p.write(b)
}

// TransferEnd ends the link.
func (p *Writer) TransferEnd(tS float64, id uint64) {
	l, ok := p.open[id]
	if !ok {
		return
	}
	delete(p.open, id)
	b := p.line("19", tS)
	b = append(b, '\t')
	b = append(b, l.typ...)
	b = append(b, "\tp\t"...)
	b = strconv.AppendInt(b, l.size, 10)
	b = append(b, "\tmm"...)
	b = strconv.AppendInt(b, int64(l.dst), 10)
	b = append(b, "\tcom_"...)
	b = strconv.AppendUint(b, id, 10)
	b = append(b, '\n')
	p.write(b)
}

// Memory sets the memory manager's "use" variable (MB = MiB, as StarPU).
func (p *Writer) Memory(tS float64, node string, event string, h *graph.Handle) {
	i, ok := p.nodeIdx[node]
	if !ok || h == nil {
		return
	}
	switch event {
	case "allocate":
		p.used[i] += h.SizeBytes
	case "free", "evict":
		p.used[i] -= h.SizeBytes
	default:
		return
	}
	b := p.line("13", tS)
	b = append(b, "\tmm"...)
	b = strconv.AppendInt(b, int64(i), 10)
	b = append(b, "\tuse\t"...)
	b = strconv.AppendFloat(b, float64(p.used[i])/(1<<20), 'f', 6, 64)
	b = append(b, '\n')
	p.write(b)
}

// Push and Pop set the scheduler's "nready" variable (pushes - pops).
func (p *Writer) Push(tS float64, _ *sim.TaskState) { p.ready++; p.nready(tS) }

// Pop is a worker taking a task.
func (p *Writer) Pop(tS float64, _ *machine.Worker, _ *sim.TaskState) { p.ready--; p.nready(tS) }

func (p *Writer) nready(tS float64) {
	b := p.line("13", tS)
	b = append(b, "\tsched\tnready\t"...)
	b = strconv.AppendInt(b, int64(p.ready), 10)
	b = append(b, '\n')
	p.write(b)
}

// TaskDone writes nothing: the worker states carry the tasks.
func (p *Writer) TaskDone(*sim.TaskState) {}

// End destroys the containers at the makespan (or the last event).
func (p *Writer) End(makespanS float64) {
	if p.ended || !p.started {
		return
	}
	p.ended = true
	t := max(makespanS, float64(p.lastNs)/1e9)
	b := p.buf[:0]
	for i := range p.state {
		b = p.cont(b, "8", t)
		b = append(b, "\tw"...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, "\tW\n"...)
		b = p.cont(b, "8", t)
		b = append(b, "\tt"...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, "\tT\n"...)
	}
	for i := range p.used {
		b = p.cont(b, "8", t)
		b = append(b, "\tmm"...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, "\tMm\n"...)
		b = p.cont(b, "8", t)
		b = append(b, "\tmn"...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, "\tMn\n"...)
	}
	b = p.cont(b, "8", t)
	b = append(b, "\tsched\tSc\n"...)
	b = p.cont(b, "8", t)
	b = append(b, "\tp\tP\n"...)
	b = p.cont(b, "8", t)
	b = append(b, "\tMPIroot\tMPIP\n"...)
	p.write(b)
}

// appendPajeTime appends ns as milliseconds with 6 decimals.
func appendPajeTime(b []byte, ns int64) []byte {
	return traces.AppendDecimal(b, ns, 1_000_000, 6)
}

// headerLine keeps a header value on its comment line.
func headerLine(s string) string {
	return strings.NewReplacer("\n", " ", "\r", " ").Replace(s)
}

// pajeQuote makes s safe inside a Paje "..." field.
func pajeQuote(s string) string {
	return strings.NewReplacer("\"", "'", "\n", " ", "\r", " ", "\t", " ").Replace(s)
}

// pajeAlias makes an alias (no blanks or quotes) from a name.
func pajeAlias(name string) string {
	b := []byte(name)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			b[i] = '_'
		}
	}
	if len(b) == 0 {
		return "_"
	}
	return string(b)
}

// pajeColor gives a kernel a stable color from its name.
func pajeColor(name string) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(name))
	v := h.Sum32()
	c := func(x uint32) string { return strconv.FormatFloat(0.15+0.7*float64(x&0xff)/255, 'f', 2, 64) }
	return c(v) + " " + c(v>>8) + " " + c(v>>16)
}
