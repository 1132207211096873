package agent

// Protocol and Version name the protocol in the hello messages.
const (
	Protocol = "starsim-sched"
	Version  = 1
)

// Hello is the first message: the machine as the run sees it.
type Hello struct {
	Type        string               `json:"type"` // "hello"
	Seq         int                  `json:"seq"`  // 0
	Protocol    string               `json:"protocol"`
	Version     int                  `json:"version"`
	Scheduler   string               `json:"scheduler"`
	MemoryNodes []MemoryNode         `json:"memory_nodes"`
	Workers     []Worker             `json:"workers"`
	Archs       []string             `json:"archs"`
	PowerW      map[string]ArchPower `json:"power_w,omitempty"`
	Tasks       int                  `json:"tasks"`
}

// MemoryNode is one memory node (RAM, a GPU's memory).
type MemoryNode struct {
	ID            int    `json:"id"`
	Name          string `json:"name"`
	CapacityBytes int64  `json:"capacity_bytes"`
}

// Worker is one worker: CPU workers first, then one per GPU.
type Worker struct {
	ID   int    `json:"id"`
	Name string `json:"name"`
	Kind string `json:"kind"` // "cpu" or "gpu"
	Arch string `json:"arch"`
	Node int    `json:"node"`
}

// ArchPower is an arch's power draw, idle and running a kernel (W).
type ArchPower struct {
	Idle float64 `json:"idle"`
	Load float64 `json:"load"`
}

// Push asks where a ready task goes.
type Push struct {
	Type       string      `json:"type"` // "push"
	Seq        int         `json:"seq"`
	TimeUS     float64     `json:"time_us"`
	Task       Task        `json:"task"`
	Candidates []Candidate `json:"candidates"`
}

// Task is a task as the agent sees it.
type Task struct {
	ID        int     `json:"id"`
	Kernel    string  `json:"kernel"`
	Model     string  `json:"model"`
	Footprint string  `json:"footprint"`
	Priority  int     `json:"priority"`
	Flops     float64 `json:"flops"`
	Data      []Data  `json:"data"`
}

// Data is one of a task's data accesses.
type Data struct {
	ID        int    `json:"id"`
	Name      string `json:"name"`
	SizeBytes int64  `json:"size_bytes"`
	Mode      string `json:"mode"`
}

// Candidate is a worker that can run the task, with what dmda computes for
// it (µs, J).
type Candidate struct {
	Worker          int      `json:"worker"`
	ExpectedStartUS float64  `json:"expected_start_us"`
	QueuedUS        float64  `json:"queued_us"`
	LengthUS        float64  `json:"length_us"`
	TransferUS      float64  `json:"transfer_us"`
	ExpectedEndUS   float64  `json:"expected_end_us"`
	EnergyJ         *float64 `json:"energy_j"`
}

// Pop asks which deferred task an idle worker takes.
type Pop struct {
	Type   string  `json:"type"` // "pop"
	Seq    int     `json:"seq"`
	TimeUS float64 `json:"time_us"`
	Worker int     `json:"worker"`
}

// End says the simulation has stopped (no reply).
type End struct {
	Type       string  `json:"type"` // "end"
	Seq        int     `json:"seq"`
	TimeUS     float64 `json:"time_us"`
	MakespanUS float64 `json:"makespan_us"`
}

// HelloReply is the agent's answer to Hello.
type HelloReply struct {
	Type    string `json:"type"` // "hello"
	Version int    `json:"version"`
	Name    string `json:"name,omitempty"`
}

// PushReply answers a push: a worker to queue the task on (optionally
// prefetching its inputs there), or Defer.
type PushReply struct {
	Seq      int
	Worker   int // -1 with Defer
	Prefetch bool
	Defer    bool
}

// PopReply answers a pop: a deferred task's id, or -1 (null: none).
type PopReply struct {
	Seq  int
	Task int
}
