// Package formats lists the trace formats (traces.Format) that runs write
// and that compare and replay read, and loads a trace of any of them.
// A new format is one package defining its Format and one line here.
package formats

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/starsim/starsim/internal/inputfile"
	"github.com/starsim/starsim/internal/srcerr"
	"github.com/starsim/starsim/traces"
	"github.com/starsim/starsim/traces/chrome"
	"github.com/starsim/starsim/traces/paje"
	"github.com/starsim/starsim/traces/rec"
)

// Writers are the formats a run writes, each under --trace-NAME, in the
// order the run creates them.
var Writers = []traces.Format{paje.Format, chrome.Format, rec.Format}

// Readers are the formats Load reads, in the order it looks for their
// DirFile in a directory (StarPU's tasks.rec before its paje.trace).
var Readers = []traces.Format{rec.Format, paje.Format, chrome.Format}

// Load reads a trace. path is a file of one of the Readers, or a directory
// holding one's DirFile (the first found, in the Readers' order). The
// format is told by the content: the first reader whose Detect accepts it,
// else the one without Detect (tasks.rec): JSON is read as Chrome, a file
// whose first line (past blanks and '#' comments) starts with %EventDef as
// Paje, anything else as tasks.rec. See each reader for what it takes
// from the trace and the errors it reports, which name FILE:LINE.
func Load(path string) (*traces.Trace, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	file := path
	if fi.IsDir() {
		var names []string
		file = ""
		for _, f := range Readers {
			if f.DirFile == "" {
				continue
			}
			names = append(names, f.DirFile)
			p := filepath.Join(path, f.DirFile)
			if _, err := os.Stat(p); err == nil {
				file = p
				break
			}
		}
		if file == "" {
			return nil, srcerr.Errorf(path, 0, "directory holds no %s", strings.Join(names, " nor "))
		}
	}
	data, err := inputfile.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var fallback *traces.Format
	for i, f := range Readers {
		switch {
		case f.Detect == nil:
			fallback = &Readers[i]
		case f.Detect(data):
			return f.Read(data, file, path)
		}
	}
	return fallback.Read(data, file, path)
}
