package models

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/starsim/starsim/calibrate/starpu"
	"github.com/starsim/starsim/runtime/graph"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func mustGraph(t testing.TB, app string, o Options) *graph.Graph {
	t.Helper()
	g, err := New(app, o)
	require.NoError(t, err)
	return g
}

func countByName(g *graph.Graph) map[string]int {
	c := map[string]int{}
	for _, t := range g.Tasks {
		c[t.Name]++
	}
	return c
}

func TestTaskCounts(t *testing.T) {
	cases := []struct {
		app      string
		n, block int
		want     map[string]int
		total    int
	}{
		// nb POTRF, nb(nb-1)/2 TRSM and SYRK, nb(nb-1)(nb-2)/6 GEMM.
		{"cholesky", 960, 960, map[string]int{"POTRF": 1}, 1},
		{"cholesky", 2880, 960, map[string]int{"POTRF": 3, "TRSM": 3, "SYRK": 3, "GEMM": 1}, 10},
		// The native trace's run: 8 POTRF, 28 TRSM, 28 SYRK, 56 GEMM.
		{"cholesky", 7680, 960, map[string]int{"POTRF": 8, "TRSM": 28, "SYRK": 28, "GEMM": 56}, 120},
		// nb = 80: 80 + 3160 + 3160 + 82160 = 88 560.
		{"cholesky", 76800, 960, map[string]int{"POTRF": 80, "TRSM": 3160, "SYRK": 3160, "GEMM": 82160}, 88560},
		// LU: nb GETRF, nb(nb-1)/2 of each TRSM, Σ_k (nb-1-k)² GEMM.
		{"lu", 960, 960, map[string]int{"GETRF": 1}, 1},
		{"lu", 2880, 960, map[string]int{"GETRF": 3, "TRSM_LL": 3, "TRSM_RU": 3, "GEMM": 5}, 14},
		// nb = 8: 8 + 28 + 28 + 140 (= 0+1+4+9+16+25+36+49).
		{"lu", 7680, 960, map[string]int{"GETRF": 8, "TRSM_LL": 28, "TRSM_RU": 28, "GEMM": 140}, 204},
		// nb = 80: Σ j² for j < 80 = 79·80·159/6 = 167 480.
		{"lu", 76800, 960, map[string]int{"GETRF": 80, "TRSM_LL": 3160, "TRSM_RU": 3160, "GEMM": 167480}, 173880},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s/%d/%d", c.app, c.n, c.block), func(t *testing.T) {
			g := mustGraph(t, c.app, Options{N: c.n, Block: c.block})
			assert.Equal(t, c.want, countByName(g))
			assert.Len(t, g.Tasks, c.total)
			// Slabs were sized exactly: capacity equals length.
			assert.Equal(t, len(g.Tasks), cap(g.Tasks))
			for i, task := range g.Tasks {
				require.Equal(t, i, task.ID)
				require.Empty(t, task.Deps, "dependencies are implicit")
			}
			nb := c.n / c.block
			if c.app == "cholesky" {
				assert.Len(t, g.Handles, nb*(nb+1)/2)
			} else {
				assert.Len(t, g.Handles, nb*nb)
			}
		})
	}
}

func TestErrors(t *testing.T) {
	cases := []struct {
		name string
		app  string
		o    Options
		msg  string
	}{
		{"not a multiple", "cholesky", Options{N: 1000, Block: 960}, "not a multiple"},
		{"lu not a multiple", "lu", Options{N: 1921, Block: 960}, "not a multiple"},
		{"zero N", "cholesky", Options{N: 0, Block: 960}, "positive"},
		{"negative N", "lu", Options{N: -960, Block: 960}, "positive"},
		{"zero block", "cholesky", Options{N: 960, Block: 0}, "positive"},
		{"negative block", "lu", Options{N: 960, Block: -1}, "positive"},
		{"unknown app", "svd", Options{N: 960, Block: 960}, "unknown application"},
		{"qr inner block", "qr", Options{N: 960, Block: 96, InnerBlock: 200}, "inner block size 200"},
		{"empty priority range", "cholesky", Options{N: 960, Block: 960, Prio: graph.PrioRange{Min: 1, Max: 0}}, "priority range 1..0 is empty"},
		{"unknown precision", "cholesky", Options{N: 960, Block: 960, Precision: 7}, "precision"},
		{"unknown blas", "lu", Options{N: 960, Block: 960, BLASVariant: "mkl"}, "BLAS"},
		{"too large cholesky", "cholesky", Options{N: 1 << 30, Block: 1}, "more than"},
		{"too large lu", "lu", Options{N: 960 * 1000, Block: 960}, "more than"},
		{"N beyond 32 bits", "lu", Options{N: 1 << 32, Block: 1 << 20}, "32-bit"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g, err := New(c.app, c.o)
			require.Error(t, err)
			assert.Nil(t, g)
			assert.Contains(t, err.Error(), c.msg)
		})
	}
	// The direct entry points validate too.
	_, err := New("cholesky", Options{N: 100, Block: 30})
	assert.Error(t, err)
	_, err = New("lu", Options{N: 100, Block: 0})
	assert.Error(t, err)
}

