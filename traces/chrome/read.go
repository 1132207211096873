package chrome

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/starsim/starsim/internal/srcerr"
	"github.com/starsim/starsim/internal/timeline"
	"github.com/starsim/starsim/runtime/machine"
	"github.com/starsim/starsim/traces"
)

// cmpChromeEvent is one trace event, as Chrome writes them.
type event struct {
	Ph   string          `json:"ph"`
	Pid  int             `json:"pid"`
	Tid  int             `json:"tid"`
	Ts   float64         `json:"ts"`
	Dur  *float64        `json:"dur"`
	Name string          `json:"name"`
	Cat  string          `json:"cat"`
	Args json.RawMessage `json:"args"`
}

type kernelArgs struct {
	Task      *int64   `json:"task"`
	Model     string   `json:"model"`
	Footprint string   `json:"footprint"`
	Priority  *int     `json:"priority"`
	SubmitUs  *float64 `json:"submit_us"`
	ReadyUs   *float64 `json:"ready_us"`
}

// maxTimeUs bounds a Chrome trace's times (µs), as MaxTimeMs a tasks.rec's.
const maxTimeUs = traces.MaxTimeMs * 1e3

// Read reads starsim's Chrome JSON (the object form, or a bare array of
// events; see Writer) as a Trace named name: the kernel slices as tasks
// (Name, Model, JobId = task + 1, Priority, WorkerId, MemoryNode,
// SubmitTime, ReadyTime, StartTime, EndTime, Footprint; no GFlop), every
// named worker thread, and every copy (exact). Errors name FILE:LINE: a
// syntax error (truncated file), a kernel event without "dur"; "FILE:
// reason" for JSON without "traceEvents" or without a kernel.
func Read(data []byte, file, name string) (*traces.Trace, error) {
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

	t := &traces.Trace{Name: name, Format: "chrome", TransferSource: "chrome", Panel: &traces.Panel{}}
	series := map[string]int{} // counter name -> index in t.Panel.Levels
	names := map[int]string{}
	xfers := map[machine.Dir]*traces.Transfer{}
	used := map[int]bool{}
	for i, raw := range events {
		line := srcerr.LineOf(data, offsets[i])
		var ev event
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
			var a kernelArgs
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
			r := traces.TaskRecord{Line: line, Name: ev.Name, Model: a.Model, Priority: a.Priority,
				WorkerID: &id, StartTime: traces.RoundNs(ev.Ts / 1e3), EndTime: traces.RoundNs((ev.Ts + *ev.Dur) / 1e3)}
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
			t.Panel.Spans = append(t.Panel.Spans, traces.StateSpan{Worker: ev.Tid - 1, State: st, S: ev.Ts / 1e3, E: (ev.Ts + *ev.Dur) / 1e3})
		case ev.Ph == "C":
			if err := counterSample(t.Panel, series, &ev, file, line); err != nil {
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
			d, ok := machine.ParseDir(ev.Name)
			if !ok {
				return nil, srcerr.Errorf(file, line, "transfer %q is not named SRC->DST", ev.Name)
			}
			if a.Bytes < 0 || a.Bytes > traces.MaxSizeByte {
				return nil, srcerr.Errorf(file, line, "transfer %q of %d bytes: want 0 to %d", ev.Name, a.Bytes, int64(traces.MaxSizeByte))
			}
			x := xfers[d]
			if x == nil {
				x = &traces.Transfer{Src: d.Src, Dst: d.Dst}
				xfers[d] = x
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
	t.Panel.SortLevels()
	workers := map[int]traces.WorkerInfo{}
	for id := range used {
		if _, ok := names[id]; !ok {
			names[id] = "" // a worker without a thread_name
		}
	}
	for id, n := range names {
		if n == "" {
			n = "w" + strconv.Itoa(id)
		}
		w := traces.WorkerInfo{ID: id, Name: n, Type: traces.WorkerCPU, Node: 0}
		if !strings.HasPrefix(strings.ToUpper(n), "CPU") {
			w.Type, w.Node = traces.WorkerCUDA, -1
			for i, nn := range nodes {
				if nn == n {
					w.Node = i
				}
			}
		}
		workers[id] = w
	}
	t.Workers = traces.SortedWorkers(workers)
	for i := range t.Tasks {
		w := workers[*t.Tasks[i].WorkerID]
		node := w.Node
		if node < 0 {
			node = 1
		}
		t.Tasks[i].MemoryNode = &node
	}
	traces.SortTasks(t.Tasks)
	keys := make([]machine.Dir, 0, len(xfers))
	for k := range xfers {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].Src != keys[j].Src {
			return traces.NodeLess(keys[i].Src, keys[j].Src)
		}
		return traces.NodeLess(keys[i].Dst, keys[j].Dst)
	})
	for _, k := range keys {
		t.Transfers = append(t.Transfers, *xfers[k])
	}
	return t, nil
}

// chromeCounterSample reads a counter sample ("ph":"C") of starsim's
// Chrome trace into p: "ready tasks" {"tasks"}, "used NODE" {"bytes"}
// (GPUs only) and "in flight SRC->DST" {"bytes"}; other counters are
// skipped.
func counterSample(p *traces.Panel, series map[string]int, ev *event, file string, line int) error {
	var group, name, key string
	switch {
	case ev.Pid == chromeSched && ev.Name == "ready tasks":
		group, name, key = timeline.GroupReady, ev.Name, "tasks"
	case ev.Pid == chromeMemory && strings.HasPrefix(ev.Name, "used "):
		name = strings.TrimPrefix(ev.Name, "used ")
		if name == "RAM" {
			return nil
		}
		group, key = timeline.GroupMemory, "bytes"
	case ev.Pid == chromeTransfers && strings.HasPrefix(ev.Name, "in flight "):
		group, name, key = timeline.GroupInFlight, strings.TrimPrefix(ev.Name, "in flight "), "bytes"
	default:
		return nil
	}
	var args map[string]float64
	if err := json.Unmarshal(ev.Args, &args); err != nil {
		return srcerr.Errorf(file, line, "counter %q: args: %v", ev.Name, err)
	}
	v, ok := args[key]
	if !ok || math.IsNaN(v) || math.IsInf(v, 0) || !(ev.Ts >= 0) || math.IsInf(ev.Ts, 0) {
		return srcerr.Errorf(file, line, "counter %q without a finite %q and a non-negative \"ts\"", ev.Name, key)
	}
	k := group + "\x00" + name
	i, seen := series[k]
	if !seen {
		i = len(p.Levels)
		series[k] = i
		p.Levels = append(p.Levels, traces.Level{Name: name, Group: group})
	}
	l := &p.Levels[i]
	l.T, l.V = append(l.T, ev.Ts/1e3), append(l.V, v)
	return nil
}
