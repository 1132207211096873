package models

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/starsim/starsim/models/generation"
	"github.com/starsim/starsim/runtime/graph"
)

// nb = 3, derived by hand from StarPU 1.3's cholesky_implicit.c (see
// cholesky13's comment): the SYRKs of 1.4 are GEMMs reading the panel tile
// twice, with the priorities 1.4 gives its SYRKs (2nb-2k-m-n with m = n);
// under dmda everything is 0, under heteroprio MAX = 99 for POTRF,
// TRSM(m=k+1) and GEMM(m=n=k+1).
func TestCholesky13SmallListing(t *testing.T) {
	want := []wantTask{
		// k = 0
		{"POTRF", []string{"A[0][0]:RW"}, 6, 0, 99, nil},
		{"TRSM", []string{"A[0][0]:R", "A[1][0]:RW"}, 5, 0, 99, nil},
		{"TRSM", []string{"A[0][0]:R", "A[2][0]:RW"}, 4, 0, 0, []string{"A[0][0]"}},
		{"GEMM", []string{"A[1][0]:R", "A[1][0]:R", "A[1][1]:RW"}, 4, 0, 99, nil},                // n=1 m=1
		{"GEMM", []string{"A[2][0]:R", "A[1][0]:R", "A[2][1]:RW"}, 3, 0, 0, []string{"A[1][0]"}}, // n=1 m=2
		{"GEMM", []string{"A[2][0]:R", "A[2][0]:R", "A[2][2]:RW"}, 2, 0, 0, []string{"A[2][0]"}}, // n=2 m=2
		// k = 1
		{"POTRF", []string{"A[1][1]:RW"}, 4, 0, 99, nil},
		{"TRSM", []string{"A[1][1]:R", "A[2][1]:RW"}, 2, 0, 99, []string{"A[1][1]"}},
		{"GEMM", []string{"A[2][1]:R", "A[2][1]:R", "A[2][2]:RW"}, 0, 0, 99, []string{"A[2][1]"}},
		// k = 2
		{"POTRF", []string{"A[2][2]:RW"}, 2, 0, 99, []string{"A[2][2]"}},
	}
	checkListingWith(t, "cholesky", Options{N: 3 * 960, Block: 960, Generation: generation.V13}, want)
}

// nb = 3 LU of StarPU 1.3's xlu_implicit.c: the same tasks and tiles as
// 1.4's (TestLUSmallListing), with STARPU_MAX_PRIO for GETRF, the TRSMs of
// i = k+1 and the GEMM of i = j = k+1, else 0; MAX is INT_MAX under dmdas,
// 0 under dmda, 99 under heteroprio.
func TestLU13SmallListing(t *testing.T) {
	const M = math.MaxInt32
	want := []wantTask{
		{"GETRF", []string{"A[0][0]:RW"}, M, 0, 99, nil},
		{"TRSM_LL", []string{"A[0][0]:R", "A[0][1]:RW"}, M, 0, 99, nil},
		{"TRSM_RU", []string{"A[0][0]:R", "A[1][0]:RW"}, M, 0, 99, nil},
		{"TRSM_LL", []string{"A[0][0]:R", "A[0][2]:RW"}, 0, 0, 0, nil},
		{"TRSM_RU", []string{"A[0][0]:R", "A[2][0]:RW"}, 0, 0, 0, []string{"A[0][0]"}},
		{"GEMM", []string{"A[1][0]:R", "A[0][1]:R", "A[1][1]:RW"}, M, 0, 99, nil},
		{"GEMM", []string{"A[1][0]:R", "A[0][2]:R", "A[1][2]:RW"}, 0, 0, 0, nil},
		{"GEMM", []string{"A[2][0]:R", "A[0][1]:R", "A[2][1]:RW"}, 0, 0, 0, nil},
		{"GEMM", []string{"A[2][0]:R", "A[0][2]:R", "A[2][2]:RW"}, 0, 0, 0, []string{"A[1][0]", "A[0][1]", "A[2][0]", "A[0][2]"}},
		{"GETRF", []string{"A[1][1]:RW"}, M, 0, 99, nil},
		{"TRSM_LL", []string{"A[1][1]:R", "A[1][2]:RW"}, M, 0, 99, nil},
		{"TRSM_RU", []string{"A[1][1]:R", "A[2][1]:RW"}, M, 0, 99, []string{"A[1][1]"}},
		{"GEMM", []string{"A[2][1]:R", "A[1][2]:R", "A[2][2]:RW"}, M, 0, 99, []string{"A[2][1]", "A[1][2]"}},
		{"GETRF", []string{"A[2][2]:RW"}, M, 0, 99, []string{"A[2][2]"}},
	}
	checkListingWith(t, "lu", Options{N: 3 * 960, Block: 960, Generation: generation.V13}, want)
	g := mustGraph(t, "lu", Options{N: 3 * 960, Block: 960, Generation: generation.V13, NoPrio: true, Prio: graph.UnboundedPrio})
	for _, task := range g.Tasks {
		assert.Zero(t, task.Priority, "-no-prio")
	}
}