func TestNewIsCaseInsensitive(t *testing.T) {
	g := mustGraph(t, "Cholesky", Options{N: 1920, Block: 960})
	assert.Equal(t, "cholesky N=1920 block=960 float", g.Name)
	g = mustGraph(t, "LU", Options{N: 1920, Block: 960, Precision: Double})
	assert.Equal(t, "lu N=1920 block=960 double", g.Name)
}

// Footprints and sizes of 960×960 tiles: the shipped sample hashes (the
// reference doc's §2 table) and sum-of-buffer sizes.
func TestFootprintsAndSizes(t *testing.T) {
	cases := []struct {
		app, name string
		prec      Precision
		fp        uint32
		size      int64
	}{
		{"cholesky", "POTRF", Single, 0x617e5fe6, 3686400},
		{"cholesky", "TRSM", Single, 0xff82dda0, 7372800},
		{"cholesky", "SYRK", Single, 0xff82dda0, 7372800},
		{"cholesky", "GEMM", Single, 0x24c84a50, 11059200},
		// Double: same footprints (the element size is not hashed), twice the bytes.
		{"cholesky", "GEMM", Double, 0x24c84a50, 22118400},
		{"lu", "GETRF", Single, 0x617e5fe6, 3686400},
		{"lu", "TRSM_LL", Single, 0xff82dda0, 7372800},
		{"lu", "TRSM_RU", Single, 0xff82dda0, 7372800},
		{"lu", "GEMM", Single, 0x24c84a50, 11059200},
		{"lu", "GEMM", Double, 0x24c84a50, 22118400},
	}
	for _, c := range cases {
		t.Run(c.app+"/"+c.name+"/"+c.prec.String(), func(t *testing.T) {
			g := mustGraph(t, c.app, Options{N: 3840, Block: 960, Precision: c.prec})
			seen := 0
			for _, task := range g.Tasks {
				if task.Name != c.name {
					continue
				}
				seen++
				assert.Equal(t, fmt.Sprintf("%08x", c.fp), fmt.Sprintf("%08x", task.Footprint))
				// The footprint is the fold of the buffers' handle footprints.
				hfps := make([]uint32, len(task.Buffers))
				var size int64
				for i, b := range task.Buffers {
					hfps[i] = g.Handles[b.Handle].Footprint
					size += g.Handles[b.Handle].SizeBytes
				}
				assert.Equal(t, starpu.TaskFootprint(hfps), task.Footprint)
				assert.Equal(t, c.size, size)
			}
			assert.NotZero(t, seen)
		})
	}
}

