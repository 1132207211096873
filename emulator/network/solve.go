package network

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/starsim/starsim/emulator/maxmin"
)

// solve re-solves the connected components (routes and links coupled by
// active flows) that contain a changed route.
func (n *Network) solve() {
	n.solvePending = false
	n.visit++
	byLinks := n.nbusy > linkSearchRoutes
	if n.opts.search != 0 {
		byLinks = n.opts.search == searchLinks
	}
	n.compLReady = byLinks
	for _, r0 := range n.dirty {
		r0.dirty = false
		if r0.visit == n.visit {
			continue
		}
		if byLinks {
			n.collectLinks(r0)
		} else {
			n.collect(r0)
		}
		n.solveComponent()
	}
	n.dirty = n.dirty[:0]
	n.compLReady = false
}

// collect gathers r0's routes into compR by breadth-first search: routes
// in the order they are reached, scanning each route's links in order, and
// each link's active routes in list order. It scans groups, not links: a
// group's links all lead to the same routes, and a route's groups outside
// its shared list lead to none that its earlier groups have not reached
// (see Route.shared). compR's order fixes the solver's variable and
// constraint order (see componentLinks) and the order in which
// solveComponent reschedules routes.
func (n *Network) collect(r0 *Route) {
	n.compR = append(n.compR[:0], r0)
	r0.visit = n.visit
	for i := 0; i < len(n.compR); i++ {
		r := n.compR[i]
		n.routeGroups(r)
		// A route that just lost its last flow still leads to the routes
		// that now share its links' freed bandwidth.
		for _, grp := range r.shared {
			if grp.visit == n.visit {
				continue
			}
			grp.visit = n.visit
			for _, r2 := range grp.routes {
				if r2.visit != n.visit {
					r2.visit = n.visit
					n.compR = append(n.compR, r2)
				}
			}
		}
	}
}

// linkSearchRoutes is the number of routes with flows above which solve
// searches components link by link (collectLinks): components are then
// large, their flow counts vary, and most solves miss the rates cache and
// need compL.
const linkSearchRoutes = 16

// collectLinks is collect searching link by link, which lists compL on the
// way; compR comes out the same (a link's active routes are its group's).
func (n *Network) collectLinks(r0 *Route) {
	n.compR = append(n.compR[:0], r0)
	n.compL = n.compL[:0]
	n.lvisit++
	r0.visit = n.visit
	for i := 0; i < len(n.compR); i++ {
		r := n.compR[i]
		for _, u := range r.uses {
			l := &n.links[u.link]
			if l.visit == n.lvisit {
				continue
			}
			l.visit = n.lvisit
			n.compL = append(n.compL, u.link)
			for _, r2 := range n.groups[l.group].routes {
				if r2.visit != n.visit {
					r2.visit = n.visit
					n.compR = append(n.compR, r2)
				}
			}
		}
	}
}

// componentLinks sets compL to the links of the component's routes, each
// once, in order of first use along compR: the order in which a
// breadth-first search over links would reach them. Only the solver and
// checkComponent need it. A link that an earlier component of the same
// solve crossed may be listed; no route with flows crosses it here, and a
// constraint without variables changes no rate.
func (n *Network) componentLinks() {
	if n.compLReady {
		return
	}
	n.lvisit++
	n.compL = n.compL[:0]
	for _, r := range n.compR {
		for _, u := range r.uses {
			if l := &n.links[u.link]; l.visit != n.lvisit {
				l.visit = n.lvisit
				n.compL = append(n.compL, u.link)
			}
		}
	}
}

func (n *Network) solveComponent() {
	n.nsolves++
	now := n.eng.NowS()
	// Routes that lost their last flow get rate 0; count the others.
	var solo *Route
	nact := 0
	for _, r := range n.compR {
		n.advance(r)
		if len(r.active) == 0 {
			r.rateBps = 0
			r.done.Stop()
			continue
		}
		nact++
		solo = r
	}
	// A lone route with flows (common: a busy bus often carries one
	// direction at a time) needs no constraint/variable tables: soloRate is
	// the solver's arithmetic for one variable. With no flows at all there is nothing to
	// solve.
	if nact == 1 && !n.opts.noSolo {
		if rate, ok := n.soloRate(solo, len(solo.active)); ok {
			solo.rateBps = rate / float64(len(solo.active))
		} else {
			n.solveMaxMin()
		}
	} else if nact > 0 {
		n.solveMaxMin()
	}
	for _, r := range n.compR {
		k := len(r.active)
		if k == 0 {
			continue
		}
		var at float64
		switch {
		case math.IsInf(r.rateBps, 1):
			at = now
		case r.rateBps > 0:
			at = now + r.remaining(r.active[0])/r.rateBps
		default:
			at = math.Inf(1)
		}
		if math.IsInf(at, 1) {
			r.done.Stop()
			continue
		}
		r.done.Set(at)
	}
	if n.opts.Check {
		if err := n.checkComponent(); err != nil {
			panic("network: invariant violated: " + err.Error())
		}
	}
}

