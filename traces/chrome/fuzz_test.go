package chrome_test

import (
	"testing"

	"github.com/starsim/starsim/traces/chrome"
	"github.com/starsim/starsim/traces/internal/tracetest"
)

// FuzzReadChrome: compare's Chrome JSON reader never panics or hangs,
// locates its errors, and what it accepts compares.
func FuzzReadChrome(f *testing.F) {
	f.Add(tracetest.SmallRun(f, chrome.Format)["trace"])
	f.Add([]byte(`[{"ph":"X","pid":1,"tid":1,"ts":1,"dur":2,"name":"GEMM","cat":"kernel","args":{"task":0}}]`))
	f.Add([]byte(`{"traceEvents":[{"ph":"X","pid":1,"tid":1,"ts":1e306,"dur":1,"name":"K","cat":"kernel"}]}`))
	f.Add([]byte(`{"traceEvents":[{"ph":"b","pid":2,"tid":1,"ts":1,"name":"RAM->CUDA0","cat":"transfer","args":{"bytes":5}}],"metadata":{"memory_nodes":["RAM"]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := chrome.Read(data, "f.json", "f.json")
		if err != nil {
			tracetest.CheckLocated(t, err, "f.json")
			return
		}
		tracetest.CheckReport(t, tr)
	})
}