// Tile geometry of the column-major matrix (ld = N): a tile is Block runs
// of Block contiguous elements (its columns), N elements apart.
func TestHandleGeometry(t *testing.T) {
	for _, prec := range []Precision{Single, Double} {
		for _, app := range []string{"cholesky", "lu"} {
			g := mustGraph(t, app, Options{N: 2880, Block: 960, Precision: prec})
			e := prec.ElemBytes()
			for i, h := range g.Handles {
				assert.Equal(t, i, h.ID)
				assert.Equal(t, int64(960*960)*e, h.SizeBytes)
				assert.Equal(t, 960*e, h.RowBytes)
				assert.Equal(t, int64(960), h.Rows)
				assert.Equal(t, 2880*e, h.PitchBytes)
				assert.Equal(t, h.Rows*h.RowBytes, h.SizeBytes)
				assert.Equal(t, starpu.MatrixFootprint(960, 960), h.Footprint)
			}
		}
	}
	// Names and order: column by column, top to bottom; Cholesky keeps the
	// lower triangle.
	g := mustGraph(t, "cholesky", Options{N: 2880, Block: 960})
	assert.Equal(t, []string{"A[0][0]", "A[1][0]", "A[2][0]", "A[1][1]", "A[2][1]", "A[2][2]"}, handleNames(g))
	g = mustGraph(t, "lu", Options{N: 1920, Block: 960})
	assert.Equal(t, []string{"A[0][0]", "A[1][0]", "A[0][1]", "A[1][1]"}, handleNames(g))
}

func handleNames(g *graph.Graph) []string {
	var s []string
	for _, h := range g.Handles {
		s = append(s, h.Name)
	}
	return s
}

func TestKernelFlops(t *testing.T) {
	// cholesky.h's MAGMA macros at n = 960 (the reference doc's table and
	// the native trace's GFlop column).
	assert.InDelta(t, 295372960.0, potrfFlops(960), 1e-6) // 960³/3 + 960²/2 + 160
	assert.Equal(t, 885657600.0, cholTrsmFlops(960))      // 960²·961
	assert.Equal(t, 885657600.0, syrkFlops(960, 960))
	assert.Equal(t, 1769472000.0, gemmFlops(960, 960, 960)) // 2·960³
	// LAWN 41 counts for LU.
	n := 960.0
	assert.InDelta(t, 2*n*n*n/3-n*n/2+5*n/6, getrfFlops(n), 1e-3)
	assert.Equal(t, n*n*n, luTrsmFlops(n))

	g := mustGraph(t, "cholesky", Options{N: 1920, Block: 960})
	want := map[string]float64{"POTRF": potrfFlops(960), "TRSM": cholTrsmFlops(960), "SYRK": syrkFlops(960, 960)}
	for _, task := range g.Tasks {
		assert.Equal(t, want[task.Name], task.Flops, task.Name)
	}
}

func TestClosedFormulas(t *testing.T) {
	// CholeskyFlops = N³/3 + N²/2 + N/6.
	for _, n := range []float64{960, 9600, 76800} {
		assert.InDelta(t, n*n*n/3+n*n/2+n/6, CholeskyFlops(n), 1e-12*n*n*n)
		assert.Equal(t, 2*n*n*n/3, LUFlops(n), "exact for multiples of 960")
	}
	// LUFlops rounds like the C float expression (2.0f*n*n*n)/3.0f.
	assert.Equal(t, float64(float32(float32(float32(2*10007.0)*10007)*10007)/3), LUFlops(10007))
	g := mustGraph(t, "cholesky", Options{N: 9600, Block: 960})
	assert.Equal(t, CholeskyFlops(9600), g.TotalFlops)
	g = mustGraph(t, "lu", Options{N: 9600, Block: 960})
	assert.Equal(t, LUFlops(9600), g.TotalFlops)
}

