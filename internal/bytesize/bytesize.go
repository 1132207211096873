// Package bytesize reads and writes byte sizes with units, the one parser
// behind every size a starsim flag takes (--gpu-mem 400MiB).
//
// Accepted: a non-negative decimal number, optionally with a fraction,
// optionally followed (spaces allowed) by a unit:
//
//	B                      bytes (the same as no unit)
//	KiB MiB GiB TiB PiB    powers of 1024 (IEC)
//	kB  MB  GB  TB  PB     powers of 1000 (SI; "KB" is read as kB)
//
// Units are case-insensitive except that the "i" tells binary from decimal:
// "mib" is 2^20, "mb" is 10^6. A bare prefix ("400M") is refused, because
// it could mean either. The result must be a whole number of bytes that
// fits an int64: "1.5KiB" is 1536, "1.1B" is an error.
//
// This is stricter than go-humanize's ParseBytes, which reads "400M" as
// 400 MB (StarPU's memory limits are MiB), truncates fractions of a byte
// and rounds through float64; the tests check that both read every size
// this package accepts as the same number of bytes.
package bytesize

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"
)

// units maps a lower-case unit to its size in bytes.
var units = map[string]int64{
	"": 1, "b": 1,
	"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40, "pib": 1 << 50,
	"kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12, "pb": 1e15,
}

const want = "want a size such as 104857600, 400MiB, 3GiB or 1.5GB (units: B, KiB, MiB, GiB, TiB, PiB; kB, MB, GB, TB, PB)"

// Error is a size that does not parse; Input is the text as given.
type Error struct {
	Input, Reason string
}

func (e *Error) Error() string { return fmt.Sprintf("bad byte size %q: %s", e.Input, e.Reason) }

// Parse reads a byte size (see the package documentation).
func Parse(s string) (int64, error) {
	fail := func(format string, args ...any) (int64, error) {
		return 0, &Error{Input: s, Reason: fmt.Sprintf(format, args...)}
	}
	t := strings.TrimSpace(s)
	if t == "" {
		return fail("empty; %s", want)
	}
	end := 0
	for end < len(t) && (t[end] >= '0' && t[end] <= '9' || t[end] == '.') {
		end++
	}
	num, unit := t[:end], strings.TrimSpace(t[end:])
	if num == "" {
		if t[0] == '-' {
			return fail("negative")
		}
		return fail("no number; %s", want)
	}
	if strings.Count(num, ".") > 1 || num[0] == '.' || num[len(num)-1] == '.' {
		return fail("malformed number %q; %s", num, want)
	}
	mult, ok := units[strings.ToLower(unit)]
	if !ok {
		switch strings.ToLower(unit) {
		case "k", "m", "g", "t", "p":
			return fail("unit %q is ambiguous: write %siB (powers of 1024) or %sB (powers of 1000)", unit, strings.ToUpper(unit), strings.ToUpper(unit))
		}
		return fail("unknown unit %q; %s", unit, want)
	}
	if !strings.Contains(num, ".") {
		v, err := strconv.ParseInt(num, 10, 64)
		if err != nil || (v != 0 && v > (1<<63-1)/mult) {
			return fail("too large (more than %d bytes)", int64(1<<63-1))
		}
		return v * mult, nil
	}
	r, ok := new(big.Rat).SetString(num)
	if !ok {
		return fail("malformed number %q; %s", num, want)
	}
	r.Mul(r, new(big.Rat).SetInt64(mult))
	if !r.IsInt() {
		return fail("not a whole number of bytes (%s B)", r.FloatString(3))
	}
	if !r.Num().IsInt64() {
		return fail("too large (more than %d bytes)", int64(1<<63-1))
	}
	return r.Num().Int64(), nil
}

// Format writes b in the largest binary unit that divides it exactly
// ("400MiB", "3GiB"), else in bytes ("1000B"); Parse reads it back as b.
// Negative sizes are written in bytes.
func Format(b int64) string {
	if b > 0 {
		for _, u := range []struct {
			name string
			size int64
		}{{"PiB", 1 << 50}, {"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
			if b%u.size == 0 {
				return strconv.FormatInt(b/u.size, 10) + u.name
			}
		}
	}
	return strconv.FormatInt(b, 10) + "B"
}
