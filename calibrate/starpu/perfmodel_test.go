package starpu

import (
	"bytes"
	"math"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseSyntheticModel(t *testing.T) {
	path := filepath.Join("testdata", "models", "tiny.synth")
	m, err := ParsePerfModel(readFile(t, path), path)
	require.NoError(t, err)
	assert.Equal(t, "tiny", m.Symbol)
	assert.Equal(t, path, m.File)
	require.Len(t, m.Combs, 4)

	// Comb 1: one CPU core, two implementations.
	c := m.Combs[0]
	assert.Equal(t, []Device{{DeviceCPU, 0, 1}}, c.Devices)
	assert.Equal(t, "cpu0", c.Arch())
	assert.Equal(t, 8, c.Line)
	require.Len(t, c.Impls, 2)
	im := c.Impls[0]
	assert.Equal(t, 15, im.Line)
	assert.True(t, math.IsNaN(im.Regression.Alpha) && math.IsNaN(im.Regression.Beta))
	assert.True(t, math.IsNaN(im.NLRegression.A) && math.IsNaN(im.NLRegression.B) && math.IsNaN(im.NLRegression.C))
	assert.Nil(t, im.MultiRegression)
	require.Len(t, im.Entries, 3)
	assert.Equal(t, Entry{Footprint: 0x24c84a50, Size: 11059200, Flops: 1.769472e9, MeanUS: 84076, DevUS: 3415.2,
		Sum: 1.4e8, Sum2: 1.18e13, N: 1665, Line: 19}, im.Entries[0])
	e := im.Entries[1] // padded with spaces and tabs, short hex, -nan flops
	assert.Equal(t, uint32(0x0abc12), e.Footprint)
	assert.Equal(t, uint64(42), e.Size)
	assert.True(t, math.IsNaN(e.Flops))
	assert.Equal(t, []float64{1.5, 0.25, 15, 22.5}, []float64{e.MeanUS, e.DevUS, e.Sum, e.Sum2})
	assert.Equal(t, uint64(10), e.N)
	// The legacy 7-field entry has no flops.
	assert.Equal(t, Entry{Footprint: 1, Size: 7, Flops: 0, MeanUS: 2, DevUS: 1, Sum: 4, Sum2: 4, N: 3, Line: 21}, im.Entries[2])
	assert.Same(t, &im.Entries[1], im.Entry(0x0abc12))
	assert.Nil(t, im.Entry(0xdeadbeef))

	im = c.Impls[1]
	assert.Equal(t, Regression{SumLnX: 15, SumLnX2: 225, SumLnY: 30, SumLnXLnY: 45, Alpha: 2, Beta: 1, N: 12, MinX: 100, MaxX: 1000}, im.Regression)
	assert.Equal(t, NLRegression{0.5, 1, 2}, im.NLRegression)
	assert.Empty(t, im.Entries)

	// Comb 2: CUDA device 1.
	assert.Equal(t, "cuda1", m.Combs[1].Arch())
	assert.Same(t, &m.Combs[1], m.CombByArch("cuda1"))
	assert.Nil(t, m.CombByArch("cuda0"))

	// Comb 3: a combined CPU worker next to a HIP device, multiple regression.
	c = m.Combs[2]
	assert.Equal(t, []Device{{DeviceCPU, 0, 4}, {DeviceHIP, 2, 1}}, c.Devices)
	assert.Equal(t, "cpu0_cores4_hip2", c.Arch())
	require.NotNil(t, c.Impls[0].MultiRegression)
	assert.Equal(t, []float64{10, 2.5e-3, -7e-9}, c.Impls[0].MultiRegression.Coeffs)

	// Comb 4: an old MIC device, multiple regression "1 nan".
	c = m.Combs[3]
	assert.Equal(t, "mic0", c.Arch())
	require.NotNil(t, c.Impls[0].MultiRegression)
	require.Len(t, c.Impls[0].MultiRegression.Coeffs, 1)
	assert.True(t, math.IsNaN(c.Impls[0].MultiRegression.Coeffs[0]))
}

func TestDeviceNames(t *testing.T) {
	cases := []struct {
		d    Device
		want string
	}{
		{Device{DeviceCPU, 0, 1}, "cpu0"},
		{Device{DeviceCPU, 0, 8}, "cpu0_cores8"},
		{Device{DeviceCUDA, 2, 1}, "cuda2"},
		{Device{DeviceOpenCL, 1, 1}, "opencl1"},
		{Device{DeviceMIC, 0, 1}, "mic0"},
		{Device{DeviceFPGA, 0, 1}, "fpga0"},
		{Device{DeviceMPISC, 3, 1}, "mpi_sc3"},
		{Device{DeviceTCPIPSC, 0, 1}, "tcpip_sc0"},
		{Device{DeviceHIP, 0, 1}, "hip0"},
		{Device{DeviceSYCL, 1, 1}, "sycl1"},
		{Device{DeviceType(42), 0, 1}, "type420"},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, c.d.Name())
	}
	comb := Comb{Devices: []Device{{DeviceCPU, 0, 1}, {DeviceCUDA, 0, 1}}}
	assert.Equal(t, "cpu0_cuda0", comb.Arch())
}

