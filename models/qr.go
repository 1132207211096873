package models

import (
	"fmt"

	"github.com/starsim/starsim/calibrate/starpu"
	"github.com/starsim/starsim/models/generation"
	"github.com/starsim/starsim/runtime/graph"
)

// qrKernelNames are the QR kernels' task names and symbol endings, in
// submission order of first use.
var qrKernelNames = [][2]string{{"GEQRT", "geqrt"}, {"LACPY", "lacpy"}, {"LASET", "laset"},
	{"ORMQR", "ormqr"}, {"TPQRT", "tpqrt"}, {"TPMQRT", "tpmqrt"}}

// qrKernelOf names the QR kernel of a symbol ("dtpmqrt": TPMQRT).
func qrKernelOf(sym string) (string, bool) {
	if len(sym) < 2 || sym[0] != 's' && sym[0] != 'd' {
		return "", false
	}
	for _, k := range qrKernelNames {
		if sym[1:] == k[1] {
			return k[0], true
		}
	}
	return "", false
}

// qrFlops are Chameleon's flop formulas of the QR kernels on a square
// tile of order n (codelet_zcallback.c, real precisions).
var qrFlops = map[string]func(float64) float64{
	"GEQRT":  qrGeqrtFlops,
	"LACPY":  func(n float64) float64 { return n * n },
	"LASET":  func(n float64) float64 { return n * n },
	"ORMQR":  func(n float64) float64 { return 2 * n * n * n },
	"TPQRT":  func(n float64) float64 { return 2 * n * n * n },
	"TPMQRT": func(n float64) float64 { return 4 * n * n * n },
}

// qrApp is the tiled QR (see QR) in the registry. Chameleon's symbols do
// not change between StarPU generations, and carry no BLAS suffix.
var qrApp = App{
	Name: "qr",
	Kernels: func(_ generation.Gen, double bool) []generation.KernelSymbol {
		p := "s"
		if double {
			p = "d"
		}
		out := make([]generation.KernelSymbol, len(qrKernelNames))
		for i, k := range qrKernelNames {
			out[i] = generation.KernelSymbol{Kernel: k[0], Symbol: p + k[1]}
		}
		return out
	},
	DoubleSymbols: true,
	OneGraph:      true,
	KernelOf:      qrKernelOf,
	ElemBytes: func(sym string) (int64, bool) {
		if _, ok := qrKernelOf(sym); !ok {
			return 0, false
		}
		if sym[0] == 'd' {
			return 8, true
		}
		return 4, true
	},
	KernelFlops: qrFlops,
	Size:        qrSize,
	Build:       qr,
}

// Tiled QR as Chameleon factorizes a square matrix over StarPU
// (compute/pzgeqrf.c, CHAMELEON_zgeqrf_Tile with the flat Householder tree
// and StarPU's CHAMELEON_COPY_DIAG), its codelets in
// runtime/starpu/codelets/: with nb = N/Block tiles per side,
//
//	for k in 0..nb-1:
//	    GEQRT   A[k][k] RW, T[k][k] W                     (CPU only)
//	    LACPY   A[k][k] R, D[k] W       copy of V's lower part (CPU only)
//	    LASET   D[k] W                  its upper part to 0, diag 1 (CPU only; a CUDA build's)
//	    for n in k+1..nb-1:
//	        ORMQR   D[k] R, T[k][k] R, A[k][n] RW         (zunmqr; CPU and CUDA)
//	    wont_use(D[k]), wont_use(T[k][k])
//	    for m in k+1..nb-1:
//	        TPQRT   A[k][k] RW, A[m][k] RW, T[m][k] W     (ztpqrt, L = 0: TS; CPU only)
//	        for n in k+1..nb-1:
//	            TPMQRT  A[m][k] R, T[m][k] R, A[k][n] RW, A[m][n] RW   (ztpmqrt; CPU and CUDA)
//	        wont_use(A[m][k]), wont_use(T[m][k])
//
// GEQRT, TPQRT and the TPMQRTs and ORMQRs also take Chameleon's scratch
// workspace (STARPU_SCRATCH), which moves no data: it enters their
// footprints only. D is the copy of the diagonal tiles Chameleon keeps so
// that the ORMQRs, which read V from it, do not wait for the TPQRTs that
// rewrite A[k][k]. T tiles hold IB x Block elements (the inner block
// size). The wont_use hints are chameleon_data_flush's (a request's flush
// is on by default). Chameleon sets no priority on these tasks: every one
// has RUNTIME_PRIORITY_MIN, 0.
//
// Models, as Chameleon's CODELETS macro registers them (symbol = the
// codelet's precision-generated name): sgeqrt/dgeqrt, slacpy/dlacpy,
// slaset/dlaset, sormqr/dormqr (zunmqr's real name), stpqrt/dtpqrt,
// stpmqrt/dtpmqrt. GEQRT, LACPY, LASET and TPQRT have no GPU
// implementation (CODELETS_CPU): a calibration has no GPU entry for them.
//
// Footprints follow Chameleon's tile interface (cham_tile_interface.c):
// a tile's footprint is crc(m, n), hashed with the interface's id, the
// first StarPU hands out to a registered interface (STARPU_MAX_INTERFACE_ID
// = 11 in StarPU 1.4). Chameleon stores matrices by tiles: each tile is
// contiguous (its pitch is its column's bytes).
//
// Flops per task are Chameleon's profiling formulas
// (runtime/starpu/codelets/codelet_zcallback.c) on square tiles of order
// b: GEQRT 4b³/3, ORMQR 2b³, TPQRT 2b³, TPMQRT 4b³, LACPY and LASET b²;
// GFlop/s uses FLOPS_DGEQRF(N, N) (LAWN 41, QRFlops).

