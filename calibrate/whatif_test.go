package calibrate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func whatifJSON(t *testing.T, f *File) string {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, f.Write(&buf))
	return buf.String()
}

// whatifAttila imports ../shared's attila (PCI tree, peer routes, OpenCL
// devices), or skips.
func whatifAttila(t *testing.T) *File {
	t.Helper()
	needShared(t)
	f, _, err := Import(samplingDir, "attila")
	require.NoError(t, err)
	return f
}

// whatifAttilaOrNil imports attila when ../shared is there, else nil.
func whatifAttilaOrNil(t *testing.T) *File {
	t.Helper()
	if _, err := os.Stat(samplingDir); err != nil {
		t.Log("../shared not found: attila cases skipped")
		return nil
	}
	f, _, err := Import(samplingDir, "attila")
	require.NoError(t, err)
	return f
}

// checkDerived: the result validates (Go and JSON schema), round-trips
// through Write/Parse, builds a platform and says what it is, and the input
// is unchanged.
func checkDerived(t *testing.T, in *File, inJSON string, out *File, suffix string) {
	t.Helper()
	require.NoError(t, out.Validate())
	s := whatifJSON(t, out)
	schemaValidate(t, []byte(s))
	back, err := Parse([]byte(s), "derived.json")
	require.NoError(t, err)
	assert.Equal(t, s, whatifJSON(t, back), "round trip")
	assert.Equal(t, inJSON, whatifJSON(t, in), "input modified")
	assert.Equal(t, in.Name+suffix, out.Name)
	require.Len(t, out.Sources, len(in.Sources)+1)
	for i, src := range in.Sources {
		assert.Equal(t, src, out.Sources[i])
	}
	assert.True(t, strings.HasPrefix(out.Sources[len(in.Sources)], "what-if: "), out.Sources[len(in.Sources)])
	_, err = BuildPlatform(out)
	require.NoError(t, err)
}

func whatifDevice(t *testing.T, f *File, name string) Device {
	t.Helper()
	for _, d := range f.Machine.Devices {
		if d.Name == name {
			return d
		}
	}
	t.Fatalf("no device %s", name)
	return Device{}
}

func whatifLink(t *testing.T, f *File, id string) Link {
	t.Helper()
	for _, l := range f.Network.Links {
		if l.ID == id {
			return l
		}
	}
	t.Fatalf("no link %s", id)
	return Link{}
}

// whatifModels returns the kernel models of arch by model/impl, as JSON
// with the arch blanked (JSON: NaN regressions compare equal).
func whatifModels(f *File, arch string) map[string]string {
	out := map[string]string{}
	for _, k := range f.Kernels {
		if k.Arch == arch {
			k.Arch = ""
			b, err := json.Marshal(k)
			if err != nil {
				panic(err)
			}
			out[fmt.Sprintf("%s/%d", k.Model, k.Impl)] = string(b)
		}
	}
	return out
}

func cudaNames(f *File) []string {
	var out []string
	for _, d := range f.Machine.Devices {
		if d.Kind == "cuda" {
			out = append(out, d.Name)
		}
	}
	return out
}

// assertNothingNames checks that no part of f refers to the given nodes or
// archs.
func assertNothingNames(t *testing.T, f *File, nodes, archs []string) {
	t.Helper()
	set := map[string]bool{}
	for _, n := range nodes {
		set[n] = true
	}
	aset := map[string]bool{}
	for _, a := range archs {
		aset[a] = true
	}
	for _, d := range f.Machine.Devices {
		assert.False(t, set[d.Name], d.Name)
	}
	for _, l := range f.Network.Links {
		assert.False(t, whatifNames(l.ID, set), "link %s", l.ID)
	}
	for _, r := range f.Network.Routes {
		assert.False(t, set[r.Src] || set[r.Dst], "route %s->%s", r.Src, r.Dst)
		for _, id := range r.Links {
			assert.False(t, whatifNames(id, set), "route %s->%s link %s", r.Src, r.Dst, id)
		}
	}
	for _, tr := range f.Transfers {
		assert.False(t, set[tr.Src] || set[tr.Dst], "transfer %s->%s", tr.Src, tr.Dst)
	}
	for _, p := range f.Serial {
		assert.False(t, whatifNames(p.A, set) || whatifNames(p.B, set), "serialized %v", p)
	}
	for _, k := range f.Kernels {
		assert.False(t, whatifArchHas(k.Arch, aset), "kernel %s %s", k.Model, k.Arch)
	}
	for _, p := range f.Power {
		assert.False(t, whatifArchHas(p.Arch, aset), "power %s", p.Arch)
	}
}

