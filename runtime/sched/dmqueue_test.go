package sched

import (
	"math/rand"
	"testing"

	"github.com/starsim/starsim/runtime/machine"
	"github.com/starsim/starsim/runtime/memory"
)

// readyIndexRef is the ready-first scan in its plain form: every queued
// task of priority >= the head's, in order, its key read as readyIndex
// reads it; the lexicographic minimum, ties to the earlier; the scan
// stops after a task with everything valid and allocated.
func readyIndexRef(q []dmEntry, node int) int {
	best := 0
	var b [3]int64
	for i := range q {
		e := &q[i]
		if e.prio < q[0].prio {
			break
		}
		nr, nl, na := e.nonReadyBytes(node)
		if i == 0 || nr < b[0] || (nr == b[0] && (nl < b[1] || (nl == b[1] && na < b[2]))) {
			best, b = i, [3]int64{nr, nl, na}
		}
		if nr == 0 && na == 0 {
			break
		}
	}
	return best
}

// readyIndex picks the task the plain scan picks, ties and priorities
// included, on random queues: keys kept, stale (a cell changed since) or
// never computed, tasks without cells, few sizes so that keys tie.
func TestReadyIndexMatchesScan(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	d := &dmda{}
	w := &machine.Worker{}
	noBufs := &Task{}
	for trial := 0; trial < 20000; trial++ {
		cells := make([]memory.Cell, 1+rng.Intn(8))
		stamp := uint64(1)
		set := func(c *memory.Cell) {
			c.State = uint64(rng.Intn(3))<<memory.CellSizeShift | uint64(rng.Intn(8))
			c.Stamp = stamp
			stamp++
		}
		for i := range cells {
			set(&cells[i])
		}
		q := make([]dmEntry, 1+rng.Intn(40))
		prio := int32(rng.Intn(3))
		for i := range q {
			e := &q[i]
			if rng.Intn(3) == 0 { // unsorted queues mix priorities
				e.prio = int32(rng.Intn(3))
			} else {
				e.prio = prio
			}
			if rng.Intn(30) == 0 {
				e.t, e.nb = noBufs, -1 // no cells: NonReadyBytes of no buffers
				continue
			}
			e.c = [3]*memory.Cell{&noData, &noData, &noData}
			e.nb = int8(rng.Intn(4))
			for k := 0; k < int(e.nb); k++ {
				e.c[k] = &cells[rng.Intn(len(cells))]
				if rng.Intn(2) == 0 {
					e.reads |= 1 << k
				}
			}
			if rng.Intn(4) != 0 {
				e.keyFromCells() // else never computed (stamp 0)
			}
		}
		for n := rng.Intn(4); n > 0; n-- { // cells changed since
			set(&cells[rng.Intn(len(cells))])
		}
		ref := append([]dmEntry(nil), q...)
		want := readyIndexRef(ref, w.Node)
		if got := d.readyIndex(q, w); got != want {
			t.Fatalf("trial %d: readyIndex %d, the scan %d", trial, got, want)
		}
	}
}
