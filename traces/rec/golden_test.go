package rec

import (
	"flag"
)

// update rewrites the golden files in testdata: go test ./traces/rec -update.
var update = flag.Bool("update", false, "rewrite the golden files in testdata")
