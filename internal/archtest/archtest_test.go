package archtest

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// readme reads the repository's README.md.
func readme(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// moduleImports lists every package of the module with its non-test
// imports of the module's packages, paths relative to the module.
func moduleImports(t *testing.T) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", "./...")
	cmd.Dir = filepath.Join("..", "..")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var mod string
	pkgs := map[string][]string{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p struct {
			ImportPath string
			Imports    []string
			Module     *struct{ Path string }
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		if p.Module == nil {
			t.Fatalf("%s: no module", p.ImportPath)
		}
		mod = p.Module.Path
		rel := strings.TrimPrefix(strings.TrimPrefix(plain(p.ImportPath), mod), "/")
		if _, ok := pkgs[rel]; !ok {
			pkgs[rel] = nil
		}
		for _, imp := range p.Imports {
			if r, ok := strings.CutPrefix(plain(imp), mod+"/"); ok {
				pkgs[rel] = append(pkgs[rel], r)
			}
		}
	}
	if len(pkgs) < 10 {
		t.Fatalf("go list found %d packages", len(pkgs))
	}
	return pkgs
}

// plain drops the variant go list appends to a package built for another
// ("pkg [cmd/starsim]": with cmd/starsim's profile-guided build).
func plain(path string) string {
	p, _, _ := strings.Cut(path, " [")
	return p
}

// TestImportsGoDown: no package of the module imports a higher layer of
// the README's drawing, and the drawing places every package.
func TestImportsGoDown(t *testing.T) {
	l, err := Parse(readme(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range l.Check(moduleImports(t)) {
		t.Error(v)
	}
}

// TestCheckCatchesUpward: the check fails an import of a higher layer and
// a package the drawing omits, and accepts imports down and across.
func TestCheckCatchesUpward(t *testing.T) {
	l, err := Parse(readme(t))
	if err != nil {
		t.Fatal(err)
	}
	imports := moduleImports(t)
	imports["runtime/graph"] = append(imports["runtime/graph"], "cmd/starsim")
	imports["nowhere/new"] = nil
	got := l.Check(imports)
	want := map[string]bool{}
	for _, v := range got {
		want[v] = true
	}
	cmd, _ := l.Layer("cmd/starsim")
	graph, _ := l.Layer("runtime/graph")
	if !want["runtime/graph (layer "+itoa(graph)+") imports cmd/starsim (layer "+itoa(cmd)+"): upward"] {
		t.Errorf("the fake upward edge runtime/graph -> cmd/starsim is not reported: %q", got)
	}
	if !want["nowhere/new: not in the README's layer drawing"] {
		t.Errorf("a package the drawing omits is not reported: %q", got)
	}
	if len(got) != 2 {
		t.Errorf("want the two faults only, got %q", got)
	}
}

// TestParse: entries, trees and the most specific match.
func TestParse(t *testing.T) {
	l, err := Parse([]byte("text\nLayers, top to bottom:\n\n```\ncmd/...\nmodels/...  calibrate\nmodels/generation runtime/...\n```\n"))
	if err != nil {
		t.Fatal(err)
	}
	for pkg, want := range map[string]int{"cmd/starsim": 2, "models": 1, "models/dag": 1, "calibrate": 1, "models/generation": 0, "runtime": 0, "runtime/sim": 0} {
		if got, ok := l.Layer(pkg); !ok || got != want {
			t.Errorf("%s: layer %d (%v), want %d", pkg, got, ok, want)
		}
	}
	if _, ok := l.Layer("calibrate/fit"); ok {
		t.Error("calibrate (exact) must not place calibrate/fit")
	}
	if _, err := Parse([]byte("no drawing")); err == nil {
		t.Error("a README without the drawing must fail")
	}
	if _, err := Parse([]byte("Layers, top to bottom:\n```\na b\na\n```\n")); err == nil {
		t.Error("an entry drawn twice must fail")
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
