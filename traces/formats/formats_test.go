package formats

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/starsim/starsim/internal/srcerr"
	"github.com/starsim/starsim/traces/internal/tracetest"
	"github.com/starsim/starsim/traces/rec"
)

// TestLoadTraceErrors: bad input is located, FILE:LINE where there is a
// line.
func TestLoadTraceErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
		return p
	}
	truncatedRec := "# header\n\nName: GEMM\nWorkerId: 0\nMemoryNode: 0\nStartTime: 1.5\nEndTime: 2\n\nName: GEMM\nJobId: 7\nWorkerId: 1\nMemoryNode: 0\nStartTime: 3\n"
	chromeNoDur := "{\"traceEvents\":[\n{\"ph\":\"M\",\"pid\":1,\"tid\":1,\"name\":\"thread_name\",\"args\":{\"name\":\"CPU0\"}},\n{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":1,\"name\":\"GEMM\",\"cat\":\"kernel\"}\n]}\n"
	cases := []struct {
		name, path, want string
	}{
		{"not a trace", write("notes.txt", "hello world\n"), "notes.txt:1: expected \"Field: value\""},
		{"binary", write("img.png", "\x89PNG\r\n\x1a\n\x00\x00"), "img.png:1:"},
		{"truncated record", write("cut.rec", truncatedRec), "cut.rec:9: task GEMM (job 7) has a WorkerId but no StartTime or EndTime"},
		{"truncated line", write("cut2.rec", "Name: GEMM\nWorkerId: 0\nStartTime: 1\nEndT"), "cut2.rec:4: expected \"Field: value\""},
		{"bad number", write("bad.rec", "Name: GEMM\nWorkerId: x\n"), "bad.rec:2: WorkerId"},
		{"no executed task", write("data.txt", "Handle: 1000\nHomeNode: 0\nSize: 64\n"), "data.txt: no executed task"},
		{"two nodes", write("nodes.rec", "WorkerId: 0\nMemoryNode: 0\nStartTime: 0\nEndTime: 1\n\nWorkerId: 0\nMemoryNode: 1\nStartTime: 1\nEndTime: 2\n"),
			"nodes.rec:6: worker 0 on memory node 1, but on node 0 in the record of line 1"},
		{"JSON not a trace", write("calib.json", "{\n  \"version\": 1\n}\n"), "calib.json:1: JSON object without \"traceEvents\""},
		{"truncated JSON", write("cut.json", "{\"traceEvents\":[\n{\"ph\":\"M\",\"pid\":1},\n{\"ph\":\"X\",\"pid\""), "cut.json:3: invalid JSON"},
		{"kernel without dur", write("nodur.json", chromeNoDur), "nodur.json:3: kernel event \"GEMM\" without"},
		{"no kernels", write("empty.json", "{\"traceEvents\":[]}"), "empty.json: no kernel event"},
		{"empty dir", t.TempDir(), "holds no tasks.rec"},
		{"missing", filepath.Join(dir, "nope"), "nope"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Load(c.path)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
	// The native trace cut inside its last executed record.
	native, err := os.ReadFile(filepath.Join(tracetest.Native, "tasks.rec"))
	if err != nil {
		t.Skipf("native trace not available: %v", err)
	}
	cut := bytes.LastIndex(native, []byte("\nStartTime: "))
	require.Positive(t, cut)
	p := write("tasks.rec", string(native[:cut+1]))
	recStart := bytes.LastIndex(native[:cut], []byte("\n\n")) + 2
	line := bytes.Count(native[:recStart], []byte("\n")) + 1
	_, err = Load(p)
	require.Error(t, err)
	assert.Contains(t, err.Error(), filepath.Base(p)+":"+strconv.Itoa(line)+": task ")
}

// TestHugeNumbersRefused: numbers beyond the bounds (here ones whose
// durations would be NaN, hanging the KS loop) are errors at their line.
func TestHugeNumbersRefused(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
		return p
	}
	rec := "Name: T\nWorkerId: 0\nStartTime: 1e308\nEndTime: 1e308\n"
	for _, c := range []struct{ name, text, want string }{
		{"tasks.rec start", rec, ":3: StartTime: 1e+308 is beyond 1e+12"},
		{"tasks.rec GFlop", "Name: T\nWorkerId: 0\nStartTime: 1\nEndTime: 2\nGFlop: 1e20\n", ":5: GFlop: 1e+20 is beyond 1e+15"},
		{"tasks.rec size", "Name: T\nWorkerId: 0\nStartTime: 1\nEndTime: 2\nHandles: 1\nModes: R\nSizes: 9223372036854775807\n", ":7: Sizes: entry 1, 9223372036854775807, is beyond"},
		{"chrome ts", `{"traceEvents": [
{"ph": "X", "pid": 1, "tid": 1, "ts": 1e306, "dur": 1, "name": "GEMM", "cat": "kernel"}]}`, ":2: kernel event \"GEMM\" ends at 1e+306 µs, beyond 1e+15 µs"},
		{"chrome tid", `{"traceEvents": [{"ph": "X", "pid": 1, "tid": 0, "ts": 1, "dur": 1, "name": "GEMM", "cat": "kernel"}]}`, ":1: kernel event \"GEMM\" on thread 0"},
		{"chrome task", `{"traceEvents": [{"ph": "X", "pid": 1, "tid": 1, "ts": 1, "dur": 1, "name": "GEMM", "cat": "kernel", "args": {"task": 9223372036854775807}}]}`, ":1: kernel event \"GEMM\": task 9223372036854775807 is not a task id"},
		{"chrome bytes", `{"traceEvents": [{"ph": "b", "pid": 2, "tid": 1, "ts": 1, "name": "RAM->CUDA0", "cat": "transfer", "args": {"bytes": -5}}]}`, ":1: transfer \"RAM->CUDA0\" of -5 bytes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := write(strings.ReplaceAll(c.name, " ", "_"), c.text)
			_, err := Load(p)
			require.Error(t, err)
			assert.Contains(t, err.Error(), p+c.want)
		})
	}
}

// FuzzLoadTraceDir: a directory of tasks.rec and data.rec, as compare
// reads it (transfers inferred from data.rec): no panic, no hang, errors
// located, and what is accepted compares.
func FuzzLoadTraceDir(f *testing.F) {
	run := tracetest.SmallRun(f, rec.Format)
	f.Add(run["tasks.rec"], run["data.rec"])
	f.Add([]byte("Name: T\nWorkerId: 0\nStartTime: 1e308\nEndTime: 1e308\n"), []byte{})
	f.Add([]byte("Name: T\nWorkerId: 0\nMemoryNode: 1\nStartTime: 1\nEndTime: 2\nHandles: a\nModes: R\nSizes: 9\n"), []byte("Handle: a\nHomeNode: 0\n"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, tasks, data []byte) {
		d, err := os.MkdirTemp(dir, "t")
		if err != nil {
			t.Skip()
		}
		defer os.RemoveAll(d)
		if os.WriteFile(filepath.Join(d, "tasks.rec"), tasks, 0o644) != nil || os.WriteFile(filepath.Join(d, "data.rec"), data, 0o644) != nil {
			t.Skip()
		}
		tr, err := Load(d)
		if err != nil {
			var se *srcerr.Error
			if !errors.As(err, &se) || !strings.HasPrefix(se.File, d) {
				t.Fatalf("error %v does not name a file of %s", err, d)
			}
			return
		}
		tracetest.CheckReport(t, tr)
	})
}