// The sum of the task flops against the closed formula each example prints
// its GFlop/s with.
//
// Cholesky: with b = Block, nb = N/b, the tasks sum to
//
//	nb·(b³/3 + b²/2 + b/6) + 2·(b³ + b²)·nb(nb-1)/2 + 2b³·nb(nb-1)(nb-2)/6
//
// whose b³ terms give exactly nb³b³/3 = N³/3 and b terms nb·b/6 = N/6, but
// whose b² terms give b²(nb² - nb/2) instead of N²/2 = b²nb²/2: the sum
// exceeds CholeskyFlops(N) by b²·nb(nb-1)/2, i.e. b² per TRSM task. That is
// MAGMA's FADDS_TRSM = FMULS_TRMM quirk (TRSM counted n²(n+1) instead of
// LAWN 41's n³); with n³ TRSMs the two would agree exactly. Relative excess
// 3(nb-1)/(2·nb·N) ≈ 3/(2N): 1.4e-4 at N = 9600 (nb = 10), 1.93e-5 at
// N = 76800 (nb = 80).
//
// LU (LAWN 41 kernel counts, flops.go): the tasks sum to
//
//	nb·(2b³/3 - b²/2 + 5b/6) + 2·b³·nb(nb-1)/2 + 2b³·(nb-1)nb(2nb-1)/6
//	= 2N³/3 - N·b/2 + 5N/6,
//
// short of LUFlops(N) = 2N³/3 by N·b/2 - 5N/6 (relative 3b/(4N)).
func TestTaskFlopsVsClosedFormula(t *testing.T) {
	for _, c := range []struct{ n, b int }{{960, 960}, {2880, 960}, {7680, 960}, {9600, 960}, {76800, 960}, {4096, 512}} {
		n, b := float64(c.n), float64(c.b)
		nb := n / b
		t.Run(fmt.Sprintf("cholesky/%d/%d", c.n, c.b), func(t *testing.T) {
			g := mustGraph(t, "cholesky", Options{N: c.n, Block: c.b})
			sum := kahanFlops(g)
			excess := b * b * nb * (nb - 1) / 2
			assert.InDelta(t, excess, sum-g.TotalFlops, 1e-12*g.TotalFlops)
			if c.n == 76800 {
				// 3(nb-1)/(2·nb·N) = 237/12288000
				assert.InDelta(t, 1.9287e-5, (sum-g.TotalFlops)/g.TotalFlops, 0.0001e-5)
			}
		})
		t.Run(fmt.Sprintf("lu/%d/%d", c.n, c.b), func(t *testing.T) {
			g := mustGraph(t, "lu", Options{N: c.n, Block: c.b})
			sum := kahanFlops(g)
			assert.InDelta(t, 2*n*n*n/3-n*b/2+5*n/6, sum, 1e-12*g.TotalFlops)
			// Against the exact 2N³/3 (LUFlops rounds like C's float
			// expression, which is inexact for N = 4096).
			assert.InDelta(t, -(n*b/2 - 5*n/6), sum-2*n*n*n/3, 1e-12*g.TotalFlops)
		})
	}
}

func kahanFlops(g *graph.Graph) float64 {
	var sum, comp float64
	for _, t := range g.Tasks {
		y := t.Flops - comp
		s := sum + y
		comp = (s - sum) - y
		sum = s
	}
	return sum
}

// testPrio are StarPU's schedulers' priority ranges: the runtime's
// registry's for those starsim has, StarPU's source's for heteroprio
// (HETEROPRIO_MAX_PRIO-1 = 99) and pheft (parallel_heft.c: 0..1).
var testPrio = map[string]graph.PrioRange{
	"dmdas": graph.UnboundedPrio, "lws": graph.UnboundedPrio, "dmda": {}, "eager": {},
	"heteroprio": {Min: 0, Max: 99}, "pheft": {Min: 0, Max: 1},
}

// SYRKPrioRelease gives SYRK StarPU 1.4 releases' priority, 2nb-2k-2n,
// under an unbounded range, and changes nothing else.
func TestCholeskySYRKPrioRelease(t *testing.T) {
	const nb = 6
	for _, prio := range []graph.PrioRange{graph.UnboundedPrio, {}} {
		base := mustGraph(t, "cholesky", Options{N: nb * 960, Block: 960, Prio: prio})
		g := mustGraph(t, "cholesky", Options{N: nb * 960, Block: 960, Prio: prio, SYRKPrioRelease: true})
		require.Len(t, g.Tasks, len(base.Tasks))
		for i, task := range g.Tasks {
			k, _, n := cholIndices(t, g, task)
			want := base.Tasks[i].Priority
			if task.Name == "SYRK" && prio.Unbounded() {
				want = 2*nb - 2*k - 2*n
			}
			require.Equal(t, want, task.Priority, "%s k=%d n=%d", task.Name, k, n)
		}
	}
}

