package main

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/starsim/starsim/emulator/network"
	"github.com/starsim/starsim/platforms/netsim"
)

// demoScenario is the built-in network demo: a 4-GPU PCI star in the shape of
// StarPU's platforms (per-GPU up/down links plus a shared host bridge), with
// host-to-device tile loads, write-backs and a device-to-device copy.
//
//go:embed testdata/demo-scenario.json
var demoScenario []byte

const netsimDoc = `
Simulates the flows of SCENARIO.json on SimGrid's fluid network model (CM02 as
StarPU configures it: latency first, then max-min sharing weighted by
1/route-latency) and prints
{"flows":[{"id","src","dst","bytes","start","finish","duration"}],"makespan"}
with flows in input order (bytes, seconds).

Scenario: {"links":[{"id","bandwidth","latency","sharing_policy"?}],
"routes":[{"src","dst","links":[ids]}],"flows":[{"id","src","dst","bytes","start"}]}
or "platform_file": PATH instead of links/routes. Units: bytes, seconds, B/s.`

// netsimCmd is `starsim netsim`.
func netsimCmd() *cobra.Command {
	return leaf("netsim SCENARIO.json", "simulate flows on a fluid network", netsimDoc, func(fs *pflag.FlagSet) runner {
		demo := fs.Bool("demo", false, "run the built-in 4-GPU PCI demo scenario instead of a file")
		table := fs.Bool("table", false, "print a table instead of JSON")
		plain := fs.Bool("plain-maxmin", false, "share bandwidth by unweighted max-min (comparison only; not SimGrid's model)")
		return func(pos []string, stdout, _ io.Writer) error { return netsimRun(pos, *demo, *table, *plain, stdout) }
	})
}

func netsimRun(pos []string, demo, table, plain bool, stdout io.Writer) error {
	var err error
	var sc *netsim.Scenario
	switch {
	case demo && len(pos) == 0:
		sc, err = netsim.Parse(demoScenario, "demo-scenario.json")
	case !demo && len(pos) == 1:
		sc, err = netsim.ReadFile(pos[0])
	default:
		return &usageError{"want exactly one SCENARIO.json, or --demo"}
	}
	if err != nil {
		return err
	}
	res, err := netsim.Run(sc, netsim.Options{Network: network.Options{PlainMaxMin: plain}})
	if err != nil {
		return err
	}
	if table {
		return printFlows(stdout, sc, res)
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(res)
}

func printFlows(w io.Writer, sc *netsim.Scenario, res *netsim.Result) error {
	t := newTable("FLOW", "SRC", "DST", "BYTES", "START (s)", "FINISH (s)", "DURATION (s)", "MEAN RATE (GB/s)")
	for _, f := range res.Flows {
		rate := 0.0
		if f.DurationS > 0 {
			rate = f.Bytes / f.DurationS / 1e9
		}
		t.row(f.ID, f.Src, f.Dst, fmt.Sprintf("%.0f", f.Bytes), fmt.Sprintf("%.6f", f.StartS), fmt.Sprintf("%.6f", f.FinishS), fmt.Sprintf("%.6f", f.DurationS), fmt.Sprintf("%.3f", rate))
	}
	if err := t.write(w); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\n%d flows, makespan %.6f s (%s)\n", len(res.Flows), res.MakespanS, sc.File)
	return err
}
