package rec_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/starsim/starsim/traces"
	"github.com/starsim/starsim/traces/compare"
	"github.com/starsim/starsim/traces/formats"
)

// TestInferTransfers: tasks on two devices; reads copy from RAM first,
// then from the writer's node; a write invalidates the other copies.
func TestInferTransfers(t *testing.T) {
	dir := t.TempDir()
	tasks := `Name: A
WorkerId: 1
MemoryNode: 1
StartTime: 0
EndTime: 1
Handles: 10 20
Modes: R RW
Sizes: 100 200

Name: B
WorkerId: 2
MemoryNode: 2
StartTime: 2
EndTime: 3
Handles: 10 20
Modes: R R
Sizes: 100 200

Name: C
WorkerId: 0
MemoryNode: 0
StartTime: 4
EndTime: 5
Handles: 20 30
Modes: R W
Sizes: 200 300

Name: D
WorkerId: 1
MemoryNode: 1
StartTime: 6
EndTime: 7
Handles: 30
Modes: R
Sizes: 300
`
	data := "Handle: 10\nHomeNode: 0\n\nHandle: 20\nHomeNode: 0\n\nHandle: 30\nHomeNode: 1\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tasks.rec"), []byte(tasks), 0o644))
	tr, err := formats.Load(filepath.Join(dir, "tasks.rec"))
	require.NoError(t, err)
	assert.Empty(t, tr.TransferSource, "no data.rec: transfers unknown")
	assert.Empty(t, tr.Transfers)
	assert.Equal(t, []traces.WorkerInfo{{ID: 0, Name: "CPU", Type: traces.WorkerCPU, Node: 0}, {ID: 1, Name: "CUDA0", Type: traces.WorkerCUDA, Node: 1}, {ID: 2, Name: "CUDA1", Type: traces.WorkerCUDA, Node: 2}}, tr.Workers)

	require.NoError(t, os.WriteFile(filepath.Join(dir, "data.rec"), []byte(data), 0o644))
	tr, err = formats.Load(dir)
	require.NoError(t, err)
	assert.Equal(t, "data.rec", tr.TransferSource)
	assert.Equal(t, []traces.Transfer{
		{Src: "RAM", Dst: "CUDA0", Count: 3, Bytes: 600},   // A reads 10, 20; D reads 30, written in RAM by C
		{Src: "RAM", Dst: "CUDA1", Count: 1, Bytes: 100},   // B reads 10 from RAM
		{Src: "CUDA0", Dst: "RAM", Count: 1, Bytes: 200},   // C reads 20, written by A
		{Src: "CUDA0", Dst: "CUDA1", Count: 1, Bytes: 200}, // B reads 20: only CUDA0 holds it
	}, tr.Transfers)
	r := compare.Compare(tr, tr)
	require.Len(t, r.Transfers, 4)
	assert.Equal(t, compare.TransferRow{Src: "RAM", Dst: "CUDA0", CountA: 3, CountB: 3, BytesA: 600, BytesB: 600}, r.Transfers[0])
}