// TestGeneration13Graphs: 1.3's Cholesky has the task count of 1.4's (one
// GEMM per 1.4 SYRK), every tile updated the right number of times, the
// 1.3 symbols, the footprints and flops of 1.4's GEMM; LU keeps its tasks.
func TestGeneration13Graphs(t *testing.T) {
	for _, nb := range []int{1, 2, 3, 8, 13} {
		t.Run(fmt.Sprint(nb), func(t *testing.T) {
			for _, prec := range []Precision{Single, Double} {
				o := Options{N: nb * 960, Block: 960, Precision: prec, Prio: graph.UnboundedPrio}
				g14 := mustGraph(t, "cholesky", o)
				o.Generation = generation.V13
				g13 := mustGraph(t, "cholesky", o)
				c14, c13 := countByName(g14), countByName(g13)
				assert.Equal(t, len(g14.Tasks), len(g13.Tasks))
				assert.Equal(t, c14["GEMM"]+c14["SYRK"], c13["GEMM"])
				assert.Zero(t, c13["SYRK"])
				assert.Equal(t, len(g13.Tasks), cap(g13.Tasks), "slab sized exactly")
				assert.Equal(t, g14.TotalFlops, g13.TotalFlops)
				assert.Contains(t, g13.Name, "StarPU-1.3")
				var gemm14 graph.Task
				for _, task := range g14.Tasks {
					if task.Name == "GEMM" {
						gemm14 = task
					}
				}
				writes := make([]int, len(g13.Handles))
				for _, task := range g13.Tasks {
					want := map[string]string{"POTRF": "chol_model_11", "TRSM": "chol_model_21", "GEMM": "chol_model_22"}[task.Name]
					require.Equal(t, want, task.Model)
					if task.Name == "GEMM" {
						require.Len(t, task.Buffers, 3)
						if gemm14.Name != "" {
							require.Equal(t, gemm14.Footprint, task.Footprint)
							require.Equal(t, gemm14.Flops, task.Flops)
						}
					}
					require.Equal(t, task.Name == "POTRF", task.SyncGPU)
					writes[task.Buffers[len(task.Buffers)-1].Handle]++
				}
				// Tile (r, c) is written once per step k <= c.
				for h := range g13.Handles {
					_, c := tileRC(t, g13, h)
					require.Equal(t, c+1, writes[h], g13.Handles[h].Name)
				}
			}
			o := Options{N: nb * 960, Block: 960}
			l14 := mustGraph(t, "lu", o)
			o.Generation = generation.V13
			l13 := mustGraph(t, "lu", o)
			require.Equal(t, len(l14.Tasks), len(l13.Tasks))
			for i := range l13.Tasks {
				a, b := l14.Tasks[i], l13.Tasks[i]
				require.Equal(t, a.Name, b.Name)
				require.Equal(t, a.Buffers, b.Buffers)
				require.Equal(t, a.Footprint, b.Footprint)
			}
			replayLU(t, l13)
		})
	}
}

// TestSymbolsOverride: a calibration's names (generation.Resolution)
// replace the default symbols kernel by kernel.
func TestSymbolsOverride(t *testing.T) {
	g := mustGraph(t, "lu", Options{N: 1920, Block: 960, Symbols: map[string]string{"GEMM": "starpu_slu_lu_model_gemm_openblas", "GETRF": "x"}})
	got := map[string]string{}
	for _, task := range g.Tasks {
		got[task.Name] = task.Model
	}
	assert.Equal(t, map[string]string{"GETRF": "x", "TRSM_LL": "starpu_slu_lu_model_trsm_ll", "TRSM_RU": "starpu_slu_lu_model_trsm_ru", "GEMM": "starpu_slu_lu_model_gemm_openblas"}, got)
	g = mustGraph(t, "lu", Options{N: 1920, Block: 960, Generation: generation.V13, Precision: Double, BLASVariant: "goto"})
	assert.Equal(t, "starpu_dlu_lu_model_11_goto", g.Tasks[0].Model)
	_, err := New("cholesky", Options{N: 960, Block: 960, Generation: 12})
	assert.ErrorContains(t, err, "unknown StarPU generation")
}
