package platforms

import (
	"strings"
	"testing"
)

func TestParseBandwidth(t *testing.T) {
	const k, ki = 1e3, 1024.0
	tests := []struct {
		in   string
		want float64 // bytes per second
	}{
		{"6008661719.001335", 6008661719.001335}, // no unit: Bps
		{"0", 0},
		{"1e9", 1e9},
		{".5", 0.5},
		{"5.", 5},
		{"+2", 2},
		{"2e+09Bps", 2e9},
		{"3Bps", 3},
		{"3kBps", 3 * k},
		{"3MBps", 3 * k * k},
		{"3GBps", 3 * k * k * k},
		{"3TBps", 3 * k * k * k * k},
		{"3PBps", 3 * k * k * k * k * k},
		{"3EBps", 3 * k * k * k * k * k * k},
		{"3ZBps", 3 * k * k * k * k * k * k * k},
		{"3YBps", 3 * k * k * k * k * k * k * k * k},
		{"3KiBps", 3 * ki},
		{"3MiBps", 3 * ki * ki},
		{"3GiBps", 3 * ki * ki * ki},
		{"3TiBps", 3 * ki * ki * ki * ki},
		{"3PiBps", 3 * ki * ki * ki * ki * ki},
		{"3EiBps", 3 * ki * ki * ki * ki * ki * ki},
		{"3ZiBps", 3 * ki * ki * ki * ki * ki * ki * ki},
		{"3YiBps", 3 * ki * ki * ki * ki * ki * ki * ki * ki},
		{"8bps", 1},
		{"8kbps", k},
		{"8Mbps", k * k},
		{"8Gbps", k * k * k},
		{"8Tbps", k * k * k * k},
		{"8Kibps", ki},
		{"8Mibps", ki * ki},
		{"8Gibps", ki * ki * ki},
		{"8Tibps", ki * ki * ki * ki},
		{"12.5GBps", 12.5e9},
		{"6.4GiBps", 6.4 * 1073741824},
	}
	for _, tt := range tests {
		got, err := parseBandwidth(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("parseBandwidth(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestParseTime(t *testing.T) {
	tests := []struct {
		in   string
		want float64 // seconds
	}{
		{"0.000009", 9e-6}, // no unit: s
		{"0.000000", 0},
		{"2", 2},
		{"2s", 2},
		{"2ms", 2e-3},
		{"2us", 2e-6},
		{"2ns", 2e-9},
		{"2ps", 2e-12},
		{"2m", 120},
		{"2h", 7200},
		{"2d", 2 * 86400},
		{"2w", 2 * 7 * 86400},
		{"9e-06s", 9e-6},
		{"-1s", -1}, // parses; Validate refuses negative latencies
	}
	for _, tt := range tests {
		got, err := parseTime(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("parseTime(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestParseSpeed(t *testing.T) {
	tests := []struct {
		in   string
		want float64 // flop/s
	}{
		{"2000000000", 2e9}, // no unit: f
		{"1f", 1},
		{"2kf", 2e3},
		{"2Mf", 2e6},
		{"2Gf", 2e9},
		{"2Tf", 2e12},
		{"2Pf", 2e15},
		{"2Ef", 2e18},
		{"2Zf", 2e21},
		{"2Yf", 2e24},
		{"2flops", 2},
		{"2kiloflops", 2e3},
		{"2megaflops", 2e6},
		{"2gigaflops", 2e9},
		{"2teraflops", 2e12},
		{"2petaflops", 2e15},
		{"2exaflops", 2e18},
		{"2zetaflops", 2e21}, // SimGrid's spelling
		{"2yottaflops", 2e24},
		{"1Gf,500Mf", 1e9}, // pstates: the first one
		{"1Gf, 500Mf ,100Mf", 1e9},
		{"2e+09f", 2e9},
	}
	for _, tt := range tests {
		got, err := parseSpeed(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("parseSpeed(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestParseUnitErrors(t *testing.T) {
	tests := []struct {
		kind, in, want string
	}{
		{"bandwidth", "", "empty value"},
		{"bandwidth", "12xyz", `unknown unit "xyz"`},
		{"bandwidth", "5 GBps", `unknown unit " GBps"`},
		{"bandwidth", " 5GBps", "not a number"},
		{"bandwidth", "5GBps ", `unknown unit "GBps "`},
		{"bandwidth", "5KBps", `unknown unit "KBps"`}, // decimal kilo is lower-case k
		{"bandwidth", "5gbps", `unknown unit "gbps"`},
		{"bandwidth", "NaN", "not a number"},
		{"bandwidth", "Inf", "not a number"},
		{"bandwidth", "0x10Bps", `unknown unit "x10Bps"`},
		{"bandwidth", "1e400Bps", "out of range"},
		{"bandwidth", "1e300YBps", "out of range"},
		{"bandwidth", "1Bps,2Bps", "list of bandwidths"},
		{"bandwidth", "Bps", "not a number"},
		{"time", "1sec", `unknown unit "sec"`},
		{"time", "1min", `unknown unit "min"`},
		{"time", "1Ms", `unknown unit "Ms"`},
		{"time", "-inf", "not a number"},
		{"speed", "1GHz", `unknown unit "GHz"`},
		{"speed", "1Gflops", `unknown unit "Gflops"`},
		{"speed", "1Kif", `unknown unit "Kif"`},
		{"speed", "NaNf", "not a number"},
		{"speed", "1Gf,", "pstate 1: empty value"},
		{"speed", "1Gf,x", "pstate 1: not a number"},
	}
	parse := map[string]func(string) (float64, error){
		"bandwidth": parseBandwidth, "time": parseTime, "speed": parseSpeed,
	}
	for _, tt := range tests {
		v, err := parse[tt.kind](tt.in)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("parse %s %q = %v, %v; want error containing %q", tt.kind, tt.in, v, err, tt.want)
		}
	}
}
