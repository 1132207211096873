package traces

// Reader of Paje traces: StarPU's paje.trace as starpu_fxt_tool writes it
// (src/debug/traces/starpu_fxt.c, starpu_paje.c) and starsim's own (Paje).
//
// The Paje subset read here, with StarPU's quirks:
//
//   - "%EventDef NAME ID" ... "% FIELD TYPE" lines ... "%EndEventDef"
//     define an event; blanks are tabs or spaces, in any number (StarPU
//     writes "%EventDef PajeSetState 10" with spaces, the rest with tabs),
//     and several IDs may share a name (StarPU's PajeSetState 10, 20, 21,
//     26 with more fields);
//   - an event line is its ID, then one value per field, separated by
//     blanks; a value in double quotes may hold blanks, and "" is an empty
//     value (pajeng's pj_dump rejects those; StarPU writes them); an
//     unquoted '#' starts a comment to the end of the line (StarPU writes
//     "12 t w0 WS # handle_worker_scheduling_pop"); blank lines and lines
//     starting with '#' are skipped; a trailing '\r' is dropped;
//   - events need not come in time order (starpu_fxt_tool writes some
//     variables late): each container's states and each variable are
//     sorted by time, stably, before use.
//
// Types, containers and entity values are found by alias or by name, as
// pajeng does. What the reader takes from a trace is found by the type
// names StarPU gives (which starsim's writer uses too): containers of type
// "Worker" inside "Memory Node" ones (MEMNODE<i>: node i, 0 = RAM); their
// "Worker State" (StarPU's entity values are runtime states — Idle,
// FetchingInput, Overhead... — and any other value is a kernel, as
// StarPU names an executing worker's state after its codelet); the
// "Number of Ready Tasks" variable; each "Memory Manager"'s "Used (MB)"
// variable (MiB); links between memory managers (the data transfers, value
// = bytes, paired by key).

import (
	"bytes"
	"errors"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/starsim/starsim/internal/srcerr"
	"github.com/starsim/starsim/internal/timeline"
)

// Limits of the Paje reader, so that a corrupt file cannot ask for absurd
// memory: fields per event definition, event definitions, workers.
const (
	pajeMaxFields  = 256
	pajeMaxDefs    = 4096
	pajeMaxWorkers = 1 << 16
)

// IsPaje says whether data starts like a Paje trace: its first line that
// is neither blank nor a '#' comment starts with "%EventDef".
func IsPaje(data []byte) bool {
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		return bytes.HasPrefix(line, []byte("%EventDef"))
	}
	return false
}

// pajeDef is one %EventDef.
type pajeDef struct {
	name   string         // "PajeSetState"
	fields []string       // field names, in order
	idx    map[string]int // field name -> position
}

// pajeEvent is one event line.
type pajeEvent struct {
	def  *pajeDef
	vals []string
	line int
}

// get returns the value of a field ("" and false when the event has none).
func (e *pajeEvent) get(field string) (string, bool) {
	i, ok := e.def.idx[field]
	if !ok {
		return "", false
	}
	return e.vals[i], true
}

