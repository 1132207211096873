package traces

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
			_, err := LoadTrace(p)
			require.Error(t, err)
			assert.Contains(t, err.Error(), p+c.want)
		})
	}
}

// TestKSDistanceNaN: samples holding NaN (which the readers refuse) give
// NaN at once instead of hanging the statistic.
func TestKSDistanceNaN(t *testing.T) {
	done := make(chan float64, 1)
	go func() { done <- KSDistance([]float64{math.NaN(), 1}, []float64{math.NaN()}) }()
	select {
	case d := <-done:
		assert.True(t, math.IsNaN(d))
	case <-time.After(10 * time.Second):
		t.Fatal("KSDistance did not return")
	}
}
