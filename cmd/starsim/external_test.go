package main

import (
	"encoding/json"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// run --sched external:... with the example eager agent prints what the
// built-in eager prints, but the scheduler's name.
func TestRunExternalEager(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3: the example agents are Python")
	}
	sched := "external:python3 ../../tools/agents/eager.py"
	code, out, errs := runCLI("run", "--n", "9600", "--sched", sched, "--json")
	require.Equal(t, 0, code, errs)
	var ext, builtin map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &ext))
	code, out, errs = runCLI("run", "--n", "9600", "--sched", "eager", "--json")
	require.Equal(t, 0, code, errs)
	require.NoError(t, json.Unmarshal([]byte(out), &builtin))
	assert.Equal(t, sched, ext["sched"])
	ext["sched"] = "eager"
	assert.Equal(t, builtin, ext)
	// A faulty agent fails the run: exit 1, one line naming the message,
	// nothing on stdout.
	code, out, errs = runCLI("run", "--n", "9600", "--sched", `external:python3 -c "print(1)"`, "--sched-timeout", "20")
	assert.Equal(t, 1, code)
	assert.Empty(t, out)
	assert.Contains(t, errs, `message 0 (hello): reply "1": not a JSON object`)
}

func TestExternalSchedUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--sched", "external:"}, "no command"},
		{[]string{"run", "--sched", `external:python3 "x`}, `quote " not closed`},
		{[]string{"run", "--sched-timeout", "3"}, "--sched-timeout 3: only with --sched external:COMMAND"},
		{[]string{"run", "--sched", "external:x", "--sched-timeout", "0"}, "want 0 < seconds <= 86400"},
		{[]string{"sweep", "--sched", "dmda", "--sched-timeout", "3"}, "only with an external:COMMAND scheduler"},
		{[]string{"run", "--sched", "bogus"}, "or external:COMMAND"},
	} {
		code, out, errs := runCLI(tc.args...)
		assert.Equal(t, 2, code, "%v: %s", tc.args, errs)
		assert.Empty(t, out)
		assert.Contains(t, errs, tc.want, "%v", tc.args)
	}
}
