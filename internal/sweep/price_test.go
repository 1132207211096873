package sweep

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParsePrices(t *testing.T) {
	p, err := ParsePrices([]byte("{\n  \"Tesla V100-SXM2-32GB\": 9000,\n  \"cpu\": 2500.5\n}\n"), "p.json")
	require.NoError(t, err)
	assert.Equal(t, map[string]float64{"Tesla V100-SXM2-32GB": 9000, "cpu": 2500.5}, p)

	for _, c := range []struct{ name, doc, want string }{
		{"empty file", "", "p.json:1: truncated JSON in prices"},
		{"empty object", "{}", "p.json:1: no prices"},
		{"array", "[1]", "p.json:1: want a JSON object of prices"},
		{"zero", "{\n\"cpu\": 0}", "p.json:2: price of \"cpu\" is 0: want a number > 0"},
		{"negative", "{\"a\": 1,\n\"b\": -5}", "p.json:2: price of \"b\" is -5"},
		{"huge", "{\"a\": 1e300}", "p.json:1: price of \"a\" is 1e300"},
		{"out of float range", "{\"a\": 1e400}", "p.json:1: price of \"a\" is 1e400"},
		{"string", "{\"a\": \"10\"}", "p.json:1: price of \"a\": want a number, got the string \"10\""},
		{"null", "{\"a\": null}", "price of \"a\": want a number, got null"},
		{"object", "{\"a\": {}}", "price of \"a\": want a number, got an array or object"},
		{"twice", "{\"a\": 1,\n\"a\": 2}", "p.json:2: price of \"a\" given twice (first on line 1)"},
		{"empty key", "{\"\": 1}", "p.json:1: empty device model"},
		{"trailing garbage", "{\"a\": 1}\njunk", "p.json:2: unexpected data after the price object"},
		{"second object", "{\"a\": 1} {\"b\": 2}", "p.json:1: unexpected data after the price object"},
		{"truncated", "{\"a\": 1,\n", "p.json:2: truncated JSON in prices"},
		{"bad syntax", "{\"a\" 1}", "p.json:1: invalid JSON in prices"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParsePrices([]byte(c.doc), "p.json")
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}