// solveMaxMin sets the rate of every route of the component that has flows
// with maxmin.Solver: one constraint per link, one variable per route. A
// component solved before takes the rates the solver gave it then (see
// solvedKey): the same few configurations of a platform's routes recur
// throughout a run.
func (n *Network) solveMaxMin() {
	var rates []float64
	if sk, ok := n.smallKey(); ok {
		c := &n.smallCache[(sk[0]^sk[1]*0xbf58476d1ce4e5b9)*0x9e3779b97f4a7c15>>(64-smallCacheBits)]
		if c.ok && c.key == sk {
			rates = c.rates
		} else {
			var hit bool
			if rates, hit = n.solvedSmall[sk]; !hit {
				rates = n.solveFresh()
				if len(n.solvedSmall) < maxSolved {
					if n.solvedSmall == nil {
						n.solvedSmall = map[[2]uint64][]float64{}
					}
					kept := append([]float64(nil), rates...)
					n.solvedSmall[sk] = kept
					*c = smallSolved{sk, kept, true}
				}
			} else {
				*c = smallSolved{sk, rates, true}
			}
		}
	} else {
		n.solvedKey()
		var hit bool
		if rates, hit = n.solved[string(n.key)]; !hit {
			rates = n.solveFresh()
			if len(n.solved) < maxSolved {
				if n.solved == nil {
					n.solved = map[string][]float64{}
				}
				n.solved[string(n.key)] = append([]float64(nil), rates...)
			}
		}
	}
	i := 0
	for _, r := range n.compR {
		if k := len(r.active); k > 0 {
			r.solverIdx = i
			r.rateBps = rates[i] / float64(k)
			i++
		}
	}
}

// solveFresh runs the solver on the component and returns the rates it
// gives (n.rates, overwritten by the next solve).
func (n *Network) solveFresh() []float64 {
	n.componentLinks()
	n.solveTables()
	return n.rates
}

// maxSolved bounds the solutions solveMaxMin keeps.
const maxSolved = 1 << 14

// smallSolved is an entry of Network.smallCache: solvedSmall's rates for
// key (ok: set).
type smallSolved struct {
	key   [2]uint64
	rates []float64
	ok    bool
}

// smallCacheBits sizes Network.smallCache (1 << smallCacheBits entries).
const smallCacheBits = 12

// smallKey packs solvedKey's information for the usual component, of at
// most 8 routes with small ids and flow counts, into two integers: 16 bits
// a route, (id+1)<<8 | flow count, the first route lowest. It returns
// ok = false for a component that does not fit. (Components of 5 to 8
// routes are common on a 4-GPU machine: a string key's encoding and
// hashing cost several times this.)
func (n *Network) smallKey() (k [2]uint64, ok bool) {
	if len(n.compR) > 8 {
		return k, false
	}
	for i, r := range n.compR {
		if r.id >= 1<<8-1 || len(r.active) >= 1<<8 {
			return k, false
		}
		k[i/4] |= (uint64(r.id+1)<<8 | uint64(len(r.active))) << (16 * (i % 4))
	}
	return k, true
}

// solvedKey encodes into n.key everything the solver's input depends on:
// the component's routes in their order, and each route's flow count (the
// links follow from the routes, see componentLinks; capacities, sharing
// policies and penalties are fixed once added). Equal keys give equal
// tables, hence bit-identical rates.
func (n *Network) solvedKey() {
	b := n.key[:0]
	for _, r := range n.compR {
		b = binary.AppendUvarint(b, uint64(r.id))
		b = binary.AppendUvarint(b, uint64(len(r.active)))
	}
	n.key = b
}