// qrInterfaceID is the interface id StarPU gives Chameleon's tile interface.
const qrInterfaceID = 11

// qrDefaultIB is Chameleon's default inner block size
// (CHAMELEON_INNER_BLOCK_SIZE).
const qrDefaultIB = 48

// chamTileFootprint is the footprint of a Chameleon tile of m rows and n
// columns.
func chamTileFootprint(m, n uint32) uint32 {
	return starpu.HandleFootprint(starpu.CRC32BE(m, n), qrInterfaceID)
}

// QRKernel is one kernel of the tiled QR on square tiles: its task name,
// perf-model symbol, footprint, flops, the bytes of its data buffers,
// and whether a GPU can run it.
type QRKernel struct {
	Name, Symbol string
	Footprint    uint32
	Flops        float64
	Bytes        int64
	CPUOnly      bool
}

// QRKernels lists the tiled QR's kernels for tiles of order block and
// inner block size ib (0: Chameleon's default, 48), in submission order of
// first use.
func QRKernels(prec Precision, block, ib int) []QRKernel {
	if ib <= 0 {
		ib = qrDefaultIB
	}
	elem := prec.ElemBytes()
	p := "s"
	if prec == Double {
		p = "d"
	}
	b := uint32(block)
	a := chamTileFootprint(b, b)
	tt := chamTileFootprint(uint32(ib), b)
	// The worker workspace of a CUDA build: max(nb(ib+1), 2 ib nb)
	// elements, registered as a tile of that many bytes by 1.
	ws := chamTileFootprint(uint32(int64(max(block*(ib+1), 2*ib*block))*elem), 1)
	fp := func(h ...uint32) uint32 { return starpu.TaskFootprint(h) }
	tile, tb := int64(block)*int64(block)*elem, int64(ib)*int64(block)*elem
	n := float64(block)
	return []QRKernel{
		{"GEQRT", p + "geqrt", fp(a, tt, ws), qrFlops["GEQRT"](n), tile + tb, true},
		{"LACPY", p + "lacpy", fp(a, a), qrFlops["LACPY"](n), 2 * tile, true},
		{"LASET", p + "laset", fp(a), qrFlops["LASET"](n), tile, true},
		{"ORMQR", p + "ormqr", fp(a, tt, a, ws), qrFlops["ORMQR"](n), 2*tile + tb, false},
		{"TPQRT", p + "tpqrt", fp(a, a, tt, ws), qrFlops["TPQRT"](n), 2*tile + tb, true},
		{"TPMQRT", p + "tpmqrt", fp(a, tt, a, a, ws), qrFlops["TPMQRT"](n), 3*tile + tb, false},
	}
}

// qrGeqrtFlops is Chameleon's GEQRT count, (4/3) M M N on a square tile.
func qrGeqrtFlops(n float64) float64 { return (4. / 3.) * n * n * n }

// QRFlops is FLOPS_DGEQRF(N, N), the count Chameleon's testing divides by
// (LAWN 41's FMULS_GEQRF + FADDS_GEQRF for M = N, the M <= N branch),
// evaluated in the macros' order.
func QRFlops(n float64) float64 {
	m := n
	fmuls := float64(m * (float64(m*float64(-0.5-float64((1./3.)*m)+n)) + 2.*n + 23./6.))
	fadds := float64(m * (float64(m*float64(-0.5-float64((1./3.)*m)+n)) + n + 5./6.))
	return fmuls + fadds
}

// QR is the task graph of Chameleon's tiled QR (see above).
func QR(o Options) (*graph.Graph, error) {
	nb, err := o.validate()
	if err != nil {
		return nil, err
	}
	return qr(o, nb)
}

