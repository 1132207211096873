package generation

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	for in, want := range map[string]Gen{"": Auto, "auto": Auto, "1.3": V13, "1.4": V14, " 1.4 ": V14} {
		g, err := Parse(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, g, in)
	}
	_, err := Parse("1.2")
	assert.ErrorContains(t, err, `unknown StarPU generation "1.2" (want 1.3, 1.4 or auto)`)
	assert.Equal(t, "1.3", V13.String())
	assert.Equal(t, "1.4", V14.String())
	assert.Equal(t, "auto", Auto.String())
}
