package paje

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/starsim/starsim/runtime/graph"
	"github.com/starsim/starsim/runtime/machine"
	"github.com/starsim/starsim/traces"
	"github.com/starsim/starsim/traces/internal/tracetest"
)

// checkPajeText checks the file itself: timed records in non-decreasing
// time order, one extended SetState (20) per task, links paired by key, and
// every WS value defined before its use.
func checkPajeText(t *testing.T, trace []byte, ntasks, ncopies int) {
	t.Helper()
	last := -1.0
	n20, starts, ends := 0, map[string]bool{}, 0
	defined := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(trace))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' || line[0] == '%' {
			continue
		}
		f := strings.Split(line, "\t")
		switch f[0] {
		case "1", "2", "3", "4", "5":
			continue
		case "6":
			defined[f[1]] = true
			continue
		}
		ts, err := strconv.ParseFloat(f[1], 64)
		require.NoError(t, err, line)
		require.GreaterOrEqual(t, ts, last, "time order: %s", line)
		last = ts
		switch f[0] {
		case "10", "20":
			require.True(t, defined[f[4]], "value %s defined before use", f[4])
			if f[0] == "20" {
				n20++
				require.Len(t, f, 18, line)
				for _, v := range f {
					require.NotEmpty(t, v, "no empty field (pj_dump rejects them): %s", line)
				}
			}
		case "18":
			require.False(t, starts[f[6]], "key %s used once", f[6])
			starts[f[6]] = true
		case "19":
			require.True(t, starts[f[6]], "link %s ends after it starts", f[6])
			ends++
		}
	}
	require.NoError(t, sc.Err())
	assert.Equal(t, ntasks, n20, "one executing state per task")
	assert.Equal(t, ncopies, len(starts), "one link per transfer")
	assert.Equal(t, ncopies, ends)
}

// pjDump runs pj_dump on trace and returns its records, split at ", ".
func pjDump(t *testing.T, trace []byte) [][]string {
	t.Helper()
	bin, err := exec.LookPath("pj_dump")
	if err != nil {
		t.Skip("pj_dump not installed (apt-get install pajeng)")
	}
	file := filepath.Join(t.TempDir(), "trace.paje")
	require.NoError(t, os.WriteFile(file, trace, 0o644))
	var stderr bytes.Buffer
	cmd := exec.Command(bin, file)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "pj_dump: %s", stderr.String())
	require.Empty(t, strings.TrimSpace(stderr.String()), "pj_dump's stderr")
	var rows [][]string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		rows = append(rows, strings.Split(l, ", "))
	}
	return rows
}

// TestPajeCholesky: pj_dump reads the trace; there is one state whose
// value is a kernel name per task (per worker as the result says), and one
// link per transfer, per direction as the result says.
func TestPajeCholesky(t *testing.T) {
	var buf bytes.Buffer
	p := NewWriter(&buf, tracetest.Header)
	seen := &tracetest.Recorder{}
	res := tracetest.Cholesky(t, traces.Multi(p, seen))
	require.NoError(t, p.Close())
	ncopies := tracetest.Copies(res)
	require.Positive(t, ncopies)
	assert.Equal(t, ncopies, seen.Starts)
	checkPajeText(t, buf.Bytes(), res.NTasks, ncopies)
	assert.True(t, bytes.HasPrefix(buf.Bytes(), []byte("# Paje trace written by starsim test\n# command: starsim run --app cholesky\n# seed: 7\n")))

	rows := pjDump(t, buf.Bytes())
	perWorker := map[string]int{}
	links := map[[2]string]int{}
	kernels := 0
	for _, r := range rows {
		switch r[0] {
		case "State":
			require.Len(t, r, 8, "%v", r)
			if r[2] == "Worker State" && seen.Kernels[r[7]] {
				kernels++
				perWorker[r[1]]++
			}
		case "Link":
			require.Len(t, r, 10, "%v", r)
			links[[2]string{r[7], r[8]}]++
			assert.True(t, strings.HasPrefix(r[9], "com_"), r[9])
		}
	}
	assert.Equal(t, res.NTasks, kernels)
	for _, w := range res.Workers {
		assert.Equal(t, w.NTasks, perWorker[w.Name], w.Name)
	}
	mm := func(node string) string {
		for i, n := range seen.Nodes {
			if n == node {
				return "MEMMANAGER" + strconv.Itoa(i)
			}
		}
		return "?" + node
	}
	total := 0
	for _, d := range res.Transfers {
		assert.Equal(t, d.Transfers, links[[2]string{mm(d.Src), mm(d.Dst)}], "%s->%s", d.Src, d.Dst)
		total += links[[2]string{mm(d.Src), mm(d.Dst)}]
	}
	assert.Equal(t, ncopies, total)
}

