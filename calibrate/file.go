package calibrate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/starsim/starsim/internal/inputfile"
	"github.com/starsim/starsim/internal/jsonpos"
	"github.com/starsim/starsim/internal/srcerr"
)

// Format and Version identify a starsim calibration file.
const (
	Format  = "starsim-calibration"
	Version = 1
)

// File is a starsim calibration: one machine.
type File struct {
	Format      string   `json:"format"`
	Version     int      `json:"version"`
	Name        string   `json:"name"`
	Description string   `json:"description,omitempty"`
	Sources     []string `json:"sources,omitempty"`

	Machine   Machine       `json:"machine"`
	Network   Network       `json:"network"`
	Transfers []Transfer    `json:"transfers"`
	Serial    []SerialPair  `json:"serialized,omitempty"`
	Costs     Costs         `json:"costs"`
	Kernels   []KernelModel `json:"kernels"`
	Power     []ArchPower   `json:"power,omitempty"`
	// Unreadable lists the StarPU model files Import could not read.
	// StarPU reads a model only when a codelet uses it: a run that needs
	// one of these models fails with its FILE:LINE; other runs go on.
	Unreadable []UnreadableModel `json:"unreadable_models,omitempty"`
}

// UnreadableModel is a StarPU model file that could not be read: where and
// why.
type UnreadableModel struct {
	Model  string `json:"model"` // the model symbol: "starpu_dlu_lu_model_gemm"
	File   string `json:"file"`
	Line   int    `json:"line"` // 0: the file as a whole
	Reason string `json:"reason"`
}

// Err is the model's FILE:LINE: reason error.
func (u UnreadableModel) Err() error { return srcerr.Errorf(u.File, u.Line, "%s", u.Reason) }

// Machine is the hardware: CPU cores and accelerators. Memory nodes are
// "RAM" and each device's Name.
type Machine struct {
	CPUCores int `json:"cpu_cores"`
	// CPUSpeedFlops is the speed of CPU hosts in the platform (StarPU: 2e9).
	CPUSpeedFlops float64 `json:"cpu_speed_flops"`
	// RAMBytes is the host memory; 0 means unlimited (StarPU does not evict RAM).
	RAMBytes int64    `json:"ram_bytes,omitempty"`
	Devices  []Device `json:"devices"`
}

// Device is one accelerator and its memory node.
type Device struct {
	Name        string `json:"name"` // memory node and platform host: "CUDA0"
	Kind        string `json:"kind"` // "cuda", "opencl", "hip"
	Arch        string `json:"arch"` // perf-model arch: "cuda0"
	Model       string `json:"model"`
	MemoryBytes int64  `json:"memory_bytes"`
	// DriverCore is the CPU core whose thread drives the device: recorded
	// and shown, not simulated (the runtime takes no core from the CPU
	// workers for it; their count does, see StarPU's default NCPU).
	DriverCore int  `json:"driver_core"`
	PeerAccess bool `json:"peer_access"` // direct device-to-device copies
}

// Network is the SimGrid network transfers run on: links and directed routes.
type Network struct {
	Config []Prop  `json:"config,omitempty"` // SimGrid network/* props
	Links  []Link  `json:"links"`
	Routes []Route `json:"routes"`
}

// Prop is a SimGrid configuration property.
type Prop struct {
	ID    string `json:"id"`
	Value string `json:"value"`
}

// Link is a network link. Sharing is "SHARED" (default) or "FATPIPE".
type Link struct {
	ID           string  `json:"id"`
	BandwidthBps float64 `json:"bandwidth_Bps"`
	LatencyS     float64 `json:"latency_s"`
	Sharing      string  `json:"sharing_policy,omitempty"`
}

// Route is a one-way route between memory nodes.
type Route struct {
	Src   string   `json:"src"`
	Dst   string   `json:"dst"`
	Links []string `json:"links"`
}

