package calibrate

import (
	"bytes"
	"flag"
	"fmt"
	"math"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/starsim/starsim/calibrate/starpu"
	"github.com/starsim/starsim/models"
)

var update = flag.Bool("update", false, "rewrite generated and golden files")

// The embedded default calibration is authored here, from public spec figures
// and stated efficiency assumptions; `go test ./calibrate -run
// TestDefaultCalibration -update` regenerates default.calib.json and the test
// fails when the file and this derivation disagree.
//
// Machine: a 2-socket server with 2x Intel Xeon Gold 6230 (20 cores each) and
// 4x NVIDIA Tesla V100-PCIe-32GB, two GPUs per socket on PCIe 3.0 x16.
const (
	// Intel ark, Xeon Gold 6230: 20 cores; AVX-512 with 2 FMA units:
	// 32 FP32 FMA lanes = 64 flop/cycle; AVX-512 all-core turbo 1.9 GHz
	// (Intel "Xeon Scalable family specification update", frequency tables).
	cpuCoresPerSocket = 20
	cpuFP32PeakFlops  = 64 * 1.9e9 // per core
	// NVIDIA V100 PCIe datasheet: 14 TFLOPS FP32, 7 TFLOPS FP64, 32 GB HBM2,
	// PCIe Gen3 x16 (8 GT/s x 16 lanes x 128/130 = 15.75 GB/s per direction).
	gpuFP32PeakFlops = 14e12
	gpuFP64PeakFlops = 7e12
	gpuMemoryBytes   = 32 << 30
	pcie3x16Bps      = 8e9 * 16 * 128 / 130 / 8
	hostRAMBytes     = 384 << 30 // 12 x 32 GiB DDR4 DIMMs
)

// Assumptions (not measurements): pinned cudaMemcpy reaches 78 % of the PCIe
// link host-to-device and 83 % device-to-host (typical bandwidthTest figures
// on Gen3 hosts); a 1-byte copy costs 10 µs; peer copies between the two
// GPUs of a socket reach 65 % of the link; each socket's root complex carries
// at most 1.6 links' worth of DMA traffic.
const (
	h2dEff, d2hEff, peerEff = 0.78, 0.83, 0.65
	copyLatencyS            = 10e-6
	peerLatencyS            = 15e-6
	socketShareLinks        = 1.6
	cpuSpeedFlops           = 2e9 // StarPU's CPU host speed in its platforms
)

type kernelSpec struct {
	symbol  string
	buffers int
	flops   func(n float64) float64
	// Fraction of peak reached at n = 960 on the GPU and on one CPU core.
	gpuEff, cpuEff float64
}

func cholKernels() []kernelSpec {
	return []kernelSpec{
		{"potrf", 1, func(n float64) float64 { return n*n*n/3 + n*n/2 + n/6 }, 0.06, 0.60},
		{"trsm", 2, func(n float64) float64 { return n * n * (n + 1) }, 0.55, 0.75},
		{"syrk", 2, func(n float64) float64 { return n * n * (n + 1) }, 0.65, 0.80},
		{"gemm", 3, func(n float64) float64 { return 2 * n * n * n }, 0.80, 0.90},
	}
}

func luKernels() []kernelSpec {
	return []kernelSpec{
		{"getrf", 1, func(n float64) float64 { return 2 * n * n * n / 3 }, 0.05, 0.55},
		{"trsm_ll", 2, func(n float64) float64 { return n * n * n }, 0.55, 0.75},
		{"trsm_ru", 2, func(n float64) float64 { return n * n * n }, 0.55, 0.75},
		{"gemm", 3, func(n float64) float64 { return 2 * n * n * n }, 0.80, 0.90},
	}
}

// Tiled QR (Chameleon's kernels, models.QRKernels) with its default inner
// block size: each kernel runs at a stated fraction of GEMM's rate on the
// same processing unit (GEMM: 80 % of a GPU's peak, 90 % of a core's, at
// n = 960). The panel kernels (GEQRT, TPQRT) are blocked by IB = 48 and
// spend part of their time in level-2 BLAS: 40 % and 50 % of GEMM; the
// updates (ORMQR, TPMQRT) are GEMM-like but with IB-wide inner products:
// 75 % and 80 %. LACPY and LASET move data only: their bytes at an
// assumed 10 GB/s per core. GEQRT, LACPY, LASET and TPQRT have no GPU
// implementation in Chameleon, so no GPU entry.
const (
	qrIB                   = 48
	gemmGPUEff, gemmCPUEff = 0.80, 0.90
	qrCopyBps              = 10e9
)

