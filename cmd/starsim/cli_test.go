package main

import (
	"io"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// commandPaths lists every command and subcommand ("run", "calibrate
// show"), the root as "".
func commandPaths() []string {
	paths := []string{""}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, s := range subcommands(c) {
			paths = append(paths, strings.TrimPrefix(s.CommandPath(), "starsim "))
			walk(s)
		}
	}
	walk(newRoot(nil, io.Discard, io.Discard))
	return paths
}

// TestHelpGolden: every command's help is on stdout, exit 0, nothing on
// stderr, the same for `CMD --help`, `CMD -h` and `help CMD`, and as
// testdata/help-CMD.golden pins it.
func TestHelpGolden(t *testing.T) {
	paths := commandPaths()
	require.Contains(t, paths, "calibrate show")
	require.Contains(t, paths, "sweep merge")
	for _, p := range paths {
		t.Run(p, func(t *testing.T) {
			args := strings.Fields(p)
			code, out, errs := runCLI(append(args, "--help")...)
			require.Equal(t, 0, code, errs)
			assert.Empty(t, errs)
			name := "help-" + strings.ReplaceAll(p, " ", "-")
			if p == "" {
				name = "help"
			}
			golden(t, name, out)
			for _, other := range [][]string{append(args, "-h"), append([]string{"help"}, args...)} {
				code, o, e := runCLI(other...)
				assert.Equal(t, 0, code, "%v", other)
				assert.Empty(t, e, "%v", other)
				assert.Equal(t, out, o, "%v", other)
			}
		})
	}
}

// TestBareCommands: a command that needs a subcommand, given none,
// prints its usage (the help text) on stderr and exits 2.
func TestBareCommands(t *testing.T) {
	for _, args := range [][]string{{}, {"calibrate"}, {"platform"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			_, help, _ := runCLI(append(args, "--help")...)
			code, out, errs := runCLI(args...)
			assert.Equal(t, 2, code)
			assert.Empty(t, out)
			assert.Equal(t, help, errs)
		})
	}
}

// TestVersion: --version, -v and the version command print the same line.
func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"-v"}, {"version"}} {
		code, out, errs := runCLI(args...)
		assert.Equal(t, 0, code, "%v", args)
		assert.Empty(t, errs)
		golden(t, "version", out)
	}
}

func TestBuildVersion(t *testing.T) {
	vcs := func(rev, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}
	}
	for _, c := range []struct {
		info *debug.BuildInfo
		ok   bool
		want string
	}{
		{nil, false, version},
		{&debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, true, version},
		{&debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}}, true, "1.2.3"},
		{&debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261124222416-314a8c2abcde+dirty"}, Settings: vcs("314a8c2abcdef0123456789", "true")}, true, version + " (commit 314a8c2abcde, modified)"},
		{&debug.BuildInfo{Main: debug.Module{Version: "v1.2.4-0.20261124222416-314a8c2abcde"}, Settings: vcs("314a8c2abcdef0123456789", "false")}, true, version + " (commit 314a8c2abcde)"},
	} {
		assert.Equal(t, c.want, buildVersion(c.info, c.ok))
	}
}

// TestFlagSpellings: --flag value, --flag=value, flags after positional
// arguments and -- before them give the same result.
func TestFlagSpellings(t *testing.T) {
	dir := t.TempDir()
	code, _, errs := runCLI("run", "--n", "1920", "--trace-rec", dir)
	require.Equal(t, 0, code, errs)
	rec := filepath.Join(dir, "tasks.rec")
	var first string
	for i, args := range [][]string{
		{"replay", "--calib", "default", "--sched", "dmdas", "--json", rec},
		{"replay", "--calib=default", "--sched=dmdas", "--json=true", rec},
		{"replay", rec, "--calib", "default", "--json", "--sched", "dmdas"},
		{"replay", "--calib", "default", "--json", "--sched", "dmdas", "--", rec},
	} {
		code, out, errs := runCLI(args...)
		require.Equal(t, 0, code, "%v: %s", args, errs)
		if i == 0 {
			first = out
			continue
		}
		assert.Equal(t, first, out, "%v", args)
	}
	code, out, errs := runCLI("sweep", "--n", "1920", "--sched", "dmda", "-j", "1", "--csv", filepath.Join(dir, "a.csv"))
	require.Equal(t, 0, code, errs)
	code, out2, errs := runCLI("sweep", "--n=1920", "--sched=dmda", "--jobs=1", "--csv", filepath.Join(dir, "b.csv"))
	require.Equal(t, 0, code, errs)
	assert.Equal(t, out, out2)
}
