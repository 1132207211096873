package starpu

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/starsim/starsim/internal/inputfile"
	"github.com/starsim/starsim/internal/srcerr"
)

// Config is a bus/HOST.config file: the CPU and device counts that
// starpu_calibrate_bus saw. StarPU writes one count per line, each labelled
// by a "# Number of ..." comment. The set of counts changed over StarPU
// versions (old files: CPUs, CUDA, OpenCL[, MIC]; newer: CPUs, NUMA nodes,
// CUDA, OpenCL, MIC, MPI) and StarPU reads them by position, so this parser
// goes by the labels instead, which tell the versions apart.
type Config struct {
	// NCPU is the number of CPU cores ("Number of CPUs").
	NCPU int
	// NNUMA is the number of NUMA nodes; 0 when the file has no such count
	// (files older than StarPU 1.3, which had a single RAM node).
	NNUMA int
	// NCUDA, NOpenCL, NMIC and NMPI are the device counts; 0 when absent.
	NCUDA, NOpenCL, NMIC, NMPI int
	// Counts are all the counts of the file, in file order, known or not.
	Counts []Count
}

// Count is one labelled count of a config file.
type Count struct {
	// Label is the comment after "Number of": "CPUs", "CUDA devices".
	Label string
	N     int
	Line  int
}

// field maps the first word of a count label to its Config field.
func (c *Config) field(label string) *int {
	word := strings.ToLower(strings.Fields(label)[0])
	switch word {
	case "cpu", "cpus":
		return &c.NCPU
	case "numa":
		return &c.NNUMA
	case "cuda":
		return &c.NCUDA
	case "opencl":
		return &c.NOpenCL
	case "mic":
		return &c.NMIC
	case "mpi", "mpi_ms":
		return &c.NMPI
	}
	return nil
}

// maxConfigCount bounds the counts of a config file, so that a corrupt file
// cannot make NodeNames allocate without limit.
const maxConfigCount = 1 << 16

// ParseConfig parses a bus/HOST.config file. Each count must sit alone on
// its line, labelled by a "# Number of <what>" comment; the CPU count is
// required.
func ParseConfig(data []byte, file string) (*Config, error) {
	c := &Config{}
	seen := map[string]int{}
	haveCPU := false
	for i, raw := range strings.Split(string(data), "\n") {
		line := i + 1
		val, comment, _ := strings.Cut(raw, "#")
		f := strings.Fields(val)
		if len(f) == 0 {
			continue
		}
		if len(f) > 1 {
			return nil, srcerr.Errorf(file, line, "expected one count per line, found %d values", len(f))
		}
		n, ok := parseInt(f[0])
		if !ok || n < 0 {
			return nil, srcerr.Errorf(file, line, "expected a count (a non-negative integer), found %q", f[0])
		}
		if n > maxConfigCount {
			return nil, srcerr.Errorf(file, line, "count %d is implausibly large (more than %d)", n, maxConfigCount)
		}
		comment = strings.TrimSpace(comment)
		const prefix = "number of "
		if len(comment) <= len(prefix) || !strings.EqualFold(comment[:len(prefix)], prefix) || strings.TrimSpace(comment[len(prefix):]) == "" {
			return nil, srcerr.Errorf(file, line, "count %d has no \"# Number of ...\" label saying what it counts", n)
		}
		label := strings.TrimSpace(comment[len(prefix):])
		key := strings.ToLower(strings.Fields(label)[0])
		if prev, dup := seen[key]; dup {
			return nil, srcerr.Errorf(file, line, "second count of %q (first on line %d)", label, prev)
		}
		seen[key] = line
		c.Counts = append(c.Counts, Count{Label: label, N: n, Line: line})
		if p := c.field(label); p != nil {
			*p = n
			if p == &c.NCPU {
				haveCPU = true
			}
		}
	}
	if !haveCPU {
		return nil, srcerr.Errorf(file, 0, "no \"Number of CPUs\" count")
	}
	return c, nil
}

