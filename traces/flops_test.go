package traces

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestFillGFlop(t *testing.T) {
	w, s, e := 0, 1.0, 2.0
	fp := uint32(0x617e5fe6)
	g := 0.5
	task := func(model string, sizes []int64, params ...string) TaskRecord {
		return TaskRecord{Model: model, WorkerID: &w, StartTime: &s, EndTime: &e, Footprint: &fp, Sizes: sizes, Parameters: params}
	}
	recs := []TaskRecord{
		{Model: "chol_model_gemm", WorkerID: &w, StartTime: &s, EndTime: &e, GFlop: &g}, // recorded
		task("my_potrf", []int64{3686400}),                                              // calibration
		task("starpu_slu_lu_model_gemm", []int64{3686400, 3686400, 3686400}),            // formula, from Sizes (float)
		task("starpu_dlu_lu_model_getrf", []int64{7372800}),                             // formula, double
		task("starpu_slu_lu_model_12", []int64{1, 2}, "", "M480x480x4"),                 // formula, from Parameters
		task("starpu_slu_lu_model_22", []int64{1000}),                                   // not a square tile
		task("my_codelet", []int64{3686400}),                                            // no formula
		{Control: "WontUse", WorkerID: &w, StartTime: &s, EndTime: &e},                  // not a task
	}
	calib := func(model string, f uint32) (float64, bool) {
		return 0.295372e9, (model == "my_potrf" || model == "starpu_slu_lu_model_gemm") && f == fp
	}
	src := FillGFlop(recs, calib)
	assert.Equal(t, FlopSources{Recorded: 1, Calibration: 1, Formula: 3, Unknown: 2}, src)
	assert.Equal(t, 0.5, *recs[0].GFlop)
	assert.Equal(t, 0.295372, *recs[1].GFlop)
	assert.InDelta(t, 1.769472, *recs[2].GFlop, 1e-12)
	assert.InDelta(t, (2*960*960*960/3.0-960*960/2.0+5*960/6.0)/1e9, *recs[3].GFlop, 1e-9)
	assert.InDelta(t, 480*480*480/1e9, *recs[4].GFlop, 1e-12)
	assert.Nil(t, recs[5].GFlop)
	assert.Nil(t, recs[6].GFlop)
	assert.Nil(t, recs[7].GFlop)
}
