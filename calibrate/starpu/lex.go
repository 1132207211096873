package starpu

import (
	"math"
	"strconv"
	"strings"
)

// token is one whitespace-separated word of a calibration file, comments
// ('#' to the end of the line) removed.
type token struct {
	s    string
	line int
}

// tokenize splits data into tokens with their 1-based line numbers. It also
// returns the number of the last line, where a truncated file "ran out".
func tokenize(data []byte) ([]token, int) {
	var toks []token
	line := 0
	for rest := string(data); len(rest) > 0; {
		line++
		var l string
		if i := strings.IndexByte(rest, '\n'); i >= 0 {
			l, rest = rest[:i], rest[i+1:]
		} else {
			l, rest = rest, ""
		}
		if i := strings.IndexByte(l, '#'); i >= 0 {
			l = l[:i]
		}
		for _, f := range strings.Fields(l) {
			toks = append(toks, token{f, line})
		}
	}
	if line == 0 {
		line = 1
	}
	return toks, line
}

// tokenLines splits data into its lines, comments removed, as token lists; lines
// left empty are dropped.
func tokenLines(data []byte) ([][]token, int) {
	toks, last := tokenize(data)
	var out [][]token
	for i := 0; i < len(toks); {
		j := i + 1
		for j < len(toks) && toks[j].line == toks[i].line {
			j++
		}
		out = append(out, toks[i:j])
		i = j
	}
	return out, last
}

// parseFloat reads a C-style floating-point number as StarPU writes it with
// printf("%e") or scanf("%le") reads it. "nan" in any case, signed or not,
// is NaN; infinities and hexadecimal floats are refused.
func parseFloat(s string) (float64, bool) {
	body := strings.TrimLeft(s, "+-")
	if len(s)-len(body) > 1 {
		return 0, false
	}
	if strings.EqualFold(body, "nan") {
		return math.NaN(), true
	}
	if body == "" || strings.ContainsAny(body, "xXpP_") {
		return 0, false
	}
	switch body[0] {
	case 'i', 'I', 'n', 'N':
		return 0, false
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(v, 0) {
		return 0, false
	}
	return v, true
}

// parseModelFloat reads a float of a performance model as StarPU's reader
// does (glibc's scanf "%le"): parseFloat's numbers and NaNs, plus
// infinities ("inf" or "infinity", any case, signed) and numbers beyond the
// float64 range, which read as infinities. Hexadecimal floats are refused.
func parseModelFloat(s string) (float64, bool) {
	if v, ok := parseFloat(s); ok {
		return v, true
	}
	body := strings.TrimLeft(s, "+-")
	if len(s)-len(body) > 1 || body == "" || strings.ContainsAny(body, "xXpP_") {
		return 0, false
	}
	neg := strings.HasPrefix(s, "-")
	if strings.EqualFold(body, "inf") || strings.EqualFold(body, "infinity") {
		if neg {
			return math.Inf(-1), true
		}
		return math.Inf(1), true
	}
	if c := body[0]; c != '.' && (c < '0' || c > '9') {
		return 0, false
	}
	v, err := strconv.ParseFloat(s, 64)
	if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange && math.IsInf(v, 0) {
		return v, true
	}
	return 0, false
}

// formatFloat writes v so that parseModelFloat reads back exactly v (NaN
// as "nan" and infinities as "inf", "-inf", the way glibc prints them).
func formatFloat(v float64) string {
	switch {
	case math.IsNaN(v):
		return "nan"
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// parseUint reads a non-negative decimal integer (no sign, no exponent).
func parseUint(s string, bits int) (uint64, bool) {
	if s == "" || s[0] < '0' || s[0] > '9' {
		return 0, false
	}
	v, err := strconv.ParseUint(s, 10, bits)
	return v, err == nil
}

// parseInt reads a decimal integer with an optional sign that fits in 32
// bits (StarPU reads these fields with scanf("%d") or "%u").
func parseInt(s string) (int, bool) {
	v, err := strconv.ParseInt(s, 10, 32)
	return int(v), err == nil
}