// NodeNames lists the memory nodes of the bus matrices in StarPU's order:
// the RAM ("RAM" for a single NUMA node, else "NUMA0", "NUMA1"...), then the
// devices in enum starpu_node_kind order: "CUDA0".., "OpenCL0".., "MIC0"..,
// "MPI_MS0"... Device kinds the package does not know (see Config.Counts)
// have no place in the list.
func (c *Config) NodeNames() []string {
	var names []string
	if c.NNUMA <= 1 {
		names = append(names, "RAM")
	} else {
		for i := 0; i < c.NNUMA; i++ {
			names = append(names, "NUMA"+strconv.Itoa(i))
		}
	}
	for _, k := range []struct {
		prefix string
		n      int
	}{{"CUDA", c.NCUDA}, {"OpenCL", c.NOpenCL}, {"MIC", c.NMIC}, {"MPI_MS", c.NMPI}} {
		for i := 0; i < k.n; i++ {
			names = append(names, k.prefix+strconv.Itoa(i))
		}
	}
	return names
}

// ParseBandwidth parses a bus/HOST.bandwidth file: one row per source node,
// one tab-separated column per destination node, in MB/s (= bytes/µs), nan
// where there is no link (the diagonal is 0). The result is square: rows
// and columns missing from the file are NaN, as StarPU fills them. Rows
// beyond the real nodes (padding to STARPU_MAXNODES) are kept; ReadBus trims
// them.
func ParseBandwidth(data []byte, file string) ([][]float64, error) {
	m, _, err := parseMatrix(data, file, "bandwidth")
	return m, err
}

// ParseLatency parses a bus/HOST.latency file: the same layout as the
// bandwidth file, in µs.
func ParseLatency(data []byte, file string) ([][]float64, error) {
	m, _, err := parseMatrix(data, file, "latency")
	return m, err
}

// parseMatrix reads a node×node matrix of non-negative numbers or nan and
// returns it square-padded with NaN, with the line of each row.
func parseMatrix(data []byte, file, what string) ([][]float64, []int, error) {
	lines, _ := tokenLines(data)
	if len(lines) == 0 {
		return nil, nil, srcerr.Errorf(file, 1, "no %s values: expected one row of numbers per node", what)
	}
	const maxNodes = 512 // STARPU_MAXNODES is far smaller; bounds the n×n allocation
	if len(lines) > maxNodes {
		return nil, nil, srcerr.Errorf(file, lines[maxNodes][0].line, "more than %d rows: not a %s matrix", maxNodes, what)
	}
	n := len(lines)
	rows := make([][]float64, 0, n)
	rowLines := make([]int, 0, n)
	for _, l := range lines {
		if len(l) > maxNodes {
			return nil, nil, srcerr.Errorf(file, l[0].line, "more than %d columns: not a %s matrix", maxNodes, what)
		}
		row := make([]float64, len(l))
		for j, t := range l {
			v, ok := parseFloat(t.s)
			if !ok {
				return nil, nil, srcerr.Errorf(file, t.line, "%s to node %d: expected a number or nan, found %q", what, j, t.s)
			}
			if v < 0 {
				return nil, nil, srcerr.Errorf(file, t.line, "%s to node %d: negative %s %s", what, j, what, t.s)
			}
			row[j] = v
		}
		if len(row) > n {
			n = len(row)
		}
		rows = append(rows, row)
		rowLines = append(rowLines, l[0].line)
	}
	out := make([][]float64, n)
	for i := range out {
		out[i] = make([]float64, n)
		for j := range out[i] {
			out[i][j] = math.NaN()
		}
		if i < len(rows) {
			copy(out[i], rows[i])
		}
	}
	return out, rowLines, nil
}

// Affinity is a bus/HOST.affinity file: for each GPU (the CUDA devices,
// then the OpenCL devices, each numbered from 0), the CPUs (files from
// StarPU before 1.3) or NUMA nodes (later files) from nearest to farthest.
type Affinity struct {
	// Unit is "CPU" or "NUMA", from the "# GPU CPU0 CPU1..." header
	// comment; "" when the file has no such header.
	Unit string
	// Rows are the device rows in file order.
	Rows []AffinityRow
}