// qrSize counts the tasks, handles and buffers of QR with nb tiles per
// side (buffers: data accesses; the scratch workspace is none).
func qrSize(nb int64) (tasks, handles, buffers int64) {
	off := nb * (nb - 1) / 2                     // ORMQRs, and TPQRTs
	upd := (nb - 1) * nb * (2*nb - 1) / 6        // TPMQRTs
	tasks = 3*nb + 2*off + upd                   // GEQRT, LACPY, LASET per k
	handles = nb*nb + nb*(nb+1)/2 + nb           // A, T (m >= k), D
	buffers = nb*(2+2+1) + off*3 + off*3 + upd*4 // GEQRT 2, LACPY 2, LASET 1
	return
}

func qr(o Options, nb int) (*graph.Graph, error) {
	ib := o.InnerBlock
	if ib == 0 {
		ib = qrDefaultIB
	}
	if ib < 0 || ib > o.Block {
		return nil, fmt.Errorf("models: inner block size %d: want 1 to the block size %d", ib, o.Block)
	}
	f := float64(nb)
	if err := checkSize("qr", nb, 2*f*f*f/3+2*f*f, 1.5*f*f); err != nil {
		return nil, err
	}
	ks := QRKernels(o.Precision, o.Block, ib)
	for i := range ks {
		ks[i].Symbol = o.symbol(ks[i].Name, ks[i].Symbol)
	}
	geqrt, lacpy, laset, ormqr, tpqrt, tpmqrt := ks[0], ks[1], ks[2], ks[3], ks[4], ks[5]
	elem, b := o.Precision.ElemBytes(), int64(o.Block)
	tiles, handles := int64(nb)*int64(nb), int64(nb)*int64(nb+1)/2+int64(nb)
	g := &graph.Graph{Name: graphName("qr", o) + fmt.Sprintf(" ib=%d", ib), TotalFlops: QRFlops(float64(o.N)),
		Handles: make([]graph.Handle, 0, tiles+handles)}
	add := func(name string, rows, rowBytes int64, fp uint32) int {
		id := len(g.Handles)
		g.Handles = append(g.Handles, graph.Handle{ID: id, Name: name, SizeBytes: rows * rowBytes, Rows: rows,
			RowBytes: rowBytes, PitchBytes: rowBytes, Footprint: fp})
		return id
	}
	aFP := chamTileFootprint(uint32(b), uint32(b))
	tFP := chamTileFootprint(uint32(ib), uint32(b))
	A := make([]int, nb*nb) // [m*nb+n], registered column by column
	for n := 0; n < nb; n++ {
		for m := 0; m < nb; m++ {
			A[m*nb+n] = add(fmt.Sprintf("A[%d][%d]", m, n), b, b*elem, aFP)
		}
	}
	T := make([]int, nb*nb)
	for k := 0; k < nb; k++ {
		for m := k; m < nb; m++ {
			T[m*nb+k] = add(fmt.Sprintf("T[%d][%d]", m, k), b, int64(ib)*elem, tFP)
		}
	}
	D := make([]int, nb)
	for k := 0; k < nb; k++ {
		D[k] = add(fmt.Sprintf("D[%d]", k), b, b*elem, aFP)
	}
	tasks, _, nbufs := qrSize(int64(nb))
	g.Tasks = make([]graph.Task, 0, tasks)
	bufs := make([]graph.Access, 0, nbufs)
	wont := make([]int, 0, 4*nb)
	submit := func(k QRKernel, acc ...graph.Access) {
		start := len(bufs)
		bufs = append(bufs, acc...)
		g.Tasks = append(g.Tasks, graph.Task{ID: len(g.Tasks), Name: k.Name, Model: k.Symbol, Flops: k.Flops,
			Buffers: bufs[start:len(bufs):len(bufs)], Footprint: k.Footprint})
	}
	wontUse := func(hs ...int) {
		start := len(wont)
		wont = append(wont, hs...)
		g.Tasks[len(g.Tasks)-1].WontUse = wont[start:len(wont):len(wont)]
	}
	R := func(h int) graph.Access { return graph.Access{Handle: h, Mode: graph.R} }
	W := func(h int) graph.Access { return graph.Access{Handle: h, Mode: graph.W} }
	RW := func(h int) graph.Access { return graph.Access{Handle: h, Mode: graph.RW} }
	for k := 0; k < nb; k++ {
		akk := A[k*nb+k]
		submit(geqrt, RW(akk), W(T[k*nb+k]))
		submit(lacpy, R(akk), W(D[k]))
		submit(laset, W(D[k]))
		for n := k + 1; n < nb; n++ {
			submit(ormqr, R(D[k]), R(T[k*nb+k]), RW(A[k*nb+n]))
		}
		wontUse(D[k], T[k*nb+k])
		for m := k + 1; m < nb; m++ {
			amk, tmk := A[m*nb+k], T[m*nb+k]
			submit(tpqrt, RW(akk), RW(amk), W(tmk))
			for n := k + 1; n < nb; n++ {
				submit(tpmqrt, R(amk), R(tmk), RW(A[k*nb+n]), RW(A[m*nb+n]))
			}
			wontUse(amk, tmk)
		}
	}
	return g, nil
}