func TestWriteRoundTripSynthetic(t *testing.T) {
	path := filepath.Join("testdata", "models", "tiny.synth")
	m, err := ParsePerfModel(readFile(t, path), path)
	require.NoError(t, err)
	m2 := roundTrip(t, m)
	assert.True(t, reflect.DeepEqual(canon(m), canon(m2)))

	// Writing is stable: the written text of the re-parsed model is the same.
	var a, b bytes.Buffer
	require.NoError(t, m.Write(&a))
	require.NoError(t, m2.Write(&b))
	assert.Equal(t, a.String(), b.String())
	assert.True(t, strings.HasPrefix(a.String(), "##################\n# StarPU performance model, format version\n45\n"))
}

func TestWriteRefusesInvalidModels(t *testing.T) {
	ok := Impl{}
	cases := map[string]*PerfModel{
		"no device":       {Combs: []Comb{{Impls: []Impl{ok}}}},
		"no impl":         {Combs: []Comb{{Devices: []Device{{DeviceCPU, 0, 1}}}}},
		"bad type":        {Combs: []Comb{{Devices: []Device{{DeviceType(9), 0, 1}}, Impls: []Impl{ok}}}},
		"negative devid":  {Combs: []Comb{{Devices: []Device{{DeviceCUDA, -1, 1}}, Impls: []Impl{ok}}}},
		"negative mean":   {Combs: []Comb{{Devices: []Device{{DeviceCPU, 0, 1}}, Impls: []Impl{{Entries: []Entry{{MeanUS: -1}}}}}}},
		"n over 32 bits":  {Combs: []Comb{{Devices: []Device{{DeviceCPU, 0, 1}}, Impls: []Impl{{Entries: []Entry{{N: 1 << 32}}}}}}},
		"reg n over 32 b": {Combs: []Comb{{Devices: []Device{{DeviceCPU, 0, 1}}, Impls: []Impl{{Regression: Regression{N: 1 << 32}}}}}},
	}
	for name, m := range cases {
		var buf bytes.Buffer
		assert.Error(t, m.Write(&buf), name)
		assert.Zero(t, buf.Len(), name)
	}
	// An empty MultiRegression is written as none.
	m := &PerfModel{File: "x.h", Combs: []Comb{{Devices: []Device{{DeviceCPU, 0, 1}}, Impls: []Impl{{MultiRegression: &MultiRegression{}}}}}}
	assert.Nil(t, roundTrip(t, m).Combs[0].Impls[0].MultiRegression)
}

// goodModel is a small valid model; the bad-input cases edit one line of it.
// Line numbers: 1 version, 2 ncombs, 3 ndevices, 4 type, 5 devid, 6 ncores,
// 7 nimpls, 8 nentries, 9 regression, 10 NL regression, 11 MR count,
// 12 and 13 entries.
const goodModel = `45
1
1
0
0
1
1
2
0	0	0	0	nan	nan	0	0	0
nan	nan	nan
0
24c84a50	11059200	1.7e+09	8.4e+04	3.4e+03	1.4e+08	1.2e+13	1600
f0ac7beb	4915200	5.2e+08	2.6e+04	1.4e+03	4.2e+07	1.1e+12	1500
`

// withLine replaces line n (1-based) of goodModel.
func withLine(n int, text string) string {
	lines := strings.Split(goodModel, "\n")
	lines[n-1] = text
	return strings.Join(lines, "\n")
}

