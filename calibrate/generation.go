package calibrate

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/starsim/starsim/models"
	"github.com/starsim/starsim/models/generation"
)

// ModelStatus says what the calibration holds under a model symbol: a model
// (of any arch), an unreadable model file, or nothing.
func (f *File) ModelStatus(symbol string) generation.Status {
	for i := range f.Kernels {
		if f.Kernels[i].Model == symbol {
			return generation.Readable
		}
	}
	for _, u := range f.Unreadable {
		if u.Model == symbol {
			return generation.Unreadable
		}
	}
	return generation.Absent
}

// ModelStatuses is ModelStatus over a set built once, for many queries.
func (f *File) ModelStatuses() func(string) generation.Status {
	st := map[string]generation.Status{}
	for _, u := range f.Unreadable {
		st[u.Model] = generation.Unreadable
	}
	for i := range f.Kernels {
		st[f.Kernels[i].Model] = generation.Readable
	}
	return func(s string) generation.Status { return st[s] }
}

// ResolveApp decides, for the application app (models.Lookup) in float or
// double, which StarPU generation's task graph runs on this calibration
// and under which model symbols (models.App.Resolve; want is the
// generation asked for, Auto to detect it). A model the work needs whose file could not be read is an
// error with that file's FILE:LINE; one the calibration lacks is an error
// saying what was looked for.
func (f *File) ResolveApp(app string, double bool, want generation.Gen) (*generation.Resolution, error) {
	a, ok := models.Lookup(app)
	if !ok {
		return nil, fmt.Errorf("calibration %s: unknown application %q (want %s)", f.Name, app, strings.Join(models.Names(), " or "))
	}
	r, err := a.Resolve(double, want, f.ModelStatuses())
	if err != nil {
		return nil, fmt.Errorf("calibration %s: %w", f.Name, err)
	}
	var errs []error
	for _, k := range r.Unreadable {
		for _, u := range f.Unreadable {
			if u.Model == k.Symbol {
				errs = append(errs, fmt.Errorf("%w (model %s, needed by %s's %s tasks, could not be read)", u.Err(), k.Symbol, strings.ToLower(app), k.Kernel))
			}
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return r, nil
}

// Generation says which StarPU generation's model names the calibration
// uses, from the symbols of the registered applications (models.Names) it
// holds, readable or not (Auto when it holds neither's or both's), and why.
func (f *File) Generation() (generation.Gen, string) {
	status := f.ModelStatuses()
	var has [2][]string // 1.4, 1.3
	for gi, g := range []generation.Gen{generation.V14, generation.V13} {
		for _, a := range models.All() {
			if a.OneGraph {
				continue // its names say nothing of a generation
			}
			for _, k := range slices.Concat(a.SymbolSets(g)...) {
				for _, s := range generation.BLASSuffixes {
					if status(k.Symbol+s) != generation.Absent {
						has[gi] = append(has[gi], k.Symbol+s)
						break
					}
				}
			}
		}
	}
	list := func(s []string) string {
		if len(s) > 4 {
			return strings.Join(s[:4], ", ") + ", ..."
		}
		return strings.Join(s, ", ")
	}
	switch {
	case len(has[0]) > 0 && len(has[1]) == 0:
		return generation.V14, "the calibration has StarPU 1.4's model names: " + list(has[0])
	case len(has[1]) > 0 && len(has[0]) == 0:
		return generation.V13, "the calibration has StarPU 1.3's model names: " + list(has[1])
	case len(has[0]) > 0:
		return generation.Auto, "model names of both StarPU 1.3 and 1.4"
	}
	return generation.Auto, "no Cholesky or LU model of StarPU's examples"
}
