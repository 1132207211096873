package models

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Size must count what New builds, without building it.
func TestSizeMatchesNew(t *testing.T) {
	for _, app := range Names() {
		for _, nb := range []int{1, 2, 3, 7, 20} {
			o := Options{N: nb * 96, Block: 96}
			g, err := New(app, o)
			require.NoError(t, err)
			tasks, handles, bufs, err := Size(app, o)
			require.NoError(t, err)
			nbuf := 0
			for _, t := range g.Tasks {
				nbuf += len(t.Buffers)
			}
			assert.Equal(t, int64(len(g.Tasks)), tasks, "%s nb=%d tasks", app, nb)
			assert.Equal(t, int64(len(g.Handles)), handles, "%s nb=%d handles", app, nb)
			assert.Equal(t, int64(nbuf), bufs, "%s nb=%d buffers", app, nb)
		}
	}
	_, _, _, err := Size("svd", Options{N: 960, Block: 960})
	assert.ErrorContains(t, err, "unknown application")
	_, _, _, err = Size("lu", Options{N: 961, Block: 960})
	assert.ErrorContains(t, err, "not a multiple")
	// 1152 tiles per side: counted, not built.
	tasks, _, _, err := Size("cholesky", Options{N: 1152, Block: 1})
	require.NoError(t, err)
	assert.Equal(t, int64(1152+1152*1151+1152*1151*1150/6), tasks)
}
