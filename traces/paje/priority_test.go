package paje

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// StarPU's paje.trace prints priorities as unsigned 64-bit integers: a
// negative one (dmdas' Cholesky at N = 9600 has SYRK and GEMM priorities
// down to -2) comes as its two's complement.
func TestPajePriority(t *testing.T) {
	for s, want := range map[string]int{"0": 0, "19": 19, "-3": -3, "18446744073709551614": -2, "18446744071562067968": math.MinInt32} {
		got, err := pajePriority(s)
		require.NoError(t, err, s)
		assert.Equal(t, want, got, s)
	}
	for _, s := range []string{"", "x", "2147483648", "9223372036854775808", "18446744071562067967", "18446744073709551616"} {
		_, err := pajePriority(s)
		assert.Error(t, err, s)
	}
}
