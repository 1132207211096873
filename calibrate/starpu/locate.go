package starpu

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Env is what Locate reads of the process: environment variables (""
// when unset) and the machine's host name.
type Env struct {
	Getenv   func(string) string
	Hostname func() (string, error)
}

// Location is a host's sampling directory as StarPU finds it, and what
// decided each half (a flag, a variable, the host name).
type Location struct {
	Dir, Host         string
	DirFrom, HostFrom string
}

// HostName is StarPU's host name for its calibration files
// (_starpu_gethostname, src/common/utils.c): the first word of
// STARPU_MPI_HOSTNAMES (the name of MPI rank 0, the only process starsim
// simulates) when set, else STARPU_HOSTNAME when set, else the machine's
// host name up to its first dot. Empty variables count as unset.
func HostName(env Env) (host, from string, err error) {
	if v := env.Getenv("STARPU_MPI_HOSTNAMES"); v != "" {
		if f := strings.Fields(v); len(f) > 0 {
			return f[0], "STARPU_MPI_HOSTNAMES (rank 0)", nil
		}
	}
	if v := env.Getenv("STARPU_HOSTNAME"); v != "" {
		return v, "STARPU_HOSTNAME", nil
	}
	h, err := env.Hostname()
	if err != nil || h == "" {
		return "", "", fmt.Errorf("no host name: STARPU_HOSTNAME is not set and the machine's host name is unknown (%v)", err)
	}
	if i := strings.IndexByte(h, '.'); i >= 0 {
		h = h[:i]
	}
	return h, "the machine's host name", nil
}

// SamplingDirs lists, in order, the directories StarPU searches for
// calibrations (_starpu_set_perf_model_dirs, src/core/perfmodel/
// perfmodel.c), with what named each: STARPU_PERF_MODEL_DIR when set; the
// home's .starpu/sampling, the home being STARPU_HOME, else XDG_CACHE_HOME,
// else HOME, else TMPDIR, TEMP, TMP, else /tmp (_starpu_get_home_path);
// then each directory of STARPU_PERF_MODEL_PATH (':'-separated) that
// exists.
func SamplingDirs(env Env) (dirs, from []string) {
	if v := env.Getenv("STARPU_PERF_MODEL_DIR"); v != "" {
		dirs, from = append(dirs, v), append(from, "STARPU_PERF_MODEL_DIR")
	}
	home, homeFrom := "/tmp", "/tmp"
	for _, k := range []string{"STARPU_HOME", "XDG_CACHE_HOME", "HOME", "TMPDIR", "TEMP", "TMP"} {
		if v := env.Getenv(k); v != "" {
			home, homeFrom = v, "$"+k
			break
		}
	}
	dirs, from = append(dirs, filepath.Join(home, ".starpu", "sampling")), append(from, homeFrom+"/.starpu/sampling")
	for _, p := range strings.Split(env.Getenv("STARPU_PERF_MODEL_PATH"), ":") {
		if st, err := os.Stat(p); p != "" && err == nil && st.IsDir() {
			dirs, from = append(dirs, p), append(from, "STARPU_PERF_MODEL_PATH")
		}
	}
	return dirs, from
}

// Locate finds a host's calibration as StarPU does: the host from hostFlag
// (when not "") or HostName; the directory from dirFlag (when not "") or
// the first of SamplingDirs holding a non-empty bus/HOST.config
// (_starpu_get_perf_model_bus). Without one, the error lists each
// directory searched and the hosts it has.
func Locate(env Env, dirFlag, hostFlag string) (Location, error) {
	loc := Location{Dir: dirFlag, Host: hostFlag, DirFrom: "--starpu", HostFrom: "--host"}
	if hostFlag == "" {
		h, from, err := HostName(env)
		if err != nil {
			return loc, err
		}
		loc.Host, loc.HostFrom = h, from
	}
	if dirFlag != "" {
		return loc, nil
	}
	dirs, from := SamplingDirs(env)
	var tried []string
	for i, d := range dirs {
		if st, err := os.Stat(filepath.Join(d, "bus", loc.Host+".config")); err == nil && st.Mode().IsRegular() && st.Size() > 0 {
			loc.Dir, loc.DirFrom = d, from[i]
			return loc, nil
		}
		what := "no such directory"
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			if hosts := Hosts(d); len(hosts) > 0 {
				what = "hosts: " + strings.Join(hosts, ", ")
			} else {
				what = "no host"
			}
		}
		tried = append(tried, fmt.Sprintf("%s (%s; %s)", d, from[i], what))
	}
	return loc, fmt.Errorf("no StarPU calibration for host %q (from %s) in %s; give --starpu DIR --host NAME, or set STARPU_PERF_MODEL_DIR and STARPU_HOSTNAME",
		loc.Host, loc.HostFrom, strings.Join(tried, ", "))
}
