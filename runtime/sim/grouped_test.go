package sim_test

import (
	"encoding/json"
	"io"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/starsim/starsim/calibrate"
	"github.com/starsim/starsim/runtime/sim"
)

// TestGroupedChoiceMatchesFullScan: the dm family's grouped choice (one
// candidate per group of workers, a group whose least end cannot win not
// scanned at all) makes the choices of the scan of every worker, which a
// decision log forces. On the embedded calibration (40 CPU cores on RAM,
// 4 GPUs), so the CPU group is often skipped.
func TestGroupedChoiceMatchesFullScan(t *testing.T) {
	g := synthetic(20000, 400)
	m := calibrate.Default().RuntimeMachine()
	for _, sched := range []string{"dmda", "dmdar", "dmdas"} {
		var res [2][]byte
		for k, explain := range []bool{false, true} {
			o := sim.DefaultOptions()
			o.Sched = sched
			if explain {
				o.Explain = io.Discard
			}
			s, err := sim.New(m, g, o)
			require.NoError(t, err)
			r, err := s.Run()
			require.NoError(t, err)
			res[k], err = json.Marshal(r)
			require.NoError(t, err)
		}
		require.Equal(t, string(res[1]), string(res[0]), sched)
	}
}
