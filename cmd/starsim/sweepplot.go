package main

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/starsim/starsim/internal/plot"
	"github.com/starsim/starsim/internal/sweep"
)

// A sweep figure's dimensions, in the order they are considered: the base
// machine, the what-ifs, the application, scheduler, block and N.
const (
	dimMachine = iota
	dimGPUs
	dimPCI
	dimMem
	dimGPUFrom
	dimApp
	dimSched
	dimBlock
	dimN
	numDims
)

// sweepCoord is a row's value along each dimension: a label, and a number
// for the numeric ones.
type sweepCoord struct {
	label [numDims]string
	num   [numDims]float64
	has   [numDims]bool
	// Worker counts the run used (StarPU's defaults resolved when the
	// machine is known).
	ncpu, ngpu int
}

// whatIfDims maps a what-if kind to its dimension.
var whatIfDims = map[string]int{"gpus": dimGPUs, "pci-bw-scale": dimPCI, "gpu-mem": dimMem, "gpu-from": dimGPUFrom}

// coordOf places a row.
func coordOf(r sweep.Row, m *sweep.Machine) sweepCoord {
	var c sweepCoord
	set := func(d int, label string, num float64) {
		c.label[d], c.num[d], c.has[d] = label, num, true
	}
	base := r.Machine
	if m != nil && m.Base != "" {
		base = m.Base
	}
	set(dimMachine, base, 0)
	if m != nil {
		for _, w := range m.WhatIfs {
			switch d := whatIfDims[w.Kind]; d {
			case dimGPUs:
				set(d, strconv.Itoa(int(w.Value))+" GPUs", w.Value)
			case dimPCI:
				set(d, "PCI ×"+strconv.FormatFloat(w.Value, 'g', -1, 64), w.Value)
			case dimMem:
				set(d, strconv.FormatFloat(w.Value/(1<<20), 'f', 0, 64)+" MiB GPUs", w.Value/(1<<20))
			case dimGPUFrom:
				set(d, "GPU of "+w.Text, 0)
			}
		}
	}
	set(dimApp, r.App, 0)
	set(dimSched, r.Sched, 0)
	set(dimBlock, "block "+strconv.Itoa(r.Block), float64(r.Block))
	set(dimN, "N="+strconv.Itoa(r.N), float64(r.N))
	c.ngpu, c.ncpu = r.NCUDA, r.NCPU
	if m != nil && m.File != nil {
		gpus := 0
		for _, d := range m.File.Machine.Devices {
			if d.Kind == "cuda" {
				gpus++
			}
		}
		if c.ngpu < 0 {
			c.ngpu = gpus
		}
		if c.ncpu < 0 {
			c.ncpu = max(0, m.File.Machine.CPUCores-c.ngpu)
		}
	}
	return c
}

// sweepAxes are the roles of a figure's dimensions.
type sweepAxes struct {
	x      int
	panels []int // one panel per combination of their values
	series []int // one series per combination of their values
	title  []int // constant: said once, in the title
}

// chooseAxes: X is the first what-if (GPUs, PCI bandwidth, GPU memory)
// that takes several values, else N. With a what-if on X, each other
// numeric dimension that varies (what-ifs, N) gets a panel per value;
// the other varying dimensions (machine, GPU swapped in, app, scheduler,
// block) tell the series apart.
func chooseAxes(cs []sweepCoord) sweepAxes {
	varies := func(d int) bool {
		for _, c := range cs[1:] {
			if c.label[d] != cs[0].label[d] {
				return true
			}
		}
		return false
	}
	ax := sweepAxes{x: dimN}
	for _, d := range []int{dimGPUs, dimPCI, dimMem} {
		if varies(d) {
			ax.x = d
			break
		}
	}
	for d := 0; d < numDims; d++ {
		switch {
		case d == ax.x:
		case !varies(d):
			ax.title = append(ax.title, d)
		case ax.x != dimN && (d == dimGPUs || d == dimPCI || d == dimMem || d == dimN):
			ax.panels = append(ax.panels, d)
		default:
			ax.series = append(ax.series, d)
		}
	}
	return ax
}

var sweepXLabels = [numDims]string{dimGPUs: "GPUs (what-if --gpus)", dimPCI: "PCI bandwidth scale (what-if --pci-bw-scale, ×)",
	dimMem: "GPU memory (what-if --gpu-mem, MiB)", dimN: "matrix order N"}

