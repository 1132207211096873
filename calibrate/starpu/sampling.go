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
// read.) Missing bus files, a missing codelets/45 directory or a host with
// no model there are errors naming what is missing, as is any model that
// does not parse.
func ReadSampling(dir, host string) (*Sampling, error) {
	if host == "" || strings.ContainsAny(host, `/\`) {
		return nil, srcerr.Errorf(dir, 0, "invalid host name %q", host)
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, srcerr.Errorf(dir, 0, "not a StarPU sampling directory (expected bus/ and codelets/45/)")
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
		st, err := os.Stat(path) // follows symbolic links
		if err != nil {
			return nil, srcerr.Errorf(path, 0, "%v", err)
		}
		if !st.Mode().IsRegular() {
			continue
		}
		data, err := inputfile.ReadFile(path)
		if err != nil {
			return nil, err
		}
		m, err := ParsePerfModel(data, path)
		if err != nil {
			return nil, err
		}
		m.Symbol = strings.TrimSuffix(name, suffix)
		s.Models = append(s.Models, m)
	}
	if len(s.Models) == 0 {
		return nil, srcerr.Errorf(cdir, 0, "no performance model for host %s (no file named SYMBOL.%s)", host, host)
	}
	sort.Slice(s.Models, func(i, j int) bool { return s.Models[i].Symbol < s.Models[j].Symbol })
	return s, nil
}
