package calibrate

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzImport imports a whole StarPU sampling directory built from the
// fuzzer's files (bus config, bandwidth, latency, affinity, platform and
// one codelet model), seeded with the synthetic one of calibrate/starpu's
// testdata: Import never panics, and what it accepts is a valid
// calibration that writes, reads back and converts for the runtime.
func FuzzImport(f *testing.F) {
	src := filepath.Join("starpu", "testdata", "sampling")
	read := func(p string) []byte {
		data, _ := os.ReadFile(filepath.Join(src, p))
		return data
	}
	bus := func(ext string) []byte { return read(filepath.Join("bus", "synth."+ext)) }
	model := read(filepath.Join("codelets", "45", "kern_a.synth"))
	f.Add(bus("config"), bus("bandwidth"), bus("latency"), bus("affinity"), bus("platform.xml"), model)
	f.Add(bus("config"), bus("bandwidth"), bus("latency"), bus("affinity"), []byte("<platform"), model)
	f.Add(bus("config"), bus("bandwidth")[:len(bus("bandwidth"))/2], bus("latency"), bus("affinity"), bus("platform.xml"), model)
	f.Add(bus("config"), bus("bandwidth"), bus("latency"), []byte{}, []byte{}, []byte{})
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, config, bandwidth, latency, affinity, platform, model []byte) {
		d, err := os.MkdirTemp(dir, "s")
		if err != nil {
			t.Skip()
		}
		defer os.RemoveAll(d)
		files := map[string][]byte{
			"bus/h.config": config, "bus/h.bandwidth": bandwidth, "bus/h.latency": latency,
			"bus/h.affinity": affinity, "codelets/45/kern.h": model,
		}
		if len(platform) > 0 {
			files["bus/h.platform.xml"] = platform
		}
		for name, data := range files {
			p := filepath.Join(d, name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Skip()
			}
			if err := os.WriteFile(p, data, 0o644); err != nil {
				t.Skip()
			}
		}
		cal, _, err := Import(d, "h")
		if err != nil {
			if cal != nil {
				t.Fatal("calibration returned with an error")
			}
			return
		}
		if err := cal.Validate(); err != nil {
			t.Fatalf("imported calibration is invalid: %v", err)
		}
		var buf bytes.Buffer
		if err := cal.Write(&buf); err != nil {
			t.Fatalf("Write: %v", err)
		}
		if _, err := Parse(buf.Bytes(), "back.json"); err != nil {
			t.Fatalf("written calibration does not read back: %v", err)
		}
		if m := cal.RuntimeMachine(); m.Validate() != nil {
			t.Fatalf("runtime machine invalid: %v", m.Validate())
		}
	})
}