func serialSet(ps []SerialPair) map[[2]string]bool {
	m := map[[2]string]bool{}
	for _, p := range ps {
		m[[2]string{p.A, p.B}] = true
		m[[2]string{p.B, p.A}] = true
	}
	return m
}

func TestWhatIfRename(t *testing.T) {
	m := map[string]string{"CUDA1": "CUDA2", "CUDA2": "CUDA1"}
	for _, c := range []struct{ in, want string }{
		{"CUDA1-CUDA2", "CUDA2-CUDA1"},
		{"RAM-CUDA1", "RAM-CUDA2"},
		{"CUDA10-RAM", "CUDA10-RAM"},
		{"XCUDA1", "XCUDA1"},
		{"CUDA1", "CUDA2"},
		{"PCI:0000:02:00.0 up", "PCI:0000:02:00.0 up"},
		{"", ""},
	} {
		assert.Equal(t, c.want, whatifRename(c.in, m), c.in)
	}
	assert.Equal(t, "12GiB", whatifBytes(12<<30))
	assert.Equal(t, "1536MiB", whatifBytes(1536<<20))
	assert.Equal(t, "1000B", whatifBytes(1000))
}

func TestWhatIfWithGPUsDefault(t *testing.T) {
	f := Default()
	in := whatifJSON(t, f)

	t.Run("add one", func(t *testing.T) {
		g, err := f.WithGPUs(5)
		require.NoError(t, err)
		checkDerived(t, f, in, g, "+gpus5")
		assert.Equal(t, []string{"CUDA0", "CUDA1", "CUDA2", "CUDA3", "CUDA4"}, cudaNames(g))
		d3, d4 := whatifDevice(t, g, "CUDA3"), whatifDevice(t, g, "CUDA4")
		assert.Equal(t, "cuda4", d4.Arch)
		assert.Equal(t, d3.Model, d4.Model)
		assert.Equal(t, d3.MemoryBytes, d4.MemoryBytes)
		assert.Equal(t, d3.PeerAccess, d4.PeerAccess)
		cores := map[int]bool{}
		for _, d := range g.Machine.Devices {
			assert.False(t, cores[d.DriverCore], "driver core %d used twice", d.DriverCore)
			cores[d.DriverCore] = true
		}
		assert.Equal(t, 2, d4.DriverCore, "first core not driving a GPU (0, 1, 20, 21 do)")
		for _, pair := range [][2]string{{"RAM-CUDA3", "RAM-CUDA4"}, {"CUDA3-RAM", "CUDA4-RAM"}, {"CUDA3-CUDA2", "CUDA4-CUDA2"}, {"CUDA2-CUDA3", "CUDA2-CUDA4"}, {"CUDA3-CUDA2", "CUDA4-CUDA3"}, {"CUDA2-CUDA3", "CUDA3-CUDA4"}} {
			a, b := whatifLink(t, g, pair[0]), whatifLink(t, g, pair[1])
			b.ID = a.ID
			assert.Equal(t, a, b, pair[1])
		}
		for _, c := range []struct {
			src, dst string
			links    []string
		}{
			{"RAM", "CUDA4", []string{"RAM-CUDA4", "Socket1-PCIe"}},
			{"CUDA4", "RAM", []string{"CUDA4-RAM", "Socket1-PCIe"}},
			{"CUDA4", "CUDA2", []string{"CUDA4-CUDA2", "Socket1-PCIe"}},
			{"CUDA2", "CUDA4", []string{"CUDA2-CUDA4", "Socket1-PCIe"}},
			{"CUDA4", "CUDA3", []string{"CUDA4-CUDA3", "Socket1-PCIe"}},
			{"CUDA3", "CUDA4", []string{"CUDA3-CUDA4", "Socket1-PCIe"}},
		} {
			r := g.whatifRoute(c.src, c.dst)
			require.NotNil(t, r, "%s->%s", c.src, c.dst)
			assert.Equal(t, c.links, r.Links)
		}
		assert.Nil(t, g.whatifRoute("CUDA4", "CUDA0"), "CUDA3 has no peer route to socket 0")
		for _, c := range [][4]string{
			{"RAM", "CUDA3", "RAM", "CUDA4"}, {"CUDA3", "RAM", "CUDA4", "RAM"},
			{"CUDA3", "CUDA2", "CUDA4", "CUDA2"}, {"CUDA2", "CUDA3", "CUDA2", "CUDA4"},
			{"CUDA3", "CUDA2", "CUDA4", "CUDA3"}, {"CUDA2", "CUDA3", "CUDA3", "CUDA4"},
		} {
			a, b := g.transfer(c[0], c[1]), g.transfer(c[2], c[3])
			require.NotNil(t, a)
			require.NotNil(t, b, "%s->%s", c[2], c[3])
			assert.Equal(t, a.PredictedLatencyS, b.PredictedLatencyS)
			assert.Equal(t, a.PredictedBandwidthBps, b.PredictedBandwidthBps)
		}
		ss := serialSet(g.Serial)
		assert.True(t, ss[[2]string{"CUDA4->CUDA2", "CUDA2->CUDA4"}])
		assert.True(t, ss[[2]string{"CUDA4->CUDA3", "CUDA3->CUDA4"}])
		assert.True(t, ss[[2]string{"CUDA2->CUDA3", "CUDA3->CUDA2"}])
		m3, m4 := whatifModels(g, "cuda3"), whatifModels(g, "cuda4")
		require.NotEmpty(t, m3)
		assert.Equal(t, m3, m4)
		var p3, p4 *ArchPower
		for i := range g.Power {
			switch g.Power[i].Arch {
			case "cuda3":
				p3 = &g.Power[i]
			case "cuda4":
				p4 = &g.Power[i]
			}
		}
		require.NotNil(t, p4)
		assert.Equal(t, p3.LoadW, p4.LoadW)

		p, err := BuildPlatform(g)
		require.NoError(t, err)
		links, ok := p.Route("RAM", "CUDA4")
		require.True(t, ok)
		assert.Equal(t, []string{"RAM-CUDA4", "Socket1-PCIe"}, links)
		// CUDA4 alone takes CUDA3's time.
		p0, err := BuildPlatform(f)
		require.NoError(t, err)
		assert.Equal(t, runOne(t, p0, "RAM", "CUDA3", 3686400), runOne(t, p, "RAM", "CUDA4", 3686400))
	})

	t.Run("add two", func(t *testing.T) {
		g, err := f.WithGPUs(6)
		require.NoError(t, err)
		checkDerived(t, f, in, g, "+gpus6")
		assert.Equal(t, []string{"CUDA0", "CUDA1", "CUDA2", "CUDA3", "CUDA4", "CUDA5"}, cudaNames(g))
		assert.Equal(t, 3, whatifDevice(t, g, "CUDA5").DriverCore)
		assert.Equal(t, whatifModels(g, "cuda3"), whatifModels(g, "cuda5"))
		assert.NotNil(t, g.whatifRoute("CUDA5", "CUDA4"))
		assert.NotNil(t, g.whatifRoute("RAM", "CUDA5"))
	})

	t.Run("remove two", func(t *testing.T) {
		g, err := f.WithGPUs(2)
		require.NoError(t, err)
		checkDerived(t, f, in, g, "+gpus2")
		assert.Equal(t, []string{"CUDA0", "CUDA1"}, cudaNames(g))
		assertNothingNames(t, g, []string{"CUDA2", "CUDA3"}, []string{"cuda2", "cuda3"})
		for _, l := range g.Network.Links {
			assert.NotEqual(t, "Socket1-PCIe", l.ID, "only removed routes used it")
		}
		assert.Equal(t, whatifModels(f, "cuda0"), whatifModels(g, "cuda0"))
		assert.Len(t, whatifModels(g, "cpu0"), len(whatifModels(f, "cpu0")))
		assert.Equal(t, []SerialPair{{"CUDA0->CUDA1", "CUDA1->CUDA0"}}, g.Serial)
		// Down to one GPU: no pair left to serialize.
		h, err := g.WithGPUs(1)
		require.NoError(t, err)
		assert.Equal(t, []string{"CUDA0"}, cudaNames(h))
		assert.Empty(t, h.Serial)
	})

	t.Run("same", func(t *testing.T) {
		g, err := f.WithGPUs(4)
		require.NoError(t, err)
		checkDerived(t, f, in, g, "+gpus4")
		g.Name, g.Sources = f.Name, f.Sources
		assert.Equal(t, in, whatifJSON(t, g))
	})

	t.Run("errors", func(t *testing.T) {
		for _, k := range []int{0, -1} {
			_, err := f.WithGPUs(k)
			assert.Error(t, err, "k=%d", k)
		}
		// Every core drives a GPU: no driver core for a fifth.
		small := Default()
		small.Machine.CPUCores = 4
		for i := range small.Machine.Devices {
			small.Machine.Devices[i].DriverCore = i
		}
		require.NoError(t, small.Validate())
		_, err := small.WithGPUs(5)
		assert.ErrorContains(t, err, "core")
		_, err = small.WithGPUs(3)
		assert.NoError(t, err, "removing needs no core")
		// No CUDA device.
		_, err = whatifNoCUDA(t).WithGPUs(2)
		assert.Error(t, err)
		// The new name is taken.
		odd := Default()
		odd.Machine.Devices[0].Name = "CUDA4"
		odd.Machine.Devices[0].Kind = "hip"
		odd.Machine.Devices[0].Arch = "hip0"
		fixNode(odd, "CUDA0", "CUDA4")
		require.NoError(t, odd.Validate())
		_, err = odd.WithGPUs(4)
		assert.ErrorContains(t, err, "taken")
	})
	assert.Equal(t, in, whatifJSON(t, f))
}