// AffinityRow is one device's row of an affinity file.
type AffinityRow struct {
	// Dev is the device number in the first column.
	Dev int
	// Order lists the CPU or NUMA node ids, nearest first.
	Order []int
	Line  int
}

// ParseAffinity parses a bus/HOST.affinity file. All rows must have the same
// number of ids, the number of columns of the header when there is one, and
// every id must be below that number.
func ParseAffinity(data []byte, file string) (*Affinity, error) {
	a := &Affinity{}
	width := -1
	for i, raw := range strings.Split(string(data), "\n") {
		line := i + 1
		val, comment, hasComment := strings.Cut(raw, "#")
		if hasComment && a.Unit == "" && len(a.Rows) == 0 {
			if unit, n := affinityHeader(comment); n > 0 {
				a.Unit, width = unit, n
			}
		}
		f := strings.Fields(val)
		if len(f) == 0 {
			continue
		}
		row := AffinityRow{Line: line}
		dev, ok := parseUint(f[0], 31)
		if !ok {
			return nil, srcerr.Errorf(file, line, "expected a device number, found %q", f[0])
		}
		row.Dev = int(dev)
		if width < 0 {
			width = len(f) - 1
		}
		if len(f)-1 != width {
			return nil, srcerr.Errorf(file, line, "device %d: found %d ids, want %d", row.Dev, len(f)-1, width)
		}
		for _, s := range f[1:] {
			id, ok := parseUint(s, 31)
			if !ok {
				return nil, srcerr.Errorf(file, line, "device %d: expected a CPU or NUMA node id, found %q", row.Dev, s)
			}
			if int(id) >= width {
				return nil, srcerr.Errorf(file, line, "device %d: id %d out of range [0, %d)", row.Dev, id, width)
			}
			row.Order = append(row.Order, int(id))
		}
		a.Rows = append(a.Rows, row)
	}
	return a, nil
}

// affinityHeader recognizes the "GPU CPU0 CPU1 ..." or "GPU NUMA0 ..."
// header comment and returns its unit and number of columns.
func affinityHeader(comment string) (string, int) {
	f := strings.Fields(comment)
	if len(f) < 2 || f[0] != "GPU" {
		return "", 0
	}
	var unit string
	for i, col := range f[1:] {
		u := strings.TrimRight(col, "0123456789")
		if u != "CPU" && u != "NUMA" || u == col || (unit != "" && u != unit) {
			return "", 0
		}
		if n, _ := strconv.Atoi(col[len(u):]); n != i {
			return "", 0
		}
		unit = u
	}
	return unit, len(f) - 1
}

// Bus is the bus calibration of one host: its config, the node list and the
// bandwidth, latency and affinity tables trimmed to the real nodes.
type Bus struct {
	Config
	// Nodes names the rows and columns of the matrices (Config.NodeNames).
	Nodes []string
	// BandwidthMBps is [src][dst] in MB/s (= bytes/µs); NaN kept as NaN.
	BandwidthMBps [][]float64
	// LatencyUS is [src][dst] in µs.
	LatencyUS [][]float64
	// AffinityUnit is "CPU" or "NUMA" (see Affinity.Unit); "" when the
	// host has no affinity file.
	AffinityUnit string
	// Affinity has one row per GPU, the CUDA devices then the OpenCL
	// devices: the CPUs or NUMA nodes nearest first. Nil when the host has
	// no affinity file.
	Affinity [][]int
}