// twoCombs is goodModel with a second comb (CUDA 0, one entry) after it,
// starting at line 14.
const twoCombs = `45
2
1
0
0
1
1
2
0	0	0	0	nan	nan	0	0	0
nan	nan	nan
0
24c84a50	11059200	1.7e+09	8.4e+04	3.4e+03	1.4e+08	1.2e+13	1600
f0ac7beb	4915200	5.2e+08	2.6e+04	1.4e+03	4.2e+07	1.1e+12	1500
1
1
0
1
1
1
0	0	0	0	nan	nan	0	0	0
nan	nan	nan
0
24c84a50	11059200	1.7e+09	2.8e+03	5.6e+01	1.8e+07	5.1e+10	6400
`

func TestParsePerfModelGoodVariants(t *testing.T) {
	cases := map[string]string{
		"plain":              goodModel,
		"two combs":          twoCombs,
		"CRLF":               strings.ReplaceAll(goodModel, "\n", "\r\n"),
		"no final newline":   strings.TrimSuffix(goodModel, "\n"),
		"comments and blank": "# head\n\n" + strings.ReplaceAll(goodModel, "\n", "   # note\n\n"),
		"NAN spellings":      withLine(10, "NaN\t-nan\t+NAN"),
		"padded spaces":      withLine(12, "   24c84a50      11059200   1.7e+09 8.4e+04 3.4e+03 1.4e+08 1.2e+13 1600   "),
		"regression values":  withLine(9, "-1.5e+01\t2.25e+02\t3.0e+01\t-4.5e+01\t2.0\t-1.0\t12\t100\t1000"),
		"zero combs":         "45\n0\n",
		"multi regression":   withLine(11, "3\t1.0\t2.0e-3\tnan"),
		"mr across lines":    withLine(11, "2\n1.0\n2.0"),
		"infinities":         withLine(9, "inf\t-INF\tInfinity\t1e999\tinf\tnan\t0\t0\t0"),
		"infinite mean":      withLine(12, "24c84a50\t11059200\t1.7e9\tinf\t3.4e3\t1.4e8\t1e999\t1665"),
	}
	for name, text := range cases {
		t.Run(name, func(t *testing.T) {
			m, err := ParsePerfModel([]byte(text), "good.model")
			require.NoError(t, err)
			assert.Equal(t, "good", m.Symbol)
			m2 := roundTrip(t, m)
			assert.True(t, reflect.DeepEqual(canon(m), canon(m2)))
		})
	}
}

// TestParsePerfModelAsStarPU: what StarPU's reader accepts although StarPU
// does not write it so is read as StarPU reads it, with a located note.
func TestParsePerfModelAsStarPU(t *testing.T) {
	cases := []struct {
		name, text string
		entries    int // entries of the first implementation
		noteLine   int
		note       string
	}{
		// StarPU reads the declared counts only: what follows is ignored.
		{"fewer entries declared", withLine(8, "1"), 1, 13, "data after the 1 declared combination(s), starting with \"f0ac7beb\", ignored"},
		{"fewer combs declared", strings.Replace(twoCombs, "45\n2\n", "45\n1\n", 1), 2, 14, "starting with \"1\""},
		{"extra data after last comb", goodModel + "1\n", 2, 14, "data after the 1 declared"},
		// The multiple-regression line before the non-linear one.
		{"mr before nl", strings.Replace(goodModel, "nan\tnan\tnan\n0\n", "0\nnan\tnan\tnan\n", 1), 2, 10, "cpu0_impl0: multiple-regression line before the non-linear regression line"},
		{"mr with coefficients before nl", strings.Replace(goodModel, "nan\tnan\tnan\n0\n", "2\t1.5\tnan\nnan\t2\t3\n", 1), 2, 10, "multiple-regression line before"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := ParsePerfModel([]byte(c.text), "odd.model")
			require.NoError(t, err)
			require.Len(t, m.Notes, 1)
			assert.Equal(t, "odd.model", m.Notes[0].File)
			assert.Equal(t, c.noteLine, m.Notes[0].Line)
			assert.Contains(t, m.Notes[0].Msg, c.note)
			assert.Len(t, m.Combs[0].Impls[0].Entries, c.entries)
		})
	}
	m, err := ParsePerfModel([]byte(strings.Replace(goodModel, "nan\tnan\tnan\n0\n", "2\t1.5\tnan\nnan\t2\t3\n", 1)), "odd.model")
	require.NoError(t, err)
	im := m.Combs[0].Impls[0]
	assert.True(t, math.IsNaN(im.NLRegression.A))
	assert.Equal(t, [2]float64{2, 3}, [2]float64{im.NLRegression.B, im.NLRegression.C})
	require.NotNil(t, im.MultiRegression)
	assert.Equal(t, 1.5, im.MultiRegression.Coeffs[0])
	assert.True(t, math.IsNaN(im.MultiRegression.Coeffs[1]))

	// Infinities read as such and write back.
	m, err = ParsePerfModel([]byte(withLine(9, "inf\t-inf\t1e999\t0\tnan\tnan\t0\t0\t0")), "inf.model")
	require.NoError(t, err)
	r := m.Combs[0].Impls[0].Regression
	assert.True(t, math.IsInf(r.SumLnX, 1) && math.IsInf(r.SumLnX2, -1) && math.IsInf(r.SumLnY, 1))
	assert.Empty(t, m.Notes)
	assert.Equal(t, canon(m), canon(roundTrip(t, m)))
}

