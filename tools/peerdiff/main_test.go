package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The copy of the run script sets the limit after the script clears the
// caller's STARPU_ variables, so the limit reaches the peer and nothing
// else does.
func TestLimitedRunPeer(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "run-peer.sh")
	require.NoError(t, os.WriteFile(script, []byte(`#!/bin/bash
for v in $(env | sed -n 's/^\(STARPU_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done
echo "limit=${STARPU_LIMIT_CUDA_MEM:-none} other=${STARPU_OTHER:-none}"
`), 0o755))
	out, err := limitedRunPeer(script, 400)
	require.NoError(t, err)
	defer os.RemoveAll(filepath.Dir(out))
	cmd := exec.Command("bash", out)
	cmd.Env = append(os.Environ(), "STARPU_LIMIT_CUDA_MEM=999", "STARPU_OTHER=1")
	b, err := cmd.Output()
	require.NoError(t, err)
	assert.Equal(t, "limit=400 other=none", strings.TrimSpace(string(b)))

	plain := filepath.Join(dir, "plain.sh")
	require.NoError(t, os.WriteFile(plain, []byte("#!/bin/bash\necho hi\n"), 0o755))
	_, err = limitedRunPeer(plain, 400)
	assert.ErrorContains(t, err, "no line that unsets the STARPU_ variables")
}
