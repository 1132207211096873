package traces

// Header identifies the run a trace comes from; writers put it first, as
// comments or metadata.
type Header struct {
	Tool, Version, Command string
	Seed                   uint64
	// Machine names the machine the run predicts and where it came from
	// (one line); written when not "".
	Machine string
}
