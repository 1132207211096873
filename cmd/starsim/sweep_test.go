package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSweepBytesIndependentOfJobsAndShards: -j 1, -j 2 and three shards
// merged give byte-identical CSV; what-ifs multiply the machines.
func TestSweepBytesIndependentOfJobsAndShards(t *testing.T) {
	dir := t.TempDir()
	base := []string{"sweep", "--n", "3840:7680:1920", "--sched", "dmda,dmdas", "--app", "cholesky,lu", "--durations", "normal", "--check"}
	csv := func(name string, extra ...string) string {
		p := filepath.Join(dir, name)
		code, _, errs := runCLI(append(append(append([]string{}, base...), extra...), "--csv", p)...)
		require.Equal(t, 0, code, errs)
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		return string(data)
	}
	one := csv("j1.csv", "-j", "1")
	assert.Equal(t, one, csv("j2.csv", "-j", "2"))
	var shards []string
	for _, s := range []string{"1/3", "2/3", "3/3"} {
		name := "s" + s[:1] + ".csv"
		csv(name, "--shard", s)
		shards = append(shards, filepath.Join(dir, name))
	}
	merged := filepath.Join(dir, "m.csv")
	code, _, errs := runCLI(append([]string{"sweep", "merge", "--csv", merged}, shards[2], shards[0], shards[1])...)
	require.Equal(t, 0, code, errs)
	data, _ := os.ReadFile(merged)
	assert.Equal(t, one, string(data))
	assert.Equal(t, 1+2*2*3, strings.Count(one, "\n"), "header + apps x scheds x sizes")

	code, _, errs = runCLI("sweep", "merge", "--csv", merged, shards[0])
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "missing")

	// What-ifs: two GPU counts x two PCI scales = 4 machines.
	code, out, errs := runCLI("sweep", "--n", "3840", "--sched", "dmda", "--gpus", "2,3", "--pci-bw-scale", "1,2")
	require.Equal(t, 0, code, errs)
	for _, m := range []string{"+gpus2+pcix1", "+gpus2+pcix2", "+gpus3+pcix1", "+gpus3+pcix2"} {
		assert.Contains(t, out, m)
	}
	code, _, errs = runCLI("sweep", "--n", "10:20:0")
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, `"0" is not a positive integer`)
}

// TestProgress: on a terminal the bar counts the runs and ends its line
// (finished, or stopped by a failure); elsewhere nothing is drawn.
func TestProgress(t *testing.T) {
	var b strings.Builder
	p := newProgress(&b, true, 3)
	for d := 1; d <= 3; d++ {
		p.set(d)
	}
	p.stop()
	assert.Contains(t, b.String(), "sweep 3/3 runs")
	assert.Contains(t, b.String(), "elapsed, done")
	assert.True(t, strings.HasSuffix(b.String(), "\n"), "%q", b.String())

	b.Reset()
	p = newProgress(&b, true, 3)
	p.set(1)
	p.stop()
	assert.Contains(t, b.String(), "sweep 1/3 runs")
	assert.Contains(t, b.String(), "elapsed, stopped")
	assert.True(t, strings.HasSuffix(b.String(), "\n"), "%q", b.String())

	b.Reset()
	p = newProgress(&b, false, 3)
	p.set(3)
	p.stop()
	assert.Empty(t, b.String())
	assert.False(t, isTerminal(&b))
}

// TestSweepTrylockProgressFlag: sweep --starpu-trylock-progress gives a
// configuration the GFlop/s run gives it with the flag (attila, where
// the flag changes the result).
func TestSweepTrylockProgressFlag(t *testing.T) {
	needSharedSampling(t)
	checkSweepFlags(t, []string{"--starpu", samplingDir, "--host", "attila", "--app", "lu", "--sched", "dmda", "--ncpu", "0", "--n", "9600"},
		[]string{"--starpu-trylock-progress"})
}

// TestSweepJoinTakeoverFlag: sweep --no-starpu-join-takeover
// --no-starpu-pass-places --no-starpu-fetch-cost-at-post
// --no-starpu-alloc-order gives a
// configuration the GFlop/s run gives it with the flags (attila with a 4th
// GPU, where they change the result).
func TestSweepJoinTakeoverFlag(t *testing.T) {
	needSharedSampling(t)
	checkSweepFlags(t, []string{"--starpu", samplingDir, "--host", "attila", "--gpus", "4", "--app", "lu", "--sched", "dmdas", "--ncpu", "0", "--n", "9600"},
		[]string{"--no-starpu-join-takeover", "--no-starpu-pass-places", "--no-starpu-fetch-cost-at-post", "--no-starpu-alloc-order"})
}

// TestSweepParityFlags: sweep --no-starpu-driver-loop --starpu-14-release-syrk-prio --no-starpu-push-race
// --no-starpu-runner-start --no-starpu-lock-spin
// gives each configuration the GFlop/s run gives it with the same flags
// (dmdas, where the SYRK priority counts), and the flags change the result.
func TestSweepParityFlags(t *testing.T) {
	checkSweepFlags(t, []string{"--n", "3840", "--sched", "dmdas", "--app", "cholesky"},
		[]string{"--no-starpu-driver-loop", "--starpu-14-release-syrk-prio", "--no-starpu-push-race", "--no-starpu-runner-start", "--no-starpu-lock-spin"})
}

// checkSweepFlags checks that sweep with flags gives the one configuration
// cfg the GFlop/s run gives it with the same flags, and that the flags
// change run's result.
func checkSweepFlags(t *testing.T, cfg, flags []string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "s.json")
	args := append(append([]string{"sweep", "--json", p}, cfg...), flags...)
	code, _, errs := runCLI(args...)
	require.Equal(t, 0, code, errs)
	data, err := os.ReadFile(p)
	require.NoError(t, err)
	var rows []struct {
		GFlops float64 `json:"gflops"`
	}
	require.NoError(t, json.Unmarshal(data, &rows))
	require.Len(t, rows, 1)
	run := append([]string{"run"}, cfg...)
	with, _ := runJSONOf(t, append(append([]string{}, run...), flags...)...)
	without, _ := runJSONOf(t, run...)
	assert.Equal(t, with.GFlops, rows[0].GFlops)
	assert.NotEqual(t, without.GFlops, rows[0].GFlops)
}

// TestLegacySYRKPrioFlag: the hidden --starpu-1499-syrk-prio keeps its
// meaning for run and sweep: alone it is the default, =false is
// --starpu-14-release-syrk-prio (which changes dmdas' Cholesky), and with
// that flag it is an error.
func TestLegacySYRKPrioFlag(t *testing.T) {
	for _, cmd := range []string{"run", "sweep"} {
		t.Run(cmd, func(t *testing.T) {
			out := func(flags ...string) string {
				t.Helper()
				args := append([]string{cmd, "--calib", "default", "--n", "3840", "--sched", "dmdas", "--app", "cholesky"}, flags...)
				code, out, errs := runCLI(args...)
				require.Equal(t, 0, code, errs)
				return out
			}
			def, release := out(), out("--starpu-14-release-syrk-prio")
			require.NotEqual(t, def, release)
			require.Equal(t, def, out("--starpu-1499-syrk-prio"))
			require.Equal(t, release, out("--starpu-1499-syrk-prio=false"))
			code, _, errs := runCLI(cmd, "--calib", "default", "--n", "3840", "--starpu-1499-syrk-prio", "--starpu-14-release-syrk-prio")
			require.Equal(t, 2, code)
			require.Contains(t, errs, "--starpu-1499-syrk-prio true: contradicts --starpu-14-release-syrk-prio")
		})
	}
}
