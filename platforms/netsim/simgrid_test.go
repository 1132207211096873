package netsim

import (
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/starsim/starsim/emulator/network"
	"github.com/stretchr/testify/require"
)

// TestAgainstSimGrid generates seeded random PCI-like scenarios with
// tools/sgoracle/gen_random.py and has the real SimGrid 3.32 answer them with
// its event-merging precision turned off (surf/precision 1e-15), so that both
// sides compute exactly; every flow's finish must agree to 1e-9 of its
// duration plus 1e-11 s (the oracle's own float noise). Skips without
// Debian's python3-simgrid.
func TestAgainstSimGrid(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	if err := exec.Command("/usr/bin/python3", "-c", "import simgrid").Run(); err != nil {
		t.Skip("SimGrid not available (apt-get install python3-simgrid)")
	}
	gen, err := filepath.Abs("../../tools/sgoracle/gen_random.py")
	require.NoError(t, err)
	dir := t.TempDir()
	out, err := exec.Command("/usr/bin/python3", gen, "20261122", "40", dir, "--jobs", "2",
		"--oracle-arg=--cfg=surf/precision:1e-15").CombinedOutput()
	require.NoError(t, err, string(out))
	files, _ := filepath.Glob(filepath.Join(dir, "pci_*[0-9].json"))
	require.Len(t, files, 40)
	worst, nflows := 0.0, 0
	for _, file := range files {
		sc, err := ReadFile(file)
		require.NoError(t, err)
		res, err := Run(sc, Options{Network: network.Options{Check: true}})
		require.NoError(t, err, file)
		data, err := os.ReadFile(file[:len(file)-len(".json")] + ".expected.json")
		require.NoError(t, err)
		var want Result
		require.NoError(t, json.Unmarshal(data, &want))
		require.Len(t, res.Flows, len(want.Flows))
		for i, w := range want.Flows {
			got := res.Flows[i]
			require.Equal(t, w.ID, got.ID)
			d := math.Abs(got.FinishS - w.FinishS)
			require.LessOrEqual(t, d, 1e-9*w.DurationS+1e-11, "%s flow %s: starsim %.17g, SimGrid %.17g", filepath.Base(file), w.ID, got.FinishS, w.FinishS)
			if w.DurationS > 0 {
				worst = math.Max(worst, d/w.DurationS)
			}
			nflows++
		}
	}
	t.Logf("%d flows in 40 scenarios: worst |finish difference| / duration = %.3g", nflows, worst)
}
