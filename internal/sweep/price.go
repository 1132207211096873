package sweep

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"strconv"

	"github.com/starsim/starsim/internal/inputfile"
	"github.com/starsim/starsim/internal/jsonpos"
	"github.com/starsim/starsim/internal/srcerr"
)

// MaxPrice bounds a price (units of money).
const MaxPrice = 1e15

// ReadPrices reads a price file (see ParsePrices).
func ReadPrices(path string) (map[string]float64, error) {
	data, err := inputfile.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParsePrices(data, path)
}

// ParsePrices reads a price file: one JSON object mapping device models
// (and "cpu", the host) to prices, each a number > 0 and at most
// MaxPrice. An empty object, a key given twice, an empty key, any other
// value and anything after the object are errors, at their line of name.
func ParsePrices(data []byte, name string) (map[string]float64, error) {
	const want = `want a JSON object of prices, {"MODEL": PRICE, "cpu": PRICE}`
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	at := func(off int64) int { return srcerr.LineOf(data, jsonpos.TokenStart(data, off)) }
	tok, err := dec.Token()
	if err != nil {
		return nil, jsonpos.DecodeError(data, name, "prices", err, 0)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, srcerr.Errorf(name, at(0), "%s", want)
	}
	prices := map[string]float64{}
	lines := map[string]int{}
	for dec.More() {
		off := dec.InputOffset()
		kt, err := dec.Token()
		if err != nil {
			return nil, jsonpos.DecodeError(data, name, "prices", err, off)
		}
		key := kt.(string) // object keys are strings
		line := at(off)
		if key == "" {
			return nil, srcerr.Errorf(name, line, "empty device model: %s", want)
		}
		if first, ok := lines[key]; ok {
			return nil, srcerr.Errorf(name, line, "price of %q given twice (first on line %d)", key, first)
		}
		lines[key] = line
		voff := dec.InputOffset()
		vt, err := dec.Token()
		if err != nil {
			return nil, jsonpos.DecodeError(data, name, "prices", err, voff)
		}
		num, ok := vt.(json.Number)
		if !ok {
			if _, delim := vt.(json.Delim); delim {
				return nil, srcerr.Errorf(name, at(voff), "price of %q: want a number, got an array or object", key)
			}
			got := "null"
			switch v := vt.(type) {
			case string:
				got = "the string " + strconv.Quote(v)
			case bool:
				got = strconv.FormatBool(v)
			}
			return nil, srcerr.Errorf(name, at(voff), "price of %q: want a number, got %s", key, got)
		}
		v, err := num.Float64()
		if err != nil || math.IsNaN(v) || !(v > 0) || v > MaxPrice {
			return nil, srcerr.Errorf(name, at(voff), "price of %q is %s: want a number > 0 and at most %g", key, num, MaxPrice)
		}
		prices[key] = v
	}
	if _, err := dec.Token(); err != nil { // '}'
		return nil, jsonpos.DecodeError(data, name, "prices", err, dec.InputOffset())
	}
	off := dec.InputOffset()
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, srcerr.Errorf(name, at(off), "unexpected data after the price object")
	}
	if len(prices) == 0 {
		return nil, srcerr.Errorf(name, at(0), "no prices: %s", want)
	}
	return prices, nil
}
