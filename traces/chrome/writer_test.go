package chrome

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/starsim/starsim/traces"
	"github.com/starsim/starsim/traces/internal/tracetest"
	"github.com/starsim/starsim/traces/paje"
)

type chromeEvent struct {
	Ph   string         `json:"ph"`
	Name string         `json:"name"`
	Cat  string         `json:"cat"`
	Pid  int            `json:"pid"`
	Tid  int            `json:"tid"`
	Ts   float64        `json:"ts"`
	Dur  *float64       `json:"dur"`
	ID   *uint64        `json:"id"`
	Bp   string         `json:"bp"`
	Args map[string]any `json:"args"`
}

type chromeFile struct {
	TraceEvents     []chromeEvent  `json:"traceEvents"`
	DisplayTimeUnit string         `json:"displayTimeUnit"`
	Metadata        map[string]any `json:"metadata"`
}

func parseChrome(t *testing.T, b []byte) chromeFile {
	t.Helper()
	var f chromeFile
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&f), "the trace is JSON")
	return f
}

// TestChromeCholesky checks the layout on the 8×8 Cholesky: one kernel
// slice per task on its worker's thread, a b/e pair per copy, counters back
// to zero, one flow per dependency between kernels, the header.
func TestChromeCholesky(t *testing.T) {
	var buf bytes.Buffer
	c := NewWriter(&buf, tracetest.Header)
	seen := &tracetest.Recorder{}
	res := tracetest.Cholesky(t, traces.Multi(c, seen))
	require.NoError(t, c.Close())
	f := parseChrome(t, buf.Bytes())

	assert.Equal(t, "ms", f.DisplayTimeUnit)
	assert.Equal(t, "starsim", f.Metadata["tool"])
	assert.Equal(t, "test", f.Metadata["version"])
	assert.Equal(t, "starsim run --app cholesky", f.Metadata["command"])
	assert.Equal(t, 7.0, f.Metadata["seed"])

	threads := map[int]string{} // workers' tids
	procs := map[int]string{}
	type slice struct{ start, end float64 }
	kernels := map[int][]slice{} // per tid
	fetches := map[int][]slice{}
	perWorker := map[string]int{}
	begins, ends := map[uint64]string{}, map[uint64]string{}
	flowS, flowF := map[uint64]chromeEvent{}, map[uint64]chromeEvent{}
	last := map[string]float64{} // counters' last values
	nfetch := 0
	for _, e := range f.TraceEvents {
		switch e.Ph {
		case "M":
			switch e.Name {
			case "process_name":
				procs[e.Pid] = e.Args["name"].(string)
			case "thread_name":
				if e.Pid == chromeWorkers {
					threads[e.Tid] = e.Args["name"].(string)
				}
			}
		case "X":
			require.NotNil(t, e.Dur)
			require.GreaterOrEqual(t, *e.Dur, 0.0)
			require.Equal(t, chromeWorkers, e.Pid)
			switch e.Cat {
			case "kernel":
				assert.True(t, seen.Kernels[e.Name], e.Name)
				for _, k := range []string{"task", "model", "footprint", "priority"} {
					assert.Contains(t, e.Args, k)
				}
				kernels[e.Tid] = append(kernels[e.Tid], slice{e.Ts, e.Ts + *e.Dur})
				perWorker[threads[e.Tid]]++
			case "fetch":
				assert.Equal(t, "FetchingInput", e.Name)
				assert.Positive(t, *e.Dur)
				nfetch++
				fetches[e.Tid] = append(fetches[e.Tid], slice{e.Ts, e.Ts + *e.Dur})
			default:
				t.Errorf("unexpected slice %+v", e)
			}
		case "b", "e":
			require.Equal(t, "transfer", e.Cat)
			require.NotNil(t, e.ID)
			m := begins
			if e.Ph == "e" {
				m = ends
				assert.Equal(t, begins[*e.ID], e.Name, "an end after its begin, same name")
			} else {
				assert.Contains(t, e.Args, "bytes")
				assert.Contains(t, e.Args, "kind")
			}
			_, dup := m[*e.ID]
			require.False(t, dup, "id %d used once", *e.ID)
			m[*e.ID] = e.Name
		case "C":
			for k, v := range e.Args {
				last[e.Name+" "+k] = v.(float64)
				if !strings.HasPrefix(e.Name, "used ") {
					assert.GreaterOrEqual(t, v.(float64), 0.0, e.Name)
				}
			}
		case "s", "f":
			require.NotNil(t, e.ID)
			m := flowS
			if e.Ph == "f" {
				m = flowF
				assert.Equal(t, "e", e.Bp)
			}
			_, dup := m[*e.ID]
			require.False(t, dup, "flow %d: one %s", *e.ID, e.Ph)
			m[*e.ID] = e
		default:
			t.Errorf("unexpected event %+v", e)
		}
	}
	assert.Equal(t, map[int]string{1: "workers", 2: "transfers", 3: "scheduler", 4: "memory"}, procs)
	for i, w := range seen.Workers {
		assert.Equal(t, w, threads[i+1], "thread_name of worker %d", i)
	}
	n := 0
	for _, ks := range kernels {
		n += len(ks)
	}
	assert.Equal(t, res.NTasks, n, "one kernel slice per task")
	for _, w := range res.Workers {
		assert.Equal(t, w.NTasks, perWorker[w.Name], w.Name)
	}
	assert.Positive(t, nfetch)
	assert.Equal(t, tracetest.Copies(res), len(begins), "one async begin per copy")
	assert.Equal(t, tracetest.Copies(res), len(ends))
	for id := range begins {
		assert.Contains(t, ends, id)
	}
	for k, v := range last {
		if !strings.HasPrefix(k, "used ") {
			assert.Zero(t, v, k)
		}
	}
	assert.Contains(t, last, "ready tasks tasks")

	// A thread's slices do not overlap (viewers drop badly nested ones).
	for tid, ks := range kernels {
		all := append(append([]slice(nil), ks...), fetches[tid]...)
		sort.Slice(all, func(i, j int) bool { return all[i].start < all[j].start })
		for i := 1; i < len(all); i++ {
			assert.LessOrEqual(t, all[i-1].end, all[i].start+1e-9, "tid %d: %v then %v", tid, all[i-1], all[i])
		}
	}

	// Flows: as many as dependencies, paired by id, each end inside a
	// kernel slice on its thread (the predecessor's end, the task's start).
	assert.Equal(t, seen.Preds, len(flowS))
	assert.Equal(t, len(flowS), len(flowF))
	inside := func(tid int, ts float64) bool {
		for _, k := range kernels[tid] {
			if k.start <= ts && ts <= k.end {
				return true
			}
		}
		return false
	}
	for id, s := range flowS {
		fe, ok := flowF[id]
		require.True(t, ok, "flow %d has its end", id)
		assert.LessOrEqual(t, s.Ts, fe.Ts, "flow %d goes forward in time", id)
		assert.True(t, inside(s.Tid, s.Ts), "flow %d starts in a kernel", id)
		assert.True(t, inside(fe.Tid, fe.Ts), "flow %d ends in a kernel", id)
	}
}

