package agent

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/starsim/starsim/runtime/machine"
	"github.com/starsim/starsim/runtime/sched"
)

// Prefix starts the --sched value of an external scheduler.
const Prefix = "external:"

// DefaultTimeout bounds each exchange with an agent (wall clock).
const DefaultTimeout = 60 * time.Second

// Config is what the runs of one external scheduler share.
type Config struct {
	// Name is the --sched value ("external:python3 eager.py"); Args the
	// command it starts.
	Name string
	Args []string
	// Stderr receives the agent's stderr (nil: discarded); Transcript
	// (nil: none) every line exchanged.
	Stderr, Transcript io.Writer
	// Timeout bounds each exchange (0: DefaultTimeout).
	Timeout time.Duration
}

// ParseName reads an --sched value "external:COMMAND": the command is
// split into words as a shell would, without expanding anything ('...'
// and "..." quote, \ escapes).
func ParseName(sched string) (*Config, error) {
	cmd, ok := strings.CutPrefix(sched, Prefix)
	if !ok {
		return nil, fmt.Errorf("%q is no external scheduler (want %sCOMMAND)", sched, Prefix)
	}
	args, err := SplitCommand(cmd)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", sched, err)
	}
	if len(args) == 0 {
		return nil, fmt.Errorf("%s: no command (want %sCOMMAND, such as %spython3 tools/agents/eager.py)", sched, Prefix, Prefix)
	}
	return &Config{Name: sched, Args: args}, nil
}

// SplitCommand splits a command line into words: blanks separate them,
// '...' quotes anything, "..." quotes anything but \" and \\, and \ outside
// quotes escapes the next character.
func SplitCommand(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("quote ' not closed")
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\\') {
					i++
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, fmt.Errorf(`quote " not closed`)
			}
			inWord = true
		case c == '\\':
			if i+1 >= len(s) {
				return nil, fmt.Errorf(`\ at the end`)
			}
			i++
			cur.WriteByte(s[i])
			inWord = true
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// Scheduler is a sched.Scheduler whose decisions an agent process makes.
// It keeps, per worker, a queue of the tasks the agent placed there (first
// in, first out) and the bookkeeping StarPU's dmda keeps to predict when
// each worker is free, which it reports to the agent. It starts the agent
// at its first push, so that a run that is only prepared (a sweep's dry
// run) starts none. A failure stops the run (View.Fail) and is Close's
// error.
type Scheduler struct {
	cfg     *Config
	v       *sched.View
	proc    *Process
	started bool
	err     error
	seq     int
	name    string // the agent's, from its hello

	queues [][]*sched.Task // per worker, placed by the agent
	held   map[int]*sched.Task
	dm     []dmWorker
	pred   map[int]dmTask
}

// dmWorker is dmda's per-worker prediction state (µs).
type dmWorker struct{ expStart, expLen, pipeLen float64 }

// dmTask is what a placed task added to its worker's prediction.
type dmTask struct{ lengthUS, penPrimeUS float64 }

// New makes the scheduler of one run.
func New(cfg *Config) *Scheduler {
	return &Scheduler{cfg: cfg, held: map[int]*sched.Task{}, pred: map[int]dmTask{}}
}

// Init implements sched.Scheduler.
func (s *Scheduler) Init(v *sched.View) {
	s.v = v
	n := len(v.Workers())
	s.queues = make([][]*sched.Task, n)
	s.dm = make([]dmWorker, n)
	for i := range s.dm {
		s.dm[i].expStart = v.NowUS()
	}
}

// Err is the scheduler's first failure, if any.
func (s *Scheduler) Err() error { return s.err }

// AgentName is the name the agent gave in its hello ("" before it).
func (s *Scheduler) AgentName() string { return s.name }

func (s *Scheduler) fail(seq int, what string, err error) {
	if s.err != nil {
		return
	}
	who := s.cfg.Name
	if s.name != "" {
		who += " (" + s.name + ")"
	}
	if seq >= 0 {
		s.err = fmt.Errorf("external scheduler %s: message %d (%s): %v", who, seq, what, err)
	} else {
		s.err = fmt.Errorf("external scheduler %s: %v", who, err)
	}
	if s.proc != nil {
		s.proc.Kill()
	}
	s.v.Fail(s.err)
}

