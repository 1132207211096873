package platforms

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/starsim/starsim/internal/srcerr"
)

// FuzzParse checks that Parse never panics, that every error is a located
// *srcerr.Error, and that whatever it accepts survives WriteXML and re-reading.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/*")
	for _, file := range files {
		if data, err := os.ReadFile(file); err == nil {
			f.Add(data)
		}
	}
	for _, s := range []string{
		"",
		"<platform/>",
		`<platform version="4.1"><zone id="z" routing="Full"/></platform>`,
		head + tail,
		head + `<route src="A" dst="B"><link_ctn id="L"/><link_ctn id="L"/></route>` + tail,
		head + `<route src="A" dst="B" symmetrical="no"><link_ctn id="L"/></route><route src="B" dst="A"><link_ctn id="L"/></route>` + tail,
		head + `<host id="C" speed="1Gf, 2Mf" core="2"><prop id="memsize" value="&#xA;&lt;"/></host>` + tail,
		head + `<link id="M" bandwidth="8Kibps" latency="1e-3w" sharing_policy="FATPIPE"/>` + tail,
		head + `<zone id="in" routing="Full"><host id="C" power="5"/></zone>` + tail,
		head + `<cluster id="c"/>` + tail,
		head + `<link id="M" bandwidth="1e400Bps"/>` + tail,
		head + `<route src="A" dst="B">`,
		`<platform version="3"><AS id="a" routing="Full"><host id="x" power="1"/></AS><actor host="x"/></platform>`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse(data, "fuzz.xml")
		if err != nil {
			var se *srcerr.Error
			if !errors.As(err, &se) || se.File != "fuzz.xml" {
				t.Fatalf("error %#v is not a *srcerr.Error for fuzz.xml", err)
			}
			return
		}
		var out bytes.Buffer
		if err := p.WriteXML(&out); err != nil {
			t.Fatalf("WriteXML of a parsed platform: %v", err)
		}
		q, err := Parse(out.Bytes(), "written.xml")
		if err != nil {
			t.Fatalf("Parse(WriteXML): %v\n%s", err, out.Bytes())
		}
		if got, want := model(q), canonicalConfig(model(p)); !reflect.DeepEqual(got, want) {
			t.Fatalf("round trip changed the model:\ngot  %+v\nwant %+v", got, want)
		}
		p.DirectedRoutes()
	})
}
