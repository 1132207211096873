package models

import (
	"fmt"
	"runtime"
	"strconv"
	"sync/atomic"

	"github.com/starsim/starsim/calibrate/starpu"
	"github.com/starsim/starsim/models/generation"
	"github.com/starsim/starsim/runtime/graph"
)

// Precision is the element type of the matrix.
type Precision int

const (
	// Single is float (4 bytes), the only type of StarPU's cholesky example
	// and the "s" instance of its LU example.
	Single Precision = iota
	// Double is double (8 bytes): LU's "d" instance. StarPU's Cholesky
	// example has no double version; Cholesky with Double is a starsim
	// extension with the same model symbols and footprints (the element
	// size is not hashed into footprints) and twice the bytes.
	Double
)

// String is the C type name: "float" or "double".
func (p Precision) String() string {
	switch p {
	case Single:
		return "float"
	case Double:
		return "double"
	}
	return fmt.Sprintf("Precision(%d)", int(p))
}

// ElemBytes is the size of one matrix element in bytes.
func (p Precision) ElemBytes() int64 {
	if p == Double {
		return 8
	}
	return 4
}

// luPrefix is the letter STARPU_LU(x) puts in front of the LU symbols.
func (p Precision) luPrefix() string {
	if p == Double {
		return "d"
	}
	return "s"
}

// Options selects the problem and the priority scheme.
type Options struct {
	// N is the matrix order (-size) and Block the tile size (-size/-nblocks);
	// N must be a positive multiple of Block.
	N, Block int
	// Precision is the element type; the zero value is Single (float).
	Precision Precision
	// Prio is the scheduler's priority range (its registry entry gives it:
	// sched.PriorityRange), which StarPU's examples read to choose their
	// priorities (Cholesky's formulas, 1.3's MAX_PRIO). The zero value is
	// 0..0, that of dm, dmda, dmdar, eager and random.
	Prio graph.PrioRange
	// NoPrio is the examples' -no-prio flag: every priority 0.
	NoPrio bool
	// BLASVariant picks the LU model-symbol suffix StarPU's build adds for
	// its BLAS: "" (none), "atlas", "goto" or "openblas"
	// (starpu_slu_lu_model_gemm_openblas). Cholesky symbols have no suffix.
	BLASVariant string
	// Generation is the StarPU generation whose example the graph follows:
	// generation.V14 (also the zero value, Auto) or V13, whose Cholesky has
	// no SYRK task (the diagonal update is a GEMM) and whose priorities
	// differ (see Cholesky13, LU).
	Generation generation.Gen
	// SYRKPrioRelease gives 1.4's Cholesky SYRK tasks the priority StarPU
	// 1.4 releases' example writes, 2nb-2k-2n, instead of the one StarPU's
	// source gives them since (1.4.99), its GEMM formula for m == n,
	// 2nb-2k-n (see cholPrio).
	SYRKPrioRelease bool
	// InnerBlock is QR's inner block size (Chameleon's IB, the rows of
	// its T tiles); 0 is Chameleon's default, 48. Other applications
	// ignore it.
	InnerBlock int
	// Symbols, when set, gives the model symbol of kernels by task name
	// ("GEMM" -> "starpu_slu_lu_model_gemm_openblas"), as a calibration
	// names them (generation.Resolution.Symbols); other kernels get the
	// generation's symbol (LU's with BLASVariant's suffix).
	Symbols map[string]string
}

// symbol is the model symbol of kernel: Symbols' if set, else def.
func (o Options) symbol(kernel, def string) string {
	if s, ok := o.Symbols[kernel]; ok {
		return s
	}
	return def
}

// validate checks the options and returns the number of tiles per side.
func (o Options) validate() (nb int, err error) {
	if o.N <= 0 || o.Block <= 0 {
		return 0, fmt.Errorf("models: N=%d and Block=%d must be positive", o.N, o.Block)
	}
	if o.N%o.Block != 0 {
		return 0, fmt.Errorf("models: N=%d is not a multiple of Block=%d", o.N, o.Block)
	}
	if o.Precision != Single && o.Precision != Double {
		return 0, fmt.Errorf("models: unknown precision %d", int(o.Precision))
	}
	if o.N > 1<<31-1 {
		// The examples hold sizes in 32-bit unsigned ints and footprints
		// hash 32-bit nx/ny.
		return 0, fmt.Errorf("models: N=%d does not fit StarPU's 32-bit sizes", o.N)
	}
	if _, err := blasSuffix(o.BLASVariant); err != nil {
		return 0, err
	}
	if o.Prio.Min > o.Prio.Max {
		return 0, fmt.Errorf("models: priority range %d..%d is empty", o.Prio.Min, o.Prio.Max)
	}
	if o.Generation != generation.Auto && o.Generation != generation.V13 && o.Generation != generation.V14 {
		return 0, fmt.Errorf("models: unknown StarPU generation %s", o.Generation)
	}
	return o.N / o.Block, nil
}

