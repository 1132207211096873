package models

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/starsim/starsim/calibrate/starpu"
	"github.com/starsim/starsim/runtime/graph"
)

// The tasks of Chameleon's pzgeqrf for nb = 3, in order, with their data.
func TestQRGraph(t *testing.T) {
	g, err := QR(Options{N: 3 * 320, Block: 320, Precision: Double})
	require.NoError(t, err)
	assert.Equal(t, "qr N=960 block=320 double ib=48", g.Name)
	var got []string
	for _, tk := range g.Tasks {
		s := tk.Name
		for _, b := range tk.Buffers {
			s += " " + g.Handles[b.Handle].Name + ":" + b.Mode.String()
		}
		got = append(got, s)
	}
	want := []string{
		"GEQRT A[0][0]:RW T[0][0]:W", "LACPY A[0][0]:R D[0]:W", "LASET D[0]:W",
		"ORMQR D[0]:R T[0][0]:R A[0][1]:RW", "ORMQR D[0]:R T[0][0]:R A[0][2]:RW",
		"TPQRT A[0][0]:RW A[1][0]:RW T[1][0]:W",
		"TPMQRT A[1][0]:R T[1][0]:R A[0][1]:RW A[1][1]:RW", "TPMQRT A[1][0]:R T[1][0]:R A[0][2]:RW A[1][2]:RW",
		"TPQRT A[0][0]:RW A[2][0]:RW T[2][0]:W",
		"TPMQRT A[2][0]:R T[2][0]:R A[0][1]:RW A[2][1]:RW", "TPMQRT A[2][0]:R T[2][0]:R A[0][2]:RW A[2][2]:RW",
		"GEQRT A[1][1]:RW T[1][1]:W", "LACPY A[1][1]:R D[1]:W", "LASET D[1]:W",
		"ORMQR D[1]:R T[1][1]:R A[1][2]:RW",
		"TPQRT A[1][1]:RW A[2][1]:RW T[2][1]:W",
		"TPMQRT A[2][1]:R T[2][1]:R A[1][2]:RW A[2][2]:RW",
		"GEQRT A[2][2]:RW T[2][2]:W", "LACPY A[2][2]:R D[2]:W", "LASET D[2]:W",
	}
	assert.Equal(t, want, got)
	// wont_use: D and T after the ORMQRs, A[m][k] and T[m][k] after each
	// row's TPMQRTs (the last k: after LASET).
	wont := map[int][]string{}
	for i, tk := range g.Tasks {
		for _, h := range tk.WontUse {
			wont[i] = append(wont[i], g.Handles[h].Name)
		}
	}
	assert.Equal(t, map[int][]string{4: {"D[0]", "T[0][0]"}, 7: {"A[1][0]", "T[1][0]"}, 10: {"A[2][0]", "T[2][0]"},
		14: {"D[1]", "T[1][1]"}, 16: {"A[2][1]", "T[2][1]"}, 19: {"D[2]", "T[2][2]"}}, wont)
	// Models, priorities, sizes.
	assert.Equal(t, "dgeqrt", g.Tasks[0].Model)
	assert.Equal(t, "dormqr", g.Tasks[3].Model)
	assert.Equal(t, "dtpmqrt", g.Tasks[6].Model)
	for _, tk := range g.Tasks {
		assert.Zero(t, tk.Priority, "Chameleon sets no priority")
		assert.False(t, tk.SyncGPU)
	}
	assert.Equal(t, int64(320*320*8), g.Handles[0].SizeBytes)
	tile := g.Handles[g.Tasks[0].Buffers[1].Handle]
	assert.Equal(t, int64(48*320*8), tile.SizeBytes, "T tiles are ib x block")
	_, err = graph.DeriveDeps(g)
	require.NoError(t, err)
	tasks, handles, bufs := qrSize(3)
	nbuf := 0
	for _, tk := range g.Tasks {
		nbuf += len(tk.Buffers)
	}
	assert.Equal(t, []int64{int64(len(g.Tasks)), int64(len(g.Handles)), int64(nbuf)}, []int64{tasks, handles, bufs})
}

// Footprints: Chameleon's tile interface, crc(m, n) hashed with id 11,
// folded over the buffers and the scratch workspace.
func TestQRFootprints(t *testing.T) {
	ks := QRKernels(Double, 960, 48)
	a := starpu.HandleFootprint(starpu.CRC32BE(960, 960), 11)
	tt := starpu.HandleFootprint(starpu.CRC32BE(48, 960), 11)
	ws := starpu.HandleFootprint(starpu.CRC32BE(2*48*960*8, 1), 11)
	assert.Equal(t, starpu.TaskFootprint([]uint32{a, tt, a, a, ws}), ks[5].Footprint)
	assert.Equal(t, "dtpmqrt", ks[5].Symbol)
	assert.NotEqual(t, a, starpu.MatrixFootprint(960, 960), "not StarPU's matrix interface")
	g, err := QR(Options{N: 1920, Block: 960, Precision: Double})
	require.NoError(t, err)
	byName := map[string]uint32{}
	for _, k := range ks {
		byName[k.Name] = k.Footprint
	}
	for _, tk := range g.Tasks {
		assert.Equal(t, byName[tk.Name], tk.Footprint, tk.Name)
	}
	// Another ib, other T tiles and workspace: other footprints.
	assert.NotEqual(t, ks[0].Footprint, QRKernels(Double, 960, 32)[0].Footprint)
}

// The tasks' flops sum to FLOPS_DGEQRF's leading term; QRFlops is the
// LAWN 41 count 4N³/3 + 2N² + 14N/3.
func TestQRFlops(t *testing.T) {
	for _, n := range []float64{960, 9600, 38400} {
		assert.InEpsilon(t, 4*n*n*n/3+2*n*n+14*n/3, QRFlops(n), 1e-12, "N=%v", n)
	}
	g, err := QR(Options{N: 9600, Block: 960})
	require.NoError(t, err)
	sum := 0.0
	for _, tk := range g.Tasks {
		sum += tk.Flops
	}
	assert.InEpsilon(t, g.TotalFlops, sum, 0.02)
	assert.False(t, math.IsNaN(g.TotalFlops))
	_, err = QR(Options{N: 960, Block: 96, InnerBlock: 97})
	assert.ErrorContains(t, err, "inner block size 97: want 1 to the block size 96")
}