// plotSweep draws a sweep's GFlop/s (or, perPrice, its GFlop/s per 1000
// units of currency): against N, one curve per configuration, or — when a
// what-if takes several values — against that quantity, one panel per
// value of each other varying quantity. The title says what all runs
// share: machine, application, block, precision, scheduler, CPU and GPU
// worker counts. It returns the bytes of path's file (PNG or SVG by its
// extension), written by the caller with the sweep's other outputs.
func plotSweep(plan *sweep.Plan, rows []sweep.Row, path string, perPrice bool, currency string) ([]byte, error) {
	if len(rows) == 0 {
		return nil, fmt.Errorf("no run to plot")
	}
	machines := map[string]*sweep.Machine{}
	for i := range plan.Machines {
		machines[plan.Machines[i].Label] = &plan.Machines[i]
	}
	cs := make([]sweepCoord, len(rows))
	for i, r := range rows {
		cs[i] = coordOf(r, machines[r.Machine])
	}
	ax := chooseAxes(cs)
	prec := "float"
	if plan.Double {
		prec = "double"
	}

	// Title: the shared dimensions, the precision, the worker counts (a
	// range when they vary).
	var parts []string
	head := ""
	for _, d := range ax.title {
		switch {
		case !cs[0].has[d]:
		case d == dimMachine:
			head = cs[0].label[d]
		case d == dimN && ax.x != dimN:
			parts = append(parts, cs[0].label[d])
		case d != dimN:
			parts = append(parts, cs[0].label[d])
		}
	}
	parts = append(parts, prec)
	span := func(v func(c sweepCoord) int) string {
		lo, hi := v(cs[0]), v(cs[0])
		for _, c := range cs[1:] {
			lo, hi = min(lo, v(c)), max(hi, v(c))
		}
		if lo == hi {
			return strconv.Itoa(lo)
		}
		return strconv.Itoa(lo) + "–" + strconv.Itoa(hi)
	}
	parts = append(parts, span(func(c sweepCoord) int { return c.ncpu })+" CPU + "+
		span(func(c sweepCoord) int { return c.ngpu })+" GPU workers")
	title := strings.Join(parts, ", ")
	if head != "" {
		title = head + ": " + title
	}
	ylabel := "GFlop/s"
	if perPrice {
		ylabel = "GFlop/s per 1000 " + currency
		title += " — per price"
	}
	key := func(c sweepCoord, dims []int) string {
		var ks []string
		for _, d := range dims {
			if c.has[d] {
				ks = append(ks, c.label[d])
			}
		}
		return strings.Join(ks, ", ")
	}

	// Points, grouped by panel then series, in the rows' order.
	type group struct {
		name string
		x, y []float64
	}
	type panel struct {
		title  string
		series []*group
		by     map[string]*group
	}
	var panels []*panel
	byPanel := map[string]*panel{}
	for i, r := range rows {
		c := cs[i]
		pk := key(c, ax.panels)
		p := byPanel[pk]
		if p == nil {
			p = &panel{title: pk, by: map[string]*group{}}
			byPanel[pk] = p
			panels = append(panels, p)
		}
		sk := key(c, ax.series)
		if sk == "" {
			sk = "prediction"
		}
		g := p.by[sk]
		if g == nil {
			g = &group{name: sk}
			p.by[sk] = g
			p.series = append(p.series, g)
		}
		y := r.GFlops
		if perPrice {
			y = 1000 * r.GFlopsPerPrice()
		}
		g.x, g.y = append(g.x, c.num[ax.x]), append(g.y, y)
	}
	toSeries := func(g *group) plot.Series {
		idx := make([]int, len(g.x))
		for i := range idx {
			idx[i] = i
		}
		sort.SliceStable(idx, func(a, b int) bool { return g.x[idx[a]] < g.x[idx[b]] })
		s := plot.Series{Name: g.name}
		for _, i := range idx {
			s.X, s.Y = append(s.X, g.x[i]), append(s.Y, g.y[i])
		}
		return s
	}
	if len(ax.panels) == 0 {
		fig := plot.Figure{Title: title, XLabel: sweepXLabels[ax.x], YLabel: ylabel}
		for _, g := range panels[0].series {
			fig.Series = append(fig.Series, toSeries(g))
		}
		return plot.Encode(fig, path)
	}
	grid := plot.Grid{Title: title, XLabel: sweepXLabels[ax.x], YLabel: ylabel}
	for _, p := range panels {
		f := plot.Figure{Title: p.title}
		for _, g := range p.series {
			f.Series = append(f.Series, toSeries(g))
		}
		grid.Panels = append(grid.Panels, f)
	}
	return plot.EncodeGrid(grid, path)
}
