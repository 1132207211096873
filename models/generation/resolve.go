package generation

import (
	"fmt"
	"strings"
)

// Status is what a calibration holds under a model symbol.
type Status int

// The statuses of a symbol.
const (
	Absent     Status = iota
	Readable          // a model starsim can use
	Unreadable        // a model file that could not be read
)

// Resolution maps an application's kernels to a calibration's models.
type Resolution struct {
	// Gen is the generation whose task graph and names are used.
	Gen Gen
	// Why says how Gen was chosen ("auto: ..." or "asked").
	Why string
	// Kernels are the application's kernels in Gen, each with the symbol
	// chosen in the calibration (BLAS suffix included).
	Kernels []KernelSymbol
	// Suffix is the BLAS suffix the symbols carry ("" none), "mixed" when
	// the kernels could not all take the same.
	Suffix string
	// Variant says, for an application whose symbols carry BLAS suffixes,
	// which BLAS variant was taken and which others the calibration has;
	// "" otherwise.
	Variant string
	// Unreadable are the kernels whose chosen symbol names a model file
	// that could not be read (the work needs it: an error for the caller,
	// who knows the file and line).
	Unreadable []KernelSymbol
}

// Symbol returns the symbol chosen for kernel ("" if none).
func (r *Resolution) Symbol(kernel string) string {
	for _, k := range r.Kernels {
		if k.Kernel == kernel {
			return k.Symbol
		}
	}
	return ""
}

// Symbols maps each kernel to its chosen symbol.
func (r *Resolution) Symbols() map[string]string {
	m := make(map[string]string, len(r.Kernels))
	for _, k := range r.Kernels {
		m[k.Kernel] = k.Symbol
	}
	return m
}

// candidate is one generation's best mapping.
type candidate struct {
	gen      Gen
	kernels  []KernelSymbol // chosen symbols ("" where absent)
	statuses []Status
	suffix   string
	present  int // kernels with a model, readable or not
	missing  []KernelSymbol
	others   []string // other suffixes with a complete readable set
}

// pick chooses, for one generation, a BLAS suffix that all kernels share
// readable (in BLASSuffixes' order), else per kernel the first readable
// suffix, else the first unreadable one.
func pick(base []KernelSymbol, status func(string) Status) candidate {
	c := candidate{kernels: make([]KernelSymbol, len(base)), statuses: make([]Status, len(base)), suffix: "mixed"}
	common := ""
	found := false
	for _, s := range BLASSuffixes {
		all := true
		for _, k := range base {
			all = all && status(k.Symbol+s) == Readable
		}
		if all {
			if !found {
				common, found = s, true
			} else {
				c.others = append(c.others, s)
			}
		}
	}
	for i, k := range base {
		c.kernels[i] = KernelSymbol{Kernel: k.Kernel}
		if found {
			c.kernels[i].Symbol, c.statuses[i] = k.Symbol+common, Readable
			continue
		}
		for _, want := range []Status{Readable, Unreadable} {
			for _, s := range BLASSuffixes {
				if c.statuses[i] == Absent && status(k.Symbol+s) == want {
					c.kernels[i].Symbol, c.statuses[i] = k.Symbol+s, want
				}
			}
		}
	}
	if found {
		c.suffix = common
	}
	for i, st := range c.statuses {
		if st != Absent {
			c.present++
		} else {
			c.missing = append(c.missing, base[i])
		}
	}
	if !found {
		// The suffix every present kernel has, readable or not, if one.
		var seen []string
		for i, k := range c.kernels {
			if c.statuses[i] != Absent {
				seen = append(seen, strings.TrimPrefix(k.Symbol, base[i].Symbol))
			}
		}
		if len(seen) > 0 {
			c.suffix = seen[0]
			for _, s := range seen {
				if s != seen[0] {
					c.suffix = "mixed"
				}
			}
		}
	}
	return c
}

