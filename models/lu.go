package models

import (
	"strings"

	"github.com/starsim/starsim/models/generation"
	"github.com/starsim/starsim/runtime/graph"
)

// lu is StarPU's examples/lu/xlu_implicit.c (lu_implicit_example_float
// and _double).
var lu = App{
	Name: "lu",
	Kernels: func(g generation.Gen, double bool) []generation.KernelSymbol {
		p := "starpu_slu_lu_model_"
		if double {
			p = "starpu_dlu_lu_model_"
		}
		names := luModelNames(g == generation.V13)
		return []generation.KernelSymbol{{Kernel: "GETRF", Symbol: p + names[0]}, {Kernel: "TRSM_LL", Symbol: p + names[1]},
			{Kernel: "TRSM_RU", Symbol: p + names[2]}, {Kernel: "GEMM", Symbol: p + names[3]}}
	},
	DoubleSymbols: true,
	BLASSuffixed:  true,
	Renames: [][2]string{{"_lu_model_11", "_lu_model_getrf"}, {"_lu_model_12", "_lu_model_trsm_ll"},
		{"_lu_model_21", "_lu_model_trsm_ru"}, {"_lu_model_22", "_lu_model_gemm"}},
	KernelOf: func(sym string) (string, bool) {
		return suffixKernel(sym, []kernelSuffixes{
			{"GETRF", []string{"lu_model_getrf", "lu_model_11"}}, {"TRSM_LL", []string{"lu_model_trsm_ll", "lu_model_12"}},
			{"TRSM_RU", []string{"lu_model_trsm_ru", "lu_model_21"}}, {"GEMM", []string{"lu_model_gemm", "lu_model_22"}},
		})
	},
	ElemBytes: func(sym string) (int64, bool) {
		switch {
		case strings.Contains(sym, "dlu_lu_model_"):
			return 8, true
		case strings.Contains(sym, "slu_lu_model_"):
			return 4, true
		}
		return 0, false
	},
	KernelFlops: map[string]func(float64) float64{
		"GETRF":   getrfFlops,
		"TRSM_LL": luTrsmFlops,
		"TRSM_RU": luTrsmFlops,
		"GEMM":    func(n float64) float64 { return gemmFlops(n, n, n) },
	},
	// cl11 has no STARPU_CUDA_ASYNC (xlu_kernels.c, both generations).
	SyncGPU: []string{"GETRF"},
	Size: func(nb int64) (tasks, handles, buffers int64) {
		ntrsm := nb * (nb - 1) / 2
		ngemm := (nb - 1) * nb * (2*nb - 1) / 6
		return nb + 2*ntrsm + ngemm, nb * nb, nb + 2*2*ntrsm + 3*ngemm
	},
	Build: luGraph,
}

// luModelNames are the endings of LU's model symbols, GETRF, TRSM_LL,
// TRSM_RU, GEMM, in StarPU 1.3 (old) or 1.4.
func luModelNames(old bool) [4]string {
	if old {
		return [4]string{"11", "12", "21", "22"}
	}
	return [4]string{"getrf", "trsm_ll", "trsm_ru", "gemm"}
}

