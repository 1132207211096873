package agent

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSplitCommand(t *testing.T) {
	for in, want := range map[string][]string{
		"python3 agent.py":                {"python3", "agent.py"},
		"  a   b\tc ":                     {"a", "b", "c"},
		`python3 "my agent.py" --x 'a b'`: {"python3", "my agent.py", "--x", "a b"},
		`a\ b "q\"x" 'it''s'`:             {"a b", `q"x`, "its"},
		"":                                nil,
	} {
		got, err := SplitCommand(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, bad := range []string{`a "b`, "a 'b", `a\`} {
		_, err := SplitCommand(bad)
		assert.Error(t, err, bad)
	}
	_, err := ParseName("external:")
	assert.ErrorContains(t, err, "no command")
	_, err = ParseName("dmda")
	assert.ErrorContains(t, err, "no external scheduler")
}

func TestParseReplies(t *testing.T) {
	cands := []Candidate{{Worker: 0}, {Worker: 3}}
	r, err := ParsePushReply([]byte(`{"seq": 4, "worker": 3, "prefetch": true}`), 4, cands)
	require.NoError(t, err)
	assert.Equal(t, PushReply{Seq: 4, Worker: 3, Prefetch: true}, r)
	r, err = ParsePushReply([]byte(`{"defer": true, "seq": 4}`), 4, cands)
	require.NoError(t, err)
	assert.True(t, r.Defer)
	for line, want := range map[string]string{
		`{"seq": 4}`:                               "neither worker nor defer",
		`{"seq": 4, "worker": 1}`:                  "worker 1 cannot run the task (candidates: 0, 3)",
		`{"seq": 4, "worker": 0, "defer": true}`:   "both worker and defer",
		`{"seq": 4, "defer": false}`:               "defer false",
		`{"seq": 4, "defer": true, "prefetch": 1}`: "prefetch: 1 is not true or false",
		`{"seq": 5, "worker": 0}`:                  "seq 5 answers another message (want 4)",
		`{"worker": 0}`:                            "no seq (want 4)",
		`{"seq": 4, "worker": 0.5}`:                "worker: 0.5 is not an integer",
		`{"seq": 4, "worker": "0"}`:                `worker: "0" is not an integer`,
		`{"seq": 4, "worker": 0} {}`:               "more than one JSON value",
		`[1]`:                                      "not a JSON object",
		`null`:                                     "not a JSON object: null",
		`{"seq": 4, "Worker": 0}`:                  `unknown key "Worker"`,
	} {
		_, err := ParsePushReply([]byte(line), 4, cands)
		require.Error(t, err, line)
		assert.Contains(t, err.Error(), want, line)
	}
	p, err := ParsePopReply([]byte(`{"seq": 2, "task": null}`), 2)
	require.NoError(t, err)
	assert.Equal(t, -1, p.Task)
	p, err = ParsePopReply([]byte(`{"seq": 2, "task": 17}`), 2)
	require.NoError(t, err)
	assert.Equal(t, 17, p.Task)
	for line, want := range map[string]string{
		`{"seq": 2}`:               "no task",
		`{"seq": 2, "task": -1}`:   "task -1: want a task id >= 0, or null",
		`{"seq": 2, "task": true}`: "not an integer",
	} {
		_, err := ParsePopReply([]byte(line), 2)
		require.Error(t, err, line)
		assert.Contains(t, err.Error(), want, line)
	}
	h, err := ParseHelloReply([]byte(`{"type": "hello", "version": 1, "name": "x"}`))
	require.NoError(t, err)
	assert.Equal(t, "x", h.Name)
	_, err = ParseHelloReply([]byte(`{"type": "hi", "version": 1}`))
	assert.ErrorContains(t, err, `type "hi": want "hello"`)
}

// Any line an agent writes is a reply or an error, never a panic.
func FuzzParseReplies(f *testing.F) {
	for _, s := range []string{`{"seq": 4, "worker": 3, "prefetch": true}`, `{"seq": 4, "defer": true}`,
		`{"seq": 4, "task": null}`, `{"type": "hello", "version": 1, "name": "x"}`, `{"seq": 1e400}`} {
		f.Add([]byte(s))
	}
	cands := []Candidate{{Worker: 0}, {Worker: 3}}
	f.Fuzz(func(t *testing.T, line []byte) {
		if r, err := ParsePushReply(line, 4, cands); err == nil && !r.Defer && r.Worker != 0 && r.Worker != 3 {
			t.Fatalf("accepted worker %d", r.Worker)
		}
		if r, err := ParsePopReply(line, 4); err == nil && r.Task < -1 {
			t.Fatalf("accepted task %d", r.Task)
		}
		ParseHelloReply(line)
	})
}