// fixNode renames a memory node in routes, transfers and serialized pairs
// (links keep their ids).
func fixNode(f *File, from, to string) {
	m := map[string]string{from: to}
	for i := range f.Network.Routes {
		r := &f.Network.Routes[i]
		r.Src, r.Dst = whatifRename(r.Src, m), whatifRename(r.Dst, m)
	}
	for i := range f.Transfers {
		tr := &f.Transfers[i]
		tr.Src, tr.Dst = whatifRename(tr.Src, m), whatifRename(tr.Dst, m)
	}
	for i := range f.Serial {
		p := &f.Serial[i]
		p.A, p.B = whatifRename(p.A, m), whatifRename(p.B, m)
	}
}

// whatifNoCUDA is the default machine with its GPUs declared OpenCL.
func whatifNoCUDA(t *testing.T) *File {
	f := Default()
	for i := range f.Machine.Devices {
		f.Machine.Devices[i].Kind = "opencl"
	}
	require.NoError(t, f.Validate())
	return f
}

func TestWhatIfWithGPUsAttila(t *testing.T) {
	a := whatifAttila(t)
	in := whatifJSON(t, a)
	pa, err := BuildPlatform(a)
	require.NoError(t, err)
	rename := func(links []string) []string {
		var out []string
		for _, id := range links {
			out = append(out, strings.ReplaceAll(id, "CUDA2", "CUDA3"))
		}
		return out
	}

	g, err := a.WithGPUs(4)
	require.NoError(t, err)
	checkDerived(t, a, in, g, "+gpus4")
	assert.Equal(t, []string{"CUDA0", "CUDA1", "CUDA2", "CUDA3"}, cudaNames(g))
	p, err := BuildPlatform(g)
	require.NoError(t, err)
	for _, c := range [][2]string{{"RAM", "CUDA2"}, {"CUDA2", "RAM"}, {"CUDA2", "CUDA0"}, {"CUDA0", "CUDA2"}, {"CUDA1", "CUDA2"}} {
		want, ok := p.Route(c[0], c[1])
		require.True(t, ok)
		src, dst := strings.ReplaceAll(c[0], "CUDA2", "CUDA3"), strings.ReplaceAll(c[1], "CUDA2", "CUDA3")
		got, ok := p.Route(src, dst)
		require.True(t, ok, "%s->%s", src, dst)
		assert.Equal(t, rename(want), got, "%s->%s", src, dst)
		assert.NotEqual(t, want, got, "per-device links renamed")
		// Alone, the clone's copy takes the cloned device's time.
		assert.Equal(t, runOne(t, pa, c[0], c[1], 3686400), runOne(t, p, src, dst, 3686400), "%s->%s", src, dst)
	}
	got, _ := p.Route("RAM", "CUDA3")
	assert.Contains(t, got, "PCI:0000:84:00.0 down", "the PCI slot link is shared")
	assert.Contains(t, got, "Host")
	// The pair (CUDA3, CUDA2) copies (CUDA2, CUDA1).
	want, ok := p.Route("CUDA2", "CUDA1")
	require.True(t, ok)
	got, ok = p.Route("CUDA3", "CUDA2")
	require.True(t, ok)
	assert.Equal(t, "CUDA3-CUDA2", got[0])
	assert.Equal(t, want[1:], got[1:])
	assert.Equal(t, whatifLink(t, g, "CUDA2-CUDA1").BandwidthBps, whatifLink(t, g, "CUDA3-CUDA2").BandwidthBps)
	assert.NotNil(t, g.transfer("CUDA2", "CUDA3"))
	// OpenCL devices untouched; transfers to them copied.
	for _, d := range a.Machine.Devices {
		if d.Kind == "opencl" {
			assert.Equal(t, d, whatifDevice(t, g, d.Name))
		}
	}
	require.NotNil(t, a.transfer("CUDA2", "OpenCL0"))
	assert.Equal(t, a.transfer("CUDA2", "OpenCL0").PredictedBandwidthBps, g.transfer("CUDA3", "OpenCL0").PredictedBandwidthBps)
	// Driver cores unique, serialized pairs StarPU's rules for the new
	// devices, kernel models cloned.
	cores := map[int]bool{}
	for _, d := range g.Machine.Devices {
		assert.False(t, cores[d.DriverCore], "driver core %d used twice", d.DriverCore)
		cores[d.DriverCore] = true
	}
	assert.True(t, whatifSameSerial(g.Serial, starpuSerialPairs(g.Machine.Devices)))
	m2, m3 := whatifModels(g, "cuda2"), whatifModels(g, "cuda3")
	require.NotEmpty(t, m2)
	assert.Equal(t, m2, m3)

	t.Run("remove", func(t *testing.T) {
		g, err := a.WithGPUs(2)
		require.NoError(t, err)
		checkDerived(t, a, in, g, "+gpus2")
		assertNothingNames(t, g, []string{"CUDA2"}, []string{"cuda2"})
		for _, l := range g.Network.Links {
			assert.False(t, strings.Contains(l.ID, "84"), "link %s of CUDA2's PCI branch only", l.ID)
		}
		whatifLink(t, g, "Host")
		whatifLink(t, g, "RAM-OpenCL2")
		whatifLink(t, g, "RAM-DISK0")
		assert.NotNil(t, g.whatifRoute("RAM", "DISK0"))
		assert.True(t, whatifSameSerial(g.Serial, starpuSerialPairs(g.Machine.Devices)))
		_, err = g.WithGPUs(1)
		assert.NoError(t, err)
	})
}

