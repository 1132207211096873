package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// starsimProcess starts this test binary as the starsim command.
func starsimProcess(t *testing.T, args ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	// The CLI as a process reads the real environment: StarPU's
	// variables are left out, as TestMain leaves them out in-process.
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "STARPU_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "STARSIM_TEST_MAIN=1")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	require.NoError(t, cmd.Start())
	return cmd, &out, &errb
}

// TestInterruptedRunLeavesNothing: SIGINT in the middle of a run that
// writes traces removes them (no partial Chrome JSON, no cut tasks.rec,
// no temporary), says what was not written, and exits 130.
func TestInterruptedRunLeavesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a process for about a second")
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			cmd, out, errb := starsimProcess(t, "run", "--n", "96000", "--check", "--trace-chrome", filepath.Join(dir, "t.json"),
				"--trace-rec", filepath.Join(dir, "rec"))
			// Signal once the traces are being written.
			deadline := time.Now().Add(20 * time.Second)
			for {
				tmps, _ := filepath.Glob(filepath.Join(dir, "rec", ".data.rec.*.tmp")) // the last created
				if len(tmps) > 0 || time.Now().After(deadline) {
					break
				}
				time.Sleep(2 * time.Millisecond)
			}
			require.NoError(t, cmd.Process.Signal(sig))
			err := cmd.Wait()
			var ee *exec.ExitError
			require.ErrorAs(t, err, &ee, "stderr: %s", errb)
			assert.Equal(t, 128+int(sig), ee.ExitCode())
			assert.Empty(t, out.String())
			name := map[syscall.Signal]string{syscall.SIGINT: "SIGINT", syscall.SIGTERM: "SIGTERM"}[sig]
			assert.Regexp(t, regexp.MustCompile(`^starsim run: interrupted by `+name+`; not written: `+regexp.QuoteMeta(filepath.Join(dir, "t.json"))+`, .*tasks\.rec, .*data\.rec\n$`), errb.String())
			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			assert.Empty(t, entries, "no output, partial or temporary, and no directory made for them")
		})
	}
}

// TestInterruptedSweepSaysHowFar: a sweep interrupted says how many jobs
// had finished and writes no CSV.
func TestInterruptedSweepSaysHowFar(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a process for about a second")
	}
	dir := t.TempDir()
	cmd, out, errb := starsimProcess(t, "sweep", "--n", "9600:96000:9600", "--sched", "dmda,dmdar,dmdas", "-j", "1", "--csv", filepath.Join(dir, "s.csv"))
	time.Sleep(700 * time.Millisecond)
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	err := cmd.Wait()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "stderr: %s", errb)
	assert.Equal(t, 130, ee.ExitCode())
	assert.Empty(t, out.String())
	assert.Regexp(t, `^starsim sweep: interrupted by SIGINT; \d+ of 30 jobs had finished; no output left behind\n$`, errb.String())
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries)
}
