package traces

import (
	"math"
	"strconv"
)

// Nanos converts simulated seconds to integer nanoseconds: both writers
// print exact, monotonic decimal times from them.
func Nanos(tS float64) int64 { return int64(math.Round(tS * 1e9)) }

// AppendDecimal appends v/unit with digits decimals (unit = 10^digits).
func AppendDecimal(b []byte, v, unit int64, digits int) []byte {
	if v < 0 {
		b = append(b, '-')
		v = -v
	}
	b = strconv.AppendInt(b, v/unit, 10)
	b = append(b, '.')
	frac := strconv.AppendInt(nil, v%unit, 10)
	for i := len(frac); i < digits; i++ {
		b = append(b, '0')
	}
	return append(b, frac...)
}

// Clip shortens a line quoted in an error message.
func Clip(s string) string {
	const max = 60
	if len(s) > max {
		return s[:max] + "..."
	}
	return s
}

// AppendHex8 appends v as 8 hexadecimal digits (%08x: a footprint).
func AppendHex8(b []byte, v uint32) []byte {
	s := strconv.AppendUint(nil, uint64(v), 16)
	for i := len(s); i < 8; i++ {
		b = append(b, '0')
	}
	return append(b, s...)
}
