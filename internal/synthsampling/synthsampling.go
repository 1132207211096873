// Package synthsampling writes synthetic StarPU sampling directories for
// tests: bus files, a SimGrid platform and the Cholesky and LU models of
// either StarPU generation, with authored numbers (no real calibration's),
// plus whatever odd or broken files a test asks for.
package synthsampling

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/starsim/starsim/calibrate/starpu"
	"github.com/starsim/starsim/models"
	"github.com/starsim/starsim/models/generation"
)

// Options describe the machine and its models.
type Options struct {
	Host string
	// Gen picks the model names: generation.V13 (chol_model_11...) or V14.
	Gen generation.Gen
	// CPUs and GPUs are the core and CUDA device counts (GPUs >= 1).
	CPUs, GPUs int
	// GPUMemBytes is each GPU's memory (default 2 GiB).
	GPUMemBytes int64
	// LUSuffixes are the BLAS suffixes the LU models are written under
	// (default: only ""); each gets the same numbers.
	LUSuffixes []string
	// Double also writes the double-precision LU models (starpu_dlu_...).
	Double bool
	// Block is the tile size the entries are for (default 960).
	Block int
	// Files are extra files of codelets/45, by name ("x.HOST"), e.g.
	// unreadable or odd models.
	Files map[string]string
}

// Durations of the authored kernels at the block size, in µs: CPU, GPU.
var durations = map[string][2]float64{
	"POTRF": {70000, 40000}, "TRSM": {40000, 6000}, "SYRK": {40000, 1500}, "GEMM": {80000, 3000},
	"GETRF": {70000, 40000}, "TRSM_LL": {40000, 6000}, "TRSM_RU": {40000, 6000},
}