// Transfer is what is known of one transfer direction: the scheduler's
// prediction (StarPU's .latency and .bandwidth) and, optionally, measured
// pitch-dependent models of a 2D tile copy's uncontended time.
type Transfer struct {
	Src                   string       `json:"src"`
	Dst                   string       `json:"dst"`
	PredictedLatencyS     float64      `json:"predicted_latency_s"`
	PredictedBandwidthBps float64      `json:"predicted_bandwidth_Bps"`
	PitchModels           []PitchModel `json:"pitch_models,omitempty"`
}

// PitchModel is the piece-wise linear time of a copy for pitches in
// [PitchLoBytes, PitchHiBytes].
type PitchModel struct {
	PitchLoBytes float64   `json:"pitch_lo_bytes"`
	PitchHiBytes float64   `json:"pitch_hi_bytes"`
	Segments     []Segment `json:"segments"`
}

// Segment: time = InterceptS + SlopeSPerByte × bytes for bytes in
// [LoBytes, HiBytes); HiBytes null means +∞.
type Segment struct {
	LoBytes       float64  `json:"lo_bytes"`
	HiBytes       *float64 `json:"hi_bytes"`
	InterceptS    float64  `json:"intercept_s"`
	SlopeSPerByte float64  `json:"slope_s_per_byte"`
}

// SerialPair says that copies in direction A and in direction B ("SRC->DST")
// never overlap: one waits for the other. Copies in the same direction are
// always serialized (one queue per direction), as in StarPU.
type SerialPair struct {
	A string `json:"a"`
	B string `json:"b"`
}

// Costs of the runtime, in seconds (defaults: StarPU's simulator).
type Costs struct {
	DeviceAllocS float64 `json:"device_alloc_s"`
	DeviceFreeS  float64 `json:"device_free_s"`
	// PinnedAllocSPerMiB is StarPU's cost of a pinned host allocation:
	// recorded and shown, not simulated (the runtime allocates no pinned
	// host memory during a run).
	PinnedAllocSPerMiB float64 `json:"pinned_alloc_s_per_MiB"`
	TransferQueueS     float64 `json:"transfer_queue_s"`
	DeviceTaskQueueS   float64 `json:"device_task_queue_s"`
	TaskSubmitS        float64 `json:"task_submit_s"`
	TaskPushS          float64 `json:"task_push_s"`
	FetchInputPerBufS  float64 `json:"fetch_input_per_buffer_s"`
}

// DefaultCosts are StarPU-over-SimGrid's injected costs
// (StarPU's STARPU_SIMGRID_*_COST switches: CUDA_MALLOC_COST in driver_cuda.c
// and malloc.c, CUDA_QUEUE_COST in simgrid.c, TASK_SUBMIT_COST,
// TASK_PUSH_COST and FETCHING_INPUT_COST): cudaMalloc 175 µs, free 750 µs,
// pinned host allocation 650 µs/MiB, 10 µs per queued transfer and per async
// GPU task, 1 µs per submit, push and fetched buffer.
func DefaultCosts() Costs {
	return Costs{
		DeviceAllocS: 175e-6, DeviceFreeS: 750e-6, PinnedAllocSPerMiB: 650e-6,
		TransferQueueS: 10e-6, DeviceTaskQueueS: 10e-6,
		TaskSubmitS: 1e-6, TaskPushS: 1e-6, FetchInputPerBufS: 1e-6,
	}
}

// KernelModel is one kernel's model for one arch and implementation.
type KernelModel struct {
	Model   string        `json:"model"` // StarPU model symbol: "chol_model_gemm"
	Arch    string        `json:"arch"`  // "cpu0", "cuda0", ...
	Impl    int           `json:"impl"`
	Entries []KernelEntry `json:"entries"`
	// Regressions as StarPU stores them (optional; NaN written as null).
	Regression      *Regression      `json:"regression,omitempty"`
	NLRegression    *NLRegression    `json:"nl_regression,omitempty"`
	MultiRegression *MultiRegression `json:"multi_regression,omitempty"`
}