var qrRelToGEMM = map[string]float64{"GEQRT": 0.40, "TPQRT": 0.50, "ORMQR": 0.75, "TPMQRT": 0.80, "LACPY": 0, "LASET": 0}

// Block sizes covered and the efficiency relative to n = 960 (small tiles
// under-fill a GPU; a CPU core is nearly size-independent).
var blocks = []struct {
	n              uint32
	gpuRel, cpuRel float64
}{{320, 0.40, 0.90}, {640, 0.75, 0.97}, {960, 1, 1}, {1440, 1.05, 1}, {1920, 1.08, 1}}

// Duration spread: coefficient of variation assumed 2 % on GPUs, 3 % on CPU
// cores; 100 notional samples so StarPU-style sums are consistent.
const gpuCV, cpuCV, notionalN = 0.02, 0.03, 100

func defaultCalibration() *File {
	f := &File{
		Format: Format, Version: Version, Name: "starsim-default-2s-4v100",
		Description: "Authored by starsim (not measured): 2x Xeon Gold 6230 (40 cores), 4x Tesla V100-PCIe-32GB, PCIe 3.0 x16, two GPUs per socket. Kernel times are peak flop rates times stated efficiencies; transfers are PCIe link rates times stated efficiencies.",
		Sources: []string{
			"Intel ark, Xeon Gold 6230: 20 cores, AVX-512 (2 FMA units), 1.9 GHz AVX-512 all-core turbo",
			"NVIDIA Tesla V100 PCIe datasheet: 14 TFLOPS FP32, 7 TFLOPS FP64, 32 GB HBM2, PCIe Gen3 x16",
			"PCI-SIG PCIe 3.0: 8 GT/s per lane, 128b/130b encoding: 15.75 GB/s per x16 direction",
			"assumed: copies reach 78% (H2D) / 83% (D2H) of the link, 65% peer; 10 us per copy; socket root complex carries 1.6 links of DMA",
			"assumed: kernel efficiency at n=960 (GPU/CPU core): POTRF 6%/60%, TRSM 55%/75%, SYRK 65%/80%, GEMM 80%/90%, GETRF 5%/55%; n=320/640/1440/1920 scale GPU efficiency by 0.40/0.75/1.05/1.08",
			"assumed: Chameleon's tiled QR kernels (inner block 48) at a fraction of GEMM's rate on the same unit: GEQRT 40%, TPQRT 50% (CPU only, as Chameleon's codelets), ORMQR 75%, TPMQRT 80%; LACPY and LASET (CPU only) move their bytes at 10 GB/s per core",
			"costs: StarPU-over-SimGrid defaults (cudaMalloc 175 us, free 750 us, pinned 650 us/MiB, 10 us per queued transfer and GPU task, 1 us submit/push/fetch)",
		},
		Machine: Machine{CPUCores: 2 * cpuCoresPerSocket, CPUSpeedFlops: cpuSpeedFlops, RAMBytes: hostRAMBytes},
		Costs:   DefaultCosts(),
	}
	h2d, d2h, peer := h2dEff*pcie3x16Bps, d2hEff*pcie3x16Bps, peerEff*pcie3x16Bps
	for g := 0; g < 4; g++ {
		socket := g / 2
		name := fmt.Sprintf("CUDA%d", g)
		f.Machine.Devices = append(f.Machine.Devices, Device{
			Name: name, Kind: "cuda", Arch: fmt.Sprintf("cuda%d", g), Model: "Tesla V100-PCIE-32GB",
			MemoryBytes: gpuMemoryBytes, DriverCore: socket*cpuCoresPerSocket + g%2, PeerAccess: true,
		})
	}
	net := &f.Network
	net.Config = StarPUNetworkConfig
	for s := 0; s < 2; s++ {
		net.Links = append(net.Links, Link{ID: fmt.Sprintf("Socket%d-PCIe", s), BandwidthBps: socketShareLinks * d2h, LatencyS: 0})
	}
	for g := 0; g < 4; g++ {
		net.Links = append(net.Links,
			Link{ID: fmt.Sprintf("RAM-CUDA%d", g), BandwidthBps: h2d, LatencyS: copyLatencyS},
			Link{ID: fmt.Sprintf("CUDA%d-RAM", g), BandwidthBps: d2h, LatencyS: copyLatencyS})
	}
	for _, p := range [][2]int{{0, 1}, {1, 0}, {2, 3}, {3, 2}} {
		net.Links = append(net.Links, Link{ID: fmt.Sprintf("CUDA%d-CUDA%d", p[0], p[1]), BandwidthBps: peer, LatencyS: peerLatencyS})
	}
	transfer := func(src, dst string, links []string) {
		net.Routes = append(net.Routes, Route{Src: src, Dst: dst, Links: links})
		lat, bw := 0.0, math.Inf(1)
		for _, id := range links {
			for _, l := range net.Links {
				if l.ID == id {
					lat += l.LatencyS
					bw = math.Min(bw, l.BandwidthBps)
				}
			}
		}
		f.Transfers = append(f.Transfers, Transfer{Src: src, Dst: dst, PredictedLatencyS: lat, PredictedBandwidthBps: bw})
	}
	for g := 0; g < 4; g++ {
		sock := fmt.Sprintf("Socket%d-PCIe", g/2)
		transfer("RAM", fmt.Sprintf("CUDA%d", g), []string{fmt.Sprintf("RAM-CUDA%d", g), sock})
		transfer(fmt.Sprintf("CUDA%d", g), "RAM", []string{fmt.Sprintf("CUDA%d-RAM", g), sock})
	}
	for g := 0; g < 4; g++ {
		for h := 0; h < 4; h++ {
			if g == h {
				continue
			}
			src, dst := fmt.Sprintf("CUDA%d", g), fmt.Sprintf("CUDA%d", h)
			if g/2 == h/2 { // same socket: peer copy through the socket's switch
				transfer(src, dst, []string{src + "-" + dst, fmt.Sprintf("Socket%d-PCIe", g/2)})
				continue
			}
			// Across sockets no peer path: StarPU stages through RAM, so there
			// is no direct route (the runtime takes two hops).
		}
	}
	// StarPU serializes the two directions of a peer pair (crossed GPU<->GPU).
	f.Serial = []SerialPair{{"CUDA0->CUDA1", "CUDA1->CUDA0"}, {"CUDA2->CUDA3", "CUDA3->CUDA2"}}

	addModels := func(prefix string, specs []kernelSpec, bytesPerElem uint64, gpuPeak, cpuPeak float64) {
		for _, k := range specs {
			archs := []string{"cpu0", "cuda0", "cuda1", "cuda2", "cuda3"}
			for _, arch := range archs {
				km := KernelModel{Model: prefix + k.symbol, Arch: arch}
				for _, b := range blocks {
					n := float64(b.n)
					fps := make([]uint32, k.buffers)
					for i := range fps {
						fps[i] = starpu.MatrixFootprint(b.n, b.n)
					}
					var meanUS, cv float64
					if arch == "cpu0" {
						meanUS = k.flops(n) / (cpuPeak * k.cpuEff * b.cpuRel) * 1e6
						cv = cpuCV
					} else {
						meanUS = k.flops(n) / (gpuPeak * k.gpuEff * b.gpuRel) * 1e6
						cv = gpuCV
					}
					meanUS = roundSig(meanUS)
					dev := roundSig(meanUS * cv)
					km.Entries = append(km.Entries, KernelEntry{
						Footprint: fmt.Sprintf("%08x", starpu.TaskFootprint(fps)),
						SizeBytes: uint64(k.buffers) * uint64(b.n) * uint64(b.n) * bytesPerElem,
						Flops:     Float(k.flops(n)), N: notionalN, MeanUS: meanUS, StddevUS: dev,
						SumUS: notionalN * meanUS, Sum2US2: notionalN * (dev*dev + meanUS*meanUS),
					})
				}
				f.Kernels = append(f.Kernels, km)
			}
		}
	}
	addModels("chol_model_", cholKernels(), 4, gpuFP32PeakFlops, cpuFP32PeakFlops)
	addModels("starpu_slu_lu_model_", luKernels(), 4, gpuFP32PeakFlops, cpuFP32PeakFlops)
	addModels("starpu_dlu_lu_model_", luKernels(), 8, gpuFP64PeakFlops, cpuFP32PeakFlops/2)
	addQR := func(prec models.Precision, gpuPeak, cpuPeak float64) {
		archs := []string{"cpu0", "cuda0", "cuda1", "cuda2", "cuda3"}
		byName := map[string]*[5]KernelModel{}
		var order []string
		for _, b := range blocks {
			for _, k := range models.QRKernels(prec, int(b.n), qrIB) {
				ms, ok := byName[k.Symbol]
				if !ok {
					ms = &[5]KernelModel{}
					for i, a := range archs {
						ms[i] = KernelModel{Model: k.Symbol, Arch: a}
					}
					byName[k.Symbol] = ms
					order = append(order, k.Symbol)
				}
				rel := qrRelToGEMM[k.Name]
				for i, arch := range archs {
					var meanUS, cv float64
					switch {
					case arch == "cpu0" && rel == 0: // copies: memory-bound
						meanUS = float64(k.Bytes) / qrCopyBps * 1e6
						cv = cpuCV
					case arch == "cpu0":
						meanUS = k.Flops / (cpuPeak * gemmCPUEff * rel * b.cpuRel) * 1e6
						cv = cpuCV
					case k.CPUOnly:
						continue // no GPU implementation
					default:
						meanUS = k.Flops / (gpuPeak * gemmGPUEff * rel * b.gpuRel) * 1e6
						cv = gpuCV
					}
					meanUS = roundSig(meanUS)
					dev := roundSig(meanUS * cv)
					ms[i].Entries = append(ms[i].Entries, KernelEntry{
						Footprint: fmt.Sprintf("%08x", k.Footprint), SizeBytes: uint64(k.Bytes),
						Flops: Float(k.Flops), N: notionalN, MeanUS: meanUS, StddevUS: dev,
						SumUS: notionalN * meanUS, Sum2US2: notionalN * (dev*dev + meanUS*meanUS),
					})

				}
			}
		}
		for _, sym := range order {
			for _, km := range byName[sym] {
				if len(km.Entries) > 0 {
					f.Kernels = append(f.Kernels, km)
				}
			}
		}
	}
	addQR(models.Single, gpuFP32PeakFlops, cpuFP32PeakFlops)
	addQR(models.Double, gpuFP64PeakFlops, cpuFP32PeakFlops/2)
	// Power (assumed): V100 PCIe TDP 250 W, ~40 W idle; Xeon Gold 6230 TDP
	// 125 W per 20 cores: ~6.3 W per loaded core, ~1.5 W idle.
	f.Power = []ArchPower{{Arch: "cpu0", IdleW: 1.5, LoadW: 6.25}}
	for g := 0; g < 4; g++ {
		f.Power = append(f.Power, ArchPower{Arch: fmt.Sprintf("cuda%d", g), IdleW: 40, LoadW: 250})
	}
	return f
}

// roundSig keeps 6 significant digits, so the file reads like a measurement.
func roundSig(v float64) float64 {
	if v == 0 {
		return 0
	}
	e := math.Pow(10, 5-math.Floor(math.Log10(math.Abs(v))))
	return math.Round(v*e) / e
}

func TestDefaultCalibration(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, defaultCalibration().Write(&buf))
	if *update {
		require.NoError(t, os.WriteFile("default.calib.json", buf.Bytes(), 0o644))
	}
	require.Equal(t, buf.String(), string(defaultJSON), "default.calib.json is stale: go test ./calibrate -run TestDefaultCalibration -update")
	f := Default()
	require.Equal(t, "starsim-default-2s-4v100", f.Name)
}