// scanPaje reads the event definitions and calls fn for each event line.
func scanPaje(data []byte, file string, fn func(e *pajeEvent) error) error {
	defs := map[string]*pajeDef{}
	var cur *pajeDef // definition being read
	var curID string
	var vals []string
	line := 0
	for len(data) > 0 {
		var raw []byte
		cut := false // the last line, without its end of line
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			raw, data = data[:i], data[i+1:]
		} else {
			raw, data, cut = data, nil, true
		}
		line++
		raw = bytes.TrimSuffix(raw, []byte{'\r'})
		text := strings.TrimSpace(string(raw))
		if text == "" || text[0] == '#' {
			continue
		}
		if cut {
			// Paje writers end every line: this one was cut short (a
			// copy or a run interrupted), and may parse as another value.
			return srcerr.Errorf(file, line, "the file ends in the middle of this line (no end of line): a truncated trace?")
		}
		if text[0] == '%' {
			words := strings.Fields(text[1:])
			switch {
			case len(words) > 0 && words[0] == "EventDef":
				if cur != nil {
					return srcerr.Errorf(file, line, "%%EventDef inside the definition of event %s (missing %%EndEventDef)", curID)
				}
				if len(words) != 3 {
					return srcerr.Errorf(file, line, "expected \"%%EventDef NAME ID\"")
				}
				if _, dup := defs[words[2]]; dup {
					return srcerr.Errorf(file, line, "event id %s defined twice", words[2])
				}
				if len(defs) >= pajeMaxDefs {
					return srcerr.Errorf(file, line, "more than %d event definitions", pajeMaxDefs)
				}
				cur, curID = &pajeDef{name: words[1], idx: map[string]int{}}, words[2]
			case len(words) > 0 && words[0] == "EndEventDef":
				if cur == nil {
					return srcerr.Errorf(file, line, "%%EndEventDef without %%EventDef")
				}
				defs[curID] = cur
				cur = nil
			case cur == nil:
				return srcerr.Errorf(file, line, "expected \"%%EventDef NAME ID\", got %q", clip(text))
			case len(words) == 0:
				// a bare "%" line inside a definition: nothing
			default:
				if _, dup := cur.idx[words[0]]; dup {
					return srcerr.Errorf(file, line, "field %s defined twice in event %s", words[0], curID)
				}
				if len(cur.fields) >= pajeMaxFields {
					return srcerr.Errorf(file, line, "more than %d fields in event %s", pajeMaxFields, curID)
				}
				cur.idx[words[0]] = len(cur.fields)
				cur.fields = append(cur.fields, words[0])
			}
			continue
		}
		if cur != nil {
			return srcerr.Errorf(file, line, "event line inside the definition of event %s (missing %%EndEventDef)", curID)
		}
		var err error
		vals, err = splitPaje(text, vals[:0])
		if err != nil {
			return srcerr.Errorf(file, line, "%v", err)
		}
		if len(vals) == 0 {
			continue // only a comment
		}
		def, ok := defs[vals[0]]
		if !ok {
			return srcerr.Errorf(file, line, "event id %q is not defined by a %%EventDef", clip(vals[0]))
		}
		if got := len(vals) - 1; got != len(def.fields) {
			return srcerr.Errorf(file, line, "event %s (%s) wants %d fields (%s), got %d", vals[0], def.name,
				len(def.fields), strings.Join(def.fields, " "), got)
		}
		if err := fn(&pajeEvent{def: def, vals: vals[1:], line: line}); err != nil {
			return err
		}
	}
	if cur != nil {
		return srcerr.Errorf(file, line, "the definition of event %s has no %%EndEventDef", curID)
	}
	return nil
}

// splitPaje splits an event line into its values: blank-separated, double
// quotes around a value that holds blanks (or is empty), an unquoted '#'
// starting a comment.
func splitPaje(s string, out []string) ([]string, error) {
	for i := 0; i < len(s); {
		switch c := s[i]; {
		case c == ' ' || c == '\t':
			i++
		case c == '#':
			return out, nil
		case c == '"':
			j := strings.IndexByte(s[i+1:], '"')
			if j < 0 {
				return nil, errorString("unterminated quoted value")
			}
			out = append(out, s[i+1:i+1+j])
			i += j + 2
			if i < len(s) && s[i] != ' ' && s[i] != '\t' {
				return nil, errorString("a quoted value must be followed by a blank")
			}
		default:
			j := i
			for j < len(s) && s[j] != ' ' && s[j] != '\t' {
				j++
			}
			out = append(out, s[i:j])
			i = j
		}
	}
	return out, nil
}

type errorString string

func (e errorString) Error() string { return string(e) }

// pajeType is a container, state, variable, link or event type.
type pajeType struct {
	alias, name string
	kind        string // "container", "state", "variable", "link", "event"
	// For link types: the container types of its ends.
	startType, endType string
	// For state types: entity values, by alias and by name -> name.
	values map[string]string
}

// pajeCont is a container.
type pajeCont struct {
	alias, name string
	typ         *pajeType
	parent      *pajeCont
	worker      int // index in pajeReader.workers, -1: not a worker
}

// pajeStateEv is one state change of a worker, kept to be sorted by time.
type pajeStateEv struct {
	t     float64
	op    byte   // 's' set, 'p' push, 'o' pop
	value string // state name
	ev    pajeKernelFields
	line  int
	order int
}