// start starts the agent and says hello.
func (s *Scheduler) start() {
	s.started = true
	timeout := s.cfg.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	p, err := Start(s.cfg.Args, s.cfg.Stderr, s.cfg.Transcript, timeout)
	if err != nil {
		s.fail(-1, "", err)
		return
	}
	s.proc = p
	h := Hello{Type: "hello", Protocol: Protocol, Version: Version, Scheduler: s.cfg.Name, Tasks: s.v.NumTasks()}
	for i, n := range s.v.MemoryNodes() {
		h.MemoryNodes = append(h.MemoryNodes, MemoryNode{ID: i, Name: n.Name, CapacityBytes: n.CapacityBytes})
	}
	for _, w := range s.v.Workers() {
		kind := "cpu"
		if w.Kind == machine.GPUWorker {
			kind = "gpu"
		}
		h.Workers = append(h.Workers, Worker{ID: w.ID, Name: w.Name, Kind: kind, Arch: w.Arch, Node: w.Node})
		if !slices.Contains(h.Archs, w.Arch) {
			h.Archs = append(h.Archs, w.Arch)
		}
		if p, ok := s.v.Power(w.Arch); ok {
			if h.PowerW == nil {
				h.PowerW = map[string]ArchPower{}
			}
			h.PowerW[w.Arch] = ArchPower{Idle: p.IdleW, Load: p.LoadW}
		}
	}
	b, err := p.Exchange(h)
	if err != nil {
		s.fail(0, "hello", err)
		return
	}
	r, err := ParseHelloReply(b)
	if err != nil {
		s.fail(0, "hello", fmt.Errorf("reply %q: %v", clip(b), err))
		return
	}
	s.name = r.Name
}

// Push implements sched.Scheduler: the agent places t or defers it.
func (s *Scheduler) Push(t *sched.Task) sched.Decision {
	if !s.started {
		s.start()
	}
	if s.err != nil {
		return sched.Decision{} // the run stops
	}
	s.seq++
	now := s.v.NowUS()
	spec := s.v.Spec(t)
	msg := Push{Type: "push", Seq: s.seq, TimeUS: now, Task: Task{ID: t.ID(), Kernel: spec.Name, Model: spec.Model,
		Footprint: fmt.Sprintf("%08x", spec.Footprint), Priority: t.Priority(), Flops: spec.Flops, Data: []Data{}}}
	for _, b := range t.Buffers() {
		h := b.H.Spec()
		msg.Task.Data = append(msg.Task.Data, Data{ID: h.ID, Name: h.Name, SizeBytes: h.SizeBytes, Mode: b.Mode.String()})
	}
	for _, w := range s.v.Workers() {
		if !s.v.CanExecute(t, w) {
			continue
		}
		st := &s.dm[w.ID]
		start := max(st.expStart, now)
		length := s.v.ExpectedLengthUS(t, w)
		pen := s.v.ExpectedTransferUS(t, w)
		c := Candidate{Worker: w.ID, ExpectedStartUS: start, QueuedUS: st.expLen, LengthUS: length, TransferUS: pen,
			ExpectedEndUS: max(start+st.expLen, now+pen) + length}
		if p, ok := s.v.Power(w.Arch); ok {
			e := length / 1e6 * p.LoadW
			c.EnergyJ = &e
		}
		msg.Candidates = append(msg.Candidates, c)
	}
	what := fmt.Sprintf("push of task %d", t.ID())
	b, err := s.proc.Exchange(msg)
	if err != nil {
		s.fail(s.seq, what, err)
		return sched.Decision{}
	}
	r, err := ParsePushReply(b, s.seq, msg.Candidates)
	if err != nil {
		s.fail(s.seq, what, fmt.Errorf("reply %q: %v", clip(b), err))
		return sched.Decision{}
	}
	if s.v.Explaining(t) {
		rec := sched.ScheduleRecord{TimeUS: now, Task: t.ID(), Kernel: spec.Name, Priority: t.Priority(), Chosen: "defer"}
		for _, c := range msg.Candidates {
			rec.Candidates = append(rec.Candidates, sched.Candidate{Worker: s.v.Workers()[c.Worker].Name, StartUS: c.ExpectedStartUS,
				QueuedUS: c.QueuedUS, LengthUS: c.LengthUS, PenaltyUS: c.TransferUS, EndUS: c.ExpectedEndUS})
		}
		if !r.Defer {
			rec.Chosen = s.v.Workers()[r.Worker].Name
		}
		s.v.Explain(rec) // (fitness 0: the agent's is its own)
	}
	if r.Defer {
		s.held[t.ID()] = t
		return sched.Decision{}
	}
	w := s.v.Workers()[r.Worker]
	s.place(t, w, msg.Candidates)
	s.queues[w.ID] = append(s.queues[w.ID], t)
	return sched.Decision{Worker: w, Prefetch: r.Prefetch}
}

