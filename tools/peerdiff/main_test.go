package main

import (
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The copy of the run script sets the limit after the script clears the
// caller's STARPU_ variables, so the limit reaches the peer and nothing
// else does.
func TestLimitedRunPeer(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "run-peer.sh")
	require.NoError(t, os.WriteFile(script, []byte(`#!/bin/bash
for v in $(env | sed -n 's/^\(STARPU_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done
echo "limit=${STARPU_LIMIT_CUDA_MEM:-none} other=${STARPU_OTHER:-none}"
`), 0o755))
	out, err := limitedRunPeer(script, 400)
	require.NoError(t, err)
	defer os.RemoveAll(filepath.Dir(out))
	cmd := exec.Command("bash", out)
	cmd.Env = append(os.Environ(), "STARPU_LIMIT_CUDA_MEM=999", "STARPU_OTHER=1")
	b, err := cmd.Output()
	require.NoError(t, err)
	assert.Equal(t, "limit=400 other=none", strings.TrimSpace(string(b)))

	plain := filepath.Join(dir, "plain.sh")
	require.NoError(t, os.WriteFile(plain, []byte("#!/bin/bash\necho hi\n"), 0o755))
	_, err = limitedRunPeer(plain, 400)
	assert.ErrorContains(t, err, "no line that unsets the STARPU_ variables")
}

// The peer's untraced and traced runs are cached apart (tracing can change
// StarPU's simulated result), each run once; an entry from before they
// were kept apart (one traced run, its row beside trace/) keeps its trace
// and gets its untraced run.
func TestPeerCacheKeepsTracedRunApart(t *testing.T) {
	dir := t.TempDir()
	calls := filepath.Join(dir, "calls")
	script := filepath.Join(dir, "run-peer.sh")
	// A stand-in for run-peer.sh: 100 GFlop/s untraced, 90 traced.
	require.NoError(t, os.WriteFile(script, []byte(`#!/bin/bash
trace=
while [ $# -gt 0 ]; do [ "$1" = --trace ] && trace=$2; shift; done
echo "$trace" >> `+calls+`
if [ -n "$trace" ]; then mkdir -p "$trace"; echo rec > "$trace/tasks.rec"; g=90.0; else g=100.0; fi
printf 'attila\tcholesky\tdmda\t0\t3\t9600\t960\t1000\t%s\t0.1\t1000\n' $g
`), 0o755))
	o := options{runPeer: script, cache: filepath.Join(dir, "cache"), peerPrefix: "/none"}
	c := config{host: "attila", app: "cholesky", sched: "dmda", ncpu: "0", n: 9600, block: 960}
	ncalls := func() int {
		b, _ := os.ReadFile(calls)
		return strings.Count(string(b), "\n")
	}

	row, traced, _, err := peer(o, c, "/samp", "p", "s")
	require.NoError(t, err)
	assert.Equal(t, 100.0, row.gflops)
	assert.Nil(t, traced)
	assert.Equal(t, 1, ncalls())

	o.trace = true
	row, traced, tdir, err := peer(o, c, "/samp", "p", "s")
	require.NoError(t, err)
	assert.Equal(t, 100.0, row.gflops, "the untraced row is the reference")
	assert.Equal(t, 90.0, traced.gflops)
	assert.FileExists(t, filepath.Join(tdir, "tasks.rec"))
	assert.Equal(t, 2, ncalls(), "only the traced run was added")
	_, _, _, err = peer(o, c, "/samp", "p", "s")
	require.NoError(t, err)
	assert.Equal(t, 2, ncalls(), "both cached")

	// An entry of the old layout: the traced run's row as row.tsv.
	base := cachePath(o, c, "p", "s")
	require.NoError(t, os.Rename(filepath.Join(tdir, "row.tsv"), filepath.Join(base, "row.tsv")))
	row, traced, _, err = peer(o, c, "/samp", "p", "s")
	require.NoError(t, err)
	assert.Equal(t, 100.0, row.gflops)
	assert.Equal(t, 90.0, traced.gflops)
	assert.Equal(t, 3, ncalls(), "the untraced run made, the trace kept")
}

// FuzzReadPeerRow: any row file gives a row with positive GFlop/s or an
// error naming the file, never a panic.
func FuzzReadPeerRow(f *testing.F) {
	f.Add("attila\tcholesky\tdmda\t0\t3\t9600\t960\t715\t412.4\t0.08\t39752\n")
	f.Add("attila\tcholesky\tdmda\t0\t3\t9600\t960\t715\t-1\t0.08\t39752\n")
	f.Add("a\tb\n")
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		p := filepath.Join(t.TempDir(), "row.tsv")
		require.NoError(t, os.WriteFile(p, []byte(s), 0o644))
		r, err := readPeerRow(p)
		if err != nil {
			assert.Contains(t, err.Error(), p)
			return
		}
		assert.Greater(t, r.gflops, 0.0)
		assert.False(t, math.IsInf(r.gflops, 0))
	})
}

// A row whose GFlop/s are not a positive finite number is an error.
func TestReadPeerRowNaN(t *testing.T) {
	p := filepath.Join(t.TempDir(), "row.tsv")
	for _, g := range []string{"NaN", "+Inf", "0"} {
		require.NoError(t, os.WriteFile(p, []byte("attila\tcholesky\tdmda\t0\t3\t9600\t960\t715\t"+g+"\t0.08\t39752\n"), 0o644))
		_, err := readPeerRow(p)
		assert.ErrorContains(t, err, "bad row", g)
	}
}