// pajeKernelFields are the extended fields of StarPU's PajeSetState 20.
type pajeKernelFields struct {
	size, footprint, jobID, submitOrder, priority, gflop string
}

type pajeWorker struct {
	id     int
	name   string
	node   int
	states []pajeStateEv
	end    float64 // destroy time, NaN if never destroyed
}

// pajeVar is one variable's changes: 's' set, 'a' add, 'u' sub.
type pajeVar struct {
	name, group string
	scale       float64
	ops         []pajeVarOp
}

type pajeVarOp struct {
	t     float64
	op    byte
	v     float64
	order int
}

type pajeLinkEnd struct {
	t     float64
	node  int
	bytes int64
	line  int
}

// pajeReader interprets the events of a trace.
type pajeReader struct {
	file    string
	types   map[string]*pajeType
	conts   map[string]*pajeCont
	workers []*pajeWorker
	// workerIDs are the IDs taken.
	workerIDs map[int]bool
	vars      map[string]*pajeVar // by "group\x00name"
	varList   []*pajeVar
	starts    map[string]pajeLinkEnd // link key -> start
	ends      map[string]pajeLinkEnd
	keys      []string // link keys in order of their start
	lastT     float64
	order     int
}

// pajeRuntimeStates are StarPU's worker-state entity values other than
// kernels (starpu_paje.c), by name.
var pajeRuntimeStates = map[string]string{
	"Idle": timeline.StateIdle, "Sleeping": timeline.StateIdle,
	"FetchingInput": timeline.StateFetch,
}

// isKernelState says whether a worker-state name is a kernel: not one of
// StarPU's runtime states, nor a StarPU-internal codelet (_starpu_...).
func isKernelState(name string) bool {
	for _, v := range pajeWorkerStates {
		if v.name == name {
			return false
		}
	}
	switch name {
	case "Decoding task for MPI", "Preparing task for MPI", "Post-processing task for MPI", "":
		return false
	}
	return !strings.HasPrefix(name, "_starpu")
}

// maxPajeValue bounds a variable's value (ready tasks, MB used): sums of
// many stay finite.
const maxPajeValue = 1e15

func (p *pajeReader) errorf(line int, format string, args ...any) error {
	return srcerr.Errorf(p.file, line, format, args...)
}

// time parses an event's Time field (ms).
func (p *pajeReader) time(e *pajeEvent) (float64, error) {
	s, ok := e.get("Time")
	if !ok {
		return 0, p.errorf(e.line, "%s event without a Time field", e.def.name)
	}
	t, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(t) || math.IsInf(t, 0) || t < 0 || t > MaxTimeMs {
		return 0, p.errorf(e.line, "time %q is not a number of ms from 0 to %g (about 31.7 years)", clip(s), MaxTimeMs)
	}
	p.lastT = math.Max(p.lastT, t)
	return t, nil
}

func (p *pajeReader) field(e *pajeEvent, name string) (string, error) {
	v, ok := e.get(name)
	if !ok {
		return "", p.errorf(e.line, "%s event without a %s field", e.def.name, name)
	}
	return v, nil
}

func (p *pajeReader) typeOf(e *pajeEvent, field string) (*pajeType, error) {
	v, err := p.field(e, field)
	if err != nil {
		return nil, err
	}
	t, ok := p.types[v]
	if !ok {
		return nil, p.errorf(e.line, "unknown type %q", clip(v))
	}
	return t, nil
}

func (p *pajeReader) contOf(e *pajeEvent, field string) (*pajeCont, error) {
	v, err := p.field(e, field)
	if err != nil {
		return nil, err
	}
	c, ok := p.conts[v]
	if !ok {
		return nil, p.errorf(e.line, "unknown container %q", clip(v))
	}
	return c, nil
}

// defineType handles the PajeDefine*Type events.
func (p *pajeReader) defineType(e *pajeEvent, kind string) error {
	alias, err := p.field(e, "Alias")
	if err != nil {
		return err
	}
	name, _ := e.get("Name")
	if name == "" {
		name = alias
	}
	t := &pajeType{alias: alias, name: name, kind: kind}
	if kind == "link" {
		t.startType, _ = e.get("StartContainerType")
		t.endType, _ = e.get("EndContainerType")
	}
	if kind == "state" {
		t.values = map[string]string{}
	}
	p.types[alias] = t
	if _, taken := p.types[name]; !taken {
		p.types[name] = t
	}
	return nil
}

