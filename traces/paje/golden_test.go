package paje

import (
	"flag"
)

// update rewrites the golden files in testdata: go test ./traces/paje -update.
var update = flag.Bool("update", false, "rewrite the golden files in testdata")
