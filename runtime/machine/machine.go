package machine

import (
	"fmt"
	"strings"
)

// Dir is a transfer direction between two memory nodes ("RAM", "CUDA0").
type Dir struct{ Src, Dst string }

// String is StarPU's and the calibration's spelling, "SRC->DST".
func (d Dir) String() string { return d.Src + "->" + d.Dst }

// ParseDir reads "SRC->DST"; ok is false without the arrow or with an
// empty end.
func ParseDir(s string) (d Dir, ok bool) {
	src, dst, ok := strings.Cut(s, "->")
	if !ok || src == "" || dst == "" {
		return Dir{}, false
	}
	return Dir{src, dst}, true
}

// Machine is the hardware and calibration the runtime runs on.
type Machine struct {
	CPUCores int
	// CPUArch is the perf-model arch of CPU workers ("cpu0": StarPU shares
	// one model among homogeneous CPU cores).
	CPUArch  string
	RAMBytes int64 // 0: unlimited
	Devices  []Device
	Links    []Link
	// Routes maps a direction between memory nodes to its link ids; a GPU
	// pair without a route goes through RAM.
	Routes map[Dir][]string
	// Predict holds the scheduler's transfer predictions per direction.
	Predict map[Dir]Prediction
	// Pitch holds measured 2D-copy models per direction (optional).
	Pitch map[Dir][]PitchModel
	// Serial lists pairs of directions whose copies never overlap: a copy
	// flows once those issued before it in the other direction have ended.
	Serial [][2]Dir
	Costs  Costs
	// Kernels holds duration statistics per (model, arch, footprint).
	Kernels map[KernelKey]KernelStats
	// Power per arch, in watts (optional; energy is reported when every
	// worker's arch has one).
	Power map[string]Power
}

// Power is a processing unit's draw when idle and when running a kernel.
type Power struct{ IdleW, LoadW float64 }

// Device is an accelerator and its memory node.
type Device struct {
	Name        string // memory node: "CUDA0"
	Kind        string // "cuda", "opencl", "hip"
	Arch        string // perf-model arch: "cuda0"
	MemoryBytes int64
}

// Link is a network link (bandwidth B/s, latency s).
type Link struct {
	ID           string
	BandwidthBps float64
	LatencyS     float64
	Fatpipe      bool
}

// Prediction is what the scheduler believes of a transfer direction.
type Prediction struct {
	LatencyS     float64
	BandwidthBps float64
}

// PitchModel: for pitches in [PitchLoBytes, PitchHiBytes], a copy of b bytes
// takes Segments' intercept + slope·b seconds when alone.
type PitchModel struct {
	PitchLoBytes, PitchHiBytes float64
	Segments                   []PitchSegment
}

// PitchSegment is one piece [LoBytes, HiBytes) of a pitch model (HiBytes may
// be +Inf).
type PitchSegment struct {
	LoBytes, HiBytes float64
	InterceptS       float64
	SlopeSPerByte    float64
}

// Costs of the runtime, in seconds.
type Costs struct {
	DeviceAllocS      float64
	DeviceFreeS       float64
	TransferQueueS    float64
	DeviceTaskQueueS  float64
	TaskSubmitS       float64
	TaskPushS         float64
	FetchInputPerBufS float64
}

// KernelKey names a kernel model entry.
type KernelKey struct {
	Model     string
	Arch      string
	Footprint uint32
}

// KernelStats are the measured durations of one kernel entry, in µs.
type KernelStats struct {
	MeanUS, StddevUS float64
	N                uint64
	// Histogram (optional): irregular bins, len(EdgesUS) = len(Counts)+1.
	EdgesUS []float64
	Counts  []uint64
}

// Validate checks what the runtime relies on.
func (m *Machine) Validate() error {
	if m.CPUCores < 1 {
		return fmt.Errorf("machine: %d CPU cores", m.CPUCores)
	}
	seen := map[string]bool{"RAM": true}
	for _, d := range m.Devices {
		if seen[d.Name] {
			return fmt.Errorf("machine: duplicate memory node %q", d.Name)
		}
		seen[d.Name] = true
		if d.MemoryBytes <= 0 {
			return fmt.Errorf("machine: device %s has no memory", d.Name)
		}
	}
	links := map[string]bool{}
	for _, l := range m.Links {
		links[l.ID] = true
	}
	for dir, ls := range m.Routes {
		for _, l := range ls {
			if !links[l] {
				return fmt.Errorf("machine: route %s uses unknown link %q", dir, l)
			}
		}
	}
	return nil
}

// WorkerKind is the kind of processing unit a worker drives.
type WorkerKind uint8

// Worker kinds.
const (
	CPUWorker WorkerKind = iota
	GPUWorker
)

// Worker is one StarPU worker of a run: a CPU core or a GPU driven by a
// CPU thread. StarPU numbers CPU workers first, then GPUs.
type Worker struct {
	ID   int
	Name string // "CPU0", "CUDA1"
	Kind WorkerKind
	Arch string // perf-model arch ("cpu0", "cuda0")
	Node int    // memory node index (0 = RAM)
}