// node is the memory node of a container: the index of its "Memory Node"
// ancestor (MEMNODE<i> or mn<i>), 0 when it has none.
func (p *pajeReader) node(c *pajeCont) int {
	for d := 0; c != nil && d < 64; c, d = c.parent, d+1 {
		if c.typ.name != "Memory Node" {
			continue
		}
		for _, s := range []string{strings.TrimPrefix(c.name, "MEMNODE"), strings.TrimPrefix(c.alias, "mn")} {
			if n, err := strconv.Atoi(s); err == nil && n >= 0 && n < 1<<20 {
				return n
			}
		}
	}
	return 0
}

func (p *pajeReader) event(e *pajeEvent) error {
	switch e.def.name {
	case "PajeDefineContainerType":
		return p.defineType(e, "container")
	case "PajeDefineStateType":
		return p.defineType(e, "state")
	case "PajeDefineVariableType":
		return p.defineType(e, "variable")
	case "PajeDefineLinkType":
		return p.defineType(e, "link")
	case "PajeDefineEventType":
		return p.defineType(e, "event")
	case "PajeDefineEntityValue":
		t, err := p.typeOf(e, "Type")
		if err != nil {
			return err
		}
		alias, err := p.field(e, "Alias")
		if err != nil {
			return err
		}
		name, _ := e.get("Name")
		if name == "" {
			name = alias
		}
		if t.values != nil {
			t.values[alias] = name
			if _, taken := t.values[name]; !taken {
				t.values[name] = name
			}
		}
	case "PajeCreateContainer":
		if _, err := p.time(e); err != nil {
			return err
		}
		t, err := p.typeOf(e, "Type")
		if err != nil {
			return err
		}
		alias, err := p.field(e, "Alias")
		if err != nil {
			return err
		}
		name, _ := e.get("Name")
		if name == "" {
			name = alias
		}
		c := &pajeCont{alias: alias, name: name, typ: t, worker: -1}
		if pv, _ := e.get("Container"); pv != "0" && pv != "" {
			parent, ok := p.conts[pv]
			if !ok {
				return p.errorf(e.line, "unknown container %q", clip(pv))
			}
			c.parent = parent
		}
		if t.name == "Worker" {
			id := len(p.workers)
			if n, err := strconv.Atoi(strings.TrimPrefix(alias, "w")); err == nil && strings.HasPrefix(alias, "w") && n >= 0 && n < 1<<20 {
				id = n
			}
			if p.workerIDs[id] {
				return p.errorf(e.line, "worker %d (%s) created twice", id, name)
			}
			if len(p.workers) >= pajeMaxWorkers {
				return p.errorf(e.line, "more than %d workers", pajeMaxWorkers)
			}
			p.workerIDs[id] = true
			c.worker = len(p.workers)
			p.workers = append(p.workers, &pajeWorker{id: id, name: name, node: p.node(c), end: math.NaN()})
		}
		p.conts[alias] = c
		if _, taken := p.conts[name]; !taken {
			p.conts[name] = c
		}
	case "PajeDestroyContainer":
		t, err := p.time(e)
		if err != nil {
			return err
		}
		if c, ok := p.conts[mustGet(e, "Name")]; ok && c.worker >= 0 {
			p.workers[c.worker].end = t
		}
	case "PajeSetState", "PajePushState", "PajePopState", "PajeResetState":
		t, err := p.time(e)
		if err != nil {
			return err
		}
		c, err := p.contOf(e, "Container")
		if err != nil {
			return err
		}
		typ, err := p.typeOf(e, "Type")
		if err != nil {
			return err
		}
		if c.worker < 0 || typ.name != "Worker State" {
			return nil
		}
		op := map[string]byte{"PajeSetState": 's', "PajePushState": 'p', "PajePopState": 'o', "PajeResetState": 'o'}[e.def.name]
		var value string
		if op != 'o' {
			v, err := p.field(e, "Value")
			if err != nil {
				return err
			}
			value = v
			if n, ok := typ.values[v]; ok {
				value = n
			}
		}
		p.order++
		ev := pajeStateEv{t: t, op: op, value: value, line: e.line, order: p.order}
		ev.ev.size, _ = e.get("Size")
		ev.ev.footprint, _ = e.get("Footprint")
		ev.ev.jobID, _ = e.get("JobId")
		ev.ev.submitOrder, _ = e.get("SubmitOrder")
		ev.ev.priority, _ = e.get("Priority")
		ev.ev.gflop, _ = e.get("GFlop")
		w := p.workers[c.worker]
		w.states = append(w.states, ev)
	case "PajeSetVariable", "PajeAddVariable", "PajeSubVariable":
		t, err := p.time(e)
		if err != nil {
			return err
		}
		c, err := p.contOf(e, "Container")
		if err != nil {
			return err
		}
		typ, err := p.typeOf(e, "Type")
		if err != nil {
			return err
		}
		var name, group string
		scale := 1.0
		switch {
		case typ.name == "Number of Ready Tasks":
			name, group = "ready tasks", timeline.GroupReady
		case typ.name == "Used (MB)" && c.typ.name == "Memory Manager":
			n := p.node(c)
			if n == 0 {
				return nil // RAM: the panel shows GPU memory
			}
			name, group, scale = nodeName(n), timeline.GroupMemory, 1<<20
		default:
			return nil
		}
		vs, err := p.field(e, "Value")
		if err != nil {
			return err
		}
		v, err := strconv.ParseFloat(vs, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) > maxPajeValue {
			return p.errorf(e.line, "variable value %q is not a number from -%g to %g", clip(vs), maxPajeValue, maxPajeValue)
		}
		k := group + "\x00" + name
		pv := p.vars[k]
		if pv == nil {
			pv = &pajeVar{name: name, group: group, scale: scale}
			p.vars[k] = pv
			p.varList = append(p.varList, pv)
		}
		op := map[string]byte{"PajeSetVariable": 's', "PajeAddVariable": 'a', "PajeSubVariable": 'u'}[e.def.name]
		p.order++
		pv.ops = append(pv.ops, pajeVarOp{t: t, op: op, v: v, order: p.order})
	case "PajeStartLink", "PajeEndLink":
		t, err := p.time(e)
		if err != nil {
			return err
		}
		typ, err := p.typeOf(e, "Type")
		if err != nil {
			return err
		}
		st, et := p.types[typ.startType], p.types[typ.endType]
		if typ.kind != "link" || st == nil || et == nil || st.name != "Memory Manager" || et.name != "Memory Manager" {
			return nil // not a data transfer
		}
		end := "StartContainer"
		if e.def.name == "PajeEndLink" {
			end = "EndContainer"
		}
		c, err := p.contOf(e, end)
		if err != nil {
			return err
		}
		key, err := p.field(e, "Key")
		if err != nil {
			return err
		}
		vs, _ := e.get("Value")
		b, err := strconv.ParseInt(vs, 10, 64)
		if err != nil || b < 0 || b > MaxSizeByte {
			return p.errorf(e.line, "transfer size %q is not a byte count from 0 to %d (1 PiB)", clip(vs), int64(MaxSizeByte))
		}
		le := pajeLinkEnd{t: t, node: p.node(c), bytes: b, line: e.line}
		m := p.starts
		if e.def.name == "PajeEndLink" {
			m = p.ends
		}
		if _, dup := m[key]; dup {
			return p.errorf(e.line, "link key %q used twice", clip(key))
		}
		m[key] = le
		if e.def.name == "PajeStartLink" {
			p.keys = append(p.keys, key)
		}
	}
	return nil
}

