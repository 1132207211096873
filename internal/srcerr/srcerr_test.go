package srcerr

import "testing"

func TestError(t *testing.T) {
	cases := []struct {
		err  *Error
		want string
	}{
		{Errorf("f.xml", 7, "bad %s", "unit"), "f.xml:7: bad unit"},
		{Errorf("f.json", 0, "truncated"), "f.json: truncated"},
		{Errorf("", 0, "plain"), "plain"},
		{Errorf("", 3, "no file"), "line 3: no file"},
	}
	for _, c := range cases {
		if got := c.err.Error(); got != c.want {
			t.Errorf("got %q, want %q", got, c.want)
		}
	}
}

func TestLineOf(t *testing.T) {
	data := []byte("a\nbc\n\nd")
	for off, want := range map[int64]int{0: 1, 1: 1, 2: 2, 4: 2, 5: 3, 6: 4, 7: 4, 100: 4} {
		if got := LineOf(data, off); got != want {
			t.Errorf("LineOf(%d) = %d, want %d", off, got, want)
		}
	}
}

func TestWrapOnce(t *testing.T) {
	inner := Errorf("a.json", 3, "bad")
	if got := Wrap("a.json", 1, inner).Error(); got != "a.json:3: bad" {
		t.Errorf("a located error is kept: got %q", got)
	}
	if got := Wrap("a.json", 2, Errorf("", 0, "plain")).Error(); got != "a.json:2: plain" {
		t.Errorf("got %q", got)
	}
}
