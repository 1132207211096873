package main

import (
	"os"
	"testing"

	"github.com/starsim/starsim/calibrate/starpu"
)

// testEnv is the only environment the CLI sees in tests: none of the
// developer's STARPU_* variables, home or host name can change a result.
// withEnv sets it for one test.
var testEnv = map[string]string{}

const testHost = "starsim-test-host"

// TestMain runs the command itself when a test starts this binary with
// STARSIM_TEST_MAIN=1 (signals need a process of their own); else the
// tests, with testEnv as the environment.
func TestMain(m *testing.M) {
	if os.Getenv("STARSIM_TEST_MAIN") == "1" {
		// This binary runs as the starsim command (signal_test.go).
		main()
		return
	}
	environ = starpu.Env{
		Getenv:   func(k string) string { return testEnv[k] },
		Hostname: func() (string, error) { return testHost, nil },
	}
	os.Exit(m.Run())
}

// withEnv makes vars the CLI's environment until the test ends.
func withEnv(t *testing.T, vars map[string]string) {
	t.Helper()
	old := testEnv
	testEnv = vars
	t.Cleanup(func() { testEnv = old })
}