func mustGet(e *pajeEvent, f string) string {
	v, _ := e.get(f)
	return v
}

// readPajeTrace reads a Paje trace (see the top of this file) as a Trace:
// one task per kernel interval of a worker, from the state change that
// starts it to the worker's next one; workers; transfers (exact, from the
// links); and the panel's series.
func readPajeTrace(data []byte, file, name string) (*Trace, error) {
	p := &pajeReader{file: file, types: map[string]*pajeType{}, conts: map[string]*pajeCont{}, workerIDs: map[int]bool{},
		vars: map[string]*pajeVar{}, starts: map[string]pajeLinkEnd{}, ends: map[string]pajeLinkEnd{}}
	if err := scanPaje(data, file, p.event); err != nil {
		return nil, err
	}
	t := &Trace{Name: name, Format: "paje", TransferSource: "paje", panel: &panelData{}}
	infos := map[int]WorkerInfo{}
	for _, w := range p.workers {
		wi := WorkerInfo{ID: w.id, Name: w.name, Type: WorkerCPU, Node: w.node}
		if w.node != 0 {
			wi.Type = WorkerCUDA
		}
		infos[w.id] = wi
		if err := p.workerTasks(t, w); err != nil {
			return nil, err
		}
	}
	if len(t.Tasks) == 0 {
		return nil, srcerr.Errorf(file, 0, "no kernel on any worker (no \"Worker State\" of a \"Worker\" container other than StarPU's runtime states): not a StarPU Paje trace?")
	}
	t.Workers = sortedWorkers(infos)
	sortTasks(t.Tasks)
	for _, v := range p.varList {
		sort.SliceStable(v.ops, func(i, j int) bool { return v.ops[i].t < v.ops[j].t })
		ls := levelSeries{name: v.name, group: v.group}
		cur := 0.0
		for _, o := range v.ops {
			switch o.op {
			case 's':
				cur = o.v
			case 'a':
				cur += o.v
			case 'u':
				cur -= o.v
			}
			ls.add(o.t, cur*v.scale)
		}
		t.panel.levels = append(t.panel.levels, ls)
	}
	p.transfers(t)
	return t, nil
}