// TestPajeTiny: kernel names that are not Paje-safe or collide with a
// StarPU alias get aliases of their own; pj_dump reads the trace.
func TestPajeTiny(t *testing.T) {
	var buf bytes.Buffer
	p := NewWriter(&buf, tracetest.Header)
	p.SetHandles([]graph.Handle{{ID: 0, Name: "A", SizeBytes: 1 << 20}, {ID: 1, Name: "B", SizeBytes: 1 << 20}})
	res := tracetest.Tiny(t, p)
	require.NoError(t, p.Close())
	require.Positive(t, tracetest.Copies(res))
	checkPajeText(t, buf.Bytes(), res.NTasks, tracetest.Copies(res))
	out := buf.String()
	assert.Contains(t, out, "6\todd__kernel__1\tWS\t\"odd 'kernel' 1\"\t")
	assert.Contains(t, out, "6\tE_1\tWS\t\"E [1]\"\t") // "E" is Executing's alias
	// Size: the task's two 1 MiB buffers.
	assert.Contains(t, out, "\tw1\tWS\todd__kernel__1\t2097152\t-\t0000beef\t0\t3\t3\t2\t1.000000\t-1\t-1\t-1\t-1\t1\n")

	rows := pjDump(t, buf.Bytes())
	byValue := map[string]int{}
	nlinks := 0
	for _, r := range rows {
		switch r[0] {
		case "State":
			byValue[r[7]]++
		case "Link":
			nlinks++
		}
	}
	assert.Equal(t, 2, byValue["INIT"])
	assert.Equal(t, 1, byValue["odd 'kernel' 1"])
	assert.Equal(t, 1, byValue["E [1]"])
	assert.Equal(t, tracetest.Copies(res), nlinks)
}

// TestPajeGolden compares the header, definitions and containers with
// testdata/paje-header.golden (go test -run PajeGolden -update rewrites it).
func TestPajeGolden(t *testing.T) {
	var buf bytes.Buffer
	p := NewWriter(&buf, traces.Header{Tool: "starsim", Version: "1.2.3", Command: "starsim run --app cholesky\n--n 9600", Seed: 42})
	p.Start([]*machine.Worker{
		{ID: 0, Name: "CPU0", Kind: machine.CPUWorker, Arch: "cpu0", Node: 0},
		{ID: 1, Name: "CUDA0", Kind: machine.GPUWorker, Arch: "cuda0", Node: 1},
	}, []string{"RAM", "CUDA0"})
	require.NoError(t, p.Close())
	golden := filepath.Join("testdata", "paje-header.golden")
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(golden, buf.Bytes(), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	assert.Equal(t, string(want), buf.String())
	if _, err := exec.LookPath("pj_dump"); err == nil {
		pjDump(t, buf.Bytes()) // valid on its own
	}
}

// TestPajeWriteError: Close reports the writer's error.
func TestPajeWriteError(t *testing.T) {
	p := NewWriter(tracetest.FailWriter{}, tracetest.Header)
	tracetest.Tiny(t, p)
	assert.Error(t, p.Close())
}