// maxTasks bounds the graph size (tasks plus handles), so that an absurd
// N/Block fails with an error instead of an allocation panic or an integer
// overflow in the counts (Cholesky has ~nb³/6 tasks, LU ~nb³/3).
const maxTasks = 1 << 28

func checkSize(app string, nb int, tasks, handles float64) error {
	if tasks+handles > maxTasks {
		return fmt.Errorf("models: %s with %d tiles per side has %.3g tasks, more than the %d supported", app, nb, tasks, maxTasks)
	}
	return nil
}

func blasSuffix(v string) (string, error) {
	switch v {
	case "":
		return "", nil
	case "atlas", "goto", "openblas":
		return "_" + v, nil
	}
	return "", fmt.Errorf("models: unknown BLAS variant %q (want \"\", atlas, goto or openblas)", v)
}

// tiles maps tile coordinates to handle ids (-1: not registered).
type tiles struct {
	nb  int
	ids []int32 // row-major [r*nb+c]
}

func (t *tiles) id(r, c int) int { return int(t.ids[r*t.nb+c]) }

// newTiles registers the tiles for which keep(r, c) holds, column by column,
// top to bottom, and returns the handles and the coordinate map. order(r, c)
// is the tile's path in StarPU's partition tree (graph.Handle.Order).
func newTiles(o Options, nb int, keep func(r, c int) bool, order func(r, c int) int) ([]graph.Handle, *tiles) {
	elem := o.Precision.ElemBytes()
	b := int64(o.Block)
	fp := starpu.MatrixFootprint(uint32(o.Block), uint32(o.Block))
	t := &tiles{nb: nb, ids: make([]int32, nb*nb)}
	n := 0
	for c := 0; c < nb; c++ {
		for r := 0; r < nb; r++ {
			if keep(r, c) {
				n++
			}
		}
	}
	hs := make([]graph.Handle, 0, n)
	// The names "A[r][c]" share one backing string (one allocation, not
	// one per tile).
	buf := make([]byte, 0, n*16)
	ends := make([]int, 0, n)
	for c := 0; c < nb; c++ {
		for r := 0; r < nb; r++ {
			if !keep(r, c) {
				t.ids[r*nb+c] = -1
				continue
			}
			buf = append(buf, "A["...)
			buf = strconv.AppendInt(buf, int64(r), 10)
			buf = append(buf, "]["...)
			buf = strconv.AppendInt(buf, int64(c), 10)
			buf = append(buf, ']')
			ends = append(ends, len(buf))
			t.ids[r*nb+c] = int32(len(hs))
			hs = append(hs, graph.Handle{
				ID:         len(hs),
				SizeBytes:  b * b * elem,
				RowBytes:   b * elem,
				Rows:       b,
				PitchBytes: int64(o.N) * elem,
				Footprint:  fp,
				Tile:       true,
				Order:      order(r, c),
			})
		}
	}
	names := string(buf)
	start := 0
	for i, end := range ends {
		hs[i].Name = names[start:end]
		start = end
	}
	return hs, t
}

// builder appends tasks in submission order. Tasks, their buffers and
// wont_use lists are carved out of three preallocated slabs, so a graph
// costs a few large allocations rather than one per task.
type builder struct {
	tasks []graph.Task
	base  int // ID of tasks[0]
	bufs  []graph.Access
	wont  []int
	// fp[n] is the footprint of a task with n tile buffers: every tile has
	// the same handle footprint, so it depends only on the arity.
	fp [4]uint32
}