// Priorities per scheduler family, for every task of a mid-size Cholesky.
func TestCholeskyPriorities(t *testing.T) {
	const nb = 6
	for _, sched := range []string{"dmdas", "dmda", "heteroprio", "pheft", "lws"} {
		for _, noprio := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/noprio=%v", sched, noprio), func(t *testing.T) {
				g := mustGraph(t, "cholesky", Options{N: nb * 960, Block: 960, Prio: testPrio[sched], NoPrio: noprio})
				max := testPrio[sched].Max
				unbound := max == math.MaxInt32
				for _, task := range g.Tasks {
					k, m, n := cholIndices(t, g, task)
					var want int
					switch {
					case noprio:
						want = 0
					case unbound:
						want = map[string]int{"POTRF": 2*nb - 2*k, "TRSM": 2*nb - 2*k - m, "SYRK": 2*nb - 2*k - n, "GEMM": 2*nb - 2*k - m - n}[task.Name]
					case task.Name == "POTRF", task.Name == "TRSM" && m == k+1, task.Name == "SYRK" && n == k+1:
						want = max
					}
					require.Equal(t, want, task.Priority, "%s k=%d m=%d n=%d", task.Name, k, m, n)
				}
			})
		}
	}
}

// cholIndices recovers (k, m, n) of a Cholesky task from its tiles' names.
func cholIndices(t testing.TB, g *graph.Graph, task graph.Task) (k, m, n int) {
	t.Helper()
	rc := func(i int) (int, int) { return tileRC(t, g, task.Buffers[i].Handle) }
	switch task.Name {
	case "POTRF":
		k, _ = rc(0)
		return k, k, k
	case "TRSM":
		m, k = rc(1)
		return k, m, k
	case "SYRK":
		n, k = rc(0)
		return k, n, n
	case "GEMM":
		m, k = rc(0)
		n, _ = rc(1)
		return k, m, n
	}
	t.Fatalf("unexpected task %s", task.Name)
	return
}

func tileRC(t testing.TB, g *graph.Graph, h int) (r, c int) {
	t.Helper()
	if _, err := fmt.Sscanf(g.Handles[h].Name, "A[%d][%d]", &r, &c); err != nil {
		t.Fatalf("handle %d name %q: %v", h, g.Handles[h].Name, err)
	}
	return r, c
}

func TestLUPriorities(t *testing.T) {
	const nb = 5
	// LU's priorities ignore the scheduler's range.
	for _, sched := range []string{"dmda", "dmdas", "eager"} {
		g := mustGraph(t, "lu", Options{N: nb * 960, Block: 960, Prio: testPrio[sched]})
		for _, task := range g.Tasks {
			k, i, j := luIndices(t, g, task)
			want := map[string]int{"GETRF": 3*nb - 3*k, "TRSM_LL": 3*nb - (2*k + j), "TRSM_RU": 3*nb - (2*k + i), "GEMM": 3*nb - (k + i + j)}[task.Name]
			require.Equal(t, want, task.Priority, "%s %s", sched, task.Name)
		}
	}
	g := mustGraph(t, "lu", Options{N: nb * 960, Block: 960, NoPrio: true})
	for _, task := range g.Tasks {
		require.Zero(t, task.Priority)
	}
}

// luIndices recovers (k, i, j) from the tile written: (i, j) its A[row][col]
// coordinates, k the step.
func luIndices(t testing.TB, g *graph.Graph, task graph.Task) (k, i, j int) {
	t.Helper()
	i, j = tileRC(t, g, task.Buffers[len(task.Buffers)-1].Handle)
	kk, _ := tileRC(t, g, task.Buffers[0].Handle)
	switch task.Name {
	case "GETRF", "TRSM_LL", "TRSM_RU":
		return kk, i, j
	case "GEMM":
		_, k = tileRC(t, g, task.Buffers[0].Handle) // A[i][k]
		return k, i, j
	}
	t.Fatalf("unexpected task %s", task.Name)
	return
}

func TestModels(t *testing.T) {
	g := mustGraph(t, "cholesky", Options{N: 2880, Block: 960, Precision: Double})
	for _, task := range g.Tasks {
		assert.Equal(t, "chol_model_"+strings.ToLower(task.Name), task.Model)
	}
	cases := []struct {
		prec Precision
		blas string
		want string
	}{
		{Single, "", "starpu_slu_lu_model_"},
		{Double, "", "starpu_dlu_lu_model_"},
		{Single, "openblas", "starpu_slu_lu_model_"},
	}
	for _, c := range cases {
		g := mustGraph(t, "lu", Options{N: 2880, Block: 960, Precision: c.prec, BLASVariant: c.blas})
		suffix := ""
		if c.blas != "" {
			suffix = "_" + c.blas
		}
		for _, task := range g.Tasks {
			assert.Equal(t, c.want+strings.ToLower(task.Name)+suffix, task.Model)
		}
	}
}

