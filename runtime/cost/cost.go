package cost

import (
	"math"
	"math/bits"

	"github.com/starsim/starsim/runtime/graph"
	"github.com/starsim/starsim/runtime/machine"
)

// Model is the cost model of one machine with the memory nodes a run uses
// (nodes[0] is RAM): what the scheduler predicts of a copy, and what a
// copy carries on the network. It is read-only once made.
type Model struct {
	nodes   []string
	predict [][]machine.Prediction // [src][dst]; zero: none
	// busGPUs[src][dst] is StarPU's GPU count of the bus (BusGPUs).
	busGPUs [][]int
	factor  bool
	direct  [][]bool // [src][dst]: a route joins them
	// pitch[src][dst] are the direction's 2D-copy models; routeLatS and
	// routeMinBps the route's latency (s) and narrowest bandwidth (B/s).
	pitch       [][][]machine.PitchModel
	routeLatS   [][]float64
	routeMinBps [][]float64
	// pair[src*len(nodes)+dst] is what PredictUS and FetchUS read of a
	// direction, flat: they are asked at every push, for every node.
	pair []pairCost
	// fetchMemo remembers FetchUS's recent answers, a pure function of
	// its arguments: a push asks it for each input on every node, and a
	// run's data mostly share one size and few sets of valid copies.
	// A Model is one simulation's, used by its goroutine only.
	fetchMemo [fetchMemoSize]fetchMemoEntry
}

// fetchMemoSize is the number of FetchUS answers remembered.
const (
	fetchMemoBits = 8
	fetchMemoSize = 1 << fetchMemoBits
)

// fetchMemoEntry is one remembered FetchUS answer; dst+1 is stored, so
// the zero entry matches no question.
type fetchMemoEntry struct {
	ready  uint64
	size   int64
	dst1   int
	answer float64
}

// pairCost is a direction's prediction terms: PredictUS's latency in µs
// (LatencyS·1e6), bandwidth and factor (1 without the StarPU factor), and
// whether a route joins the nodes.
type pairCost struct {
	latUS, bandwidthBps, factor float64
	direct                      bool
}

// New makes the cost model of m over nodes (memory node names, RAM first)
// with ngpus GPUs in use. starpuFactor reproduces StarPU's transfer
// prediction, which multiplies the bandwidth term by 2 × the bus's GPU
// count (see PredictUS).
func New(m *machine.Machine, nodes []string, ngpus int, starpuFactor bool) *Model {
	n := len(nodes)
	c := &Model{nodes: nodes, factor: starpuFactor}
	c.predict = make([][]machine.Prediction, n)
	c.direct = make([][]bool, n)
	c.pitch = make([][][]machine.PitchModel, n)
	c.routeLatS = make([][]float64, n)
	c.routeMinBps = make([][]float64, n)
	// The link a name denotes is the last of that id, as the network's
	// (it maps ids to links in order); the narrowest bandwidth is over
	// every link of that id.
	last := map[string]machine.Link{}
	for _, l := range m.Links {
		last[l.ID] = l
	}
	for i := range nodes {
		c.predict[i] = make([]machine.Prediction, n)
		c.direct[i] = make([]bool, n)
		c.pitch[i] = make([][]machine.PitchModel, n)
		c.routeLatS[i] = make([]float64, n)
		c.routeMinBps[i] = make([]float64, n)
		for j := range nodes {
			d := machine.Dir{Src: nodes[i], Dst: nodes[j]}
			c.predict[i][j] = m.Predict[d]
			names, ok := m.Routes[d]
			if i == j || !ok {
				continue
			}
			c.direct[i][j] = true
			lat, minBw := 0.0, math.Inf(1)
			for _, name := range names {
				lat += last[name].LatencyS
				for _, l := range m.Links {
					if l.ID == name {
						minBw = min(minBw, l.BandwidthBps)
					}
				}
			}
			c.routeLatS[i][j], c.routeMinBps[i][j] = lat, minBw
			if pm := m.Pitch[d]; len(pm) > 0 {
				c.pitch[i][j] = pm
			}
		}
	}
	c.busGPUs = BusGPUs(m.Routes, nodes, ngpus)
	c.pair = make([]pairCost, n*n)
	for i := range nodes {
		for j := range nodes {
			p := c.predict[i][j]
			factor := 1.0
			if c.factor {
				factor = 2 * float64(c.busGPUs[i][j])
			}
			c.pair[i*n+j] = pairCost{latUS: p.LatencyS * 1e6, bandwidthBps: p.BandwidthBps, factor: factor, direct: c.direct[i][j]}
		}
	}
	return c
}

// Direct reports whether a route joins src to dst (a device pair without
// one copies through RAM).
func (c *Model) Direct(src, dst int) bool { return c.direct[src][dst] }