// TestChromeDeterministic: two runs write the same bytes, alone or next to
// a Paje writer.
func TestChromeDeterministic(t *testing.T) {
	run := func(withPaje bool) ([]byte, []byte) {
		var cb, pb bytes.Buffer
		c := NewWriter(&cb, tracetest.Header)
		p := paje.NewWriter(&pb, tracetest.Header)
		if withPaje {
			tracetest.Cholesky(t, traces.Multi(c, p))
		} else {
			tracetest.Cholesky(t, c)
		}
		require.NoError(t, c.Close())
		require.NoError(t, p.Close())
		return cb.Bytes(), pb.Bytes()
	}
	a, _ := run(false)
	b, pa := run(true)
	c, pb := run(true)
	assert.True(t, bytes.Equal(a, b), "chrome: same bytes")
	assert.True(t, bytes.Equal(b, c), "chrome: same bytes")
	assert.True(t, bytes.Equal(pa, pb), "paje: same bytes")
}

// TestChromeTiny: names are escaped, transfers have their handle, the
// document is valid JSON.
func TestChromeTiny(t *testing.T) {
	var buf bytes.Buffer
	h := tracetest.Header
	h.Command = "run \"quoted\"\n\t\x01 é \xff"
	c := NewWriter(&buf, h)
	res := tracetest.Tiny(t, c)
	require.NoError(t, c.Close())
	f := parseChrome(t, buf.Bytes())
	assert.Equal(t, "run \"quoted\"\n\t\x01 é \ufffd", f.Metadata["command"])
	names := map[string]int{}
	handles := map[string]bool{}
	for _, e := range f.TraceEvents {
		if e.Ph == "X" && e.Cat == "kernel" {
			names[e.Name]++
		}
		if e.Ph == "b" {
			handles[e.Args["handle"].(string)] = true
		}
	}
	assert.Equal(t, map[string]int{"INIT": 2, `odd "kernel" 1`: 1, "E": 1}, names)
	assert.Equal(t, map[string]bool{"A": true, "B": true}, handles)
	assert.Equal(t, []any{"RAM", "CUDA0"}, f.Metadata["memory_nodes"])
	assert.Equal(t, res.NTasks, 4)
}

// TestChromeEmpty: a writer closed without a run is still valid JSON.
func TestChromeEmpty(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, NewWriter(&buf, traces.Header{}).Close())
	f := parseChrome(t, buf.Bytes())
	assert.Empty(t, f.TraceEvents)
}

// TestChromeWriteError: Close reports the writer's error.
func TestChromeWriteError(t *testing.T) {
	c := NewWriter(tracetest.FailWriter{}, tracetest.Header)
	tracetest.Tiny(t, c)
	assert.Error(t, c.Close())
}