// solveTables builds the solver's constraints and variables for the
// component and solves them into n.rates, in the order of the routes that
// have flows.
func (n *Network) solveTables() {
	n.cnsts = n.cnsts[:0]
	for i, li := range n.compL {
		l := &n.links[li]
		l.solverIdx = i
		n.cnsts = append(n.cnsts, maxmin.Constraint{Capacity: l.bandwidthBps, Fatpipe: l.sharing == Fatpipe})
	}
	n.vars = n.vars[:0]
	n.elemBuf = n.elemBuf[:0]
	for _, r := range n.compR {
		k := len(r.active)
		if k == 0 {
			continue
		}
		// k identical flows at level t each get t/penalty: one variable of
		// penalty penalty/k stands for all of them. On a SHARED link it
		// consumes count per unit; on a FATPIPE link each flow is bounded
		// alone, so the aggregate's coefficient is 1/k.
		start := len(n.elemBuf)
		for _, u := range r.uses {
			coef := float64(u.count)
			if n.links[u.link].sharing == Fatpipe {
				coef = 1 / float64(k)
			}
			n.elemBuf = append(n.elemBuf, maxmin.Elem{Cnst: n.links[u.link].solverIdx, Coef: coef})
		}
		n.vars = append(n.vars, maxmin.Variable{Penalty: r.penalty / float64(k), Elems: n.elemBuf[start:len(n.elemBuf):len(n.elemBuf)]})
	}
	if cap(n.rates) < len(n.vars) {
		n.rates = make([]float64, len(n.vars))
	}
	n.rates = n.rates[:len(n.vars)]
	n.solver.Solve(n.cnsts, n.vars, n.rates)
}

// soloRate is the rate maxmin.Solver gives the one variable of a component
// in which r alone has flows (k of them), computed with the solver's own
// floating-point operations so that it is bit-identical (outputs are
// compared byte for byte; TestSoloRateMatchesSolver checks it). With one
// variable and one elem per constraint (NewRoute merges repeated links into
// a count), the solver's usage of each constraint is coef/penalty (the SHARED
// sum 0+x and the FATPIPE max(0, x) are both x), every capacity is > 0
// (AddLink) and no coef is 0, so its first round fixes the variable at
// min_c(capacity_c/usage_c)/penalty, or leaves it at +Inf when every level
// is +Inf. It returns ok = false for a penalty that underflows to 0:
// solveComponent then leaves it to the solver, which rejects it as before.
func (n *Network) soloRate(r *Route, k int) (rate float64, ok bool) {
	if r.soloK == k {
		return r.soloBps, true
	}
	pen := r.penalty / float64(k)
	if !(pen > 0) {
		return 0, false
	}
	minLevel := math.Inf(1)
	for _, u := range r.uses {
		l := &n.links[u.link]
		coef := float64(u.count)
		if l.sharing == Fatpipe {
			coef = 1 / float64(k)
		}
		if lv := l.bandwidthBps / (coef / pen); lv < minLevel {
			minLevel = lv
		}
	}
	if math.IsInf(minLevel, 1) {
		// The solver never fixes the variable (its levels are all +Inf,
		// e.g. an infinite penalty): it keeps its initial +Inf, where
		// minLevel/pen could be NaN.
		rate = minLevel
	} else {
		rate = minLevel / pen
	}
	r.soloK, r.soloBps = k, rate
	return rate, true
}

// checkComponent verifies, for the component just solved: rates are >= 0; no
// link is above capacity; every route is limited by a saturated link on which
// it has the largest rate·penalty (weighted max-min optimality).
func (n *Network) checkComponent() error {
	const tol = 1e-9
	// solveComponent's fast paths neither list nor number the links.
	n.componentLinks()
	for i, li := range n.compL {
		n.links[li].solverIdx = i
	}
	load := make([]float64, len(n.compL))
	for _, r := range n.compR {
		k := float64(len(r.active))
		if k == 0 {
			continue
		}
		if !(r.rateBps >= 0) {
			return fmt.Errorf("route %d has rate %v", r.id, r.rateBps)
		}
		for _, u := range r.uses {
			i := n.links[u.link].solverIdx
			if n.links[u.link].sharing == Fatpipe {
				load[i] = max(load[i], r.rateBps)
			} else {
				load[i] += k * float64(u.count) * r.rateBps
			}
		}
	}
	for i, li := range n.compL {
		if bw := n.links[li].bandwidthBps; load[i] > bw*(1+tol) {
			return fmt.Errorf("link %q carries %.17g B/s > capacity %.17g", n.links[li].name, load[i], bw)
		}
	}
	for _, r := range n.compR {
		if len(r.active) == 0 {
			continue
		}
		limited := false
		for _, u := range r.uses {
			l := &n.links[u.link]
			if load[l.solverIdx] < l.bandwidthBps*(1-tol) {
				continue
			}
			top := true
			for _, r2 := range n.groups[l.group].routes {
				if r2.rateBps*r2.penalty > r.rateBps*r.penalty*(1+tol) {
					top = false
					break
				}
			}
			if top {
				limited = true
				break
			}
		}
		if !limited {
			return fmt.Errorf("route %d (rate %.17g B/s) is not limited by any saturated link", r.id, r.rateBps)
		}
	}
	return nil
}