// PredictUS is the scheduler's expected time of copying size bytes from
// src to dst (starpu_transfer_predict): latency + size/bandwidth, the
// second term multiplied by 2 × the bus's GPU count (BusGPUs) when the
// StarPU factor is on. 0 without a prediction.
func (c *Model) PredictUS(src, dst int, size int64) float64 {
	return c.pair[src*len(c.nodes)+dst].predictUS(size)
}

// predictUS is PredictUS of the pair's direction (the same operations:
// the factor 1 multiplies exactly).
func (p *pairCost) predictUS(size int64) float64 {
	if !(p.bandwidthBps > 0) {
		return 0
	}
	return p.latUS + float64(size)/p.bandwidthBps*1e6*p.factor
}

// FetchUS predicts the time to bring size bytes, valid on the nodes of the
// bit set ready, to dst (starpu_task_expected_data_transfer_time_for's
// per-buffer term): the cheapest valid source over a direct route, else
// the path through RAM; 0 when no source is valid.
func (c *Model) FetchUS(ready uint64, dst int, size int64) float64 {
	h := (ready ^ uint64(dst)<<58 ^ uint64(size)) * 0x9e3779b97f4a7c15
	e := &c.fetchMemo[h>>(64-fetchMemoBits)]
	if e.ready == ready && e.dst1 == dst+1 && e.size == size {
		return e.answer
	}
	us := c.fetchUS(ready, dst, size)
	*e = fetchMemoEntry{ready: ready, size: size, dst1: dst + 1, answer: us}
	return us
}

// fetchUS is FetchUS's computation.
func (c *Model) fetchUS(ready uint64, dst int, size int64) float64 {
	best := math.Inf(1)
	nn := len(c.nodes)
	for set := ready &^ (1 << uint(dst)); set != 0; set &= set - 1 {
		n := bits.TrailingZeros64(set)
		if p := &c.pair[n*nn+dst]; p.direct {
			best = min(best, p.predictUS(size))
		} else {
			best = min(best, c.pair[n*nn].predictUS(size)+c.pair[dst].predictUS(size))
		}
	}
	if math.IsInf(best, 1) {
		return 0
	}
	return best
}

// BestSource picks the node a copy of size bytes to dst comes from, among
// the valid ones of the bit set ready (StarPU's _starpu_select_src_node):
// the smallest predicted time over a direct route, else the first valid
// node (RAM first); ok is false when none is valid.
func (c *Model) BestSource(ready uint64, dst int, size int64) (int, bool) {
	best, bestT := -1, math.Inf(1)
	for set := ready &^ (1 << uint(dst)); set != 0; set &= set - 1 {
		n := bits.TrailingZeros64(set)
		if !c.direct[n][dst] {
			continue
		}
		if t := c.PredictUS(n, dst, size); t < bestT {
			best, bestT = n, t
		}
	}
	if best >= 0 {
		return best, true
	}
	if ready != 0 {
		return bits.TrailingZeros64(ready), true
	}
	return 0, false
}

// Payload is the bytes a copy of h (bytes bytes) from src to dst carries
// on its route so that, alone, it takes the time the direction's pitch
// model gives for h's pitch: the model's time minus the route latency,
// times the route's narrowest bandwidth. The copy still shares links
// fluidly with concurrent ones. Without a model (or a pitch of 0): the
// bytes themselves. (h is read only when the direction has a model.)
func (c *Model) Payload(src, dst int, h *graph.Handle, bytes float64) float64 {
	models := c.pitch[src][dst]
	if len(models) == 0 || h.PitchBytes == 0 {
		return bytes
	}
	t, ok := EvalPitch(models, bytes, float64(h.PitchBytes))
	if !ok {
		return bytes
	}
	p := (t - c.routeLatS[src][dst]) * c.routeMinBps[src][dst]
	if !(p > 0) {
		return 0
	}
	return p
}

// EvalPitch evaluates, at bytes, the model of the pitch range containing
// pitch, else of the nearest range (seconds); ok is false when no segment
// covers bytes.
func EvalPitch(models []machine.PitchModel, bytes, pitch float64) (float64, bool) {
	best, bestD := -1, math.Inf(1)
	for i, m := range models {
		d := 0.0
		if pitch < m.PitchLoBytes {
			d = m.PitchLoBytes - pitch
		} else if pitch > m.PitchHiBytes {
			d = pitch - m.PitchHiBytes
		}
		if d < bestD {
			best, bestD = i, d
		}
	}
	if best < 0 {
		return 0, false
	}
	for _, seg := range models[best].Segments {
		if bytes >= seg.LoBytes && bytes < seg.HiBytes {
			return seg.InterceptS + seg.SlopeSPerByte*bytes, true
		}
	}
	return 0, false
}
