package platforms

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// The unit tables follow SimGrid's src/xbt/xbt_parse_units.cpp (3.32): every
// scale is built by the same repeated multiplications, so a value with a unit
// gives the same float64 as in SimGrid. A value without a unit is in the
// default unit (SimGrid warns about it but accepts it, and v3 files rely on it).
var (
	bandwidthUnits = makeUnits(
		unitGen{"bps", 0.125, 2, true}, unitGen{"bps", 0.125, 10, true},
		unitGen{"Bps", 1, 2, true}, unitGen{"Bps", 1, 10, true})
	speedUnits = makeUnits(unitGen{"f", 1, 10, true}, unitGen{"flops", 1, 10, false})
	timeUnits  = map[string]float64{
		"w": 7 * 24 * 60 * 60, "d": 24 * 60 * 60, "h": 60 * 60, "m": 60, "s": 1,
		"ms": 1e-3, "us": 1e-6, "ns": 1e-9, "ps": 1e-12,
	}
)

// What each kind of value accepts, for error messages.
const (
	bandwidthAccepted = "accepted: a number with unit Bps or bps (bits, 1Bps = 8bps) after an optional prefix " +
		"k, M, G, T, P, E, Z, Y (x1000) or Ki, Mi, Gi, Ti, Pi, Ei, Zi, Yi (x1024), e.g. 6.5GBps; no unit means Bps"
	timeAccepted  = "accepted: a number with unit w, d, h, m, s, ms, us, ns or ps, e.g. 9us; no unit means s"
	speedAccepted = "accepted: a number with unit f after an optional prefix k, M, G, T, P, E, Z, Y, " +
		"or flops after kilo, mega, giga, tera, peta, exa, zeta, yotta, e.g. 2Gf; no unit means f; " +
		"a comma-separated pstate list uses its first value"
)

type unitGen struct {
	unit   string
	value  float64
	base   int // 2 or 10
	abbrev bool
}

func makeUnits(gens ...unitGen) map[string]float64 {
	m := make(map[string]float64)
	for _, g := range gens {
		mult := 1000.0
		prefixes := []string{"k", "M", "G", "T", "P", "E", "Z", "Y"}
		if !g.abbrev {
			prefixes = []string{"kilo", "mega", "giga", "tera", "peta", "exa", "zeta", "yotta"}
		}
		if g.base == 2 {
			mult = 1024
			prefixes = []string{"Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "Zi", "Yi"}
			if !g.abbrev {
				prefixes = []string{"kibi", "mebi", "gibi", "tebi", "pebi", "exbi", "zebi", "yobi"}
			}
		}
		v := g.value
		m[g.unit] = v
		for _, p := range prefixes {
			v *= mult
			m[p+g.unit] = v
		}
	}
	return m
}

// number is the decimal float syntax accepted before a unit. It is stricter than
// C's strtod (no hex, inf or nan) on purpose: those are never meant in a platform.
var number = regexp.MustCompile(`^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?`)

var errNoNumber = errors.New("not a number")

// parseWithUnit parses "<number><unit>" (no space) with the given unit table.
func parseWithUnit(s string, units map[string]float64, defaultUnit string) (float64, error) {
	if s == "" {
		return 0, errors.New("empty value")
	}
	n := number.FindString(s)
	if n == "" {
		return 0, errNoNumber
	}
	v, err := strconv.ParseFloat(n, 64)
	if err != nil {
		return 0, errors.New("number out of range")
	}
	unit := s[len(n):]
	if unit == "" {
		unit = defaultUnit
	}
	scale, ok := units[unit]
	if !ok {
		return 0, fmt.Errorf("unknown unit %q", unit)
	}
	v *= scale
	if math.IsInf(v, 0) {
		return 0, errors.New("number out of range")
	}
	return v, nil
}

// parseBandwidth parses a SimGrid bandwidth into bytes per second.
func parseBandwidth(s string) (float64, error) {
	if strings.ContainsAny(s, ",;") {
		return 0, errors.New("a list of bandwidths is only for SPLITDUPLEX/WIFI links, which are not supported")
	}
	return parseWithUnit(s, bandwidthUnits, "Bps")
}

// parseTime parses a SimGrid duration into seconds.
func parseTime(s string) (float64, error) { return parseWithUnit(s, timeUnits, "s") }

// parseSpeed parses a SimGrid speed, or a comma-separated list of pstate speeds,
// into flop/s. For a list every item must parse (as in SimGrid, each is trimmed)
// and the first one is returned: starsim models pstate 0 only.
func parseSpeed(s string) (float64, error) {
	if !strings.Contains(s, ",") {
		return parseWithUnit(s, speedUnits, "f")
	}
	var first float64
	for i, item := range strings.Split(s, ",") {
		v, err := parseWithUnit(strings.TrimSpace(item), speedUnits, "f")
		if err != nil {
			return 0, fmt.Errorf("pstate %d: %w", i, err)
		}
		if i == 0 {
			first = v
		}
	}
	return first, nil
}
