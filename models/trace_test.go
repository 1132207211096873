package models

import (
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// nativeTrace is a real StarPU run (git 3f3cc82a6, FxT): cholesky_implicit
// -size 7680 -nblocks 8, STARPU_SCHED=dmda, converted by starpu_fxt_tool.
// It is read in place, never copied here; the test skips without it.
const nativeTrace = "../../shared/reference/native-cpu-trace"

type recRecord map[string]string

// readRec splits a recutils file into records of "Key: value" fields.
func readRec(t *testing.T, path string) []recRecord {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Skipf("native trace not available: %v", err)
	}
	var out []recRecord
	for _, blk := range strings.Split(string(data), "\n\n") {
		r := recRecord{}
		for _, line := range strings.Split(blk, "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok {
				r[k] = strings.TrimSpace(v)
			}
		}
		if len(r) > 0 {
			out = append(out, r)
		}
	}
	return out
}

// TestNativeTrace checks the whole graph against what StarPU submitted:
// the order of tasks and wont_use calls, names, models, priorities under
// dmda, tiles (by the coordinates cholesky_implicit.c sets), modes,
// footprints, sizes and flops.
func TestNativeTrace(t *testing.T) {
	tasks := readRec(t, filepath.Join(nativeTrace, "tasks.rec"))
	data := readRec(t, filepath.Join(nativeTrace, "data.rec"))

	// Handle address -> "A[m][n]" from starpu_data_set_coordinates(m, n).
	tile := map[string]string{}
	for _, d := range data {
		if f := strings.Fields(d["Coordinates"]); len(f) == 2 {
			tile[d["Handle"]] = "A[" + f[0] + "][" + f[1] + "]"
		}
	}
	require.Len(t, tile, 64)

	type event struct {
		order int
		line  string
		gflop float64
	}
	var native []event
	for _, r := range tasks {
		so, err := strconv.Atoi(r["SubmitOrder"])
		if err != nil {
			continue // StarPU-internal records
		}
		var hs []string
		for _, h := range strings.Fields(r["Handles"]) {
			hs = append(hs, tile[h])
		}
		switch {
		case r["Control"] == "WontUse":
			native = append(native, event{so, "wont_use " + strings.Join(hs, " "), 0})
		case r["Name"] != "":
			gf, err := strconv.ParseFloat(r["GFlop"], 64)
			require.NoError(t, err)
			line := strings.Join([]string{r["Name"], r["Model"], "prio=" + r["Priority"],
				strings.Join(hs, " "), r["Modes"], r["Footprint"], r["Sizes"]}, " | ")
			native = append(native, event{so, line, gf})
		}
	}
	sort.Slice(native, func(i, j int) bool { return native[i].order < native[j].order })
	require.Len(t, native, 120+36)

	g := mustGraph(t, "cholesky", Options{N: 7680, Block: 960})
	var ours []event
	for _, task := range g.Tasks {
		var hs, modes, sizes []string
		for _, b := range task.Buffers {
			h := g.Handles[b.Handle]
			hs = append(hs, h.Name)
			modes = append(modes, b.Mode.String())
			sizes = append(sizes, strconv.FormatInt(h.SizeBytes, 10))
		}
		line := strings.Join([]string{task.Name, task.Model, "prio=" + strconv.Itoa(task.Priority),
			strings.Join(hs, " "), strings.Join(modes, " "),
			strconv.FormatUint(uint64(task.Footprint)|1<<32, 16)[1:], strings.Join(sizes, " ")}, " | ")
		ours = append(ours, event{0, line, task.Flops / 1e9})
		for _, h := range task.WontUse {
			ours = append(ours, event{0, "wont_use " + g.Handles[h].Name, 0})
		}
	}
	require.Len(t, ours, len(native))
	for i := range native {
		require.Equal(t, native[i].line, ours[i].line, "submission %d", native[i].order)
		// StarPU prints GFlop with 6 decimals, truncated.
		assert.LessOrEqual(t, math.Abs(native[i].gflop-ours[i].gflop), 1e-6, native[i].line)
	}
}