// place adds t to w's predictions, as dmda's push does.
func (s *Scheduler) place(t *sched.Task, w *machine.Worker, cands []Candidate) {
	now := s.v.NowUS()
	pen := 0.0
	for _, c := range cands {
		if c.Worker == w.ID {
			pen = c.TransferUS
		}
	}
	st := &s.dm[w.ID]
	st.expStart = max(st.expStart, now)
	penPrime := 0.0
	if expEnd := st.expStart + st.expLen; now+pen >= expEnd {
		penPrime = now + pen - expEnd
	}
	length := s.v.ExpectedLengthUS(t, w)
	st.expLen += penPrime + length
	s.pred[t.ID()] = dmTask{lengthUS: length, penPrimeUS: penPrime}
}

// Pop implements sched.Scheduler: w's queue first, else a deferred task
// the agent hands it.
func (s *Scheduler) Pop(w *machine.Worker) *sched.Task {
	if s.err != nil {
		return nil
	}
	var t *sched.Task
	if q := s.queues[w.ID]; len(q) > 0 {
		t = q[0]
		q[0] = nil
		s.queues[w.ID] = q[1:]
	} else if len(s.held) > 0 {
		s.seq++
		what := fmt.Sprintf("pop for worker %s", w.Name)
		b, err := s.proc.Exchange(Pop{Type: "pop", Seq: s.seq, TimeUS: s.v.NowUS(), Worker: w.ID})
		if err != nil {
			s.fail(s.seq, what, err)
			return nil
		}
		r, err := ParsePopReply(b, s.seq)
		if err != nil {
			s.fail(s.seq, what, fmt.Errorf("reply %q: %v", clip(b), err))
			return nil
		}
		if r.Task < 0 {
			return nil
		}
		t = s.held[r.Task]
		switch {
		case t == nil:
			s.fail(s.seq, what, fmt.Errorf("reply %q: task %d is not a deferred task", clip(b), r.Task))
			return nil
		case !s.v.CanExecute(t, w):
			s.fail(s.seq, what, fmt.Errorf("reply %q: worker %s cannot run task %d", clip(b), w.Name, r.Task))
			return nil
		}
		delete(s.held, r.Task)
		s.place(t, w, []Candidate{{Worker: w.ID, TransferUS: s.v.ExpectedTransferUS(t, w)}})
	} else {
		return nil
	}
	// dmda's pop.
	now := s.v.NowUS()
	st, p := &s.dm[w.ID], s.pred[t.ID()]
	st.expStart = max(now, st.expStart)
	st.expLen -= p.penPrimeUS
	st.pipeLen += p.penPrimeUS
	st.expStart = now + st.pipeLen
	return t
}

// PreExec implements sched.Scheduler (dmda's bookkeeping).
func (s *Scheduler) PreExec(w *machine.Worker, t *sched.Task) {
	st, p := &s.dm[w.ID], s.pred[t.ID()]
	st.pipeLen -= p.penPrimeUS
	st.expLen -= p.lengthUS
	st.pipeLen += p.lengthUS
	st.expStart = s.v.NowUS() + st.pipeLen
}

// PostExec implements sched.Scheduler (dmda's bookkeeping).
func (s *Scheduler) PostExec(w *machine.Worker, t *sched.Task) {
	st, p := &s.dm[w.ID], s.pred[t.ID()]
	st.pipeLen -= p.lengthUS
	st.expStart = max(s.v.NowUS()+st.pipeLen, st.expStart)
	delete(s.pred, t.ID())
}

// Close implements sched.Closer: it tells the agent the run's end and
// waits for it to exit; the scheduler's failure, if any, is returned.
func (s *Scheduler) Close(makespanS float64) error {
	if s.proc == nil || s.err != nil {
		return s.err
	}
	s.seq++
	us := makespanS * 1e6
	if err := s.proc.Close(End{Type: "end", Seq: s.seq, TimeUS: us, MakespanUS: us}); err != nil {
		s.fail(s.seq, "end", err)
	}
	return s.err
}