func TestWhatIfScalePCIBandwidth(t *testing.T) {
	type tc struct {
		name string
		f    *File
	}
	cases := []tc{{"default", Default()}}
	small, err := ReadFile("testdata/small.calib.json")
	require.NoError(t, err)
	cases = append(cases, tc{"small", small})
	if a := whatifAttilaOrNil(t); a != nil {
		cases = append(cases, tc{"attila", a})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := c.f
			in := whatifJSON(t, f)
			g, err := f.ScalePCIBandwidth(2)
			require.NoError(t, err)
			checkDerived(t, f, in, g, "+pcix2")
			for i, l := range f.Network.Links {
				assert.Equal(t, 2*l.BandwidthBps, g.Network.Links[i].BandwidthBps)
				assert.Equal(t, l.LatencyS, g.Network.Links[i].LatencyS)
			}
			for i, tr := range f.Transfers {
				assert.Equal(t, 2*tr.PredictedBandwidthBps, g.Transfers[i].PredictedBandwidthBps)
				assert.Equal(t, tr.PredictedLatencyS, g.Transfers[i].PredictedLatencyS)
				for j, pm := range tr.PitchModels {
					for k, s := range pm.Segments {
						gs := g.Transfers[i].PitchModels[j].Segments[k]
						assert.Equal(t, s.SlopeSPerByte/2, gs.SlopeSPerByte)
						assert.Equal(t, s.InterceptS, gs.InterceptS)
						assert.Equal(t, s.HiBytes, gs.HiBytes)
					}
				}
			}
			// A lone transfer on every route takes (t - latency)/2 + latency.
			p0, err := BuildPlatform(f)
			require.NoError(t, err)
			p1, err := BuildPlatform(g)
			require.NoError(t, err)
			for _, r := range f.Network.Routes {
				lat := 0.0
				for _, id := range r.Links {
					lat += whatifLink(t, f, id).LatencyS
				}
				for _, b := range []float64{1, 3686400, 64 << 20} {
					t0, t1 := runOne(t, p0, r.Src, r.Dst, b), runOne(t, p1, r.Src, r.Dst, b)
					assert.InDelta(t, (t0-lat)/2+lat, t1, 1e-12*t0, "%s->%s %v B", r.Src, r.Dst, b)
				}
			}
			h, err := f.ScalePCIBandwidth(0.5)
			require.NoError(t, err)
			assert.Equal(t, f.Name+"+pcix0.5", h.Name)
		})
	}
	f := Default()
	for _, x := range []float64{0, -1, math.NaN(), math.Inf(1)} {
		_, err := f.ScalePCIBandwidth(x)
		assert.Error(t, err, "x=%v", x)
	}
	_, err = f.ScalePCIBandwidth(1e300)
	assert.Error(t, err, "overflowing bandwidths do not validate")
}