// ReadBus reads the bus files of host from the sampling directory dir:
// dir/bus/HOST.config, .bandwidth and .latency, and .affinity when it
// exists. The matrices must cover the nodes of the config; rows and columns
// beyond them must be NaN (StarPU's padding to STARPU_MAXNODES) or absent.
func ReadBus(dir, host string) (*Bus, error) {
	base := filepath.Join(dir, "bus", host)
	read := func(ext string) ([]byte, string, error) {
		path := base + "." + ext
		data, err := inputfile.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, path, srcerr.Errorf(path, 0, "missing bus %s file (run starpu_calibrate_bus on %s)", ext, host)
		}
		if err != nil {
			return nil, path, err
		}
		return data, path, nil
	}

	data, path, err := read("config")
	if err != nil {
		return nil, err
	}
	cfg, err := ParseConfig(data, path)
	if err != nil {
		return nil, err
	}
	b := &Bus{Config: *cfg, Nodes: cfg.NodeNames()}

	for _, mat := range []struct {
		ext string
		dst *[][]float64
	}{{"bandwidth", &b.BandwidthMBps}, {"latency", &b.LatencyUS}} {
		data, path, err := read(mat.ext)
		if err != nil {
			return nil, err
		}
		m, rowLines, err := parseMatrix(data, path, mat.ext)
		if err != nil {
			return nil, err
		}
		if *mat.dst, err = trimMatrix(m, rowLines, b, path, mat.ext); err != nil {
			return nil, err
		}
	}

	if _, err := os.Stat(base + ".affinity"); errors.Is(err, fs.ErrNotExist) {
		return b, nil
	}
	data, path, err = read("affinity")
	if err != nil {
		return nil, err
	}
	aff, err := ParseAffinity(data, path)
	if err != nil {
		return nil, err
	}
	if err := b.setAffinity(aff, path); err != nil {
		return nil, err
	}
	return b, nil
}

// trimMatrix cuts m down to the nodes of b, checking that the nodes are all
// there and that what lies beyond them is padding.
func trimMatrix(m [][]float64, rowLines []int, b *Bus, file, what string) ([][]float64, error) {
	n := len(b.Nodes)
	if len(m) < n {
		return nil, srcerr.Errorf(file, 0, "%s matrix has %d node(s), the config lists %d (%s)", what, len(m), n, nodeList(b.Nodes))
	}
	for i := range m {
		for j, v := range m[i] {
			if (i >= n || j >= n) && !math.IsNaN(v) {
				line := 0
				if i < len(rowLines) {
					line = rowLines[i]
				}
				return nil, srcerr.Errorf(file, line, "%s from node %d to node %d is %v, but the config lists only %d node(s) (%s)%s",
					what, i, j, v, n, nodeList(b.Nodes), b.unknownCounts())
			}
		}
	}
	out := make([][]float64, n)
	for i := range out {
		out[i] = m[i][:n:n]
	}
	return out, nil
}

// unknownCounts names the non-zero counts of device kinds without a place
// in the node list, for error messages.
func (b *Bus) unknownCounts() string {
	var s []string
	for _, c := range b.Counts {
		if c.N > 0 && b.field(c.Label) == nil {
			s = append(s, c.Label)
		}
	}
	if len(s) == 0 {
		return ""
	}
	return "; counts of unknown node kind: " + strings.Join(s, ", ")
}

// setAffinity checks the affinity rows against the config and stores them.
func (b *Bus) setAffinity(a *Affinity, file string) error {
	if want := b.NCUDA + b.NOpenCL; len(a.Rows) != want {
		return srcerr.Errorf(file, 0, "found %d device row(s), the config lists %d CUDA and %d OpenCL device(s)", len(a.Rows), b.NCUDA, b.NOpenCL)
	}
	width := 0
	switch a.Unit {
	case "CPU":
		width = b.NCPU
	case "NUMA":
		width = max(b.NNUMA, 1)
	}
	for i, r := range a.Rows {
		want := i
		if i >= b.NCUDA {
			want = i - b.NCUDA
		}
		if r.Dev != want {
			return srcerr.Errorf(file, r.Line, "device row %d is numbered %d, want %d", i+1, r.Dev, want)
		}
		if width > 0 && len(r.Order) != width {
			return srcerr.Errorf(file, r.Line, "device %d lists %d %s id(s), the config has %d", r.Dev, len(r.Order), a.Unit, width)
		}
		b.Affinity = append(b.Affinity, r.Order)
	}
	b.AffinityUnit = a.Unit
	return nil
}

// nodeList names nodes for a message: the first few, then how many more
// (a config may list tens of thousands).
func nodeList(nodes []string) string {
	const show = 8
	if len(nodes) <= show {
		return strings.Join(nodes, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(nodes[:show], ", "), len(nodes)-show)
}
