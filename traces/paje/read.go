package paje

// Reader of Paje traces: StarPU's paje.trace as starpu_fxt_tool writes it
// (src/debug/traces/starpu_fxt.c, starpu_paje.c) and starsim's own (Writer).
// scan.go splits the file into events; this file interprets them; trace.go
// makes the Trace.
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
	"math"
	"strconv"
	"strings"

	"github.com/starsim/starsim/internal/srcerr"
	"github.com/starsim/starsim/internal/timeline"
	"github.com/starsim/starsim/traces"
)

// Limits of the Paje reader, so that a corrupt file cannot ask for absurd
// memory: fields per event definition, event definitions, workers.
const (
	pajeMaxFields  = 256
	pajeMaxDefs    = 4096
	pajeMaxWorkers = 1 << 16
)

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
	if err != nil || math.IsNaN(t) || math.IsInf(t, 0) || t < 0 || t > traces.MaxTimeMs {
		return 0, p.errorf(e.line, "time %q is not a number of ms from 0 to %g (about 31.7 years)", traces.Clip(s), traces.MaxTimeMs)
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
		return nil, p.errorf(e.line, "unknown type %q", traces.Clip(v))
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
		return nil, p.errorf(e.line, "unknown container %q", traces.Clip(v))
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
				return p.errorf(e.line, "unknown container %q", traces.Clip(pv))
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
			name, group, scale = traces.NodeName(n), timeline.GroupMemory, 1<<20
		default:
			return nil
		}
		vs, err := p.field(e, "Value")
		if err != nil {
			return err
		}
		v, err := strconv.ParseFloat(vs, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) > maxPajeValue {
			return p.errorf(e.line, "variable value %q is not a number from -%g to %g", traces.Clip(vs), maxPajeValue, maxPajeValue)
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
		if err != nil || b < 0 || b > traces.MaxSizeByte {
			return p.errorf(e.line, "transfer size %q is not a byte count from 0 to %d (1 PiB)", traces.Clip(vs), int64(traces.MaxSizeByte))
		}
		le := pajeLinkEnd{t: t, node: p.node(c), bytes: b, line: e.line}
		m := p.starts
		if e.def.name == "PajeEndLink" {
			m = p.ends
		}
		if _, dup := m[key]; dup {
			return p.errorf(e.line, "link key %q used twice", traces.Clip(key))
		}
		m[key] = le
		if e.def.name == "PajeStartLink" {
			p.keys = append(p.keys, key)
		}
	}
	return nil
}
