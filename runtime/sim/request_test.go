package sim

import (
	"reflect"
	"testing"
	"unsafe"

	"github.com/starsim/starsim/runtime/graph"
	"github.com/starsim/starsim/runtime/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNewRequestResets: a recycled request, every field of which was set,
// comes out of newRequest as a new one would, its lists empty (their
// arrays kept for reuse). A field added to request and not reset there
// fails it.
func TestNewRequestResets(t *testing.T) {
	m, err := memory.New([]memory.NodeSpec{{Name: "RAM"}, {Name: "CUDA0"}}, false)
	require.NoError(t, err)
	require.NoError(t, m.SetHandles([]graph.Handle{{ID: 0, Name: "A", SizeBytes: 8}, {ID: 1, Name: "B", SizeBytes: 8}}))
	s := &Simulator{mem: m}
	req := s.newRequest(m.Handle(0), 0, 1, memory.Fetch, 1, waiter{})
	v := reflect.ValueOf(req).Elem()
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		f = reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem()
		switch f.Kind() {
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			f.SetInt(7)
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			f.SetUint(7)
		case reflect.Float32, reflect.Float64:
			f.SetFloat(7)
		case reflect.Pointer:
			f.Set(reflect.New(f.Type().Elem()))
		case reflect.Slice:
			f.Set(reflect.MakeSlice(f.Type(), 1, 1))
		default:
			t.Fatalf("field %s: kind %s not handled", v.Type().Field(i).Name, f.Kind())
		}
	}
	s.freeReqs = append(s.freeReqs, req)
	got := s.newRequest(m.Handle(1), 1, 0, memory.Prefetch, 5, waiter{})
	require.Same(t, req, got, "recycled")
	want := request{idx: 7, h: m.Handle(1), src: 1, dst: 0, level: memory.Prefetch, prio: 5, seq: s.seq, version: m.Handle(1).Version()}
	wv, gv := reflect.ValueOf(&want).Elem(), reflect.ValueOf(got).Elem()
	for i := 0; i < wv.NumField(); i++ {
		name := wv.Type().Field(i).Name
		g := reflect.NewAt(gv.Field(i).Type(), unsafe.Pointer(gv.Field(i).UnsafeAddr())).Elem()
		w := reflect.NewAt(wv.Field(i).Type(), unsafe.Pointer(wv.Field(i).UnsafeAddr())).Elem()
		if g.Kind() == reflect.Slice {
			assert.Zero(t, g.Len(), "field %s", name)
			assert.Equal(t, 1, g.Cap(), "field %s: its array is kept", name)
			continue
		}
		assert.Equal(t, w.Interface(), g.Interface(), "field %s", name)
	}
}

// TestFetchHit: a task's fetch finds its data there (StarPU runs its
// callback at once) when the copy is valid and allocated, unless the task
// writes the data and a request of it is under way (to any node).
func TestFetchHit(t *testing.T) {
	m, err := memory.New([]memory.NodeSpec{{Name: "RAM"}, {Name: "CUDA0", CapacityBytes: 1 << 30}}, false)
	require.NoError(t, err)
	require.NoError(t, m.SetHandles([]graph.Handle{{ID: 0, Name: "A", SizeBytes: 1024}}))
	h := m.Handle(0)
	assert.True(t, fetchHit(h, 0, graph.RW), "valid at home")
	assert.False(t, fetchHit(h, 1, graph.R), "not on the device")
	m.Allocate(h, 1, memory.Fetch)
	assert.False(t, fetchHit(h, 1, graph.R), "allocated, not valid")
	m.SetState(h, 1, memory.Shared)
	assert.True(t, fetchHit(h, 1, graph.R), "valid")
	assert.True(t, fetchHit(h, 1, graph.RW), "valid, nothing under way")
	m.SetLoading(h, 0, true) // (a copy home under way)
	assert.True(t, fetchHit(h, 1, graph.R), "read: a request elsewhere does not matter")
	assert.False(t, fetchHit(h, 1, graph.RW), "written: it waits for the request")
}
