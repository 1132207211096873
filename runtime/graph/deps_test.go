package graph

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func acc(h int, m Mode) Access { return Access{Handle: h, Mode: m} }

// Sequential consistency, rule by rule: read after write, write after
// read (every reader since the last write), write after write, explicit
// dependencies, duplicates counted once, wont_use's last writer.
func TestDeriveDeps(t *testing.T) {
	g := &Graph{Handles: []Handle{{ID: 0}, {ID: 1}}, Tasks: []Task{
		{ID: 0, Buffers: []Access{acc(0, RW)}},                           // writes A
		{ID: 1, Buffers: []Access{acc(0, R)}},                            // reads A: after 0
		{ID: 2, Buffers: []Access{acc(0, R), acc(1, W)}},                 // reads A, writes B: after 0
		{ID: 3, Buffers: []Access{acc(0, RW)}, WontUse: []int{0}},        // writes A: after 0 (writer), 1, 2 (readers)
		{ID: 4, Buffers: []Access{acc(1, RW)}, Deps: []int{1}},           // writes B: after 2, and 1 explicitly
		{ID: 5, Buffers: []Access{acc(0, R), acc(0, R)}, Deps: []int{3}}, // 3 once
		{ID: 6, Buffers: []Access{acc(1, R)}, WontUse: []int{1, 0}},
	}}
	d, err := DeriveDeps(g)
	require.NoError(t, err)
	want := [][]int32{{}, {0}, {0}, {0, 1, 2}, {1, 2}, {3}, {4}}
	for i, w := range want {
		assert.ElementsMatch(t, w, d.Preds(i), "preds of %d", i)
		assert.Equal(t, int32(1+len(w)), d.NPending[i], "npending of %d", i)
	}
	wantSucc := [][]int32{{1, 2, 3}, {3, 4}, {3, 4}, {5}, {6}, {}, {}}
	for i, w := range wantSucc {
		assert.ElementsMatch(t, w, d.Succs(i), "succs of %d", i)
	}
	// Successors come in submission order.
	assert.Equal(t, []int32{1, 2, 3}, d.Succs(0))
	// wont_use hints: A after task 3 (its last writer), B and A after 6.
	assert.Equal(t, []int32{3, 4, 3}, d.WontUseAfter)
}

func TestDeriveDepsErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		task Task
		want string
	}{
		{"dep on a later task", Task{ID: 1, Name: "K", Deps: []int{1}}, "task 1 (K) depends on task 1, not submitted before it"},
		{"negative dep", Task{ID: 1, Name: "K", Deps: []int{-1}}, "depends on task -1"},
		{"unknown handle", Task{ID: 1, Name: "K", Buffers: []Access{acc(5, R)}}, "task 1 (K): unknown handle 5"},
		{"unknown wont_use", Task{ID: 1, Name: "K", WontUse: []int{-2}}, "wont_use of unknown handle -2"},
	} {
		g := &Graph{Handles: []Handle{{ID: 0}}, Tasks: []Task{{ID: 0}, tc.task}}
		_, err := DeriveDeps(g)
		require.Error(t, err, tc.name)
		assert.Contains(t, err.Error(), tc.want, tc.name)
	}
}

// A data whose sequential consistency is off orders nothing: only the
// explicit dependencies do; its last writer still anchors wont_use.
func TestDeriveDepsNoSeqConsistency(t *testing.T) {
	g := &Graph{Handles: []Handle{{ID: 0, NoSeqConsistency: true}, {ID: 1}}, Tasks: []Task{
		{ID: 0, Buffers: []Access{acc(0, W), acc(1, W)}},
		{ID: 1, Buffers: []Access{acc(0, R)}},                  // no dependency on 0
		{ID: 2, Buffers: []Access{acc(0, RW)}, Deps: []int{1}}, // only the explicit one
		{ID: 3, Buffers: []Access{acc(1, R)}, WontUse: []int{0}},
	}}
	d, err := DeriveDeps(g)
	require.NoError(t, err)
	want := [][]int32{{}, {}, {1}, {0}}
	for i, w := range want {
		assert.ElementsMatch(t, w, d.Preds(i), "preds of %d", i)
	}
	assert.Equal(t, []int32{2}, d.WontUseAfter)
}

func TestDurationOn(t *testing.T) {
	tk := Task{DurationsUS: map[string]float64{"cuda1": 5, "cuda": 7, "cpu": 30}}
	for arch, want := range map[string]float64{"cuda1": 5, "cuda0": 7, "cpu0": 30} {
		us, ok := tk.DurationOn(arch)
		assert.True(t, ok, arch)
		assert.Equal(t, want, us, arch)
	}
	_, ok := tk.DurationOn("opencl0")
	assert.False(t, ok)
	_, ok = (&Task{}).DurationOn("cpu0")
	assert.False(t, ok)
	assert.Equal(t, "cuda", ArchKind("cuda12"))
}
