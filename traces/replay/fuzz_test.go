package replay

import (
	"strings"
	"testing"

	"github.com/starsim/starsim/calibrate"
	"github.com/starsim/starsim/runtime/sim"
	"github.com/starsim/starsim/traces/internal/tracetest"
	"github.com/starsim/starsim/traces/rec"
)

// recSeed is a small tasks.rec record.
const recSeed = "# c\n\nName: K\nJobId: 1\nStartTime: 1\nEndTime: 2\n"

// FuzzReplayGraph: replay's graph from a tasks.rec (duplicates, cycles,
// missing and later dependencies are located errors); an accepted small
// graph runs under --check on the default machine, or New refuses it.
func FuzzReplayGraph(f *testing.F) {
	f.Add(string(tracetest.SmallRun(f, rec.Format)["tasks.rec"]), false)
	f.Add(recSeed+"\n"+recSeed, true)
	f.Add("JobId: 1\nDependsOn: 2\nWorkerId: 0\nStartTime: 0\nEndTime: 1\n\nJobId: 2\nDependsOn: 1\nWorkerId: 0\nStartTime: 0\nEndTime: 1\n", false)
	f.Add("JobId: 1\nDependsOn: 7\nWorkerId: 0\nStartTime: 0\nEndTime: 1\nHandles: a\nModes: RW\nSizes: 8\n", true)
	cal := calibrate.Default()
	m := cal.RuntimeMachine()
	symbols := map[string]bool{}
	for _, k := range cal.Kernels {
		symbols[k.Model] = true
	}
	f.Fuzz(func(t *testing.T, in string, ignore bool) {
		recs, err := rec.ReadTasks(strings.NewReader(in), "f.rec")
		if err != nil {
			return // FuzzReadTasksRec checks the reader
		}
		g, _, err := Graph(recs, Options{File: "f.rec", IgnoreMissingDeps: ignore, HasModel: func(s string) bool { return symbols[s] }})
		if err != nil {
			tracetest.CheckLocated(t, err, "f.rec")
			return
		}
		for i, tk := range g.Tasks {
			for _, d := range tk.Deps {
				if d < 0 || d >= i {
					t.Fatalf("task %d depends on %d", i, d)
				}
			}
		}
		if len(g.Tasks) > 40 {
			return
		}
		o := sim.DefaultOptions()
		o.Check = true
		s, err := sim.New(m, g, o)
		if err != nil {
			return
		}
		if _, err := s.Run(); err != nil && !strings.Contains(err.Error(), "deadlock") {
			t.Fatalf("run of an accepted replay graph: %v", err)
		}
	})
}
