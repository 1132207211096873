package starpu

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/starsim/starsim/internal/srcerr"
)

// PerfModelVersion is the only performance model format this package reads
// and writes (StarPU's _STARPU_PERFMODEL_VERSION, directory codelets/45).
const PerfModelVersion = 45

// PerfModel is one codelet's performance model file, as StarPU writes it in
// codelets/45/SYMBOL.HOST: per combination of devices (comb), per
// implementation, the regressions and the history of measured footprints.
type PerfModel struct {
	// Symbol is the codelet's model symbol, from the file name:
	// "chol_model_gemm" for chol_model_gemm.attila.
	Symbol string
	// File is the path the model was read from, as given to the parser.
	File string
	// Combs are the device combinations in file order. A model need not
	// have a comb for every worker kind of the machine.
	Combs []Comb
	// Notes are what the parser read the way StarPU's reader does although
	// StarPU does not write it so (data after the declared combinations,
	// ignored; an older section order): located remarks, not errors.
	Notes []*srcerr.Error
}

// DeviceType is StarPU's worker architecture type (enum
// starpu_worker_archtype) as the model files number it.
type DeviceType int

// The device types of format-45 files. 3 (MIC) only appears in files written
// by StarPU versions before 1.4; the others follow enum
// starpu_worker_archtype of current StarPU.
const (
	DeviceCPU     DeviceType = 0
	DeviceCUDA    DeviceType = 1
	DeviceOpenCL  DeviceType = 2
	DeviceMIC     DeviceType = 3
	DeviceFPGA    DeviceType = 4
	DeviceMPISC   DeviceType = 5
	DeviceTCPIPSC DeviceType = 6
	DeviceHIP     DeviceType = 7
	DeviceSYCL    DeviceType = 8
)

var deviceTypeNames = [...]string{"cpu", "cuda", "opencl", "mic", "fpga", "mpi_sc", "tcpip_sc", "hip", "sycl"}

// Valid reports whether t is one of the known device types.
func (t DeviceType) Valid() bool { return t >= 0 && int(t) < len(deviceTypeNames) }

// String is StarPU's lower-case name of the type ("cpu", "cuda", "opencl",
// "mic", "fpga", "mpi_sc", "tcpip_sc", "hip", "sycl"), or "type<N>" for an
// unknown one.
func (t DeviceType) String() string {
	if t.Valid() {
		return deviceTypeNames[t]
	}
	return "type" + strconv.Itoa(int(t))
}

// Device is one device of a comb: its type, its id among the devices of that
// type, and its number of cores (1, or more for a combined CPU worker).
type Device struct {
	Type   DeviceType
	DevID  int
	NCores int
}

// Name is the device's part of an arch name: type name and device id
// ("cpu0", "cuda1", "opencl2", "hip0"), with "_cores<N>" appended when the
// device does not have exactly one core ("cpu0_cores4" for a 4-core combined
// CPU worker).
func (d Device) Name() string {
	n := d.Type.String() + strconv.Itoa(d.DevID)
	if d.NCores != 1 {
		n += "_cores" + strconv.Itoa(d.NCores)
	}
	return n
}

// Comb is one combination of devices (one per worker kind, several for a
// combined worker) and its implementations.
type Comb struct {
	Devices []Device
	Impls   []Impl
	// Line is the line of the comb's device count.
	Line int
}

// Arch is the comb's StarPU-style arch name: the Device names joined with
// "_" ("cpu0", "cuda0", "cpu0_cuda0" for a two-device comb). This is the
// name StarPU's starpu_perfmodel_get_arch_name prints in the "# Model for
// cuda0_impl0" comments of the files, without the "_impl<N>" part. Current
// StarPU writes "cpu0_cores1" where older versions wrote "cpu0"; Arch keeps
// the short form for one core.
func (c *Comb) Arch() string {
	names := make([]string, len(c.Devices))
	for i, d := range c.Devices {
		names[i] = d.Name()
	}
	return strings.Join(names, "_")
}

