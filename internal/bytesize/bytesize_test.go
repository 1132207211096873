package bytesize

import (
	"errors"
	"math/big"
	"strings"
	"testing"

	"github.com/dustin/go-humanize"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
	}{
		{"0", 0},
		{"104857600", 104857600},
		{"104857600B", 104857600},
		{"400MiB", 400 << 20},
		{"400 MiB", 400 << 20},
		{" 3GiB ", 3 << 30},
		{"3gib", 3 << 30},
		{"1.5KiB", 1536},
		{"0.5GiB", 1 << 29},
		{"2TiB", 2 << 40},
		{"1PiB", 1 << 50},
		{"5kB", 5000},
		{"5KB", 5000},
		{"1.5GB", 1500000000},
		{"7MB", 7000000},
		{"2tb", 2e12},
		{"8191PiB", 8191 << 50},
		{"9223372036854775807", 1<<63 - 1},
	} {
		got, err := Parse(c.in)
		require.NoError(t, err, c.in)
		assert.Equal(t, c.want, got, c.in)
	}
}

func TestParseErrors(t *testing.T) {
	for _, c := range []struct{ in, reason string }{
		{"", "empty"},
		{"   ", "empty"},
		{"MiB", "no number"},
		{"-1", "negative"},
		{"-400MiB", "negative"},
		{"400M", `unit "M" is ambiguous: write MiB (powers of 1024) or MB (powers of 1000)`},
		{"3g", `unit "g" is ambiguous`},
		{"400MiBs", `unknown unit "MiBs"`},
		{"4e9", `unknown unit "e9"`},
		{"1.1B", "not a whole number of bytes (1.100 B)"},
		{"0.3KiB", "not a whole number of bytes"},
		{"1..5MiB", "malformed number"},
		{".5MiB", "malformed number"},
		{"5.MiB", "malformed number"},
		{"8192PiB", "too large"},
		{"9223372036854775808", "too large"},
		{"99999999999999999999.5GiB", "too large"},
		{"0x10", `unknown unit "x10"`},
	} {
		_, err := Parse(c.in)
		require.Error(t, err, c.in)
		var e *Error
		require.True(t, errors.As(err, &e), c.in)
		assert.Equal(t, c.in, e.Input)
		assert.Contains(t, err.Error(), c.reason, c.in)
		assert.Contains(t, err.Error(), "bad byte size", c.in)
	}
}

func TestFormat(t *testing.T) {
	for _, c := range []struct {
		in   int64
		want string
	}{
		{0, "0B"}, {1000, "1000B"}, {1024, "1KiB"}, {400 << 20, "400MiB"}, {3 << 30, "3GiB"},
		{1536, "1536B"}, {1 << 40, "1TiB"}, {5 << 50, "5PiB"}, {-5, "-5B"},
	} {
		assert.Equal(t, c.want, Format(c.in))
	}
}

// FuzzParse: never a panic; a size is never negative, and Format writes it
// so that Parse reads it back unchanged.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"400MiB", "3GiB", "104857600", "1.5GB", "0.5 kib", "-1", "400M", "1e9", "8192PiB", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := Parse(s)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Input != s {
				t.Fatalf("error %v does not carry the input", err)
			}
			return
		}
		if v < 0 {
			t.Fatalf("Parse(%q) = %d < 0", s, v)
		}
		back, err := Parse(Format(v))
		if err != nil || back != v {
			t.Fatalf("Format(%d) = %q reads back as %d, %v", v, Format(v), back, err)
		}
		if h, err := humanize.ParseBigBytes(strings.TrimSpace(s)); err != nil || h.Cmp(big.NewInt(v)) != 0 {
			t.Fatalf("Parse(%q) = %d, go-humanize reads %v, %v", s, v, h, err)
		}
	})
}

// TestAgainstHumanize: every size Parse reads, go-humanize's exact parser
// reads the same; where they part, Parse refuses what humanize reads
// silently (the README says why the parser is not humanize's).
func TestAgainstHumanize(t *testing.T) {
	for _, s := range []string{"0", "104857600", "400MiB", "400 MiB", "3gib", "1.5KiB", "0.5GiB", "1PiB", "5kB", "5KB", "1.5GB", "2tb", "8191PiB", "9223372036854775807"} {
		v, err := Parse(s)
		require.NoError(t, err, s)
		h, err := humanize.ParseBigBytes(s)
		require.NoError(t, err, s)
		assert.Equal(t, big.NewInt(v), h, s)
	}
	for _, c := range []struct {
		in       string
		humanize uint64
		ours     int64 // -1: refused
	}{
		{"400M", 400e6, -1}, // StarPU's limits are MiB: a user may mean 400 MiB
		{"1.1B", 1, -1},     // a fraction of a byte, truncated
		{"0.3KiB", 307, -1}, // 307.2 bytes, truncated
		{"1,000", 1000, -1}, // a thousands separator
		{"9007199254740993", 9007199254740992, 9007199254740993}, // float64 rounding
	} {
		h, err := humanize.ParseBytes(c.in)
		require.NoError(t, err, c.in)
		assert.Equal(t, c.humanize, h, c.in)
		v, err := Parse(c.in)
		if c.ours < 0 {
			assert.Error(t, err, c.in)
		} else {
			assert.Equal(t, c.ours, v, c.in)
		}
	}
}
