package jsonpos

import "testing"

const doc = `{
  "a": 1,
  "list": [
    {"x": 1},
    {
      "x": 2,
      "deep": [10, 20,
        30]
    }
  ],
  "s": "list"
}`

func TestLine(t *testing.T) {
	cases := []struct {
		path []any
		want int
	}{
		{nil, 1},
		{[]any{"a"}, 2},
		{[]any{"list"}, 3},
		{[]any{"list", 0}, 4},
		{[]any{"list", 1}, 5},
		{[]any{"list", 1, "x"}, 6},
		{[]any{"list", 1, "deep", 2}, 8},
		{[]any{"list", 1, "missing"}, 5}, // deepest existing: the object
		{[]any{"list", 7}, 3},
		{[]any{"s"}, 11},
	}
	for _, c := range cases {
		if got := Line([]byte(doc), c.path...); got != c.want {
			t.Errorf("Line(%v) = %d, want %d", c.path, got, c.want)
		}
	}
}

func TestKeyLine(t *testing.T) {
	if got := KeyLine([]byte(doc), "deep"); got != 7 {
		t.Errorf("KeyLine(deep) = %d, want 7", got)
	}
	// "list" appears first as a key (line 3), later as a string value.
	if got := KeyLine([]byte(doc), "list"); got != 3 {
		t.Errorf("KeyLine(list) = %d, want 3", got)
	}
	if got := KeyLine([]byte(doc), "nope"); got != 0 {
		t.Errorf("KeyLine(nope) = %d, want 0", got)
	}
}

func TestTokenStart(t *testing.T) {
	data := []byte("{\"a\" : 1,\n  \"b\": [ 2 ] }  ")
	cases := []struct{ off, want int64 }{
		{0, 0},   // '{'
		{4, 7},   // after "a": past " : " to 1
		{8, 12},  // after 1: past ",\n  " to "b"
		{15, 17}, // after "b": past ": " to '['
		{22, 23}, // after ']': past " " to '}'
		{24, 26}, // trailing blanks: the end
		{26, 26},
	}
	for _, c := range cases {
		if got := TokenStart(data, c.off); got != c.want {
			t.Errorf("TokenStart(%d) = %d, want %d", c.off, got, c.want)
		}
	}
}

func FuzzLine(f *testing.F) {
	f.Add([]byte(doc), "list", 1)
	f.Fuzz(func(t *testing.T, data []byte, key string, idx int) {
		_ = Line(data, key, idx, key)
		_ = KeyLine(data, key)
	})
}
