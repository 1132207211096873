package traces

import (
	"io"

	"github.com/starsim/starsim/runtime/graph"
	"github.com/starsim/starsim/runtime/sim"
)

// Output is where a trace writer creates its files: the command's set of
// outputs, which it commits only when the run succeeds.
type Output interface {
	// Create creates the file path.
	Create(path string) (io.Writer, error)
	// Mkdir creates the directory path (and its parents).
	Mkdir(path string) error
	// OnClose calls close once the run is over, before the files are
	// committed (a writer's Close, which flushes it).
	OnClose(close func() error)
}

// Format is one trace format: how a run writes it (Usage, Open) and how a
// trace of it is read back (DirFile, Detect, Read). Package formats lists
// the formats; a new format is a package that defines one Format and a
// line there.
type Format struct {
	// Name names the format; a run writes it when given --trace-NAME.
	Name string
	// Usage is the help of --trace-NAME; its `WORD` names the argument.
	Usage string
	// Files are the files a trace of the format is, in the directory the
	// flag names; nil when the flag names a single file.
	Files []string
	// Open creates the writer of a run of g at path (a file, or the
	// directory of Files) in out; h heads the trace. The writer is an
	// observer of the run, closed through out.OnClose.
	Open func(out Output, path string, h Header, g *graph.Graph) (sim.Observer, error)

	// DirFile is the file that a directory holding a trace of the format
	// holds ("tasks.rec"); "" when the format is not read from a
	// directory.
	DirFile string
	// Detect says whether data starts as a trace of the format; nil for
	// the format read when no other detects its data.
	Detect func(data []byte) bool
	// Read reads data, the content of file, as a Trace named name.
	Read func(data []byte, file, name string) (*Trace, error)
}
