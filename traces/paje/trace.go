package paje

import (
	"errors"
	"math"
	"sort"
	"strconv"

	"github.com/starsim/starsim/internal/srcerr"
	"github.com/starsim/starsim/internal/timeline"
	"github.com/starsim/starsim/runtime/machine"
	"github.com/starsim/starsim/traces"
)

// Read reads a Paje trace (see read.go and scan.go) as a Trace:
// one task per kernel interval of a worker, from the state change that
// starts it to the worker's next one; workers; transfers (exact, from the
// links); and the panel's series.
func Read(data []byte, file, name string) (*traces.Trace, error) {
	p := &pajeReader{file: file, types: map[string]*pajeType{}, conts: map[string]*pajeCont{}, workerIDs: map[int]bool{},
		vars: map[string]*pajeVar{}, starts: map[string]pajeLinkEnd{}, ends: map[string]pajeLinkEnd{}}
	if err := scanPaje(data, file, p.event); err != nil {
		return nil, err
	}
	t := &traces.Trace{Name: name, Format: "paje", TransferSource: "paje", Panel: &traces.Panel{}}
	infos := map[int]traces.WorkerInfo{}
	for _, w := range p.workers {
		wi := traces.WorkerInfo{ID: w.id, Name: w.name, Type: traces.WorkerCPU, Node: w.node}
		if w.node != 0 {
			wi.Type = traces.WorkerCUDA
		}
		infos[w.id] = wi
		if err := p.workerTasks(t, w); err != nil {
			return nil, err
		}
	}
	if len(t.Tasks) == 0 {
		return nil, srcerr.Errorf(file, 0, "no kernel on any worker (no \"Worker State\" of a \"Worker\" container other than StarPU's runtime states): not a StarPU Paje trace?")
	}
	t.Workers = traces.SortedWorkers(infos)
	traces.SortTasks(t.Tasks)
	for _, v := range p.varList {
		sort.SliceStable(v.ops, func(i, j int) bool { return v.ops[i].t < v.ops[j].t })
		ls := traces.Level{Name: v.name, Group: v.group}
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
			ls.Add(o.t, cur*v.scale)
		}
		t.Panel.Levels = append(t.Panel.Levels, ls)
	}
	p.transfers(t)
	return t, nil
}

// workerTasks turns a worker's state changes into tasks (its kernels) and
// panel spans.
func (p *pajeReader) workerTasks(t *traces.Trace, w *pajeWorker) error {
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
			t.Panel.Spans = append(t.Panel.Spans, traces.StateSpan{Worker: w.id, State: panelState(cur.value), S: curT, E: at})
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
func (p *pajeReader) task(w *pajeWorker, s *pajeStateEv, end float64) (traces.TaskRecord, error) {
	id, node := w.id, w.node
	r := traces.TaskRecord{Line: s.line, Name: s.value, WorkerID: &id, MemoryNode: &node,
		StartTime: traces.RoundNs(s.t), EndTime: traces.RoundNs(end)}
	f := s.ev
	bad := func(field, v string) error {
		return p.errorf(s.line, "%s %q is not valid", field, traces.Clip(v))
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
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v > traces.MaxGFlop {
			return r, p.errorf(s.line, "GFlop %q is not a number from 0 to %g", traces.Clip(f.gflop), traces.MaxGFlop)
		}
		r.GFlop = &v
	}
	if f.size != "" {
		v, err := strconv.ParseInt(f.size, 10, 64)
		if err != nil || v < 0 || v > traces.MaxSizeByte {
			return r, p.errorf(s.line, "Size %q is not a byte count from 0 to %d (1 PiB)", traces.Clip(f.size), int64(traces.MaxSizeByte))
		}
		r.Sizes = []int64{v} // the task's data, all buffers together
	}
	return r, nil
}

// transfers pairs the links' starts and ends: the copies per direction and
// the bytes in flight.
func (p *pajeReader) transfers(t *traces.Trace) {
	type dir struct{ src, dst int }
	acc := map[dir]*traces.Transfer{}
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
			x = &traces.Transfer{Src: traces.NodeName(d.src), Dst: traces.NodeName(d.dst)}
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
		ls := traces.Level{Name: machine.Dir{Src: traces.NodeName(d.src), Dst: traces.NodeName(d.dst)}.String(), Group: timeline.GroupInFlight}
		ls.Add(0, 0)
		var cur int64
		for _, c := range ch {
			cur += c.delta
			ls.Add(c.t, float64(cur))
		}
		t.Panel.Levels = append(t.Panel.Levels, ls)
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
