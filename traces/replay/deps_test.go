package replay

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/starsim/starsim/traces/rec"
)

// recTask is one executed task's record: JobId and SubmitOrder id, the
// DependsOn list, on worker 0 with one RW buffer of its own.
func recTask(id int, deps string) string {
	s := "Name: T\nModel: m\nJobId: " + itoa(id) + "\nSubmitOrder: " + itoa(id) + "\n"
	if deps != "" {
		s += "DependsOn: " + deps + "\n"
	}
	return s + "WorkerId: 0\nStartTime: " + itoa(id) + "\nEndTime: " + itoa(id+1) +
		"\nHandles: " + itoa(0x1000+id) + "\nModes: RW\nSizes: 8\n\n"
}

func itoa(i int) string { return strconv.Itoa(i) }

func graphOf(t *testing.T, text string, o Options) ([][]int, []string, error) {
	t.Helper()
	recs, err := rec.ReadTasks(strings.NewReader(text), "t.rec")
	require.NoError(t, err)
	o.File = "t.rec"
	g, warn, err := Graph(recs, o)
	if err != nil {
		return nil, warn, err
	}
	var deps [][]int
	for _, tk := range g.Tasks {
		deps = append(deps, tk.Deps)
	}
	return deps, warn, nil
}

func TestGraphDependencyErrors(t *testing.T) {
	cases := []struct {
		name, text, want string
	}{
		{"duplicate JobId", recTask(1, "") + recTask(1, ""), "t.rec:12: JobId 1 repeated (first on line 1)"},
		{"self-dependency", recTask(1, "") + recTask(2, "2"), "t.rec:12: job 2 depends on itself"},
		{"missing JobId", recTask(1, "") + recTask(2, "1 7"), "t.rec:12: T (job 2) depends on job 7, which no record"},
		{"cycle", recTask(1, "3") + recTask(2, "1") + recTask(3, "2"), "dependency cycle: T (job 1) (line 1), which depends on T (job 3) (line 25), which depends on T (job 2) (line 13), which depends on T (job 1)"},
		{"later task", recTask(1, "2") + recTask(2, ""), "t.rec:1: T (job 1) depends on T (job 2) (line 13), submitted after it"},
		{"repeated SubmitOrder", recTask(1, "") + strings.Replace(recTask(2, ""), "SubmitOrder: 2", "SubmitOrder: 1", 1), "t.rec:12: SubmitOrder 1 repeated (first on line 1)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := graphOf(t, c.text, Options{})
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
			assert.Equal(t, 1, strings.Count(err.Error(), "t.rec:"), "the location once: %v", err)
		})
	}
}

func TestGraphIgnoreMissingDeps(t *testing.T) {
	deps, warn, err := graphOf(t, recTask(1, "")+recTask(2, "1 7 8"), Options{IgnoreMissingDeps: true})
	require.NoError(t, err)
	assert.Equal(t, [][]int{nil, {0}}, deps)
	assert.Equal(t, []string{"2 DependsOn entries name a JobId absent from the trace: dropped (--ignore-missing-deps)"}, warn)
}

// A dependency on a record that did not execute (a StarPU-internal task)
// stands for that record's own dependencies.
func TestGraphDepsThroughInternalTasks(t *testing.T) {
	internal := "Name: _starpu_data_acquire_post\nJobId: 50\nDependsOn: 1 2\n\n"
	deps, warn, err := graphOf(t, recTask(1, "")+recTask(2, "")+internal+recTask(3, "50 2"), Options{})
	require.NoError(t, err)
	assert.Empty(t, warn)
	assert.Equal(t, [][]int{nil, nil, {0, 1}}, deps)
}
