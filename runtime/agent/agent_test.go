package agent_test

import (
	"bufio"
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/starsim/starsim/calibrate"
	"github.com/starsim/starsim/models"
	"github.com/starsim/starsim/runtime/agent"
	"github.com/starsim/starsim/runtime/graph"
	"github.com/starsim/starsim/runtime/machine"
	"github.com/starsim/starsim/runtime/sched"
	"github.com/starsim/starsim/runtime/sim"
)

func python(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3: the example agents are Python")
	}
	return p
}

func agentPath(name string) string {
	p, _ := filepath.Abs(filepath.Join("../../tools/agents", name))
	return p
}

// taskLog records where and when each task ran.
type taskLog struct {
	sim.NopObserver
	rows map[int][3]any
}

func (o *taskLog) TaskDone(t *sim.TaskState) {
	o.rows[t.ID()] = [3]any{t.Worker().Name, t.StartS(), t.EndS()}
}

type outcome struct {
	res  *sim.Result
	log  map[int][3]any
	err  error
	name string
}

// simulate runs g on m under sched, or under the agent cfg when set.
func simulate(t *testing.T, m *machine.Machine, g *graph.Graph, name string, cfg *agent.Config, tune func(*sim.Options)) outcome {
	t.Helper()
	o := sim.DefaultOptions()
	o.Sched = name
	var s *agent.Scheduler
	if cfg != nil {
		o.Sched = cfg.Name
		o.NewScheduler = func() sched.Scheduler { s = agent.New(cfg); return s }
	}
	log := &taskLog{rows: map[int][3]any{}}
	o.Observer = log
	if tune != nil {
		tune(&o)
	}
	sim, err := sim.New(m, g, o)
	require.NoError(t, err)
	res, err := sim.Run()
	out := outcome{res: res, log: log.rows, err: err}
	if s != nil {
		out.name = s.AgentName()
	}
	return out
}

func config(t *testing.T, args ...string) *agent.Config {
	return &agent.Config{Name: "external:" + strings.Join(args, " "), Args: args, Timeout: 20 * time.Second}
}

func cholesky(t *testing.T, n int, name string) *graph.Graph {
	prio, ok := sched.PriorityRange(name)
	require.True(t, ok, name)
	g, err := models.New("cholesky", models.Options{N: n, Block: 960, Prio: prio})
	require.NoError(t, err)
	return g
}

// The eager agent reproduces the built-in eager schedule exactly (every
// task on the same worker at the same times, the same result), and the
// greedy agent dmda's, on the embedded machine's 40 CPU + 4 GPU workers.
func TestExampleAgentsReproduceBuiltins(t *testing.T) {
	py := python(t)
	m := calibrate.Default().RuntimeMachine()
	for _, tc := range []struct{ agent, builtin string }{{"eager.py", "eager"}, {"greedy.py", "dmda"}} {
		g := cholesky(t, 19200, tc.builtin)
		want := simulate(t, m, g, tc.builtin, nil, nil)
		require.NoError(t, want.err)
		got := simulate(t, m, g, "", config(t, py, agentPath(tc.agent)), nil)
		require.NoError(t, got.err, tc.agent)
		assert.Equal(t, tc.agent, got.name)
		require.Len(t, got.log, len(g.Tasks))
		assert.Equal(t, want.log, got.log, tc.agent)
		got.res.Sched = want.res.Sched
		assert.Equal(t, want.res, got.res, tc.agent)
	}
}

// Same agent, same inputs: the same run, twice.
func TestAgentDeterministic(t *testing.T) {
	py := python(t)
	m := calibrate.Default().RuntimeMachine()
	g := cholesky(t, 9600, "dmda")
	a := simulate(t, m, g, "", config(t, py, agentPath("greedy.py"), "--beta", "3"), nil)
	b := simulate(t, m, g, "", config(t, py, agentPath("greedy.py"), "--beta", "3"), nil)
	require.NoError(t, a.err)
	require.NoError(t, b.err)
	assert.Equal(t, a.log, b.log)
	assert.Equal(t, a.res, b.res)
}

