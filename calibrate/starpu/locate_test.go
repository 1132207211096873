package starpu

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeEnv is an environment with only vars set and a fixed host name: the
// tests never see the developer's own STARPU_* variables or HOME.
func fakeEnv(host string, vars map[string]string) Env {
	return Env{
		Getenv: func(k string) string { return vars[k] },
		Hostname: func() (string, error) {
			if host == "" {
				return "", errors.New("no name")
			}
			return host, nil
		},
	}
}

func TestHostName(t *testing.T) {
	for _, c := range []struct {
		host string
		vars map[string]string
		want string
		from string
	}{
		{"node12.cluster.example", nil, "node12", "the machine's host name"},
		{"node12", map[string]string{"STARPU_HOSTNAME": "attila"}, "attila", "STARPU_HOSTNAME"},
		{"node12", map[string]string{"STARPU_HOSTNAME": ""}, "node12", "the machine's host name"},
		{"node12", map[string]string{"STARPU_HOSTNAME": "attila", "STARPU_MPI_HOSTNAMES": "mirage hannibal"}, "mirage", "STARPU_MPI_HOSTNAMES (rank 0)"},
		{"node12", map[string]string{"STARPU_HOSTNAME": "a.b"}, "a.b", "STARPU_HOSTNAME"},
	} {
		h, from, err := HostName(fakeEnv(c.host, c.vars))
		require.NoError(t, err)
		assert.Equal(t, c.want, h)
		assert.Equal(t, c.from, from)
	}
	_, _, err := HostName(fakeEnv("", nil))
	assert.ErrorContains(t, err, "STARPU_HOSTNAME is not set")
}

func TestSamplingDirs(t *testing.T) {
	extra := t.TempDir()
	dirs, from := SamplingDirs(fakeEnv("x", map[string]string{
		"STARPU_PERF_MODEL_DIR": "/pm", "STARPU_HOME": "/sh", "HOME": "/home/u",
		"STARPU_PERF_MODEL_PATH": extra + ":/does/not/exist:"}))
	assert.Equal(t, []string{"/pm", "/sh/.starpu/sampling", extra}, dirs)
	assert.Equal(t, []string{"STARPU_PERF_MODEL_DIR", "$STARPU_HOME/.starpu/sampling", "STARPU_PERF_MODEL_PATH"}, from)
	dirs, from = SamplingDirs(fakeEnv("x", map[string]string{"HOME": "/home/u"}))
	assert.Equal(t, []string{"/home/u/.starpu/sampling"}, dirs)
	assert.Equal(t, []string{"$HOME/.starpu/sampling"}, from)
	dirs, _ = SamplingDirs(fakeEnv("x", map[string]string{"XDG_CACHE_HOME": "/c", "HOME": "/home/u"}))
	assert.Equal(t, []string{"/c/.starpu/sampling"}, dirs)
	dirs, _ = SamplingDirs(fakeEnv("x", nil))
	assert.Equal(t, []string{"/tmp/.starpu/sampling"}, dirs)
}

func TestLocate(t *testing.T) {
	home := t.TempDir()
	inHome := filepath.Join(home, ".starpu", "sampling")
	other := t.TempDir()
	for _, d := range []string{inHome, other} {
		require.NoError(t, os.MkdirAll(filepath.Join(d, "bus"), 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(inHome, "bus", "attila.config"), []byte("12 # Number of CPUs\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(other, "bus", "mirage.config"), []byte("12 # Number of CPUs\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(other, "bus", "empty.config"), nil, 0o644))

	// STARPU_HOSTNAME alone: the home's directory.
	loc, err := Locate(fakeEnv("node", map[string]string{"STARPU_HOSTNAME": "attila", "HOME": home}), "", "")
	require.NoError(t, err)
	assert.Equal(t, Location{Dir: inHome, Host: "attila", DirFrom: "$HOME/.starpu/sampling", HostFrom: "STARPU_HOSTNAME"}, loc)
	// STARPU_PERF_MODEL_DIR first, but only if it has the host.
	loc, err = Locate(fakeEnv("mirage.example.org", map[string]string{"STARPU_PERF_MODEL_DIR": other, "HOME": home}), "", "")
	require.NoError(t, err)
	assert.Equal(t, Location{Dir: other, Host: "mirage", DirFrom: "STARPU_PERF_MODEL_DIR", HostFrom: "the machine's host name"}, loc)
	loc, err = Locate(fakeEnv("x", map[string]string{"STARPU_PERF_MODEL_DIR": other, "HOME": home}), "", "attila")
	require.NoError(t, err)
	assert.Equal(t, inHome, loc.Dir)
	assert.Equal(t, "--host", loc.HostFrom)
	// Flags win.
	loc, err = Locate(fakeEnv("x", map[string]string{"STARPU_PERF_MODEL_DIR": other, "STARPU_HOSTNAME": "y"}), "/given", "z")
	require.NoError(t, err)
	assert.Equal(t, Location{Dir: "/given", Host: "z", DirFrom: "--starpu", HostFrom: "--host"}, loc)
	// An unknown host lists what each directory has; an empty config does not count.
	_, err = Locate(fakeEnv("x", map[string]string{"STARPU_PERF_MODEL_DIR": other, "HOME": home}), "", "empty")
	require.Error(t, err)
	assert.Equal(t, `no StarPU calibration for host "empty" (from --host) in `+other+` (STARPU_PERF_MODEL_DIR; hosts: empty, mirage), `+inHome+` ($HOME/.starpu/sampling; hosts: attila); give --starpu DIR --host NAME, or set STARPU_PERF_MODEL_DIR and STARPU_HOSTNAME`, err.Error())
	_, err = Locate(fakeEnv("x", map[string]string{"HOME": filepath.Join(home, "nope")}), "", "")
	assert.ErrorContains(t, err, "($HOME/.starpu/sampling; no such directory)")
}
