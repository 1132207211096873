package models

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/starsim/starsim/models/generation"
	"github.com/starsim/starsim/runtime/graph"
)

// App is one application: everything starsim knows of it, in one value
// (one file per application). A new application is a new file defining
// its App and one line registering it (apps here, or Register). Name,
// Kernels, Size and Build are needed; the rest serves replays of traces
// (KernelOf, ElemBytes, KernelFlops, SyncGPU, Renames) and may be left
// empty.
type App struct {
	// Name is the --app value ("cholesky"), matched case-insensitively.
	Name string
	// Kernels lists the application's kernels in generation g (V13 or
	// V14) with their model symbols, without BLAS suffix, in submission
	// order of first use; double selects the double-precision symbols.
	Kernels func(g generation.Gen, double bool) []generation.KernelSymbol
	// DoubleSymbols says that the double-precision graph names its models
	// differently (LU's starpu_dlu_...): a calibration is then checked
	// for both sets.
	DoubleSymbols bool
	// BLASSuffixed says that a StarPU build appends its BLAS's suffix to
	// the model symbols (generation.BLASSuffixes).
	BLASSuffixed bool
	// Renames pairs the ends of StarPU 1.3's and 1.4's symbols of one
	// kernel ({"chol_model_11", "chol_model_potrf"}): a recorded symbol
	// ending in one is also looked up under the other.
	Renames [][2]string
	// KernelOf names the kernel of a model symbol (BLAS suffix trimmed)
	// of either generation and any precision; ok is false for a symbol of
	// another application.
	KernelOf func(symbol string) (kernel string, ok bool)
	// ElemBytes is the element size a symbol implies (4 for float, 8 for
	// double); ok is false when the symbol does not say.
	ElemBytes func(symbol string) (bytes int64, ok bool)
	// KernelFlops is the flop count of one task of a kernel on n×n tiles.
	KernelFlops map[string]func(n float64) float64
	// OneGraph says the application's graph and model names are the
	// same under both StarPU generations (Chameleon's QR): no generation
	// is detected, 1.4 is taken.
	OneGraph bool
	// SyncGPU lists the kernels whose GPU implementation is synchronous
	// (their codelet lacks STARPU_CUDA_ASYNC): a GPU driver waits on them.
	SyncGPU []string
	// Size counts the tasks, handles and task buffers of the graph of nb
	// tiles per side, without building it.
	Size func(nb int64) (tasks, handles, buffers int64)
	// Build builds the graph for o, already checked, with nb tiles per
	// side.
	Build func(o Options, nb int) (*graph.Graph, error)
}

// apps is the registry, in the order of Names: the built-in applications,
// then those Register added.
var apps = []*App{
	&cholesky,
	&lu,
	&qrApp,
}

// Register adds an application (a name already registered, in any case,
// is replaced). Not safe for concurrent use: register from init or main.
func Register(a *App) {
	for i, b := range apps {
		if strings.EqualFold(a.Name, b.Name) {
			apps[i] = a
			return
		}
	}
	apps = append(apps, a)
}

// Lookup finds an application by name (case-insensitive).
func Lookup(name string) (*App, bool) {
	for _, a := range apps {
		if strings.EqualFold(a.Name, name) {
			return a, true
		}
	}
	return nil, false
}

// All lists the registered applications.
func All() []*App { return slices.Clone(apps) }

// Names lists the registered applications' names.
func Names() []string {
	names := make([]string, len(apps))
	for i, a := range apps {
		names[i] = a.Name
	}
	return names
}

func lookup(name string) (*App, error) {
	if a, ok := Lookup(name); ok {
		return a, nil
	}
	return nil, fmt.Errorf("models: unknown application %q (want %s)", name, strings.Join(Names(), " or "))
}

// New builds the graph of the application app (case-insensitive).
func New(app string, o Options) (*graph.Graph, error) {
	a, err := lookup(app)
	if err != nil {
		return nil, err
	}
	nb, err := o.validate()
	if err != nil {
		return nil, err
	}
	return a.Build(o, nb)
}

