package models

import (
	"fmt"
	"testing"

	"github.com/starsim/starsim/runtime/graph"
	"github.com/stretchr/testify/require"
)

// nb = 3 LU, derived by hand from dw_codelet_facto_v3 (see LU's comment),
// in A[row][col] names: 3nb = 9, so GETRF 9-3k, TRSM 9-(2k+i), GEMM
// 9-(k+i+j), whatever the scheduler.
func TestLUSmallListing(t *testing.T) {
	want := []wantTask{
		// k = 0
		{"GETRF", []string{"A[0][0]:RW"}, 9, 9, 9, nil},
		{"TRSM_LL", []string{"A[0][0]:R", "A[0][1]:RW"}, 8, 8, 8, nil}, // i=1: sub(1,0)
		{"TRSM_RU", []string{"A[0][0]:R", "A[1][0]:RW"}, 8, 8, 8, nil}, // sub(0,1)
		{"TRSM_LL", []string{"A[0][0]:R", "A[0][2]:RW"}, 7, 7, 7, nil}, // i=2
		{"TRSM_RU", []string{"A[0][0]:R", "A[2][0]:RW"}, 7, 7, 7, []string{"A[0][0]"}},
		{"GEMM", []string{"A[1][0]:R", "A[0][1]:R", "A[1][1]:RW"}, 7, 7, 7, nil}, // i=1 j=1
		{"GEMM", []string{"A[1][0]:R", "A[0][2]:R", "A[1][2]:RW"}, 6, 6, 6, nil}, // i=1 j=2
		{"GEMM", []string{"A[2][0]:R", "A[0][1]:R", "A[2][1]:RW"}, 6, 6, 6, nil}, // i=2 j=1
		{"GEMM", []string{"A[2][0]:R", "A[0][2]:R", "A[2][2]:RW"}, 5, 5, 5,
			// for i: wont_use(sub(k,i)) = A[i][k], wont_use(sub(i,k)) = A[k][i]
			[]string{"A[1][0]", "A[0][1]", "A[2][0]", "A[0][2]"}},
		// k = 1
		{"GETRF", []string{"A[1][1]:RW"}, 6, 6, 6, nil},
		{"TRSM_LL", []string{"A[1][1]:R", "A[1][2]:RW"}, 5, 5, 5, nil},
		{"TRSM_RU", []string{"A[1][1]:R", "A[2][1]:RW"}, 5, 5, 5, []string{"A[1][1]"}},
		{"GEMM", []string{"A[2][1]:R", "A[1][2]:R", "A[2][2]:RW"}, 4, 4, 4, []string{"A[2][1]", "A[1][2]"}},
		// k = 2
		{"GETRF", []string{"A[2][2]:RW"}, 3, 3, 3, []string{"A[2][2]"}},
	}
	checkListing(t, "lu", 3*960, want)
}

// replayLU: tile (r, c) is updated by a GEMM at each step k < min(r, c),
// then finished at step min(r, c) by GETRF (r == c), TRSM_LL (r < c: the U
// row panel) or TRSM_RU (r > c: the L column panel), and read only at the
// step that finished it. The step is the number of GETRFs so far minus one.
func replayLU(t *testing.T, g *graph.Graph) {
	t.Helper()
	writes := make([]int, len(g.Handles))
	k := -1
	for _, task := range g.Tasks {
		if task.Name == "GETRF" {
			k++
		}
		for _, b := range task.Buffers {
			r, c := tileRC(t, g, b.Handle)
			f := min(r, c)
			name := g.Handles[b.Handle].Name
			switch b.Mode {
			case graph.RW:
				require.Equal(t, k, writes[b.Handle], "task %d %s at step %d writes %s", task.ID, task.Name, k, name)
				var kind string
				switch {
				case k < f:
					kind = "GEMM"
				case k == f && r == c:
					kind = "GETRF"
				case k == f && r < c:
					kind = "TRSM_LL"
				case k == f:
					kind = "TRSM_RU"
				default:
					t.Fatalf("task %d writes finished tile %s", task.ID, name)
				}
				require.Equal(t, kind, task.Name, "task %d on %s at step %d", task.ID, name, k)
				writes[b.Handle]++
			case graph.R:
				require.Equal(t, k, f, "task %d %s at step %d reads %s", task.ID, task.Name, k, name)
				require.Equal(t, f+1, writes[b.Handle], "task %d reads %s before it is finished", task.ID, name)
			}
		}
	}
	for h := range g.Handles {
		r, c := tileRC(t, g, h)
		require.Equal(t, min(r, c)+1, writes[h], "%s incomplete", g.Handles[h].Name)
	}
}

func TestLUSequentialConsistency(t *testing.T) {
	for _, nb := range []int{1, 2, 3, 6, 10} {
		t.Run(fmt.Sprint(nb), func(t *testing.T) {
			g := mustGraph(t, "lu", Options{N: nb * 960, Block: 960})
			replayLU(t, g)
			// The A_kk wont_use follows its last use exactly; the panels'
			// come after all the step's GEMMs, possibly later than their
			// last GEMM.
			checkWontUse(t, g, false)
		})
	}
}
