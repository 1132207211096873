package traces

import (
	"math"
	"strconv"
	"strings"

	"github.com/starsim/starsim/models"
)

// FlopSources says where FillGFlop found the flops of the executed tasks.
type FlopSources struct {
	// Recorded tasks had a GFlop field.
	Recorded int
	// Formula tasks got the application's formula for their kernel
	// (models.KernelFlops) on the tile order their Sizes give.
	Formula int
	// Calibration tasks, of no known kernel, got the calibration's flop
	// count of their model and footprint.
	Calibration int
	// Unknown tasks have no flop count.
	Unknown int
}

// FillGFlop gives every executed record (WorkerId, StartTime, EndTime; not
// a control record) without a GFlop field one (flops / 1e9): the
// application's formula for its kernel (models.KernelFlops: the counts
// StarPU's Cholesky example passes as STARPU_FLOPS, LAWN 41's for LU) on
// n×n tiles, where n is the side of its last buffer — from a Parameters
// entry "M<n>x<n>x<elem>" (StarPU's describe()) or else from Sizes and the
// element size its symbol implies (models.SymbolElemBytes), only when that
// side is a whole number; else calib's flop count for its model and
// footprint, when calib (may be nil) knows one > 0.
func FillGFlop(recs []TaskRecord, calib func(model string, footprint uint32) (float64, bool)) FlopSources {
	var src FlopSources
	for i := range recs {
		r := &recs[i]
		if r.Control != "" || r.WorkerID == nil || r.StartTime == nil || r.EndTime == nil {
			continue
		}
		if r.GFlop != nil {
			src.Recorded++
			continue
		}
		if n, ok := tileOrder(r); ok {
			if f, ok := models.KernelFlops(r.Model, n); ok {
				g := f / 1e9
				r.GFlop = &g
				src.Formula++
				continue
			}
		}
		if calib != nil && r.Footprint != nil {
			if f, ok := calib(r.Model, *r.Footprint); ok && f > 0 && !math.IsInf(f, 0) {
				g := f / 1e9
				r.GFlop = &g
				src.Calibration++
				continue
			}
		}
		src.Unknown++
	}
	return src
}

// tileOrder is the side of a record's last buffer, a square tile.
func tileOrder(r *TaskRecord) (float64, bool) {
	for i := len(r.Parameters) - 1; i >= 0; i-- {
		p := strings.TrimPrefix(strings.TrimSpace(r.Parameters[i]), "_")
		if !strings.HasPrefix(p, "M") {
			continue
		}
		dims := strings.Split(p[1:], "x")
		if len(dims) != 3 {
			continue
		}
		nx, e1 := strconv.Atoi(dims[0])
		ny, e2 := strconv.Atoi(dims[1])
		if e1 == nil && e2 == nil && nx == ny && nx > 0 {
			return float64(nx), true
		}
	}
	elem, ok := models.SymbolElemBytes(r.Model)
	if !ok || len(r.Sizes) == 0 {
		return 0, false
	}
	size := r.Sizes[len(r.Sizes)-1]
	if size <= 0 || size%elem != 0 {
		return 0, false
	}
	n := math.Round(math.Sqrt(float64(size / elem)))
	if int64(n)*int64(n) != size/elem {
		return 0, false
	}
	return n, true
}