// workerTasks turns a worker's state changes into tasks (its kernels) and
// panel spans.
func (p *pajeReader) workerTasks(t *Trace, w *pajeWorker) error {
	sort.SliceStable(w.states, func(i, j int) bool { return w.states[i].t < w.states[j].t })
	var stack []*pajeStateEv
	var cur *pajeStateEv // state shown since curT
	curT := 0.0
	var kernel *pajeStateEv // SetState of the kernel running, if any
	end := p.lastT
	if !math.IsNaN(w.end) {
		end = w.end
	}
	closeKernel := func(at float64) error {
		if kernel == nil {
			return nil
		}
		r, err := p.task(w, kernel, at)
		if err != nil {
			return err
		}
		t.Tasks = append(t.Tasks, r)
		kernel = nil
		return nil
	}
	show := func(s *pajeStateEv, at float64) {
		// Kernels come from the tasks; the spans hold the other states.
		if cur != nil && at > curT && !isKernelState(cur.value) {
			t.panel.spans = append(t.panel.spans, stateSpan{worker: w.id, state: panelState(cur.value), s: curT, e: at})
		}
		cur, curT = s, at
	}
	for i := range w.states {
		s := &w.states[i]
		switch s.op {
		case 's':
			// StarPU writes an executing worker's state twice at one
			// instant (PajeSetState 10 and its extended 20): the second
			// only adds fields.
			if kernel != nil && kernel.value == s.value && kernel.t == s.t {
				if s.ev != (pajeKernelFields{}) {
					kernel.ev = s.ev
				}
				continue
			}
			if err := closeKernel(s.t); err != nil {
				return err
			}
			if isKernelState(s.value) {
				kernel = s
			}
			stack = append(stack[:0], s)
		case 'p':
			if len(stack) >= 1<<16 {
				return p.errorf(s.line, "worker %s: more than %d states pushed", w.name, 1<<16)
			}
			stack = append(stack, s)
		case 'o':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		}
		var top *pajeStateEv
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != cur {
			show(top, s.t)
		}
	}
	end = math.Max(end, curT)
	if err := closeKernel(end); err != nil {
		return err
	}
	show(nil, end)
	return nil
}

// panelState maps a worker-state name to the panel's states.
func panelState(name string) string {
	if s, ok := pajeRuntimeStates[name]; ok {
		return s
	}
	if isKernelState(name) {
		return name
	}
	return timeline.StateRuntime
}

