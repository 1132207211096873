package models

import (
	"fmt"
	"testing"

	"github.com/starsim/starsim/runtime/graph"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// One expected task: its name, buffers as "A[r][c]:MODE", the priorities
// under a sorted-queue scheduler (dmdas, range INT_MIN..INT_MAX), under
// dmda (range 0..0) and under heteroprio (range 0..99), and the wont_use
// handles after it.
type wantTask struct {
	name                 string
	bufs                 []string
	dmdas, dmda, hetprio int
	wont                 []string
}

func describe(g *graph.Graph, task graph.Task) (bufs, wont []string) {
	for _, b := range task.Buffers {
		bufs = append(bufs, g.Handles[b.Handle].Name+":"+b.Mode.String())
	}
	for _, h := range task.WontUse {
		wont = append(wont, g.Handles[h].Name)
	}
	return bufs, wont
}

func checkListing(t *testing.T, app string, n int, want []wantTask) {
	t.Helper()
	checkListingWith(t, app, Options{N: n, Block: 960}, want)
}

// checkListingWith is checkListing for the options o (its Prio set to each
// scheduler's range in turn).
func checkListingWith(t *testing.T, app string, o Options, want []wantTask) {
	t.Helper()
	scheds := []string{"dmdas", "dmda", "heteroprio"}
	for si, sched := range scheds {
		o.Prio = testPrio[sched]
		g := mustGraph(t, app, o)
		require.Len(t, g.Tasks, len(want))
		for i, w := range want {
			task := g.Tasks[i]
			bufs, wont := describe(g, task)
			assert.Equal(t, w.name, task.Name, "task %d", i)
			assert.Equal(t, w.bufs, bufs, "task %d %s", i, w.name)
			assert.Equal(t, w.wont, wont, "task %d %s wont_use", i, w.name)
			prio := []int{w.dmdas, w.dmda, w.hetprio}[si]
			assert.Equal(t, prio, task.Priority, "task %d %s under %s", i, w.name, sched)
		}
	}
}

// nb = 3, derived by hand from _cholesky's loop (see Cholesky's comment):
// 2nb = 6, so under dmdas POTRF 6-2k, TRSM 6-2k-m, SYRK 6-2k-n, GEMM
// 6-2k-m-n; under dmda everything is STARPU_MAX_PRIO = STARPU_DEFAULT_PRIO
// = 0; under heteroprio MAX = 99 for POTRF, TRSM(m=k+1) and SYRK(n=k+1).
func TestCholeskySmallListing(t *testing.T) {
	want := []wantTask{
		// k = 0
		{"POTRF", []string{"A[0][0]:RW"}, 6, 0, 99, nil},
		{"TRSM", []string{"A[0][0]:R", "A[1][0]:RW"}, 5, 0, 99, nil},                             // m=1
		{"TRSM", []string{"A[0][0]:R", "A[2][0]:RW"}, 4, 0, 0, []string{"A[0][0]"}},              // m=2, then wont_use(A_kk)
		{"SYRK", []string{"A[1][0]:R", "A[1][1]:RW"}, 5, 0, 99, nil},                             // n=1
		{"GEMM", []string{"A[2][0]:R", "A[1][0]:R", "A[2][1]:RW"}, 3, 0, 0, []string{"A[1][0]"}}, // n=1 m=2, then wont_use(A_nk)
		{"SYRK", []string{"A[2][0]:R", "A[2][2]:RW"}, 4, 0, 0, []string{"A[2][0]"}},              // n=2 (no GEMM)
		// k = 1
		{"POTRF", []string{"A[1][1]:RW"}, 4, 0, 99, nil},
		{"TRSM", []string{"A[1][1]:R", "A[2][1]:RW"}, 2, 0, 99, []string{"A[1][1]"}}, // m=2
		{"SYRK", []string{"A[2][1]:R", "A[2][2]:RW"}, 2, 0, 99, []string{"A[2][1]"}}, // n=2
		// k = 2: no TRSM, so wont_use(A_22) follows POTRF.
		{"POTRF", []string{"A[2][2]:RW"}, 2, 0, 99, []string{"A[2][2]"}},
	}
	checkListing(t, "cholesky", 3*960, want)
}

// replayCholesky replays the graph sequentially and checks that each tile
// sees its operations in the order a right-looking Cholesky needs: tile
// (r, c), r >= c, is updated once per step k < c (SYRK if r == c, else
// GEMM), then finished at step c (POTRF if r == c, else TRSM), and is read
// only at the step equal to its column, once finished. The step k of a
// task is counted independently of its buffers: the number of POTRFs
// submitted so far, minus one.
func replayCholesky(t *testing.T, g *graph.Graph) {
	t.Helper()
	writes := make([]int, len(g.Handles))
	k := -1
	for _, task := range g.Tasks {
		if task.Name == "POTRF" {
			k++
		}
		for _, b := range task.Buffers {
			r, c := tileRC(t, g, b.Handle)
			require.GreaterOrEqual(t, r, c, "upper tile used")
			switch b.Mode {
			case graph.RW:
				require.Equal(t, k, writes[b.Handle], "task %d %s at step %d writes %s after %d writes", task.ID, task.Name, k, g.Handles[b.Handle].Name, writes[b.Handle])
				var kind string
				switch {
				case k < c && r == c:
					kind = "SYRK"
				case k < c:
					kind = "GEMM"
				case k == c && r == c:
					kind = "POTRF"
				case k == c:
					kind = "TRSM"
				default:
					t.Fatalf("task %d writes %s at step %d, after it was finished", task.ID, g.Handles[b.Handle].Name, k)
				}
				require.Equal(t, kind, task.Name, "task %d on %s at step %d", task.ID, g.Handles[b.Handle].Name, k)
				writes[b.Handle]++
			case graph.R:
				require.Equal(t, k, c, "task %d %s at step %d reads %s", task.ID, task.Name, k, g.Handles[b.Handle].Name)
				require.Equal(t, c+1, writes[b.Handle], "task %d reads %s before it is finished", task.ID, g.Handles[b.Handle].Name)
			default:
				t.Fatalf("mode %v", b.Mode)
			}
		}
	}
	for h := range g.Handles {
		_, c := tileRC(t, g, h)
		require.Equal(t, c+1, writes[h], "%s incomplete", g.Handles[h].Name)
	}
}

func TestCholeskySequentialConsistency(t *testing.T) {
	for _, nb := range []int{1, 2, 3, 5, 12} {
		t.Run(fmt.Sprint(nb), func(t *testing.T) {
			g := mustGraph(t, "cholesky", Options{N: nb * 960, Block: 960})
			replayCholesky(t, g)
			// The brief's simple form: POTRF(k) comes after every task
			// writing A_kk (the k SYRKs of steps 0..k-1).
			lastWrite := map[int]int{}
			for _, task := range g.Tasks {
				w := task.Buffers[len(task.Buffers)-1].Handle
				if task.Name == "POTRF" {
					r, _ := tileRC(t, g, w)
					require.Equal(t, r, countWrites(g, w, task.ID), "POTRF(%d) after %d writes", r, countWrites(g, w, task.ID))
					if prev, ok := lastWrite[w]; ok {
						require.Equal(t, "SYRK", g.Tasks[prev].Name)
					}
				}
				lastWrite[w] = task.ID
			}
		})
	}
}

func countWrites(g *graph.Graph, h, before int) int {
	n := 0
	for _, task := range g.Tasks[:before] {
		for _, b := range task.Buffers {
			if b.Handle == h && b.Mode&graph.W != 0 {
				n++
			}
		}
	}
	return n
}

// checkWontUse: every handle is declared wont_use exactly once, on or after
// the last task touching it, and no later task touches it. If exact, the
// declaring task is the handle's last user.
func checkWontUse(t *testing.T, g *graph.Graph, exact bool) {
	t.Helper()
	last := make([]int, len(g.Handles))
	for _, task := range g.Tasks {
		for _, b := range task.Buffers {
			last[b.Handle] = task.ID
		}
	}
	declared := make([]int, len(g.Handles))
	for i := range declared {
		declared[i] = -1
	}
	for _, task := range g.Tasks {
		for _, h := range task.WontUse {
			require.Equal(t, -1, declared[h], "%s declared twice", g.Handles[h].Name)
			declared[h] = task.ID
		}
	}
	for h := range g.Handles {
		require.NotEqual(t, -1, declared[h], "%s never declared", g.Handles[h].Name)
		require.GreaterOrEqual(t, declared[h], last[h], "%s declared before its last use", g.Handles[h].Name)
		if exact {
			require.Equal(t, last[h], declared[h], "%s", g.Handles[h].Name)
		}
	}
}

func TestCholeskyWontUse(t *testing.T) {
	for _, nb := range []int{1, 2, 4, 9} {
		g := mustGraph(t, "cholesky", Options{N: nb * 960, Block: 960})
		checkWontUse(t, g, true)
		n := 0
		for _, task := range g.Tasks {
			n += len(task.WontUse)
		}
		assert.Equal(t, nb*(nb+1)/2, n) // nb=8: 36, as the native trace's Control: WontUse records
	}
}
