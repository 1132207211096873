package models

import (
	"github.com/starsim/starsim/models/generation"
	"github.com/starsim/starsim/runtime/graph"
)

// cholesky is StarPU's examples/cholesky/cholesky_implicit.c, in float (a
// double version is a starsim extension with the same symbols and
// footprints: the element size is not hashed into footprints).
var cholesky = App{
	Name: "cholesky",
	Kernels: func(g generation.Gen, _ bool) []generation.KernelSymbol {
		if g == generation.V13 {
			return []generation.KernelSymbol{{Kernel: "POTRF", Symbol: chol13ModelPOTRF}, {Kernel: "TRSM", Symbol: chol13ModelTRSM}, {Kernel: "GEMM", Symbol: chol13ModelGEMM}}
		}
		return []generation.KernelSymbol{{Kernel: "POTRF", Symbol: cholModelPOTRF}, {Kernel: "TRSM", Symbol: cholModelTRSM}, {Kernel: "SYRK", Symbol: cholModelSYRK}, {Kernel: "GEMM", Symbol: cholModelGEMM}}
	},
	Renames: [][2]string{{chol13ModelPOTRF, cholModelPOTRF}, {chol13ModelTRSM, cholModelTRSM}, {chol13ModelGEMM, cholModelGEMM}},
	KernelOf: func(sym string) (string, bool) {
		return suffixKernel(sym, []kernelSuffixes{
			{"POTRF", []string{cholModelPOTRF, chol13ModelPOTRF}}, {"TRSM", []string{cholModelTRSM, chol13ModelTRSM}},
			{"SYRK", []string{cholModelSYRK}}, {"GEMM", []string{cholModelGEMM, chol13ModelGEMM}},
		})
	},
	// StarPU's Cholesky example is float only.
	ElemBytes: func(string) (int64, bool) { return 4, true },
	KernelFlops: map[string]func(float64) float64{
		"POTRF": potrfFlops,
		"TRSM":  cholTrsmFlops,
		"SYRK":  func(n float64) float64 { return syrkFlops(n, n) },
		"GEMM":  func(n float64) float64 { return gemmFlops(n, n, n) },
	},
	// cl11 has no STARPU_CUDA_ASYNC (cholesky_kernels.c, both generations).
	SyncGPU: []string{"POTRF"},
	Size: func(nb int64) (tasks, handles, buffers int64) {
		ntrsm := nb * (nb - 1) / 2
		ngemm := nb * (nb - 1) * (nb - 2) / 6
		return nb + 2*ntrsm + ngemm, nb * (nb + 1) / 2, nb + 2*2*ntrsm + 3*ngemm
	},
	Build: func(o Options, nb int) (*graph.Graph, error) {
		if o.Generation == generation.V13 {
			return cholesky13(o, nb)
		}
		return cholesky14(o, nb)
	},
}

// Cholesky model symbols (cholesky_kernels.c / cholesky_models.c).
const (
	cholModelPOTRF = "chol_model_potrf"
	cholModelTRSM  = "chol_model_trsm"
	cholModelSYRK  = "chol_model_syrk"
	cholModelGEMM  = "chol_model_gemm"
)

