package models_test

import (
	"fmt"

	"github.com/starsim/starsim/calibrate"
	"github.com/starsim/starsim/calibrate/starpu"
	"github.com/starsim/starsim/models"
	"github.com/starsim/starsim/models/generation"
	"github.com/starsim/starsim/runtime/graph"
	"github.com/starsim/starsim/runtime/sched"
	"github.com/starsim/starsim/runtime/sim"
)

// sweeps is an application written outside package models: a row of
// N/Block tiles updated in 4 sweeps, each tile by a GEMM-like task that
// reads its two neighbours (they wrap around). Its kernel is Cholesky's
// GEMM model (three tiles), which the embedded calibration has.
var sweeps = models.App{
	Name: "sweeps",
	Kernels: func(generation.Gen, bool) []generation.KernelSymbol {
		return []generation.KernelSymbol{{Kernel: "GEMM", Symbol: "chol_model_gemm"}}
	},
	Size: func(nb int64) (tasks, handles, buffers int64) { return 4 * nb, nb, 12 * nb },
	Build: func(o models.Options, nb int) (*graph.Graph, error) {
		b := int64(o.Block)
		elem := o.Precision.ElemBytes()
		fp := starpu.MatrixFootprint(uint32(b), uint32(b))
		g := &graph.Graph{Name: fmt.Sprintf("sweeps N=%d block=%d", o.N, o.Block)}
		for i := range nb {
			g.Handles = append(g.Handles, graph.Handle{ID: i, Name: fmt.Sprintf("A[%d]", i), SizeBytes: b * b * elem,
				RowBytes: b * elem, Rows: b, PitchBytes: int64(o.N) * elem, Footprint: fp})
		}
		flops := 2 * float64(b*b*b)
		for range 4 {
			for i := range nb {
				g.Tasks = append(g.Tasks, graph.Task{ID: len(g.Tasks), Name: "GEMM", Model: "chol_model_gemm", Flops: flops,
					Footprint: starpu.TaskFootprint([]uint32{fp, fp, fp}),
					Buffers: []graph.Access{{Handle: (i + nb - 1) % nb, Mode: graph.R}, {Handle: (i + 1) % nb, Mode: graph.R},
						{Handle: i, Mode: graph.RW}}})
				g.TotalFlops += flops
			}
		}
		return g, nil
	},
}

// Example_newApplication registers an application with one call and runs
// it under dmda on the embedded machine.
func Example_newApplication() {
	models.Register(&sweeps)
	prio, _ := sched.PriorityRange("dmda")
	g, err := models.New("sweeps", models.Options{N: 960 * 16, Block: 960, Prio: prio})
	if err != nil {
		fmt.Println(err)
		return
	}
	tasks, handles, _, _ := models.Size("sweeps", models.Options{N: 960 * 16, Block: 960})
	fmt.Println(g.Name, "tasks", len(g.Tasks), tasks, "handles", len(g.Handles), handles)
	o := sim.DefaultOptions()
	s, err := sim.New(calibrate.Default().RuntimeMachine(), g, o)
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := s.Run()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("ran", res.NTasks, "tasks; GFlop/s > 0:", res.GFlops > 0)
	// Output:
	// sweeps N=15360 block=960 tasks 64 64 handles 16 16
	// ran 64 tasks; GFlop/s > 0: true
}