func TestWhatIfWithGPUMemory(t *testing.T) {
	files := []*File{Default()}
	if a := whatifAttilaOrNil(t); a != nil {
		files = append(files, a)
	}
	for _, f := range files {
		t.Run(f.Name, func(t *testing.T) {
			in := whatifJSON(t, f)
			g, err := f.WithGPUMemory(12 << 30)
			require.NoError(t, err)
			checkDerived(t, f, in, g, "+mem12GiB")
			for i, d := range g.Machine.Devices {
				if d.Kind == "cuda" || d.Kind == "hip" {
					assert.Equal(t, int64(12<<30), d.MemoryBytes, d.Name)
				} else {
					assert.Equal(t, f.Machine.Devices[i].MemoryBytes, d.MemoryBytes, d.Name)
				}
			}
			p, err := BuildPlatform(g)
			require.NoError(t, err)
			h, ok := p.Host("CUDA0")
			require.True(t, ok)
			mem, _ := h.Prop("memsize")
			assert.Equal(t, "12884901888", mem)
		})
	}
	f := Default()
	for _, b := range []int64{0, -1} {
		_, err := f.WithGPUMemory(b)
		assert.Error(t, err)
	}
	_, err := whatifNoCUDA(t).WithGPUMemory(1 << 30)
	assert.Error(t, err)
}