// Impl is the model of one implementation of the codelet on one comb.
type Impl struct {
	// Regression is the linear log-log fit time = Alpha * size^Beta.
	Regression Regression
	// NLRegression is the non-linear fit time = A * size^B + C.
	NLRegression NLRegression
	// MultiRegression is nil when the file says "not multiple-regression
	// based" (a coefficient count of 0).
	MultiRegression *MultiRegression
	// Entries is the history, in file order.
	Entries []Entry
	// Line is the line of the implementation's entry count.
	Line int
}

// Regression holds the sums of the linear regression of ln(time) on
// ln(size), its result and the sample range. Alpha and Beta are NaN unless
// the model is a regression with more than one sample.
type Regression struct {
	SumLnX, SumLnX2, SumLnY, SumLnXLnY float64
	Alpha, Beta                        float64
	N                                  uint64
	MinX, MaxX                         uint64
}

// NLRegression is the non-linear regression time = A*size^B + C; all NaN
// unless the model is NL_REGRESSION_BASED.
type NLRegression struct{ A, B, C float64 }

// MultiRegression is a multiple linear regression model (StarPU's
// MULTIPLE_REGRESSION_BASED): time = Coeffs[0] + sum_i Coeffs[i+1] *
// prod_k p_k^e_ik. The file holds only the coefficients; the parameters p_k
// and their exponents e_ik are defined by the codelet (its perfmodel's
// parameters and combinations), StarPU merely names the terms in a comment.
type MultiRegression struct {
	// Coeffs are the intercept, then one coefficient per term. A NaN
	// coefficient marks the model as not yet calibrated.
	Coeffs []float64
}

// Entry is one history entry: the measurements of tasks with one footprint.
type Entry struct {
	// Footprint is the task footprint (see TaskFootprint).
	Footprint uint32
	// Size is the total size in bytes of the task's data.
	Size uint64
	// Flops is the task's flop count (0 when unknown, NaN when tasks of
	// this footprint disagreed).
	Flops float64
	// MeanUS and DevUS are the mean and standard deviation of the
	// measurements, in µs (in J for energy models).
	MeanUS, DevUS float64
	// Sum and Sum2 are the sum of the measurements and of their squares.
	Sum, Sum2 float64
	// N is the number of measurements.
	N uint64
	// Line is the entry's line in the file.
	Line int
}

// CombByArch returns the first comb whose Arch is arch, or nil.
func (m *PerfModel) CombByArch(arch string) *Comb {
	for i := range m.Combs {
		if m.Combs[i].Arch() == arch {
			return &m.Combs[i]
		}
	}
	return nil
}

// Entry returns the history entry with footprint fp, or nil.
func (im *Impl) Entry(fp uint32) *Entry {
	for i := range im.Entries {
		if im.Entries[i].Footprint == fp {
			return &im.Entries[i]
		}
	}
	return nil
}

// symbolFromFile is the file's base name without its last extension (the
// host name): "chol_model_gemm" for ".../chol_model_gemm.attila".
func symbolFromFile(file string) string {
	base := filepath.Base(file)
	if i := strings.LastIndexByte(base, '.'); i > 0 {
		return base[:i]
	}
	return base
}

// pmParser walks the tokens of a model file.
type pmParser struct {
	file  string
	toks  []token
	i     int
	last  int // last line of the file
	notes []*srcerr.Error
}

func (p *pmParser) errf(line int, format string, args ...any) error {
	return srcerr.Errorf(p.file, line, format, args...)
}

// next returns the next token, or a "truncated" error naming what was
// expected.
func (p *pmParser) next(what string) (token, error) {
	if p.i >= len(p.toks) {
		return token{}, p.errf(p.last, "truncated: expected %s, reached the end of the file", what)
	}
	t := p.toks[p.i]
	p.i++
	return t, nil
}

// restOfLine returns the tokens after the current one that share its line.
func (p *pmParser) restOfLine(line int) []token {
	j := p.i
	for j < len(p.toks) && p.toks[j].line == line {
		j++
	}
	rest := p.toks[p.i:j]
	p.i = j
	return rest
}

