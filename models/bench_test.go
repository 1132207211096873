package models

import (
	"testing"

	"github.com/starsim/starsim/runtime/graph"
)

// BenchmarkCholesky76800 generates the N=76800, block 960 Cholesky graph
// (nb = 80: 88 560 tasks, 3 240 handles).
func BenchmarkCholesky76800(b *testing.B) {
	o := Options{N: 76800, Block: 960, Prio: graph.UnboundedPrio}
	b.ReportAllocs()
	for b.Loop() {
		g, err := New("cholesky", o)
		if err != nil || len(g.Tasks) != 88560 {
			b.Fatalf("%v, %d tasks", err, len(g.Tasks))
		}
	}
}

// BenchmarkLU76800 is the LU counterpart (173 880 tasks, 6 400 handles).
func BenchmarkLU76800(b *testing.B) {
	o := Options{N: 76800, Block: 960}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := New("lu", o); err != nil {
			b.Fatal(err)
		}
	}
}