// task builds the task of a kernel that ran from s's time to end.
func (p *pajeReader) task(w *pajeWorker, s *pajeStateEv, end float64) (TaskRecord, error) {
	id, node := w.id, w.node
	r := TaskRecord{Line: s.line, Name: s.value, WorkerID: &id, MemoryNode: &node,
		StartTime: toNs(s.t), EndTime: toNs(end)}
	f := s.ev
	bad := func(field, v string) error {
		return p.errorf(s.line, "%s %q is not valid", field, clip(v))
	}
	if f.jobID != "" {
		v, err := strconv.ParseInt(f.jobID, 10, 64)
		if err != nil || v < 0 {
			return r, bad("JobId", f.jobID)
		}
		r.JobID = &v
	}
	if f.submitOrder != "" {
		v, err := strconv.ParseInt(f.submitOrder, 10, 64)
		if err != nil || v < 0 {
			return r, bad("SubmitOrder", f.submitOrder)
		}
		r.SubmitOrder = &v
	}
	if f.priority != "" {
		v, err := pajePriority(f.priority)
		if err != nil {
			return r, bad("Priority", f.priority)
		}
		r.Priority = &v
	}
	if f.footprint != "" {
		v, err := strconv.ParseUint(f.footprint, 16, 32)
		if err != nil {
			return r, bad("Footprint", f.footprint)
		}
		fp := uint32(v)
		r.Footprint = &fp
	}
	if f.gflop != "" {
		v, err := strconv.ParseFloat(f.gflop, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v > MaxGFlop {
			return r, p.errorf(s.line, "GFlop %q is not a number from 0 to %g", clip(f.gflop), MaxGFlop)
		}
		r.GFlop = &v
	}
	if f.size != "" {
		v, err := strconv.ParseInt(f.size, 10, 64)
		if err != nil || v < 0 || v > MaxSizeByte {
			return r, p.errorf(s.line, "Size %q is not a byte count from 0 to %d (1 PiB)", clip(f.size), int64(MaxSizeByte))
		}
		r.Sizes = []int64{v} // the task's data, all buffers together
	}
	return r, nil
}

// transfers pairs the links' starts and ends: the copies per direction and
// the bytes in flight.
func (p *pajeReader) transfers(t *Trace) {
	type dir struct{ src, dst int }
	acc := map[dir]*Transfer{}
	type change struct {
		t     float64
		delta int64
	}
	flows := map[dir][]change{}
	var dirs []dir
	for _, k := range p.keys {
		s, e := p.starts[k], p.ends[k]
		if _, ok := p.ends[k]; !ok {
			continue // never ended: its destination is unknown
		}
		d := dir{s.node, e.node}
		x := acc[d]
		if x == nil {
			x = &Transfer{Src: nodeName(d.src), Dst: nodeName(d.dst)}
			acc[d] = x
			dirs = append(dirs, d)
		}
		x.Count++
		x.Bytes += s.bytes
		flows[d] = append(flows[d], change{s.t, s.bytes}, change{math.Max(e.t, s.t), -s.bytes})
	}
	sort.Slice(dirs, func(i, j int) bool {
		if dirs[i].src != dirs[j].src {
			return dirs[i].src < dirs[j].src
		}
		return dirs[i].dst < dirs[j].dst
	})
	for _, d := range dirs {
		t.Transfers = append(t.Transfers, *acc[d])
		ch := flows[d]
		sort.SliceStable(ch, func(i, j int) bool { return ch[i].t < ch[j].t })
		ls := levelSeries{name: nodeName(d.src) + "->" + nodeName(d.dst), group: timeline.GroupInFlight}
		ls.add(0, 0)
		var cur int64
		for _, c := range ch {
			cur += c.delta
			ls.add(c.t, float64(cur))
		}
		t.panel.levels = append(t.panel.levels, ls)
	}
}

// pajePriority reads a task's Priority. StarPU's paje.trace prints it as an
// unsigned 64-bit integer, so a negative priority (dmdas' bottom-level
// priorities of a large Cholesky) appears as its two's complement
// ("18446744073709551614" is -2).
func pajePriority(s string) (int, error) {
	if v, err := strconv.ParseInt(s, 10, 32); err == nil {
		return int(v), nil
	}
	u, err := strconv.ParseUint(s, 10, 64)
	if err != nil || u < 1<<63 || int64(u) < math.MinInt32 {
		return 0, errors.New("not a 32-bit priority")
	}
	return int(int64(u)), nil
}