// Size is the size of the graph New(app, o) builds, computed without
// building it: its tasks, handles and task buffers (each an access to a
// handle). It checks o as New does.
func Size(app string, o Options) (tasks, handles, buffers int64, err error) {
	n, err := o.validate()
	if err != nil {
		return 0, 0, 0, err
	}
	a, err := lookup(app)
	if err != nil {
		return 0, 0, 0, err
	}
	nb := int64(n)
	if nb > 1<<20 { // nb³ would overflow: beyond any budget anyway
		return math.MaxInt64, nb * nb, math.MaxInt64, nil
	}
	tasks, handles, buffers = a.Size(nb)
	return tasks, handles, buffers, nil
}

// Resolve decides which StarPU generation's graph the application runs
// with on a calibration and under which model symbols (generation.Resolve
// with the application's kernels).
func (a *App) Resolve(double bool, want generation.Gen, status func(string) generation.Status) (*generation.Resolution, error) {
	r, err := generation.Resolve(a.Name, a.Kernels(generation.V14, double), a.Kernels(generation.V13, double), a.BLASSuffixed, want, status)
	if err == nil && a.OneGraph && want == generation.Auto {
		r.Why = "one graph for both StarPU generations: " + a.Name + "'s model names are the same"
	}
	return r, err
}

// SymbolSets are the distinct model-symbol sets of the application in
// generation g: one per precision that names its models apart.
func (a *App) SymbolSets(g generation.Gen) [][]generation.KernelSymbol {
	sets := [][]generation.KernelSymbol{a.Kernels(g, false)}
	if a.DoubleSymbols {
		sets = append(sets, a.Kernels(g, true))
	}
	return sets
}

// kernelOf finds the application and kernel of a model symbol, BLAS
// suffix trimmed.
func kernelOf(symbol string) (*App, string, bool) {
	sym := generation.TrimBLAS(symbol)
	for _, a := range apps {
		if a.KernelOf == nil {
			continue
		}
		if k, ok := a.KernelOf(sym); ok {
			return a, k, true
		}
	}
	return nil, "", false
}

// KernelFlops is the flop count of one task of a model symbol on n×n
// tiles, from the formulas the graphs use: either StarPU generation's
// names, any precision letter, with or without a BLAS suffix. ok is false
// for a symbol of no registered application.
func KernelFlops(symbol string, n float64) (flops float64, ok bool) {
	a, k, ok := kernelOf(symbol)
	if !ok {
		return 0, false
	}
	f, ok := a.KernelFlops[k]
	if !ok {
		return 0, false
	}
	return f(n), true
}

// SymbolElemBytes is the element size a model symbol implies (8 for
// StarPU's double LU, 4 for its float LU and for Cholesky).
func SymbolElemBytes(symbol string) (int64, bool) {
	a, _, ok := kernelOf(symbol)
	if !ok || a.ElemBytes == nil {
		return 0, false
	}
	return a.ElemBytes(generation.TrimBLAS(symbol))
}

// SyncGPUModel says whether a model symbol (either generation's name, any
// BLAS suffix) is a kernel whose GPU implementation is synchronous.
func SyncGPUModel(symbol string) bool {
	a, k, ok := kernelOf(symbol)
	return ok && slices.Contains(a.SyncGPU, k)
}

// ResolveModel finds a calibration's name for a recorded model symbol (a
// trace's Model field): the symbol itself, else its other generation's
// name, each with the recorded BLAS suffix, without, or with another one
// (generation.ResolveModel with every application's renames). Without
// has, the symbol is kept.
func ResolveModel(symbol string, has func(string) bool) (string, bool) {
	var renames [][2]string
	for _, a := range apps {
		renames = append(renames, a.Renames...)
	}
	return generation.ResolveModel(symbol, renames, has)
}

// kernelSuffixes are the symbol endings of one kernel: its names in both
// generations, without precision prefix.
type kernelSuffixes struct {
	kernel   string
	suffixes []string
}

// suffixKernel finds the kernel whose symbol ends in one of its suffixes,
// the first in table order.
func suffixKernel(sym string, table []kernelSuffixes) (string, bool) {
	for _, k := range table {
		for _, s := range k.suffixes {
			if strings.HasSuffix(sym, s) {
				return k.kernel, true
			}
		}
	}
	return "", false
}
