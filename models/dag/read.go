package dag

import (
	"bytes"
	"encoding/json"

	"github.com/starsim/starsim/internal/inputfile"
	"github.com/starsim/starsim/internal/jsonpos"
	"github.com/starsim/starsim/internal/srcerr"
	"github.com/starsim/starsim/runtime/graph"
)

// bom is the UTF-8 byte order mark some editors put first.
var bom = []byte("\xef\xbb\xbf")

// Kind names a file format Read tells apart.
type Kind string

// The formats Read reads.
const (
	KindJSON     Kind = "starsim-dag JSON"
	KindDOT      Kind = "DOT"
	KindWfFormat Kind = "WfFormat"
)

// Detect tells the format of a task graph file from its content: a JSON
// object whose format is "starsim-dag" is starsim's, one with a
// schemaVersion or a workflow is WfFormat; anything else is read as DOT.
func Detect(data []byte, name string) (Kind, error) {
	data = bytes.TrimPrefix(data, bom)
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return KindDOT, nil
	}
	var head struct {
		Format        string          `json:"format"`
		SchemaVersion json.RawMessage `json:"schemaVersion"`
		Workflow      json.RawMessage `json:"workflow"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&head); err != nil {
		return "", jsonpos.DecodeError(data, name, "", err, -1)
	}
	switch {
	case head.Format == Format:
		return KindJSON, nil
	case head.SchemaVersion != nil || head.Workflow != nil:
		return KindWfFormat, nil
	}
	return "", srcerr.Errorf(name, 1, "a JSON object that is neither a starsim task graph (\"format\": %q) nor a WfFormat workflow (schemaVersion, workflow)", Format)
}

// Read reads a task graph in any of the formats (Detect), then applies o.
// It returns the format and notes on what was assumed or ignored.
func Read(data []byte, name string, o Options) (*graph.Graph, Kind, []string, error) {
	data = bytes.TrimPrefix(data, bom)
	kind, err := Detect(data, name)
	if err != nil {
		return nil, "", nil, err
	}
	var g *graph.Graph
	var notes []string
	switch kind {
	case KindJSON:
		g, err = ReadJSON(data, name)
	case KindWfFormat:
		g, notes, err = ReadWfFormat(data, name)
	default:
		g, notes, err = ReadDOT(data, name)
	}
	if err != nil {
		return nil, kind, nil, err
	}
	if err := o.apply(g); err != nil {
		return nil, kind, nil, srcerr.Errorf(name, 0, "%v", err)
	}
	return g, kind, notes, nil
}

// ReadFile reads the task graph file at path (a regular file of at most
// 2 GiB) with Read.
func ReadFile(path string, o Options) (*graph.Graph, Kind, []string, error) {
	data, err := inputfile.ReadFile(path)
	if err != nil {
		return nil, "", nil, err
	}
	return Read(data, path, o)
}