// Resolve decides which generation's graph app runs with and which model
// symbols it uses, given its kernels in 1.4 and 1.3 (k14, k13), whether
// they may carry a BLAS suffix (blas) and what the calibration holds
// (status). want is the generation asked for, Auto to detect it: the
// generation all of whose kernels have a model; when both do, 1.4 unless
// only 1.3's models can all be read; when neither does, the one with more
// kernels present (1.4 on a tie), which then fails. A kernel without any
// model in the chosen generation is an error naming what was looked for;
// a kernel whose only model is unreadable is listed in Unreadable.
func Resolve(app string, k14, k13 []KernelSymbol, blas bool, want Gen, status func(string) Status) (*Resolution, error) {
	var cands []candidate
	for i, g := range []Gen{V14, V13} {
		c := pick([][]KernelSymbol{k14, k13}[i], status)
		c.gen = g
		cands = append(cands, c)
	}
	readable := func(c candidate) int {
		n := 0
		for _, st := range c.statuses {
			if st == Readable {
				n++
			}
		}
		return n
	}
	complete := func(c candidate) bool { return len(c.missing) == 0 }
	var ch candidate
	var why string
	switch {
	case want == V14 || want == V13:
		ch = cands[0]
		if want == V13 {
			ch = cands[1]
		}
		why = "asked"
	case want != Auto:
		return nil, fmt.Errorf("generation: unknown generation %s", want)
	default:
		n14, n13 := cands[0], cands[1]
		switch {
		case complete(n14) && !complete(n13):
			ch, why = n14, fmt.Sprintf("auto: the calibration has StarPU 1.4's %s", names(n14.kernels))
			if n13.present > 0 {
				why += fmt.Sprintf(" (and only part of 1.3's: %s)", names(presentOnly(n13)))
			}
		case complete(n13) && !complete(n14):
			ch, why = n13, fmt.Sprintf("auto: the calibration has StarPU 1.3's %s", names(n13.kernels))
			if n14.present > 0 {
				why += fmt.Sprintf(" and only part of 1.4's (no %s)", names(n14.missing))
			} else {
				why += ", none of 1.4's"
			}
		case complete(n13) && complete(n14):
			ch = n14
			if readable(n13) == len(n13.kernels) && readable(n14) < len(n14.kernels) {
				ch = n13
			}
			why = fmt.Sprintf("auto: the calibration has both generations' names (%s and %s); took %s (1.4 unless only 1.3's models all read; --starpu-generation picks the other)",
				names(n14.kernels), names(n13.kernels), ch.gen)
		default:
			ch = n14
			if n13.present > n14.present {
				ch = n13
			}
		}
	}
	if len(ch.missing) > 0 {
		var looked []string
		for _, k := range ch.missing {
			s := k.Symbol
			if blas {
				s += "[" + strings.Join(BLASSuffixes[1:], "|") + "]"
			}
			looked = append(looked, k.Kernel+" ("+s+")")
		}
		msg := fmt.Sprintf("the calibration has no model for %s's %s in StarPU %s's names", strings.ToLower(app), strings.Join(looked, ", "), ch.gen)
		if want == Auto {
			other := cands[0]
			if ch.gen == V14 {
				other = cands[1]
			}
			if other.present > 0 {
				msg += fmt.Sprintf(", nor all of StarPU %s's (missing %s)", other.gen, names(other.missing))
			} else {
				msg += fmt.Sprintf(", nor any of StarPU %s's", other.gen)
			}
		}
		return nil, fmt.Errorf("%s", msg)
	}
	r := &Resolution{Gen: ch.gen, Why: why, Kernels: ch.kernels, Suffix: ch.suffix}
	for i, st := range ch.statuses {
		if st == Unreadable {
			r.Unreadable = append(r.Unreadable, ch.kernels[i])
		}
	}
	if blas {
		r.Variant = variantText(ch)
	}
	return r, nil
}

func presentOnly(c candidate) []KernelSymbol {
	var out []KernelSymbol
	for i, k := range c.kernels {
		if c.statuses[i] != Absent {
			out = append(out, k)
		}
	}
	return out
}

func names(ks []KernelSymbol) string {
	var s []string
	for _, k := range ks {
		s = append(s, k.Symbol)
	}
	return strings.Join(s, ", ")
}

func suffixName(s string) string {
	if s == "" {
		return "no BLAS suffix"
	}
	return s
}

func variantText(c candidate) string {
	switch {
	case c.suffix == "mixed":
		return "BLAS variants mixed: " + names(c.kernels)
	case len(c.others) > 0:
		return fmt.Sprintf("%s (the calibration also has %s)", suffixName(c.suffix), strings.Join(c.others, ", "))
	}
	return suffixName(c.suffix)
}