// whatifOther is a hand-made other calibration: the default with a
// different, twice slower GPU of 16 GiB and its own power.
func whatifOther() *File {
	o := Default()
	o.Name = "slowgpu"
	for i := range o.Machine.Devices {
		o.Machine.Devices[i].Model = "Slow GPU"
		o.Machine.Devices[i].MemoryBytes = 16 << 30
	}
	for i := range o.Kernels {
		k := &o.Kernels[i]
		if k.Arch == "cuda0" {
			for j := range k.Entries {
				k.Entries[j].MeanUS *= 2
			}
		}
	}
	for i := range o.Power {
		if o.Power[i].Arch == "cuda0" {
			o.Power[i].LoadW = 300
		}
	}
	o.Network.Links[0].BandwidthBps /= 3 // not taken
	return o
}

func TestWhatIfWithGPUFrom(t *testing.T) {
	others := []*File{whatifOther()}
	if a := whatifAttilaOrNil(t); a != nil {
		others = append(others, a)
	}
	f := Default()
	in := whatifJSON(t, f)
	for _, o := range others {
		t.Run(o.Name, func(t *testing.T) {
			oin := whatifJSON(t, o)
			g, err := f.WithGPUFrom(o)
			require.NoError(t, err)
			checkDerived(t, f, in, g, "+gpu("+o.Name+")")
			assert.Equal(t, oin, whatifJSON(t, o), "other modified")
			oc := whatifDevice(t, o, "CUDA0")
			want := whatifModels(o, "cuda0")
			require.NotEmpty(t, want)
			for i, d := range g.Machine.Devices {
				assert.Equal(t, oc.Model, d.Model)
				assert.Equal(t, oc.MemoryBytes, d.MemoryBytes)
				assert.Equal(t, f.Machine.Devices[i].DriverCore, d.DriverCore)
				assert.Equal(t, want, whatifModels(g, d.Arch), d.Arch)
			}
			assert.Equal(t, whatifModels(f, "cpu0"), whatifModels(g, "cpu0"))
			assert.Equal(t, f.Network, g.Network, "the host bus stays f's")
			assert.Equal(t, f.Transfers, g.Transfers)
			assert.Equal(t, f.Serial, g.Serial)
			var opw *ArchPower
			for i := range o.Power {
				if o.Power[i].Arch == "cuda0" {
					opw = &o.Power[i]
				}
			}
			n := 0
			for _, p := range g.Power {
				if strings.HasPrefix(p.Arch, "cuda") {
					n++
					require.NotNil(t, opw)
					assert.Equal(t, opw.LoadW, p.LoadW)
				}
			}
			if opw != nil {
				assert.Equal(t, 4, n)
			} else {
				assert.Zero(t, n, "the replaced GPU's power entries are dropped")
			}
		})
	}
	t.Run("errors", func(t *testing.T) {
		_, err := f.WithGPUFrom(nil)
		assert.Error(t, err)
		_, err = f.WithGPUFrom(whatifNoCUDA(t))
		assert.Error(t, err)
		_, err = whatifNoCUDA(t).WithGPUFrom(f)
		assert.Error(t, err)
		o := whatifOther()
		var ks []KernelModel
		for _, k := range o.Kernels {
			if k.Arch != "cuda0" {
				ks = append(ks, k)
			}
		}
		o.Kernels = ks
		_, err = f.WithGPUFrom(o)
		assert.ErrorContains(t, err, "cuda0")
	})
	assert.Equal(t, in, whatifJSON(t, f))
}