// KernelEntry holds the durations of one footprint (one input size).
type KernelEntry struct {
	Footprint string     `json:"footprint"` // 8 hex digits
	SizeBytes uint64     `json:"size"`
	Flops     Float      `json:"flops"`
	N         uint64     `json:"n"`
	MeanUS    float64    `json:"mean_us"`
	StddevUS  float64    `json:"stddev_us"`
	SumUS     float64    `json:"sum_us"`
	Sum2US2   float64    `json:"sum2_us2"`
	Histogram *Histogram `json:"histogram,omitempty"`
}

// Histogram is an irregular histogram of durations: len(EdgesUS) =
// len(Counts)+1, edges strictly increasing.
type Histogram struct {
	EdgesUS []float64 `json:"edges_us"`
	Counts  []uint64  `json:"counts"`
}

// Regression is StarPU's log-log power law y = alpha·size^beta and its sums.
type Regression struct {
	SumLnX    Float  `json:"sumlnx"`
	SumLnX2   Float  `json:"sumlnx2"`
	SumLnY    Float  `json:"sumlny"`
	SumLnXLnY Float  `json:"sumlnxlny"`
	Alpha     Float  `json:"alpha"`
	Beta      Float  `json:"beta"`
	N         uint64 `json:"n"`
	MinX      uint64 `json:"minx"`
	MaxX      uint64 `json:"maxx"`
}

// NLRegression is StarPU's y = a·size^b + c.
type NLRegression struct {
	A Float `json:"a"`
	B Float `json:"b"`
	C Float `json:"c"`
}

// MultiRegression is StarPU's multiple regression: c0 + Σ c_i Π p_k^e_ik.
type MultiRegression struct {
	Coefs []Float `json:"coefs"`
}

// ArchPower is the power of one processing unit, in watts.
type ArchPower struct {
	Arch  string  `json:"arch"`
	IdleW float64 `json:"idle_w"`
	LoadW float64 `json:"load_w"`
}

// Float is a float64 that writes NaN as JSON null and reads null as NaN
// (StarPU files use nan for unknown values).
type Float float64

// MarshalJSON writes NaN as null.
func (f Float) MarshalJSON() ([]byte, error) {
	v := float64(f)
	if math.IsNaN(v) {
		return []byte("null"), nil
	}
	if math.IsInf(v, 0) {
		return nil, fmt.Errorf("infinite value %v", v)
	}
	return json.Marshal(v)
}

// UnmarshalJSON reads null as NaN.
func (f *Float) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*f = Float(math.NaN())
		return nil
	}
	var v float64
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*f = Float(v)
	return nil
}

// ReadFile reads and validates a calibration file.
func ReadFile(path string) (*File, error) {
	data, err := inputfile.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(data, path)
}

// Parse decodes and validates a calibration; name is the file name in errors.
// Unknown keys are errors: a misspelt key must not silently become a default.
func Parse(data []byte, name string) (*File, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f File
	if err := dec.Decode(&f); err != nil {
		return nil, decodeErr(data, name, err)
	}
	if dec.More() {
		return nil, srcerr.Errorf(name, srcerr.LineOf(data, dec.InputOffset()), "unexpected data after the calibration object")
	}
	if err := f.Validate(); err != nil {
		var ve *ValidationError
		if errors.As(err, &ve) {
			return nil, srcerr.Errorf(name, jsonpos.Line(data, ve.Path...), "%s", ve.Error())
		}
		return nil, srcerr.Errorf(name, 0, "%v", err)
	}
	return &f, nil
}

func decodeErr(data []byte, name string, err error) error {
	return jsonpos.DecodeError(data, name, "", err, -1)
}

// Write writes the calibration as indented JSON (deterministic).
func (f *File) Write(w io.Writer) error {
	if err := f.Validate(); err != nil {
		return err
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	enc.SetEscapeHTML(false)
	return enc.Encode(f)
}
