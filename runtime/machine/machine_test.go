package machine

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestParseDir(t *testing.T) {
	for _, tc := range []struct {
		in string
		d  Dir
		ok bool
	}{
		{"RAM->CUDA0", Dir{"RAM", "CUDA0"}, true},
		{"CUDA1->CUDA0", Dir{"CUDA1", "CUDA0"}, true},
		{"RAM-CUDA0", Dir{}, false},
		{"->CUDA0", Dir{}, false},
		{"RAM->", Dir{}, false},
		{"", Dir{}, false},
	} {
		d, ok := ParseDir(tc.in)
		assert.Equal(t, tc.ok, ok, tc.in)
		assert.Equal(t, tc.d, d, tc.in)
		if ok {
			assert.Equal(t, tc.in, d.String())
		}
	}
}

func TestValidate(t *testing.T) {
	ok := Machine{CPUCores: 1, Devices: []Device{{Name: "CUDA0", MemoryBytes: 1}}, Links: []Link{{ID: "l"}},
		Routes: map[Dir][]string{{"RAM", "CUDA0"}: {"l"}}}
	assert.NoError(t, ok.Validate())
	for name, m := range map[string]Machine{
		"no core":        {CPUCores: 0},
		"duplicate node": {CPUCores: 1, Devices: []Device{{Name: "RAM", MemoryBytes: 1}}},
		"no memory":      {CPUCores: 1, Devices: []Device{{Name: "CUDA0"}}},
		"unknown link":   {CPUCores: 1, Routes: map[Dir][]string{{"RAM", "CUDA0"}: {"x"}}},
	} {
		assert.Error(t, m.Validate(), name)
	}
}
