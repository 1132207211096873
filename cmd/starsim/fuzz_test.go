package main

import (
	"errors"
	"strings"
	"testing"
)

// FuzzFlagValues runs the sweep's value parsers (kind picks: lists,
// FROM:TO:STEP ranges, numbers, GPU memory sizes (internal/bytesize, as --gpu-mem reads them), shards) on any string:
// no panic, a usage error or values within the documented bounds.
func FuzzFlagValues(f *testing.F) {
	for _, s := range []string{"dmda,dmdar", "9600:76800:9600", "1:100000000:1", "1,2,,3", "1e300", "4e10,2097152", "400MiB,2GiB", "400M", "-1MiB", "1.5GiB", "2MiB,1PiB",
		"1/2junk", "3/8", "0.5,2", "NaN", "-1", " 7 : 9 : 1", "9223372036854775807:9223372036854775807:1"} {
		for kind := uint8(0); kind < 5; kind++ {
			f.Add(kind, s)
		}
	}
	f.Fuzz(func(t *testing.T, kind uint8, s string) {
		var err error
		switch kind % 5 {
		case 0:
			var xs []string
			xs, err = parseList("sched", s)
			if err == nil && len(xs) == 0 {
				t.Fatal("empty list accepted")
			}
		case 1:
			var xs []int
			xs, err = parseInts("n", s, true, maxSweepJobs)
			if err == nil {
				if len(xs) == 0 || len(xs) > maxSweepJobs {
					t.Fatalf("%d values accepted", len(xs))
				}
				for _, x := range xs {
					if x <= 0 {
						t.Fatalf("%d accepted", x)
					}
				}
			}
		case 2:
			var xs []float64
			xs, err = parseFloats("pci-bw-scale", s, minPCIScale, maxPCIScale)
			for _, x := range xs {
				if !(x >= minPCIScale && x <= maxPCIScale) {
					t.Fatalf("%v accepted", x)
				}
			}
		case 3:
			m := machineFlags{lists: true, gpuMem: s}
			err = m.check("sweep", nil)
			for _, x := range m.memV {
				if x < minGPUMemBytes || x > maxGPUMemBytes {
					t.Fatalf("%d bytes accepted", x)
				}
			}
		case 4:
			var i, n int
			i, n, err = parseShard(s)
			if err == nil && !(1 <= i && i <= n) {
				t.Fatalf("shard %d/%d accepted", i, n)
			}
		}
		if err != nil {
			var ue *usageError
			if !errors.As(err, &ue) || !strings.HasPrefix(ue.msg, "--") || strings.Contains(ue.msg, "\n") {
				t.Fatalf("not a one-line usage error naming the flag: %v", err)
			}
		}
	})
}

// FuzzCommandLine: any two arguments after a command are parsed (pflag)
// into a result, help, or one "starsim CMD: ..." line with exit 2 or 1,
// never a panic, nothing on stdout on failure. netsim fails or finishes
// at once whatever it is given.
func FuzzCommandLine(f *testing.F) {
	for _, a := range [][2]string{{"--demo", "--table"}, {"-", "--"}, {"--table=maybe", "x"}, {"-x", "--demo"}, {"---demo", ""},
		{"-demo", "-h"}, {"--demo=1", "--plain-maxmin=0"}, {"--", "--demo"}, {"-=", "--="}, {"--demo", "-tx"}, {"help", "netsim"}} {
		f.Add(a[0], a[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		code, out, errs := runCLI("netsim", a, b)
		switch code {
		case 0:
			if errs != "" {
				t.Fatalf("%q %q: exit 0 with stderr %q", a, b, errs)
			}
		case 1, 2:
			if out != "" || !strings.HasPrefix(errs, "starsim netsim: ") || strings.Count(errs, "\n") != 1 || !strings.HasSuffix(errs, "\n") {
				t.Fatalf("%q %q: exit %d, stdout %q, stderr %q", a, b, code, out, errs)
			}
		default:
			t.Fatalf("%q %q: exit %d", a, b, code)
		}
	})
}