// count reads an integer that StarPU writes alone on its line (version,
// counts, device fields) and checks it lies in [min, max].
func (p *pmParser) count(what string, min, max int) (int, int, error) {
	t, err := p.next(what)
	if err != nil {
		return 0, 0, err
	}
	v, ok := parseInt(t.s)
	if !ok {
		return 0, t.line, p.errf(t.line, "expected %s (an integer), found %q", what, t.s)
	}
	if extra := p.restOfLine(t.line); len(extra) > 0 {
		return 0, t.line, p.errf(t.line, "expected %s alone on its line, found %d more value(s) starting with %q (does a count above disagree with the data?)", what, len(extra), extra[0].s)
	}
	if v < min || v > max {
		if max == maxCount {
			return 0, t.line, p.errf(t.line, "%s %d out of range: must be at least %d", what, v, min)
		}
		return 0, t.line, p.errf(t.line, "%s %d out of range [%d, %d]", what, v, min, max)
	}
	return v, t.line, nil
}

const maxCount = 1<<31 - 1

// float reads one floating-point field.
func (p *pmParser) float(what string) (float64, error) {
	t, err := p.next(what)
	if err != nil {
		return 0, err
	}
	v, ok := parseModelFloat(t.s)
	if !ok {
		return 0, p.errf(t.line, "expected %s (a number, nan or inf), found %q", what, t.s)
	}
	return v, nil
}

// uint reads one non-negative integer field.
func (p *pmParser) uint(what string, bits int) (uint64, error) {
	t, err := p.next(what)
	if err != nil {
		return 0, err
	}
	v, ok := parseUint(t.s, bits)
	if !ok {
		return 0, p.errf(t.line, "expected %s (a non-negative integer), found %q", what, t.s)
	}
	return v, nil
}

// ParsePerfModel parses a format-45 performance model file. file names the
// data in errors and gives the model its Symbol (the base name without its
// last extension, the host name).
//
// Every field is read and checked: the version must be 45; the counts of
// combs, devices, implementations, entries and coefficients must match the
// data that follows; device types must be known; footprints are up to 8 hex
// digits, sizes and sample counts non-negative integers; flops, means,
// deviations and sums must not be negative. "nan" and "inf" (any case,
// signed or not; also numbers beyond the float64 range) are accepted
// wherever a float is, as StarPU's scanf reads them. Comments ('#' to the
// end of the line) and blank lines may appear anywhere.
//
// What StarPU's reader (perfmodel_history.c) accepts although StarPU does
// not write it so is read the same way and noted in Notes: data after the
// declared combinations is ignored (StarPU reads only those), and an
// implementation whose multiple-regression line comes before the
// non-linear regression line is read in that order.
func ParsePerfModel(data []byte, file string) (*PerfModel, error) {
	toks, last := tokenize(data)
	p := &pmParser{file: file, toks: toks, last: last}
	m := &PerfModel{Symbol: symbolFromFile(file), File: file}

	if len(toks) == 0 {
		return nil, p.errf(1, "empty performance model file: expected version %d", PerfModelVersion)
	}
	t := toks[0]
	v, ok := parseInt(t.s)
	if !ok {
		return nil, p.errf(t.line, "expected performance model version %d, found %q", PerfModelVersion, t.s)
	}
	if v != PerfModelVersion {
		return nil, p.errf(t.line, "unsupported performance model version %d, want %d", v, PerfModelVersion)
	}
	if _, _, err := p.count("performance model version", PerfModelVersion, PerfModelVersion); err != nil {
		return nil, err
	}

	ncombs, _, err := p.count("number of combinations", 0, maxCount)
	if err != nil {
		return nil, err
	}
	for c := 0; c < ncombs; c++ {
		comb, err := p.comb(c, ncombs)
		if err != nil {
			return nil, err
		}
		m.Combs = append(m.Combs, comb)
	}
	if p.i < len(p.toks) {
		t := p.toks[p.i]
		p.notes = append(p.notes, srcerr.Errorf(p.file, t.line, "data after the %d declared combination(s), starting with %q, ignored as StarPU ignores it", ncombs, t.s))
	}
	m.Notes = p.notes
	return m, nil
}