// cholesky14 is the task graph of examples/cholesky/cholesky_implicit.c
// (lower Cholesky, right-looking, implicit dependencies).
//
// The matrix is partitioned by starpu_matrix_filter_block (splitting nx, the
// contiguous dimension: block rows) then starpu_matrix_filter_vertical_block
// (splitting ny: block columns), so starpu_data_get_sub_data(A, 2, m, n) is
// the tile in block row m, block column n, handle "A[m][n]" here (the same
// pair StarPU records with starpu_data_set_coordinates). _cholesky submits,
// with nb = N/Block:
//
//	for k in 0..nb-1:
//	    POTRF   A[k][k] RW
//	    for m in k+1..nb-1:
//	        TRSM    A[k][k] R, A[m][k] RW
//	    wont_use(A[k][k])                  (after the last TRSM, or POTRF)
//	    for n in k+1..nb-1:
//	        SYRK    A[n][k] R, A[n][n] RW
//	        for m in n+1..nb-1:
//	            GEMM    A[m][k] R, A[n][k] R, A[m][n] RW
//	        wont_use(A[n][k])              (after the last GEMM, or SYRK)
//
// The codelet modes are plain R/RW (cl_syrk.modes[1] and cl_gemm.modes[2]
// are STARPU_RW unless the example runs with -commute). Priorities: see
// cholPrio. Flops: FLOPS_SPOTRF/STRSM/SSYRK/SGEMM of the tile (flops.go).
// Only the lower triangle's nb(nb+1)/2 tiles are handles.
//
// With Options.Generation V13 the graph is StarPU 1.3's (cholesky13).
func cholesky14(o Options, nb int) (*graph.Graph, error) {
	f := float64(nb)
	if err := checkSize("cholesky", nb, f*f*f/6+f*f, f*f/2+f); err != nil {
		return nil, err
	}
	hs, t := newTiles(o, nb, func(r, c int) bool { return r >= c }, cholOrder(nb))
	g := &graph.Graph{
		Name:       graphName("cholesky", o),
		Handles:    hs,
		TotalFlops: CholeskyFlops(float64(o.N)),
	}
	ntrsm := nb * (nb - 1) / 2
	ngemm := nb * (nb - 1) * (nb - 2) / 6
	ntasks := nb + 2*ntrsm + ngemm
	nbufs := nb + 2*2*ntrsm + 3*ngemm
	nwont := nb + ntrsm
	bld := newBuilder(g, ntasks, nbufs, nwont)

	bs := float64(o.Block)
	fPOTRF, fTRSM := potrfFlops(bs), cholTrsmFlops(bs)
	fSYRK, fGEMM := syrkFlops(bs, bs), gemmFlops(bs, bs, bs)
	p := newCholPrio(o, nb)

	mPOTRF, mTRSM := o.symbol("POTRF", cholModelPOTRF), o.symbol("TRSM", cholModelTRSM)
	mSYRK, mGEMM := o.symbol("SYRK", cholModelSYRK), o.symbol("GEMM", cholModelGEMM)

	bld.iterations(nb, func(k int) (tasks, bufs, wont int) {
		r := nb - 1 - k
		return 1 + 2*r + r*(r-1)/2, 1 + 4*r + 3*(r*(r-1)/2), 1 + r
	}, func(bld *builder, k int) {
		akk := t.id(k, k)
		bld.submit("POTRF", mPOTRF, fPOTRF, p.potrf(k), rw(akk))
		bld.syncGPU()
		for m := k + 1; m < nb; m++ {
			bld.submit("TRSM", mTRSM, fTRSM, p.trsm(k, m), r(akk), rw(t.id(m, k)))
		}
		bld.wontUse(akk)
		for n := k + 1; n < nb; n++ {
			ank := t.id(n, k)
			bld.submit("SYRK", mSYRK, fSYRK, p.syrk(k, n), r(ank), rw(t.id(n, n)))
			for m := n + 1; m < nb; m++ {
				bld.submit("GEMM", mGEMM, fGEMM, p.gemm(k, m, n),
					r(t.id(m, k)), r(ank), rw(t.id(m, n)))
			}
			bld.wontUse(ank)
		}
	})
	return g, nil
}

// StarPU 1.3's Cholesky model symbols (cholesky_implicit.c's
// initialize_chol_model calls).
const (
	chol13ModelPOTRF = "chol_model_11"
	chol13ModelTRSM  = "chol_model_21"
	chol13ModelGEMM  = "chol_model_22"
)

// cholesky13 is the task graph of StarPU 1.3's
// examples/cholesky/cholesky_implicit.c. It differs from 1.4's in the
// trailing update: there is no SYRK codelet, the diagonal tile is updated
// by a GEMM task of the same codelet (cl22) reading the panel tile twice:
//
//	for k in 0..nb-1:
//	    POTRF   A[k][k] RW                          (cl11, chol_model_11)
//	    for m in k+1..nb-1:
//	        TRSM    A[k][k] R, A[m][k] RW           (cl21, chol_model_21)
//	    wont_use(A[k][k])
//	    for n in k+1..nb-1:
//	        for m in n..nb-1:
//	            GEMM    A[m][k] R, A[n][k] R, A[m][n] RW   (cl22, chol_model_22)
//	        wont_use(A[n][k])
//
// so a GEMM with m = n reads A[n][k] twice (StarPU fetches it once). Its
// footprint folds three tile footprints, as every GEMM's, and its flops
// are FLOPS_SGEMM's. Priorities, as 1.3 writes them (unbound: the
// scheduler's range is INT_MIN..INT_MAX):
//
//	          unbound         bounded
//	POTRF(k)  2nb-2k          MAX
//	TRSM(k,m) 2nb-2k-m        m == k+1 ? MAX : 0
//	GEMM(k,m,n) 2nb-2k-m-n    (m == k+1 && n == k+1) ? MAX : 0
//
// which give a diagonal GEMM (m = n) the priority 1.4 releases give
// their SYRK.
func cholesky13(o Options, nb int) (*graph.Graph, error) {
	f := float64(nb)
	if err := checkSize("cholesky", nb, f*f*f/6+f*f, f*f/2+f); err != nil {
		return nil, err
	}
	hs, t := newTiles(o, nb, func(r, c int) bool { return r >= c }, cholOrder(nb))
	g := &graph.Graph{
		Name:       graphName("cholesky", o),
		Handles:    hs,
		TotalFlops: CholeskyFlops(float64(o.N)),
	}
	ntrsm := nb * (nb - 1) / 2
	ngemm := nb*(nb-1)*(nb-2)/6 + ntrsm // off-diagonal and diagonal updates
	ntasks := nb + ntrsm + ngemm
	nbufs := nb + 2*ntrsm + 3*ngemm
	nwont := nb + ntrsm
	bld := newBuilder(g, ntasks, nbufs, nwont)

	bs := float64(o.Block)
	fPOTRF, fTRSM, fGEMM := potrfFlops(bs), cholTrsmFlops(bs), gemmFlops(bs, bs, bs)
	p := newCholPrio(o, nb)
	mPOTRF, mTRSM, mGEMM := o.symbol("POTRF", chol13ModelPOTRF), o.symbol("TRSM", chol13ModelTRSM), o.symbol("GEMM", chol13ModelGEMM)

	bld.iterations(nb, func(k int) (tasks, bufs, wont int) {
		r := nb - 1 - k
		return 1 + r + r*(r+1)/2, 1 + 2*r + 3*(r*(r+1)/2), 1 + r
	}, func(bld *builder, k int) {
		akk := t.id(k, k)
		bld.submit("POTRF", mPOTRF, fPOTRF, p.potrf(k), rw(akk))
		bld.syncGPU()
		for m := k + 1; m < nb; m++ {
			bld.submit("TRSM", mTRSM, fTRSM, p.trsm(k, m), r(akk), rw(t.id(m, k)))
		}
		bld.wontUse(akk)
		for n := k + 1; n < nb; n++ {
			ank := t.id(n, k)
			for m := n; m < nb; m++ {
				// p.gemm is 1.3's formula for every m >= n (its m = n
				// case is what 1.4's SYRK gets).
				bld.submit("GEMM", mGEMM, fGEMM, p.gemm(k, m, n), r(t.id(m, k)), r(ank), rw(t.id(m, n)))
			}
			bld.wontUse(ank)
		}
	})
	return g, nil
}

