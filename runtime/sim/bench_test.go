package sim_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/starsim/starsim/calibrate"
	"github.com/starsim/starsim/calibrate/starpu"
	"github.com/starsim/starsim/models"
	"github.com/starsim/starsim/runtime/graph"
	"github.com/starsim/starsim/runtime/sim"
)

// BenchmarkAttilaCholesky76800 is the runtime's main benchmark: attila, Cholesky
// N=76800 block 960 (88 560 tasks), GPU-only. StarPU over SimGrid needs
// 17 to 77 s of wall time for it, by scheduler (../shared/reference).
func BenchmarkAttilaCholesky76800(b *testing.B) {
	cal, _, err := calibrate.Import("../../../shared/calibrations/starpu-sampling", "attila")
	if err != nil {
		b.Skip("../shared not found")
	}
	m := cal.RuntimeMachine()
	for _, sched := range []string{"dmda", "dmdar", "dmdas"} {
		b.Run(sched, func(b *testing.B) {
			g, err := models.New("cholesky", models.Options{N: 76800, Block: 960, Prio: prioOf(sched)})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			cpu := cpuSeconds()
			for b.Loop() {
				o := sim.DefaultOptions()
				o.Sched, o.NCPU = sched, 0
				s, err := sim.New(m, g, o)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := s.Run(); err != nil {
					b.Fatal(err)
				}
			}
			reportCPU(b, cpu)
		})
	}
}

// synthetic builds a synthetic DAG of n GEMM-like tasks over a pool of
// tiles: task i reads tiles (7i mod p) and (13i+1 mod p) and updates tile
// (i mod p), so sequential consistency chains tasks through shared tiles.
// Its tasks and buffers are allocated once, at their final size.
func synthetic(n, pool int) *graph.Graph {
	const nb = 960
	fp := starpu.MatrixFootprint(nb, nb)
	g := &graph.Graph{Name: fmt.Sprintf("synthetic %d tasks", n), Tasks: make([]graph.Task, 0, n)}
	for h := 0; h < pool; h++ {
		g.Handles = append(g.Handles, graph.Handle{ID: h, Name: fmt.Sprint("T", h), SizeBytes: nb * nb * 4,
			RowBytes: nb * 4, Rows: nb, PitchBytes: nb * 4, Footprint: fp})
	}
	tfp := starpu.TaskFootprint([]uint32{fp, fp, fp})
	bufs := make([]graph.Access, 3*n)
	for i := 0; i < n; i++ {
		a, c, w := (7*i)%pool, (13*i+1)%pool, i%pool
		if a == w {
			a = (a + 1) % pool
		}
		if c == w || c == a {
			c = (c + 2) % pool
		}
		b := bufs[3*i : 3*i+3 : 3*i+3]
		b[0], b[1], b[2] = graph.Access{Handle: a, Mode: graph.R}, graph.Access{Handle: c, Mode: graph.R}, graph.Access{Handle: w, Mode: graph.RW}
		g.Tasks = append(g.Tasks, graph.Task{ID: i, Name: "GEMM", Model: "chol_model_gemm", Flops: 2 * nb * nb * nb, Buffers: b, Footprint: tfp})
		g.TotalFlops += 2 * nb * nb * nb
	}
	return g
}

// BenchmarkSynthetic1M runs a 1 000 000-task synthetic DAG on the embedded
// calibration (40 cores, 4 GPUs) under dmdas; -benchmem reports memory.
func BenchmarkSynthetic1M(b *testing.B) { benchSynthetic(b, 1_000_000) }

// BenchmarkSynthetic10M is the same with 10 000 000 tasks. It needs about
// 4 GB and a minute, so it runs only with STARSIM_BENCH_10M=1.
func BenchmarkSynthetic10M(b *testing.B) {
	if os.Getenv("STARSIM_BENCH_10M") != "1" {
		b.Skip("set STARSIM_BENCH_10M=1 to run it")
	}
	benchSynthetic(b, 10_000_000)
}

func benchSynthetic(b *testing.B, n int) {
	g := synthetic(n, 4000)
	m := calibrate.Default().RuntimeMachine()
	b.ReportAllocs()
	cpu := cpuSeconds()
	for b.Loop() {
		o := sim.DefaultOptions()
		o.Sched = "dmdas"
		s, err := sim.New(m, g, o)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.Run(); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, cpu)
}

// reportCPU reports the CPU time per iteration since cpuSeconds gave
// start (cpu-s/op, every thread of the process, the collector's
// included): on a machine shared with other jobs wall time (ns/op) grows
// with their load, CPU time much less.
func reportCPU(b *testing.B, start float64) {
	if b.N > 0 {
		b.ReportMetric((cpuSeconds()-start)/float64(b.N), "cpu-s/op")
	}
}