func (p *pmParser) comb(c, ncombs int) (Comb, error) {
	var comb Comb
	what := fmt.Sprintf("number of devices of combination %d of %d", c+1, ncombs)
	ndev, line, err := p.count(what, 1, maxCount)
	if err != nil {
		return comb, err
	}
	comb.Line = line
	for d := 0; d < ndev; d++ {
		var dev Device
		t, tline, err := p.count(fmt.Sprintf("device type of device %d of combination %d", d+1, c+1), -maxCount, maxCount)
		if err != nil {
			return comb, err
		}
		dev.Type = DeviceType(t)
		if !dev.Type.Valid() {
			return comb, p.errf(tline, "unknown device type %d (want 0 CPU, 1 CUDA, 2 OpenCL, 3 MIC, 4 FPGA, 5 MPI_SC, 6 TCPIP_SC, 7 HIP or 8 SYCL)", t)
		}
		if dev.DevID, _, err = p.count(fmt.Sprintf("device id of device %d of combination %d", d+1, c+1), 0, maxCount); err != nil {
			return comb, err
		}
		if dev.NCores, _, err = p.count(fmt.Sprintf("number of cores of device %d of combination %d", d+1, c+1), 0, maxCount); err != nil {
			return comb, err
		}
		comb.Devices = append(comb.Devices, dev)
	}
	nimpl, _, err := p.count(fmt.Sprintf("number of implementations of combination %d", c+1), 1, maxCount)
	if err != nil {
		return comb, err
	}
	for i := 0; i < nimpl; i++ {
		im, err := p.impl(fmt.Sprintf("%s_impl%d", comb.Arch(), i))
		if err != nil {
			return comb, err
		}
		comb.Impls = append(comb.Impls, im)
	}
	return comb, nil
}

func (p *pmParser) impl(name string) (Impl, error) {
	var im Impl
	nent, line, err := p.count("number of history entries of "+name, 0, maxCount)
	if err != nil {
		return im, err
	}
	im.Line = line

	r := &im.Regression
	for _, f := range []struct {
		dst  *float64
		name string
	}{{&r.SumLnX, "sumlnx"}, {&r.SumLnX2, "sumlnx2"}, {&r.SumLnY, "sumlny"}, {&r.SumLnXLnY, "sumlnxlny"}, {&r.Alpha, "alpha"}, {&r.Beta, "beta"}} {
		if *f.dst, err = p.float("regression " + f.name + " of " + name); err != nil {
			return im, err
		}
	}
	if r.N, err = p.uint("regression sample count n of "+name, 32); err != nil {
		return im, err
	}
	if r.MinX, err = p.uint("regression minx of "+name, 64); err != nil {
		return im, err
	}
	if r.MaxX, err = p.uint("regression maxx of "+name, 64); err != nil {
		return im, err
	}

	// StarPU writes the non-linear regression, then the multiple one. When
	// that order fails on the multiple-regression count, the other order
	// is tried: if it reads, the file is taken in that order (noted).
	start := p.i
	err = p.nlRegression(&im, name)
	if err == nil {
		im.MultiRegression, err = p.multiRegression(name)
	}
	if err != nil {
		end := p.i
		p.i = start
		// The multiple-regression line must end before the next line
		// starts the non-linear one, as StarPU lays lines out.
		mr, err2 := p.multiRegression(name)
		if err2 == nil && p.i < len(p.toks) && p.toks[p.i].line != p.toks[start].line {
			if err2 = p.nlRegression(&im, name); err2 == nil {
				im.MultiRegression = mr
				p.notes = append(p.notes, srcerr.Errorf(p.file, p.toks[start].line, "%s: multiple-regression line before the non-linear regression line; read in that order", name))
				err = nil
			}
		}
		if err != nil {
			p.i = end
			return im, err
		}
	}

	for e := 0; e < nent; e++ {
		ent, err := p.entry(fmt.Sprintf("history entry %d of %d of %s", e+1, nent, name))
		if err != nil {
			return im, err
		}
		im.Entries = append(im.Entries, ent)
	}
	return im, nil
}