// TestWhatIfCopyIsDeep: editing a derived file through every pointer and
// slice leaves its input alone.
func TestWhatIfCopyIsDeep(t *testing.T) {
	small, err := ReadFile("testdata/small.calib.json")
	require.NoError(t, err)
	for _, f := range []*File{small, Default()} {
		whatifCheckDeep(t, f)
	}
}

func whatifCheckDeep(t *testing.T, f *File) {
	in := whatifJSON(t, f)
	g := f.whatifCopy()
	assert.Equal(t, in, whatifJSON(t, g))
	for i := range g.Sources {
		g.Sources[i] = "x"
	}
	for i := range g.Serial {
		g.Serial[i].A = g.Serial[i].B
	}
	for i := range g.Power {
		g.Power[i].LoadW++
	}
	g.Machine.Devices[0].MemoryBytes++
	for i := range g.Network.Links {
		g.Network.Links[i].BandwidthBps++
	}
	for i := range g.Network.Routes {
		g.Network.Routes[i].Links[0] = g.Network.Links[0].ID
	}
	for i := range g.Transfers {
		for j := range g.Transfers[i].PitchModels {
			for k := range g.Transfers[i].PitchModels[j].Segments {
				s := &g.Transfers[i].PitchModels[j].Segments[k]
				s.SlopeSPerByte++
				if s.HiBytes != nil {
					*s.HiBytes++
				}
			}
		}
	}
	for i := range g.Kernels {
		k := &g.Kernels[i]
		for j := range k.Entries {
			k.Entries[j].MeanUS++
			if h := k.Entries[j].Histogram; h != nil {
				h.EdgesUS[0]++
				h.Counts[0]++
			}
		}
		if k.Regression != nil {
			k.Regression.Alpha++
		}
		if k.NLRegression != nil {
			k.NLRegression.A++
		}
		if k.MultiRegression != nil && len(k.MultiRegression.Coefs) > 0 {
			k.MultiRegression.Coefs[0]++
		}
	}
	assert.Equal(t, in, whatifJSON(t, f))
}