// cholPrio is cholesky_implicit.c's priority choice (the default
// "-priority 0" attribution):
//
//	priority = noprio ? STARPU_DEFAULT_PRIO
//	         : unbound_prio ? <bottom-level formula>
//	         : <STARPU_MAX_PRIO for the critical path, else STARPU_DEFAULT_PRIO>
//
// with unbound_prio = STARPU_MAX_PRIO == INT_MAX && STARPU_MIN_PRIO ==
// INT_MIN, read once before the submission loop (Options.Prio is the
// scheduler's range). Per task (nb = N/Block):
//
//	          unbound                 bounded
//	POTRF(k)  2nb-2k                  MAX
//	TRSM(k,m) 2nb-2k-m                m == k+1 ? MAX : 0
//	SYRK(k,n) 2nb-2k-n (releases: 2nb-2k-2n) n == k+1 ? MAX : 0
//	GEMM(k,m,n) 2nb-2k-m-n            (m == k+1 && n == k+1) ? MAX : 0
//
// SYRK's unbound priority is 2nb-2k-n, as StarPU 1.4.99 (revision
// 3f3cc82a6) gives it: syrk_priority is gemm_priority(k, n, n), whose
// m == n case is 2nb-2k-n (its tasks.rec gives SYRK(0, 1) the priority
// 2nb-1). With Options.SYRKPrioRelease it is 2nb-2k-2n, as StarPU 1.4
// releases write it ("2*nblocks - 2*k - n - n").
// A GEMM never gets MAX, because GEMMs have m > n >= k+1
// so the condition m == n == k+1 cannot hold (only SYRK(n=k+1) does). With
// the 0..0 range of dm, dmda, dmdar, eager and random, MAX is 0 and every
// priority is 0 (as the native dmda trace shows). The
// C arithmetic is unsigned then cast to int; the wrap-around gives the same
// (possibly negative) values as the signed formulas used here.
type cholPrio struct {
	noprio, unbound, syrkRelease bool
	max, nb                      int
}

func newCholPrio(o Options, nb int) cholPrio {
	return cholPrio{noprio: o.NoPrio, unbound: o.Prio.Unbounded(), syrkRelease: o.SYRKPrioRelease, max: o.Prio.Max, nb: nb}
}

func (p cholPrio) potrf(k int) int {
	switch {
	case p.noprio:
		return 0
	case p.unbound:
		return 2*p.nb - 2*k
	}
	return p.max
}

func (p cholPrio) trsm(k, m int) int {
	switch {
	case p.noprio:
		return 0
	case p.unbound:
		return 2*p.nb - 2*k - m
	case m == k+1:
		return p.max
	}
	return 0
}

func (p cholPrio) syrk(k, n int) int {
	switch {
	case p.noprio:
		return 0
	case p.unbound && p.syrkRelease:
		return 2*p.nb - 2*k - n - n
	case p.unbound:
		return 2*p.nb - 2*k - n
	case n == k+1:
		return p.max
	}
	return 0
}

func (p cholPrio) gemm(k, m, n int) int {
	switch {
	case p.noprio:
		return 0
	case p.unbound:
		return 2*p.nb - 2*k - m - n
	case m == k+1 && n == k+1:
		return p.max
	}
	return 0
}

// cholOrder is StarPU's order of the tiles: the example takes A[m][k] as
// starpu_data_get_sub_data(dataA, 2, m, k), so the partition path is
// (row, column).
func cholOrder(nb int) func(r, c int) int { return func(r, c int) int { return r*nb + c } }