// What starsim writes validates against messages.schema.json, and the
// example agents' replies against replies.schema.json.
func TestTranscriptMatchesSchemas(t *testing.T) {
	py := python(t)
	c := jsonschema.NewCompiler()
	msgs, err := c.Compile("../../docs/agent/messages.schema.json")
	require.NoError(t, err)
	replies, err := c.Compile("../../docs/agent/replies.schema.json")
	require.NoError(t, err)
	m := calibrate.Default().RuntimeMachine()
	g := cholesky(t, 4800, "eager")
	kinds := map[string]int{}
	for _, a := range []string{"eager.py", "greedy.py"} {
		var tr bytes.Buffer
		cfg := config(t, py, agentPath(a))
		cfg.Transcript = &tr
		out := simulate(t, m, g, "", cfg, func(o *sim.Options) { o.NCPU = 3 })
		require.NoError(t, out.err)
		sc := bufio.NewScanner(&tr)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			dir, doc, _ := strings.Cut(sc.Text(), " ")
			v, err := jsonschema.UnmarshalJSON(strings.NewReader(doc))
			require.NoError(t, err)
			sch := msgs
			if dir == "<" {
				sch = replies
				kinds["reply"]++
			} else {
				kinds[strings.Split(strings.Split(doc, `"type":"`)[1], `"`)[0]]++
			}
			require.NoError(t, sch.Validate(v), "%s %s", a, doc)
		}
	}
	for _, k := range []string{"hello", "push", "pop", "end", "reply"} {
		assert.Positive(t, kinds[k], k)
	}
}

// A faulty agent is the run's error, naming the message; the run stops.
func TestAgentFaults(t *testing.T) {
	py := python(t)
	m := calibrate.Default().RuntimeMachine()
	g := cholesky(t, 4800, "eager")
	// script: a Python agent answering hello, then doing `push` on every
	// push message (with msg and seq in scope).
	script := func(push string) []string {
		src := `import json, sys
for line in sys.stdin:
    msg = json.loads(line); seq = msg["seq"]
    if msg["type"] == "hello":
        print(json.dumps({"type": "hello", "version": 1, "name": "faulty"}), flush=True)
    elif msg["type"] == "push":
` + "        " + push + `
    elif msg["type"] == "pop":
        print(json.dumps({"seq": seq, "task": None}), flush=True)
`
		return []string{py, "-c", src}
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"not JSON", script(`print("hello?", flush=True)`), `message 1 (push of task 0): reply "hello?": not a JSON object`},
		{"wrong seq", script(`print(json.dumps({"seq": seq + 1, "defer": True}), flush=True)`), "message 1 (push of task 0): reply"},
		{"unknown key", script(`print(json.dumps({"seq": seq, "wroker": 0}), flush=True)`), `unknown key "wroker"`},
		{"no candidate", script(`print(json.dumps({"seq": seq, "worker": 99}), flush=True)`), "worker 99 cannot run the task (candidates: 0, 1"},
		{"exit", script(`sys.exit(3)`), "message 1 (push of task 0): the agent exited before replying (exit status 3)"},
		{"timeout", script(`import time; time.sleep(60)`), "message 1 (push of task 0): no reply within 5s (wall clock)"},
		{"bad hello", []string{py, "-c", `import sys; sys.stdin.readline(); print('{"type": "hello", "version": 2}', flush=True)`}, "message 0 (hello): reply"},
		{"no such command", []string{"/nonexistent/agent"}, "cannot start /nonexistent/agent"},
	} {
		cfg := config(t, tc.args...)
		cfg.Name = "external:x"
		// Only the timeout case waits for the limit; the others get a limit
		// that a loaded machine's Python start-up cannot reach.
		cfg.Timeout = 60 * time.Second
		if tc.name == "timeout" {
			cfg.Timeout = 5 * time.Second
		}
		start := time.Now()
		out := simulate(t, m, g, "", cfg, nil)
		require.Error(t, out.err, tc.name)
		assert.Contains(t, out.err.Error(), "external scheduler external:x", tc.name)
		assert.Contains(t, out.err.Error(), tc.want, tc.name)
		assert.Nil(t, out.res, tc.name)
		assert.Less(t, time.Since(start), 30*time.Second, "%s: the run stops at once", tc.name)
	}
	// A version the agent refuses is named as such.
	cfg := config(t, py, "-c", `import sys; sys.stdin.readline(); print('{"type": "hello", "version": 2}', flush=True)`)
	out := simulate(t, m, g, "", cfg, nil)
	require.Error(t, out.err)
	assert.Contains(t, out.err.Error(), "version 2: starsim speaks version 1")
}
