package calibrate

// Names of a what-if machine: renaming devices, archs and links, and
// reading CUDA device numbers.

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/starsim/starsim/runtime/machine"
)

// whatifBytes writes a size as whole GiB or MiB when it is one, else bytes.
func whatifBytes(b int64) string {
	switch {
	case b%(1<<30) == 0:
		return fmt.Sprintf("%dGiB", b>>30)
	case b%(1<<20) == 0:
		return fmt.Sprintf("%dMiB", b>>20)
	}
	return fmt.Sprintf("%dB", b)
}

// whatifCUDAOrder returns the indexes of f's CUDA devices ordered by the
// number in their name (CUDA<n>); devices without one come last, in file
// order.
func whatifCUDAOrder(f *File) []int {
	var idx []int
	for i, d := range f.Machine.Devices {
		if d.Kind == "cuda" {
			idx = append(idx, i)
		}
	}
	num := func(i int) int {
		if n, ok := whatifCUDANum(f.Machine.Devices[i].Name); ok {
			return n
		}
		return math.MaxInt
	}
	sort.SliceStable(idx, func(a, b int) bool { return num(idx[a]) < num(idx[b]) })
	return idx
}

func whatifCUDANum(name string) (int, bool) {
	s, ok := strings.CutPrefix(name, "CUDA")
	if !ok || s == "" {
		return 0, false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}

func whatifAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// whatifRename replaces, all at once, every whole occurrence of a key of m in
// s (not preceded by a letter or digit, not followed by a digit: CUDA1 is in
// "CUDA1-RAM" and "RAM-CUDA1" but not in "CUDA10-RAM").
func whatifRename(s string, m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return len(keys[i]) > len(keys[j]) })
	var b strings.Builder
	for i := 0; i < len(s); {
		matched := false
		if i == 0 || !whatifAlnum(s[i-1]) {
			for _, k := range keys {
				end := i + len(k)
				if strings.HasPrefix(s[i:], k) && (end == len(s) || s[end] < '0' || s[end] > '9') {
					b.WriteString(m[k])
					i = end
					matched = true
					break
				}
			}
		}
		if !matched {
			b.WriteByte(s[i])
			i++
		}
	}
	return b.String()
}

// whatifNames reports whether s names one of the nodes of set (see
// whatifRename).
func whatifNames(s string, set map[string]bool) bool {
	m := map[string]string{}
	for k := range set {
		m[k] = "\x00"
	}
	return whatifRename(s, m) != s
}

// whatifArchHas reports whether arch, or a component of a combined arch
// ("cpu0_cuda1"), is in archs.
func whatifArchHas(arch string, archs map[string]bool) bool {
	for _, c := range strings.Split(arch, "_") {
		if archs[c] {
			return true
		}
	}
	return archs[arch]
}

// whatifRenameArch renames the component from of arch to to.
func whatifRenameArch(arch, from, to string) string {
	parts := strings.Split(arch, "_")
	for i, p := range parts {
		if p == from {
			parts[i] = to
		}
	}
	return strings.Join(parts, "_")
}

func whatifDropArchs[T any](in []T, arch func(T) string, archs map[string]bool) []T {
	out := in[:0:0]
	for _, v := range in {
		if !whatifArchHas(arch(v), archs) {
			out = append(out, v)
		}
	}
	return out
}

func whatifDirEnds(dir string) (string, string) {
	d, _ := machine.ParseDir(dir)
	return d.Src, d.Dst
}
