package chrome

import (
	"bytes"

	"github.com/starsim/starsim/runtime/graph"
	"github.com/starsim/starsim/runtime/sim"
	"github.com/starsim/starsim/traces"
)

// Format is the Chrome/Perfetto trace, one JSON file.
var Format = traces.Format{
	Name:   "chrome",
	Usage:  "write a Chrome/Perfetto trace (JSON) to `FILE`",
	Open:   open,
	Detect: Is,
	Read:   Read,
}

// Is says whether data is JSON: its first byte past blanks (and a byte
// order mark) is '{' or '['.
func Is(data []byte) bool {
	head := bytes.TrimLeft(data, " \t\r\n\ufeff")
	return len(head) > 0 && (head[0] == '{' || head[0] == '[')
}

func open(out traces.Output, path string, h traces.Header, _ *graph.Graph) (sim.Observer, error) {
	fh, err := out.Create(path)
	if err != nil {
		return nil, err
	}
	w := NewWriter(fh, h)
	out.OnClose(w.Close)
	return w, nil
}