// TestWhatIfSharedHosts applies every transform to every ../shared machine
// (flat networks, PCI trees, pitch models): results validate, round-trip,
// build platforms with routes RAM<->every device, and keep driver cores
// unique.
func TestWhatIfSharedHosts(t *testing.T) {
	needShared(t)
	for _, host := range sharedHosts {
		t.Run(host, func(t *testing.T) {
			f, _, err := Import(samplingDir, host)
			require.NoError(t, err)
			in := whatifJSON(t, f)
			n := len(cudaNames(f))
			require.Positive(t, n)
			type out struct {
				suffix string
				g      *File
				err    error
			}
			var outs []out
			for _, k := range []int{1, n - 1, n + 1, n + 2} {
				if k < 1 {
					continue
				}
				g, err := f.WithGPUs(k)
				outs = append(outs, out{fmt.Sprintf("+gpus%d", k), g, err})
			}
			g, err := f.ScalePCIBandwidth(3)
			outs = append(outs, out{"+pcix3", g, err})
			g, err = f.WithGPUMemory(1 << 30)
			outs = append(outs, out{"+mem1GiB", g, err})
			g, err = f.WithGPUFrom(Default())
			outs = append(outs, out{"+gpu(" + Default().Name + ")", g, err})
			for _, o := range outs {
				require.NoError(t, o.err, o.suffix)
				checkDerived(t, f, in, o.g, o.suffix)
				p, err := BuildPlatform(o.g)
				require.NoError(t, err)
				cores := map[int]bool{}
				for _, d := range o.g.Machine.Devices {
					_, ok := p.Route("RAM", d.Name)
					assert.True(t, ok, "%s: RAM->%s", o.suffix, d.Name)
					_, ok = p.Route(d.Name, "RAM")
					assert.True(t, ok, "%s: %s->RAM", o.suffix, d.Name)
					assert.False(t, cores[d.DriverCore], "%s: driver core %d used twice", o.suffix, d.DriverCore)
					cores[d.DriverCore] = true
				}
			}
		})
	}
}