// nlRegression reads the non-linear regression's a, b and c into im.
func (p *pmParser) nlRegression(im *Impl, name string) error {
	nl := &im.NLRegression
	for _, f := range []struct {
		dst  *float64
		name string
	}{{&nl.A, "a"}, {&nl.B, "b"}, {&nl.C, "c"}} {
		v, err := p.float("non-linear regression " + f.name + " of " + name)
		if err != nil {
			return err
		}
		*f.dst = v
	}
	return nil
}

// multiRegression reads the multiple-regression coefficient count and the
// coefficients (nil for a count of 0).
func (p *pmParser) multiRegression(name string) (*MultiRegression, error) {
	t, err := p.next("multiple-regression coefficient count of " + name)
	if err != nil {
		return nil, err
	}
	ncoef, ok := parseUint(t.s, 31)
	if !ok {
		return nil, p.errf(t.line, "expected multiple-regression coefficient count of %s (a non-negative integer, 0 for none), found %q", name, t.s)
	}
	if ncoef == 0 {
		return nil, nil
	}
	mr := &MultiRegression{}
	for k := uint64(0); k < ncoef; k++ {
		v, err := p.float(fmt.Sprintf("multiple-regression coefficient %d of %d of %s", k+1, ncoef, name))
		if err != nil {
			return nil, err
		}
		mr.Coeffs = append(mr.Coeffs, v)
	}
	return mr, nil
}

// entry reads one history line: hash size flops mean dev sum sum2 n, or the
// older form without flops (hash size mean dev sum sum2 n), which StarPU
// still accepts and which gives flops 0.
func (p *pmParser) entry(what string) (Entry, error) {
	var e Entry
	t, err := p.next(what)
	if err != nil {
		return e, err
	}
	f := append([]token{t}, p.restOfLine(t.line)...)
	e.Line = t.line
	if len(f) != 8 && len(f) != 7 {
		return e, p.errf(t.line, "%s: found %d value(s), want 8 (hash size flops mean dev sum sum2 n) (does the entry count disagree with the data?)", what, len(f))
	}
	fp, ok := parseFootprint(f[0].s)
	if !ok {
		return e, p.errf(t.line, "%s: malformed footprint %q, want up to 8 hex digits", what, f[0].s)
	}
	e.Footprint = fp
	if e.Size, ok = parseUint(f[1].s, 64); !ok {
		return e, p.errf(t.line, "%s: size %q is not a non-negative integer", what, f[1].s)
	}
	vals := f[2 : len(f)-1]
	names := []string{"flops", "mean", "dev", "sum", "sum2"}
	dsts := []*float64{&e.Flops, &e.MeanUS, &e.DevUS, &e.Sum, &e.Sum2}
	if len(f) == 7 {
		names, dsts = names[1:], dsts[1:]
	}
	for k, tok := range vals {
		v, ok := parseModelFloat(tok.s)
		if !ok {
			return e, p.errf(t.line, "%s: %s %q is not a number", what, names[k], tok.s)
		}
		if v < 0 {
			return e, p.errf(t.line, "%s: negative %s %s", what, names[k], tok.s)
		}
		*dsts[k] = v
	}
	ns := f[len(f)-1].s
	if e.N, ok = parseUint(ns, 32); !ok {
		if strings.HasPrefix(ns, "-") {
			return e, p.errf(t.line, "%s: negative sample count n %s", what, ns)
		}
		return e, p.errf(t.line, "%s: sample count n %q is not a non-negative integer", what, ns)
	}
	return e, nil
}

// parseFootprint reads a footprint as StarPU prints it with "%08x".
func parseFootprint(s string) (uint32, bool) {
	if len(s) == 0 || len(s) > 8 {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return 0, false
		}
	}
	v, err := strconv.ParseUint(s, 16, 32)
	return uint32(v), err == nil
}
