package starpu

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/starsim/starsim/internal/inputfile"
	"github.com/starsim/starsim/internal/srcerr"
)

// Sampling is everything a StarPU sampling directory holds for one host.
type Sampling struct {
	// Dir is the sampling directory; Host the host name of the files.
	Dir, Host string
	// Bus is the host's bus calibration.
	Bus *Bus
	// PlatformV4 and PlatformV3 are the paths of the SimGrid platform
	// files dir/bus/HOST.platform.v4.xml and HOST.platform.xml, "" when
	// absent.
	PlatformV4, PlatformV3 string
	// Models are the host's performance models, sorted by Symbol.
	Models []*PerfModel
	// Unreadable are the host's model files that could not be read, sorted
	// by Symbol. StarPU reads a model only when a codelet uses it, so such
	// a file matters only to work that needs its model.
	Unreadable []UnreadableModel
}

// UnreadableModel is a model file of the host that could not be read.
type UnreadableModel struct {
	Symbol string
	// Err says where and why: FILE:LINE: reason (a *srcerr.Error).
	Err *srcerr.Error
}

// Model returns the model of symbol, or nil.
func (s *Sampling) Model(symbol string) *PerfModel {
	i := sort.Search(len(s.Models), func(i int) bool { return s.Models[i].Symbol >= symbol })
	if i < len(s.Models) && s.Models[i].Symbol == symbol {
		return s.Models[i]
	}
	return nil
}

// ReadSampling reads the sampling directory dir for host: the bus files
// (ReadBus), the SimGrid platform paths and every model
// dir/codelets/45/SYMBOL.HOST. Model files are matched by the suffix
// "."+host, so a symbol may itself contain dots ("a.b.attila" is symbol
// "a.b"); symbolic links are followed. (StarPU stores a symbol that contains
// a dot without the host suffix; such files are not the host's and are not
// read.) Missing bus files (with the hosts the directory has), a missing
// codelets/45 directory or a host with no model file there are errors
// naming what is missing. A model file that cannot be read is listed in
// Unreadable, not an error: whether it matters depends on the work.
func ReadSampling(dir, host string) (*Sampling, error) {
	if host == "" || strings.ContainsAny(host, `/\`) {
		return nil, srcerr.Errorf(dir, 0, "invalid host name %q", host)
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, srcerr.Errorf(dir, 0, "not a StarPU sampling directory (expected bus/ and codelets/45/)")
	}
	if _, err := os.Stat(filepath.Join(dir, "bus", host+".config")); err != nil {
		hosts := Hosts(dir)
		if len(hosts) == 0 {
			return nil, srcerr.Errorf(dir, 0, "no calibration for host %q: the directory has no bus/HOST.config for any host", host)
		}
		return nil, srcerr.Errorf(dir, 0, "no calibration for host %q (no bus/%s.config); hosts here: %s", host, host, strings.Join(hosts, ", "))
	}
	s := &Sampling{Dir: dir, Host: host}
	bus, err := ReadBus(dir, host)
	if err != nil {
		return nil, err
	}
	s.Bus = bus
	for _, pl := range []struct {
		name string
		dst  *string
	}{{host + ".platform.v4.xml", &s.PlatformV4}, {host + ".platform.xml", &s.PlatformV3}} {
		path := filepath.Join(dir, "bus", pl.name)
		if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() {
			*pl.dst = path
		}
	}

	cdir := filepath.Join(dir, "codelets", "45")
	ents, err := os.ReadDir(cdir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, srcerr.Errorf(cdir, 0, "missing performance model directory codelets/45")
	}
	if err != nil {
		return nil, srcerr.Errorf(cdir, 0, "%v", err)
	}
	suffix := "." + host
	for _, e := range ents {
		name := e.Name()
		if !strings.HasSuffix(name, suffix) || len(name) == len(suffix) {
			continue
		}
		path := filepath.Join(cdir, name)
		symbol := strings.TrimSuffix(name, suffix)
		unreadable := func(err error) {
			se, ok := err.(*srcerr.Error)
			if !ok {
				se = srcerr.Errorf(path, 0, "%v", err)
			}
			s.Unreadable = append(s.Unreadable, UnreadableModel{Symbol: symbol, Err: se})
		}
		st, err := os.Stat(path) // follows symbolic links
		if err != nil {
			unreadable(srcerr.Errorf(path, 0, "%v", err))
			continue
		}
		if st.IsDir() {
			continue
		}
		if !st.Mode().IsRegular() {
			unreadable(srcerr.Errorf(path, 0, "not a regular file"))
			continue
		}
		data, err := inputfile.ReadFile(path)
		if err != nil {
			unreadable(err) // already "PATH: reason"
			continue
		}
		m, err := ParsePerfModel(data, path)
		if err != nil {
			unreadable(err)
			continue
		}
		m.Symbol = symbol
		s.Models = append(s.Models, m)
	}
	if len(s.Models)+len(s.Unreadable) == 0 {
		return nil, srcerr.Errorf(cdir, 0, "no performance model for host %s (no file named SYMBOL.%s)", host, host)
	}
	sort.Slice(s.Models, func(i, j int) bool { return s.Models[i].Symbol < s.Models[j].Symbol })
	sort.Slice(s.Unreadable, func(i, j int) bool { return s.Unreadable[i].Symbol < s.Unreadable[j].Symbol })
	return s, nil
}

// Hosts lists, sorted, the hosts a sampling directory has a bus
// calibration for (the names HOST of its bus/HOST.config files).
func Hosts(dir string) []string {
	ents, err := os.ReadDir(filepath.Join(dir, "bus"))
	if err != nil {
		return nil
	}
	var hosts []string
	for _, e := range ents {
		if h, ok := strings.CutSuffix(e.Name(), ".config"); ok && h != "" && !e.IsDir() {
			hosts = append(hosts, h)
		}
	}
	sort.Strings(hosts)
	return hosts
}