func TestParsePerfModelErrors(t *testing.T) {
	cases := []struct {
		name, text string
		line       int
		phrase     string
	}{
		// Version.
		{"wrong version", withLine(1, "44"), 1, "unsupported performance model version 44, want 45"},
		{"version 46", withLine(1, "46"), 1, "unsupported performance model version 46, want 45"},
		{"version not a number", withLine(1, "v45"), 1, "expected performance model version 45"},
		{"empty file", "", 1, "empty performance model file"},
		{"only comments", "# nothing\n\n", 1, "empty performance model file"},

		// Truncation: a count larger than what follows.
		{"truncated entries", withLine(8, "3"), 13, "truncated: expected history entry 3 of 3 of cpu0_impl0"},
		{"truncated combs", withLine(2, "2"), 13, "truncated: expected number of devices of combination 2 of 2"},
		{"truncated impls", withLine(7, "2"), 13, "truncated: expected number of history entries of cpu0_impl1"},
		{"truncated regression", strings.Join(strings.Split(goodModel, "\n")[:8], "\n") + "\n0 0 0 0 nan\n", 9, "truncated: expected regression beta of cpu0_impl0"},
		{"truncated after version", "45\n", 1, "truncated: expected number of combinations"},
		{"mr count too large", withLine(11, "3\t1.0"), 12, "expected multiple-regression coefficient 2 of 3 of cpu0_impl0 (a number, nan or inf), found \"24c84a50\""},
		{"truncated mr at eof", "45\n1\n1\n0\n0\n1\n1\n0\n0 0 0 0 nan nan 0 0 0\nnan nan nan\n2 1.0\n", 11, "truncated: expected multiple-regression coefficient 2 of 2"},

		// Counts disagreeing with the data.
		{"more entries declared than before next comb", strings.Replace(twoCombs, "\n2\n0\t0\t0\t0", "\n3\n0\t0\t0\t0", 1), 14, "history entry 3 of 3 of cpu0_impl0: found 1 value(s), want 8"},
		{"count with extra value", withLine(3, "1 0"), 3, "alone on its line"},
		{"zero devices", withLine(3, "0"), 3, "number of devices of combination 1 of 1 0 out of range"},
		{"zero implementations", withLine(7, "0"), 7, "number of implementations of combination 1 0 out of range"},
		{"negative entry count", withLine(8, "-2"), 8, "out of range"},
		{"entry with 9 fields", withLine(12, "24c84a50\t11059200\t1.7e9\t8.4e4\t3.4e3\t1.4e8\t1.1e13\t1665\t7"), 12, "found 9 value(s), want 8"},
		{"entry with 6 fields", withLine(12, "24c84a50\t11059200\t8.4e4\t3.4e3\t1.4e8\t1665"), 12, "found 6 value(s), want 8"},
		{"count not a number", withLine(2, "one"), 2, "expected number of combinations (an integer), found \"one\""},
		{"count float", withLine(7, "1.0"), 7, "expected number of implementations of combination 1 (an integer)"},

		// Negative durations and counts.
		{"negative mean", withLine(12, "24c84a50\t11059200\t1.7e9\t-8.4e4\t3.4e3\t1.4e8\t1.1e13\t1665"), 12, "negative mean -8.4e4"},
		{"negative dev", withLine(12, "24c84a50\t11059200\t1.7e9\t8.4e4\t-3.4e3\t1.4e8\t1.1e13\t1665"), 12, "negative dev"},
		{"negative sum", withLine(13, "f0ac7beb\t4915200\t5.2e8\t2.6e4\t1.4e3\t-4.2e7\t1.1e12\t1629"), 13, "negative sum -4.2e7"},
		{"negative sum2", withLine(13, "f0ac7beb\t4915200\t5.2e8\t2.6e4\t1.4e3\t4.2e7\t-1.1e12\t1629"), 13, "negative sum2"},
		{"negative flops", withLine(12, "24c84a50\t11059200\t-1.7e9\t8.4e4\t3.4e3\t1.4e8\t1.1e13\t1665"), 12, "negative flops"},
		{"negative n", withLine(12, "24c84a50\t11059200\t1.7e9\t8.4e4\t3.4e3\t1.4e8\t1.1e13\t-1665"), 12, "negative sample count n -1665"},
		{"float n", withLine(12, "24c84a50\t11059200\t1.7e9\t8.4e4\t3.4e3\t1.4e8\t1.1e13\t16.5"), 12, "sample count n \"16.5\" is not a non-negative integer"},
		{"negative regression n", withLine(9, "0\t0\t0\t0\tnan\tnan\t-1\t0\t0"), 9, "expected regression sample count n of cpu0_impl0 (a non-negative integer), found \"-1\""},
		{"negative minx", withLine(9, "0\t0\t0\t0\tnan\tnan\t1\t-5\t0"), 9, "regression minx"},
		{"negative devid", withLine(5, "-1"), 5, "device id of device 1 of combination 1 -1 out of range"},
		{"negative ncores", withLine(6, "-1"), 6, "number of cores of device 1 of combination 1 -1 out of range"},
		{"negative mr count", withLine(11, "-1"), 11, "expected multiple-regression coefficient count of cpu0_impl0"},

		// Device types.
		{"unknown device type 9", withLine(4, "9"), 4, "unknown device type 9"},
		{"unknown device type -1", withLine(4, "-1"), 4, "unknown device type -1"},
		{"device type word", withLine(4, "CPU"), 4, "expected device type of device 1 of combination 1 (an integer), found \"CPU\""},

		// Footprints and sizes.
		{"bad hex", withLine(12, "24c84g50\t11059200\t1.7e9\t8.4e4\t3.4e3\t1.4e8\t1.1e13\t1665"), 12, "malformed footprint \"24c84g50\""},
		{"hex too long", withLine(12, "124c84a50\t11059200\t1.7e9\t8.4e4\t3.4e3\t1.4e8\t1.1e13\t1665"), 12, "malformed footprint \"124c84a50\", want up to 8 hex digits"},
		{"hex with prefix", withLine(12, "0x24c84a50\t11059200\t1.7e9\t8.4e4\t3.4e3\t1.4e8\t1.1e13\t1665"), 12, "malformed footprint"},
		{"size float", withLine(12, "24c84a50\t1.1e7\t1.7e9\t8.4e4\t3.4e3\t1.4e8\t1.1e13\t1665"), 12, "size \"1.1e7\" is not a non-negative integer"},
		{"size negative", withLine(12, "24c84a50\t-5\t1.7e9\t8.4e4\t3.4e3\t1.4e8\t1.1e13\t1665"), 12, "size \"-5\" is not a non-negative integer"},
		{"size too large", withLine(12, "24c84a50\t18446744073709551616\t1.7e9\t8.4e4\t3.4e3\t1.4e8\t1.1e13\t1665"), 12, "is not a non-negative integer"},

		// Floats.
		{"mean -inf", withLine(12, "24c84a50\t11059200\t1.7e9\t-inf\t3.4e3\t1.4e8\t1.1e13\t1665"), 12, "negative mean -inf"},
		{"hex float", withLine(9, "0x1p3\t0\t0\t0\tnan\tnan\t0\t0\t0"), 9, "regression sumlnx"},
		{"mean not a number", withLine(12, "24c84a50\t11059200\t1.7e9\tfast\t3.4e3\t1.4e8\t1.1e13\t1665"), 12, "mean \"fast\" is not a number"},
		{"regression garbage", withLine(9, "0\t0\tx\t0\tnan\tnan\t0\t0\t0"), 9, "expected regression sumlny of cpu0_impl0 (a number, nan or inf), found \"x\""},
		{"nl garbage", withLine(10, "nan\tnan\tnanx"), 10, "non-linear regression c of cpu0_impl0"},
		{"mr garbage", withLine(11, "2\t1.0\tabc"), 11, "multiple-regression coefficient 2 of 2 of cpu0_impl0 (a number, nan or inf), found \"abc\""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := ParsePerfModel([]byte(c.text), "bad.model")
			assert.Nil(t, m)
			requireSrcErr(t, err, "bad.model:"+strconv.Itoa(c.line)+": ", c.phrase)
		})
	}
}