// newBuilder makes g's task slab (ntasks long) and a builder that fills
// it, with room for nbufs buffers and nwont wont_use entries.
func newBuilder(g *graph.Graph, ntasks, nbufs, nwont int) *builder {
	g.Tasks = make([]graph.Task, ntasks)
	b := &builder{tasks: g.Tasks[:0], bufs: make([]graph.Access, 0, nbufs), wont: make([]int, 0, nwont)}
	fps := make([]uint32, 0, 3)
	for n := 1; n <= 3; n++ {
		fps = append(fps, g.Handles[0].Footprint)
		b.fp[n] = starpu.TaskFootprint(fps)
	}
	return b
}

// parallelMin is the task count from which iterations are built on two
// cores.
const parallelMin = 20000

// iterations builds the tasks of the outer-loop iterations k = 0..nk-1,
// gen(b, k) submitting iteration k's to b, which must take counts(k)
// tasks, buffers and wont_use entries. Each iteration has its window of
// the slabs, so large graphs are built on two cores (iterations taken in
// order), with the same result as one after the other.
func (b *builder) iterations(nk int, counts func(k int) (tasks, bufs, wont int), gen func(b *builder, k int)) {
	type window struct{ t, b, w int }
	at := make([]window, nk+1)
	for k := 0; k < nk; k++ {
		t, bf, w := counts(k)
		at[k+1] = window{at[k].t + t, at[k].b + bf, at[k].w + w}
	}
	if at[nk].t > cap(b.tasks) || at[nk].b > cap(b.bufs) || at[nk].w > cap(b.wont) {
		panic("models: iteration counts exceed the graph's")
	}
	build := func(k int) {
		lo, hi := at[k], at[k+1]
		sub := &builder{tasks: b.tasks[lo.t:lo.t:hi.t], base: b.base + lo.t,
			bufs: b.bufs[lo.b:lo.b:hi.b], wont: b.wont[lo.w:lo.w:hi.w], fp: b.fp}
		gen(sub, k)
		if len(sub.tasks) != hi.t-lo.t || len(sub.bufs) != hi.b-lo.b || len(sub.wont) != hi.w-lo.w {
			panic(fmt.Sprintf("models: iteration %d miscounted", k))
		}
	}
	var next atomic.Int64
	work := func() {
		for k := int(next.Add(1) - 1); k < nk; k = int(next.Add(1) - 1) {
			build(k)
		}
	}
	if at[nk].t >= parallelMin && runtime.GOMAXPROCS(0) > 1 {
		done := make(chan struct{})
		go func() { work(); close(done) }()
		work()
		<-done
	} else {
		work()
	}
	b.tasks, b.bufs, b.wont = b.tasks[:at[nk].t], b.bufs[:at[nk].b], b.wont[:at[nk].w]
}

// submit appends one task whose buffers are acc (copied into the slab).
func (b *builder) submit(name, model string, flops float64, prio int, acc ...graph.Access) {
	start := len(b.bufs)
	b.bufs = append(b.bufs, acc...)
	end := len(b.bufs)
	b.tasks = append(b.tasks, graph.Task{
		ID:        b.base + len(b.tasks),
		Name:      name,
		Model:     model,
		Flops:     flops,
		Priority:  prio,
		Buffers:   b.bufs[start:end:end],
		Footprint: b.fp[len(acc)],
	})
}

// syncGPU marks the last submitted task's GPU implementation synchronous.
func (b *builder) syncGPU() { b.tasks[len(b.tasks)-1].SyncGPU = true }

// wontUse records starpu_data_wont_use(h) right after the last submitted
// task. Successive calls with no task in between extend the same list.
func (b *builder) wontUse(h int) {
	t := &b.tasks[len(b.tasks)-1]
	start := len(b.wont) - len(t.WontUse)
	b.wont = append(b.wont, h)
	end := len(b.wont)
	t.WontUse = b.wont[start:end:end]
}

func r(h int) graph.Access  { return graph.Access{Handle: h, Mode: graph.R} }
func rw(h int) graph.Access { return graph.Access{Handle: h, Mode: graph.RW} }

func graphName(app string, o Options) string {
	if o.Generation == generation.V13 {
		return fmt.Sprintf("%s N=%d block=%d %s StarPU-1.3", app, o.N, o.Block, o.Precision)
	}
	return fmt.Sprintf("%s N=%d block=%d %s", app, o.N, o.Block, o.Precision)
}
