package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"image"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/starsim/starsim/internal/plot"
)

var regenerateFigures = flag.Bool("figures", false, "regenerate the README's figures in docs/figures (make figures)")

// readmeFigures are the README's figures and the commands that draw them,
// as the README shows them (run from the repository root).
var readmeFigures = []struct{ file, command string }{
	{"attila-cholesky.png", "starsim sweep --starpu ../shared/calibrations/starpu-sampling --host attila --ncpu 0 --n 9600:76800:9600 --sched dmda,dmdar,dmdas --plot docs/figures/attila-cholesky.png"},
	{"attila-panel.png", "starsim run --starpu ../shared/calibrations/starpu-sampling --host attila --n 28800 --sched dmdas --plot docs/figures/attila-panel.png"},
	{"whatif-gpus.png", "starsim sweep --n 19200,38400 --sched dmda,dmdas --ncpu 0 --gpus 1,2,3,4 --plot docs/figures/whatif-gpus.png"},
}

// figureManifest is docs/figures/figures.json: per figure, the SHA-256 of
// its inputs' digest (plot.Inputs) and of the PNG file, and the CPU
// architecture the PNGs were drawn on.
type figureManifest struct {
	GOARCH  string        `json:"goarch"`
	Figures []figureEntry `json:"figures"`
}

type figureEntry struct {
	File         string `json:"file"`
	Command      string `json:"command"`
	InputsSHA256 string `json:"inputs_sha256"`
	PNGSHA256    string `json:"png_sha256"`
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// TestFigures fails when a README figure is stale. For each figure it runs
// the figure's command (into a temporary file) and compares what the
// figure shows — the digest plot.Inputs gives, which no rasterization or
// CPU architecture changes — with the manifest; the committed PNG must be
// the one the manifest names; and on the CPU architecture the figures were
// drawn on, the redrawn PNG's pixels must equal the committed ones (PNG
// pixels are only reproducible for one architecture: Go fuses
// multiply-adds on some). Figures whose command reads ../shared are
// skipped without it. With -figures (make figures) it regenerates the
// figures and the manifest instead.
func TestFigures(t *testing.T) {
	t.Chdir(filepath.Join("..", ".."))
	dir := filepath.Join("docs", "figures")
	manifestPath := filepath.Join(dir, "figures.json")
	var man figureManifest
	if !*regenerateFigures {
		data, err := os.ReadFile(manifestPath)
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(data, &man))
		require.Len(t, man.Figures, len(readmeFigures), "the manifest lists the README's figures (make figures)")
	}
	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	var digests = map[string]string{}
	plot.Inputs = func(path, digest string) { digests[path] = digest }
	defer func() { plot.Inputs = nil }()
	out := figureManifest{GOARCH: runtime.GOARCH}
	for i, f := range readmeFigures {
		committed := filepath.Join(dir, f.file)
		assert.True(t, strings.Contains(string(readme), f.command), "README.md shows the command of %s", f.file)
		assert.True(t, strings.Contains(string(readme), "("+committed+")"), "README.md shows %s", committed)
		if strings.Contains(f.command, "../shared") {
			if _, err := os.Stat(filepath.Join("..", "shared", "calibrations")); err != nil {
				require.False(t, *regenerateFigures, "make figures needs ../shared")
				t.Logf("%s: skipped, no ../shared", f.file)
				continue
			}
		}
		target := committed
		if !*regenerateFigures {
			target = filepath.Join(t.TempDir(), f.file)
		}
		args := strings.Fields(f.command)[1:]
		for k, a := range args {
			if a == committed {
				args[k] = target
			}
		}
		var stderr bytes.Buffer
		code := run(args, io.Discard, &stderr)
		require.Equal(t, 0, code, "%s: %s", f.command, stderr.String())
		digest, ok := digests[target]
		require.True(t, ok, "%s drew no figure through internal/plot", f.command)
		drawn, err := os.ReadFile(target)
		require.NoError(t, err)
		if *regenerateFigures {
			out.Figures = append(out.Figures, figureEntry{f.file, f.command, sha([]byte(digest)), sha(drawn)})
			continue
		}
		m := man.Figures[i]
		require.Equal(t, f.file, m.File)
		assert.Equal(t, f.command, m.Command, "%s: the manifest's command (make figures)", f.file)
		if !assert.Equal(t, m.InputsSHA256, sha([]byte(digest)), "%s is stale: what its command draws changed; run make figures", committed) {
			t.Logf("%s inputs now:\n%s", f.file, digest)
		}
		have, err := os.ReadFile(committed)
		require.NoError(t, err)
		assert.Equal(t, m.PNGSHA256, sha(have), "%s is not the PNG make figures drew; run make figures", committed)
		if runtime.GOARCH != man.GOARCH {
			t.Logf("%s: pixels not compared (drawn on %s, this is %s)", f.file, man.GOARCH, runtime.GOARCH)
			continue
		}
		assert.True(t, samePixels(t, have, drawn), "%s is stale: its command now draws other pixels; run make figures", committed)
	}
	if *regenerateFigures {
		data, err := json.MarshalIndent(out, "", "  ")
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(manifestPath, append(data, '\n'), 0o644))
	}
}

func samePixels(t *testing.T, a, b []byte) bool {
	t.Helper()
	ia, err := png.Decode(bytes.NewReader(a))
	require.NoError(t, err)
	ib, err := png.Decode(bytes.NewReader(b))
	require.NoError(t, err)
	if ia.Bounds() != ib.Bounds() {
		return false
	}
	r := ia.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if !sameColor(ia, ib, x, y) {
				return false
			}
		}
	}
	return true
}

func sameColor(a, b image.Image, x, y int) bool {
	r1, g1, b1, a1 := a.At(x, y).RGBA()
	r2, g2, b2, a2 := b.At(x, y).RGBA()
	return r1 == r2 && g1 == g2 && b1 == b2 && a1 == a2
}