// Write writes the directory (bus/, codelets/45/) under dir.
func Write(dir string, o Options) error {
	if o.Block == 0 {
		o.Block = 960
	}
	if o.GPUMemBytes == 0 {
		o.GPUMemBytes = 2 << 30
	}
	if len(o.LUSuffixes) == 0 {
		o.LUSuffixes = []string{""}
	}
	if o.GPUs < 1 || o.CPUs < 1 || o.Host == "" {
		return fmt.Errorf("synthsampling: need a host, CPUs >= 1 and GPUs >= 1")
	}
	bus, cod := filepath.Join(dir, "bus"), filepath.Join(dir, "codelets", "45")
	for _, d := range []string{bus, cod} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	files := map[string]string{}
	for name, text := range busFiles(o) {
		files[filepath.Join(bus, o.Host+"."+name)] = text
	}
	type app struct {
		name   string
		double bool
		suffix string
	}
	apps := []app{{"cholesky", false, ""}}
	for _, s := range o.LUSuffixes {
		apps = append(apps, app{"lu", false, s})
		if o.Double {
			apps = append(apps, app{"lu", true, s})
		}
	}
	if o.Gen != generation.V13 && o.Gen != generation.V14 {
		return fmt.Errorf("synthsampling: no model names for generation %s", o.Gen)
	}
	for _, a := range apps {
		app, _ := models.Lookup(a.name)
		for _, k := range app.Kernels(o.Gen, a.double) {
			var b strings.Builder
			m := model(o, k.Kernel, a.double)
			if err := m.Write(&b); err != nil {
				return err
			}
			files[filepath.Join(cod, k.Symbol+a.suffix+"."+o.Host)] = b.String()
		}
	}
	for name, text := range o.Files {
		files[filepath.Join(cod, name)] = text
	}
	for path, text := range files {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// model is kernel's history: a CPU comb and one comb per GPU, one entry at
// the block size.
func model(o Options, kernel string, double bool) *starpu.PerfModel {
	nbuf := map[string]int{"POTRF": 1, "GETRF": 1, "TRSM": 2, "SYRK": 2, "TRSM_LL": 2, "TRSM_RU": 2, "GEMM": 3}[kernel]
	tile := starpu.MatrixFootprint(uint32(o.Block), uint32(o.Block))
	fps := make([]uint32, nbuf)
	for i := range fps {
		fps[i] = tile
	}
	elem := uint64(4)
	if double {
		elem = 8
	}
	size := uint64(nbuf) * uint64(o.Block) * uint64(o.Block) * elem
	m := &starpu.PerfModel{}
	for c := 0; c <= o.GPUs; c++ {
		dev := starpu.Device{Type: starpu.DeviceCPU, DevID: 0, NCores: 1}
		mean := durations[kernel][0]
		if c > 0 {
			dev = starpu.Device{Type: starpu.DeviceCUDA, DevID: c - 1, NCores: 1}
			mean = durations[kernel][1]
		}
		if double {
			mean *= 2
		}
		const n = 100
		dev2 := mean / 50
		e := starpu.Entry{Footprint: starpu.TaskFootprint(fps), Size: size, MeanUS: mean, DevUS: dev2,
			Sum: mean * n, Sum2: n * (mean*mean + dev2*dev2), N: n}
		nan := func() float64 { var z float64; return z / z }
		m.Combs = append(m.Combs, starpu.Comb{Devices: []starpu.Device{dev}, Impls: []starpu.Impl{{
			Regression:   starpu.Regression{Alpha: nan(), Beta: nan()},
			NLRegression: starpu.NLRegression{A: nan(), B: nan(), C: nan()},
			Entries:      []starpu.Entry{e},
		}}})
	}
	return m
}

// busFiles are the host's config, bandwidth (MB/s), latency (µs), affinity
// and a v4 platform: per GPU an up and a down link behind one shared
// "Host" link; GPU to GPU goes through RAM.
func busFiles(o Options) map[string]string {
	nodes := o.GPUs + 1
	var bw, lat, aff, plat strings.Builder
	for _, b := range []*strings.Builder{&bw, &lat} {
		b.WriteString("# to 0")
		for j := 1; j < nodes; j++ {
			fmt.Fprintf(b, "\t\tto %d", j)
		}
		b.WriteString("\n")
	}
	for i := 0; i < nodes; i++ {
		for j := 0; j < nodes; j++ {
			sep := "\t"
			if j == 0 {
				sep = ""
			}
			switch {
			case i == j:
				fmt.Fprintf(&bw, "%s0.000000", sep)
				fmt.Fprintf(&lat, "%s0.000000", sep)
			case i == 0 || j == 0:
				fmt.Fprintf(&bw, "%s%f", sep, 6000.0)
				fmt.Fprintf(&lat, "%s%f", sep, 10.0)
			default:
				fmt.Fprintf(&bw, "%s%f", sep, 3000.0)
				fmt.Fprintf(&lat, "%s%f", sep, 20.0)
			}
		}
		bw.WriteString("\n")
		lat.WriteString("\n")
	}
	aff.WriteString("# GPU")
	for c := 0; c < o.CPUs; c++ {
		fmt.Fprintf(&aff, "\tCPU%d", c)
	}
	aff.WriteString("\n")
	for g := 0; g < o.GPUs; g++ {
		fmt.Fprintf(&aff, "%d", g)
		for c := 0; c < o.CPUs; c++ {
			fmt.Fprintf(&aff, "\t%d", (c+g)%o.CPUs)
		}
		aff.WriteString("\n")
	}
	plat.WriteString("<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"http://simgrid.gforge.inria.fr/simgrid/simgrid.dtd\">\n<platform version=\"4\">\n <AS id=\"AS0\" routing=\"Full\">\n")
	for c := 0; c < o.CPUs; c++ {
		fmt.Fprintf(&plat, "  <host id=\"CPU%d\" speed=\"2000000000f\"/>\n", c)
	}
	for g := 0; g < o.GPUs; g++ {
		fmt.Fprintf(&plat, "  <host id=\"CUDA%d\" speed=\"2000000000f\">\n   <prop id=\"model\" value=\"Synthetic GPU\"/>\n   <prop id=\"memsize\" value=\"%d\"/>\n   <prop id=\"memcpy_peer\" value=\"0\"/>\n  </host>\n", g, o.GPUMemBytes)
	}
	plat.WriteString("  <host id=\"RAM\" speed=\"1f\"/>\n  <link id=\"Host\" bandwidth=\"12000000000Bps\" latency=\"0s\"/>\n")
	for g := 0; g < o.GPUs; g++ {
		fmt.Fprintf(&plat, "  <link id=\"RAM-CUDA%d\" bandwidth=\"6000000000Bps\" latency=\"0.00001s\"/>\n  <link id=\"CUDA%d-RAM\" bandwidth=\"6000000000Bps\" latency=\"0.00001s\"/>\n", g, g)
	}
	for g := 0; g < o.GPUs; g++ {
		fmt.Fprintf(&plat, "  <route src=\"RAM\" dst=\"CUDA%d\" symmetrical=\"NO\"><link_ctn id=\"RAM-CUDA%d\"/><link_ctn id=\"Host\"/></route>\n", g, g)
		fmt.Fprintf(&plat, "  <route src=\"CUDA%d\" dst=\"RAM\" symmetrical=\"NO\"><link_ctn id=\"CUDA%d-RAM\"/><link_ctn id=\"Host\"/></route>\n", g, g)
	}
	plat.WriteString(" </AS>\n</platform>\n")
	return map[string]string{
		"config":          fmt.Sprintf("# Current configuration\n%d # Number of CPUs\n%d # Number of CUDA devices\n0 # Number of OpenCL devices\n", o.CPUs, o.GPUs),
		"bandwidth":       bw.String(),
		"latency":         lat.String(),
		"affinity":        aff.String(),
		"platform.v4.xml": plat.String(),
	}
}