// luGraph is the task graph of examples/lu/xlu_implicit.c (LU without pivoting,
// implicit dependencies), as lu_implicit_example_float/double runs it.
//
// Index meaning. xlu_implicit.c partitions with
// starpu_matrix_filter_vertical_block first (splitting ny, the columns of
// the column-major matrix) and starpu_matrix_filter_block second (splitting
// nx, the rows), so starpu_data_get_sub_data(A, 2, x, y) is the tile in
// block column x, block row y: handle "A[y][x]" here. In the source's
// sub(x, y) notation and, after the arrow, in A[row][col] names, the loop
// of dw_codelet_facto_v3 is (nb = N/Block):
//
//	for k in 0..nb-1:
//	    GETRF   sub(k,k) RW                          A[k][k]
//	    for i in k+1..nb-1:
//	        TRSM_LL sub(k,k) R, sub(i,k) RW          A[k][k], A[k][i]  (U row panel)
//	        TRSM_RU sub(k,k) R, sub(k,i) RW          A[k][k], A[i][k]  (L column panel)
//	    wont_use(sub(k,k))                           after the last TRSM_RU, or GETRF
//	    for i in k+1..nb-1: for j in k+1..nb-1:
//	        GEMM    sub(k,i) R, sub(j,k) R, sub(j,i) RW   A[i][k], A[k][j], A[i][j]
//	    for i in k+1..nb-1:
//	        wont_use(sub(k,i)); wont_use(sub(i,k))   A[i][k], A[k][i], after the last GEMM
//
// Priorities (task->priority, set unless -no-prio; unlike Cholesky they do
// not depend on the scheduler's range): GETRF 3nb-3k, TRSM_LL 3nb-(2k+i),
// TRSM_RU 3nb-(2k+i), GEMM 3nb-(k+i+j). Under dmda they reach the scheduler
// unchanged (its FIFO ignores them; prefetch requests carry them).
//
// Models: STARPU_LU_STR(lu_model_getrf) etc., i.e. starpu_slu_lu_model_getrf
// (Single) / starpu_dlu_lu_model_getrf (Double), _trsm_ll, _trsm_ru, _gemm,
// plus Options.BLASVariant's suffix. Flops: see flops.go (the example sets
// none; starsim uses LAWN 41 counts).
//
// StarPU 1.3 (Options.Generation V13) submits the same tasks on the same
// tiles in the same order (create_task_11/12/21/22 of its xlu_implicit.c,
// models lu_model_11/12/21/22: 12 is TRSM_LL, 21 TRSM_RU), with other
// priorities: STARPU_MAX_PRIO for GETRF, for the TRSMs of i = k+1 and for
// the GEMM of i = j = k+1, the default 0 for the others. MAX_PRIO is the
// scheduler's (Options.Prio): 0 under dmda, INT_MAX under dmdas.
func luGraph(o Options, nb int) (*graph.Graph, error) {
	f := float64(nb)
	if err := checkSize("lu", nb, f*f*f/3+f*f, f*f); err != nil {
		return nil, err
	}
	suffix, _ := blasSuffix(o.BLASVariant)
	prefix := "starpu_" + o.Precision.luPrefix() + "lu_lu_model_"
	old := o.Generation == generation.V13
	names := luModelNames(old)
	mGETRF := o.symbol("GETRF", prefix+names[0]+suffix)
	mTRSMLL := o.symbol("TRSM_LL", prefix+names[1]+suffix)
	mTRSMRU := o.symbol("TRSM_RU", prefix+names[2]+suffix)
	mGEMM := o.symbol("GEMM", prefix+names[3]+suffix)
	maxPrio := o.Prio.Max

	// sub(x, y) is starpu_data_get_sub_data(dataA, 2, x, y): the partition
	// path (StarPU's tile order) is (column, row).
	hs, t := newTiles(o, nb, func(r, c int) bool { return true }, func(r, c int) int { return c*nb + r })
	// sub(x, y) of the source: block column x, block row y.
	sub := func(x, y int) int { return t.id(y, x) }
	g := &graph.Graph{
		Name:       graphName("lu", o),
		Handles:    hs,
		TotalFlops: LUFlops(float64(o.N)),
	}
	ntrsm := nb * (nb - 1) / 2              // of each kind
	ngemm := (nb - 1) * nb * (2*nb - 1) / 6 // Σ_k (nb-1-k)²
	ntasks := nb + 2*ntrsm + ngemm
	nbufs := nb + 2*2*ntrsm + 3*ngemm
	nwont := nb + 2*ntrsm // sub(k,k), then sub(k,i) and sub(i,k)
	bld := newBuilder(g, ntasks, nbufs, nwont)

	bs := float64(o.Block)
	fGETRF, fTRSM, fGEMM := getrfFlops(bs), luTrsmFlops(bs), gemmFlops(bs, bs, bs)
	prio := func(v int) int {
		if o.NoPrio {
			return 0
		}
		return v
	}
	// prio13 is 1.3's: MAX_PRIO on the critical path, else 0.
	prio13 := func(critical bool) int {
		if o.NoPrio || !critical {
			return 0
		}
		return maxPrio
	}

	bld.iterations(nb, func(k int) (tasks, bufs, wont int) {
		r := nb - 1 - k
		return 1 + 2*r + r*r, 1 + 4*r + 3*r*r, 1 + 2*r
	}, func(bld *builder, k int) {
		kk := sub(k, k)
		pGETRF := prio(3*nb - 3*k)
		if old {
			pGETRF = prio13(true)
		}
		bld.submit("GETRF", mGETRF, fGETRF, pGETRF, rw(kk))
		bld.syncGPU()
		for i := k + 1; i < nb; i++ {
			pTRSM := prio(3*nb - (2*k + i))
			if old {
				pTRSM = prio13(i == k+1)
			}
			bld.submit("TRSM_LL", mTRSMLL, fTRSM, pTRSM, r(kk), rw(sub(i, k)))
			bld.submit("TRSM_RU", mTRSMRU, fTRSM, pTRSM, r(kk), rw(sub(k, i)))
		}
		bld.wontUse(kk)
		for i := k + 1; i < nb; i++ {
			for j := k + 1; j < nb; j++ {
				pGEMM := prio(3*nb - (k + i + j))
				if old {
					pGEMM = prio13(i == k+1 && j == k+1)
				}
				bld.submit("GEMM", mGEMM, fGEMM, pGEMM,
					r(sub(k, i)), r(sub(j, k)), rw(sub(j, i)))
			}
		}
		for i := k + 1; i < nb; i++ {
			bld.wontUse(sub(k, i))
			bld.wontUse(sub(i, k))
		}
	})
	return g, nil
}