func TestDeterministic(t *testing.T) {
	for _, app := range []string{"cholesky", "lu"} {
		o := Options{N: 7680, Block: 960, Prio: graph.UnboundedPrio}
		assert.Equal(t, mustGraph(t, app, o), mustGraph(t, app, o))
	}
}

// Mutating one task's slices must not leak into another's: the slabs are
// capped per task.
func TestSlicesAreIndependent(t *testing.T) {
	g := mustGraph(t, "lu", Options{N: 3840, Block: 960})
	before := mustGraph(t, "lu", Options{N: 3840, Block: 960})
	for i := range g.Tasks {
		g.Tasks[i].Buffers = append(g.Tasks[i].Buffers, graph.Access{Handle: -1})
		g.Tasks[i].WontUse = append(g.Tasks[i].WontUse, -1)
	}
	for i := range g.Tasks {
		assert.True(t, slices.Equal(before.Tasks[i].Buffers, g.Tasks[i].Buffers[:len(g.Tasks[i].Buffers)-1]), "task %d", i)
		assert.True(t, slices.Equal(before.Tasks[i].WontUse, g.Tasks[i].WontUse[:len(g.Tasks[i].WontUse)-1]), "task %d", i)
	}
}

// Values printed with %a by a C program using cholesky.h's FLOPS_SPOTRF
// macro and xlu_implicit.c's (2.0f*n*n*n)/3.0f (gcc -O2, x86-64): the
// closed formulas match StarPU's doubles bit for bit, rounding included
// (FLOPS_SPOTRF(320) is 10973919.999999998, not 10973920).
func TestClosedFormulasMatchC(t *testing.T) {
	chol := map[float64]string{
		320:   "0x1.4ee5bffffffffp+23",
		960:   "0x1.19b08ap+28",
		9600:  "0x1.12b37c99p+38",
		76800: "0x1.12a9df9064p+47",
		12345: "0x1.240fd9bf0ap+39",
	}
	for n, want := range chol {
		assert.Equal(t, want, fmt.Sprintf("%x", CholeskyFlops(n)), "FLOPS_SPOTRF(%v)", n)
	}
	lu := map[float64]string{
		320:    "0x1.4d5556p+24",
		9600:   "0x1.12a88p+39",
		100000: "0x1.2f2a36p+49",
		12345:  "0x1.2406c4p+40",
	}
	for n, want := range lu {
		assert.Equal(t, want, fmt.Sprintf("%x", LUFlops(n)), "LU flop(%v)", n)
	}
}

// TestSyncGPUKernels: the panel factorisations (Cholesky's POTRF, LU's
// GETRF) are the codelets StarPU's examples declare without
// STARPU_CUDA_ASYNC; every other kernel is asynchronous.
func TestSyncGPUKernels(t *testing.T) {
	for app, syncKernel := range map[string]string{"cholesky": "POTRF", "lu": "GETRF"} {
		g, err := New(app, Options{N: 4 * 960, Block: 960})
		require.NoError(t, err)
		for _, tk := range g.Tasks {
			assert.Equal(t, tk.Name == syncKernel, tk.SyncGPU, "%s task %d (%s)", app, tk.ID, tk.Name)
		}
	}
}

// TestDepsIgnorePriorities: every application's dependencies are the same
// under every priority range and with no priorities, so that a sweep
// derives them once for the graphs that differ in priorities alone.
func TestDepsIgnorePriorities(t *testing.T) {
	for _, app := range Names() {
		var first *graph.Deps
		for _, o := range []Options{{Prio: graph.PrioRange{}}, {Prio: graph.UnboundedPrio}, {Prio: graph.PrioRange{Min: -5, Max: 5}}, {Prio: graph.UnboundedPrio, NoPrio: true}} {
			o.N, o.Block = 6*960, 960
			g, err := New(app, o)
			require.NoError(t, err, app)
			d, err := graph.DeriveDeps(g)
			require.NoError(t, err, app)
			if first == nil {
				first = d
				continue
			}
			assert.Equal(t, first, d, "%s under %+v", app, o.Prio)
		}
	}
}
