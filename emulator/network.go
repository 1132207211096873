package emulator

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/starsim/starsim/emulator/maxmin"
)

// Sharing is a link's bandwidth-sharing policy.
type Sharing uint8

const (
	// Shared links split their bandwidth among the flows crossing them.
	Shared Sharing = iota
	// Fatpipe links give every flow the full bandwidth.
	Fatpipe
)

// String returns SimGrid's name of the policy.
func (s Sharing) String() string {
	if s == Fatpipe {
		return "FATPIPE"
	}
	return "SHARED"
}

// LinkID names a link of a Network.
type LinkID int32

// NetworkOptions selects the sharing model.
type NetworkOptions struct {
	// PlainMaxMin shares bandwidth by unweighted max-min fairness instead of
	// SimGrid's weighting by 1/route-latency. It exists for comparison only:
	// it mispredicts concurrent transfers on real platforms.
	PlainMaxMin bool
	// Check verifies the solution's invariants after every solve and panics
	// on a violation (a bug). Tests turn it on.
	Check bool
	// noSolo makes every solve use maxmin.Solver, skipping soloRate: tests
	// compare the two.
	noSolo bool
	// search forces solve's component search: searchLinks (collectLinks)
	// or searchGroups (collect); zero chooses by load. Tests compare them.
	search int8
}

const (
	searchLinks int8 = 1 + iota
	searchGroups
)

type link struct {
	name         string
	bandwidthBps float64
	latencyS     float64
	sharing      Sharing
	group        int32   // its linkGroup
	bytes        float64 // bytes carried so far (each crossing counts)
	visit        uint64
	solverIdx    int
}

// linkGroup gathers the links that the very same routes cross. Every route
// joins and leaves the active lists of all its links at once, so such links
// always have identical lists, in identical order: the group keeps one list
// for them all, and collect scans it once instead of once per link (a
// StarPU route crosses 7 to 13 links, most of them shared with the same
// few routes).
type linkGroup struct {
	routes   []*Route // routes with active flows crossing the group's links
	nlinks   int
	crossers []uint64 // bit set of the ids of the routes crossing the group
	visit    uint64
}

type linkUse struct {
	link  LinkID
	count int // times the route lists the link
}

// Route is a fixed sequence of links from one endpoint to another. The
// flows of one route always share bandwidth equally (same links, same
// latency), so the network solves one max-min variable per route.
type Route struct {
	id       int
	links    []LinkID
	uses     []linkUse
	latencyS float64
	penalty  float64

	// groups are the linkGroups of the route's links, in order of first
	// use, as of groupsVer; shared are those of them through which collect
	// may reach other routes: each has a crosser (other than the route) that
	// crosses none of the groups before it. The others' routes, if active,
	// are reached before them.
	groups    []*linkGroup
	shared    []*linkGroup
	groupsVer uint64
	// soloBps memoizes soloRate(r, soloK) (soloK 0: none).
	soloK   int
	soloBps float64

	active    flowHeap // flows in their sharing phase, by target
	rateBps   float64  // current rate of each active flow
	sent      float64  // bytes each active flow has sent since the base (see advance)
	lastS     float64  // time sent refers to
	doneEv    *Event
	dirty     bool
	visit     uint64
	solverIdx int
}

// LatencyS is the sum of the route's link latencies, in seconds.
func (r *Route) LatencyS() float64 { return r.latencyS }

// Links returns the route's links in order (shared; do not modify).
func (r *Route) Links() []LinkID { return r.links }

// Flow is one transfer of Bytes along a route.
type Flow struct {
	route   *Route
	bytes   float64
	startS  float64
	finishS float64
	// target is the route's sent counter at which the flow is done: a
	// flow's remaining bytes are target - route.sent, so advancing every
	// active flow of a route is O(1).
	target float64
	seq    uint64 // issue order: breaks ties between equal flows
	done   bool
	pooled bool // sent by SendRecycled: reused once onDone has returned
	onDone func(*Flow)
	tag    any
}

// Tag is the value given to SendTagged (nil for Send).
func (f *Flow) Tag() any { return f.tag }

// Bytes is the flow's payload.
func (f *Flow) Bytes() float64 { return f.bytes }

// StartS is the simulated time at which the flow was issued.
func (f *Flow) StartS() float64 { return f.startS }

// FinishS is the completion time (NaN until Done).
func (f *Flow) FinishS() float64 { return f.finishS }

// Done reports whether the flow has completed.
func (f *Flow) Done() bool { return f.done }

// Route is the route the flow travels.
func (f *Flow) Route() *Route { return f.route }

// Network is a fluid network model: concurrent flows share link bandwidth by
// weighted max-min fairness, recomputed whenever a flow starts sharing or
// finishes (see ../shared/docs/fluid-network.md for the exact semantics, those
// of SimGrid's CM02 model as StarPU configures it).
type Network struct {
	eng     *Engine
	opts    NetworkOptions
	links   []link
	nroutes int
	// groups partition the links (see linkGroup); unused is the group of
	// the links no route crosses yet (-1: none); groupsVer counts splits.
	groups    []*linkGroup
	unused    int32
	groupsVer uint64
	groupCnt  []int    // scratch of splitGroups
	touched   []int32  // scratch of splitGroups
	reached   []uint64 // scratch of routeGroups

	dirty        []*Route
	solvePending bool   // a solve is queued for the current instant
	visit        uint64 // marks routes and groups reached in a solve
	lvisit       uint64 // marks links listed by componentLinks

	// Event actions bound once, so hot paths post without allocating.
	solveCall    func(int)
	activateCall func(any)
	finished     []*Flow // scratch of routeDone
	free         []*Flow // completed flows of SendRecycled, for reuse

	// Scratch for solves.
	solver maxmin.Solver
	cnsts  []maxmin.Constraint
	vars   []maxmin.Variable
	rates  []float64
	compR  []*Route
	// solved maps a component (solvedKey, kept in key) to the rates the
	// solver gave it; solvedSmall does for components of a few routes,
	// keyed without encoding (smallKey).
	solved      map[string][]float64
	solvedSmall map[uint64][]float64
	key         []byte
	compL       []LinkID
	elemBuf     []maxmin.Elem

	nsolves uint64
	nactive int
	// nbusy counts the routes with active flows; compLReady says that the
	// search gives compL (collectLinks) in the solve under way.
	nbusy      int
	compLReady bool
	nflows     uint64
}

// NewNetwork returns an empty network driven by eng.
func NewNetwork(eng *Engine, opts NetworkOptions) *Network {
	n := &Network{eng: eng, opts: opts, unused: -1}
	n.solveCall = func(int) { n.solve() }
	n.activateCall = func(f any) { n.activate(f.(*Flow)) }
	return n
}

// AddLink adds a link; bandwidth must be > 0 B/s and latency >= 0 s.
func (n *Network) AddLink(name string, bandwidthBps, latencyS float64, sharing Sharing) (LinkID, error) {
	if !(bandwidthBps > 0) || math.IsInf(bandwidthBps, 0) {
		return 0, fmt.Errorf("link %q: bandwidth must be a positive finite number of B/s, got %v", name, bandwidthBps)
	}
	if !(latencyS >= 0) || math.IsInf(latencyS, 0) {
		return 0, fmt.Errorf("link %q: latency must be a finite number of seconds >= 0, got %v", name, latencyS)
	}
	if n.unused < 0 {
		n.unused = int32(len(n.groups))
		n.groups = append(n.groups, &linkGroup{})
	}
	n.groups[n.unused].nlinks++
	n.links = append(n.links, link{name: name, bandwidthBps: bandwidthBps, latencyS: latencyS, sharing: sharing, group: n.unused})
	return LinkID(len(n.links) - 1), nil
}

// LinkName returns the name a link was added with.
func (n *Network) LinkName(id LinkID) string { return n.links[id].name }

// LinkBytes is the number of bytes that have crossed link id so far, counting
// completed flows only (a link listed twice in a route counts twice).
func (n *Network) LinkBytes(id LinkID) float64 { return n.links[id].bytes }

// NumLinks is the number of links.
func (n *Network) NumLinks() int { return len(n.links) }

// NewRoute builds a route over links, in order. A link may appear several
// times; it then counts several times for latency and bandwidth.
func (n *Network) NewRoute(links []LinkID) (*Route, error) {
	r := &Route{id: n.nroutes, links: append([]LinkID(nil), links...), doneEv: nil}
	n.nroutes++
	for _, l := range links {
		if int(l) < 0 || int(l) >= len(n.links) {
			return nil, fmt.Errorf("route: unknown link id %d", l)
		}
		r.latencyS += n.links[l].latencyS
		found := false
		for i := range r.uses {
			if r.uses[i].link == l {
				r.uses[i].count++
				found = true
			}
		}
		if !found {
			r.uses = append(r.uses, linkUse{link: l, count: 1})
		}
	}
	// SimGrid's sharing penalty is the route latency (weight-S = 0), except
	// that a route of latency exactly 0 gets penalty 1.
	r.penalty = r.latencyS
	if r.penalty == 0 || n.opts.PlainMaxMin {
		r.penalty = 1
	}
	n.splitGroups(r)
	return r, nil
}

// splitGroups refines the link groups for a new route r: a group that r
// crosses only in part splits in two, the part r crosses inheriting the
// group's active list (r has no flows yet).
func (n *Network) splitGroups(r *Route) {
	if cap(n.groupCnt) < len(n.groups) {
		n.groupCnt = make([]int, len(n.groups), 2*len(n.groups))
	}
	cnt := n.groupCnt[:len(n.groups)] // all 0
	n.touched = n.touched[:0]
	for _, u := range r.uses {
		g := n.links[u.link].group
		if cnt[g] == 0 {
			n.touched = append(n.touched, g)
		}
		cnt[g]++
	}
	for _, g := range n.touched {
		c := cnt[g]
		cnt[g] = 0
		if c == n.groups[g].nlinks && g != n.unused {
			n.groups[g].crossers = setBit(n.groups[g].crossers, r.id)
			continue
		}
		ng := int32(len(n.groups))
		n.groups = append(n.groups, &linkGroup{
			routes:   append([]*Route(nil), n.groups[g].routes...),
			nlinks:   c,
			crossers: setBit(append([]uint64(nil), n.groups[g].crossers...), r.id),
		})
		n.groups[g].nlinks -= c
		if g == n.unused && n.groups[g].nlinks == 0 {
			n.unused = -1
		}
		for _, v := range r.uses {
			if n.links[v.link].group == g {
				n.links[v.link].group = ng
			}
		}
	}
	n.groupsVer++
}

// routeGroups brings r.groups and r.shared up to date with the groups.
func (n *Network) routeGroups(r *Route) {
	if r.groupsVer != n.groupsVer {
		n.regroup(r)
	}
}

// regroup is routeGroups' work, when groups have split since r's lists.
func (n *Network) regroup(r *Route) {
	r.groups, r.shared = r.groups[:0], r.shared[:0]
	reached := setBit(n.reached[:0], r.id)
	for _, u := range r.uses {
		g := n.groups[n.links[u.link].group]
		seen := false
		for _, h := range r.groups {
			if h == g {
				seen = true
				break
			}
		}
		if seen {
			continue
		}
		r.groups = append(r.groups, g)
		more := false
		for i, w := range g.crossers {
			if i >= len(reached) {
				reached = append(reached, 0)
			}
			if w&^reached[i] != 0 {
				more = true
				reached[i] |= w
			}
		}
		if more {
			r.shared = append(r.shared, g)
		}
	}
	n.reached = reached
	r.groupsVer = n.groupsVer
}

// setBit adds i to the bit set s.
func setBit(s []uint64, i int) []uint64 {
	for len(s) <= i/64 {
		s = append(s, 0)
	}
	s[i/64] |= 1 << (i % 64)
	return s
}

// Send issues a flow of bytes (>= 0) on route r now; onDone (may be nil) runs
// at its completion time. The flow takes no bandwidth during its latency
// phase [now, now+latency); then it shares bandwidth until its bytes are sent.
func (n *Network) Send(r *Route, bytes float64, onDone func(*Flow)) *Flow {
	return n.SendTagged(r, bytes, onDone, nil)
}

// SendTagged is Send with a caller's value that onDone reads back with
// Flow.Tag: callers bind onDone once instead of a closure per flow.
func (n *Network) SendTagged(r *Route, bytes float64, onDone func(*Flow), tag any) *Flow {
	f := &Flow{}
	n.send(f, r, bytes, onDone, tag)
	return f
}

// SendRecycled is SendTagged for callers that keep no reference to the
// flow past onDone: the flow is then reused, sparing an allocation per
// flow.
func (n *Network) SendRecycled(r *Route, bytes float64, onDone func(*Flow), tag any) {
	var f *Flow
	if k := len(n.free); k > 0 {
		f = n.free[k-1]
		n.free[k-1] = nil
		n.free = n.free[:k-1]
	} else {
		f = &Flow{}
	}
	n.send(f, r, bytes, onDone, tag)
	f.pooled = true
}

// send issues f, a new or recycled flow.
func (n *Network) send(f *Flow, r *Route, bytes float64, onDone func(*Flow), tag any) {
	if !(bytes >= 0) || math.IsInf(bytes, 0) {
		panic(fmt.Sprintf("emulator: flow of %v bytes", bytes))
	}
	*f = Flow{route: r, bytes: bytes, startS: n.eng.NowS(), finishS: math.NaN(),
		seq: n.nflows, onDone: onDone, tag: tag}
	n.nflows++
	// Activation is an event even at zero latency, so onDone never runs
	// inside Send.
	n.eng.PostObjAfter(r.latencyS, n.activateCall, f)
}

func (n *Network) activate(f *Flow) {
	if f.bytes == 0 {
		n.complete(f)
		return
	}
	r := f.route
	n.advance(r)
	if len(r.active) == 0 {
		r.sent = 0
	} else if r.sent > rebaseFactor*f.bytes {
		n.rebase(r)
	}
	f.target = r.sent + f.bytes
	r.active.push(f)
	n.nactive++
	if len(r.active) == 1 {
		n.nbusy++
		n.routeGroups(r)
		for _, grp := range r.groups {
			grp.routes = append(grp.routes, r)
		}
	}
	n.markDirty(r)
}

func (n *Network) complete(f *Flow) {
	f.done = true
	f.finishS = n.eng.NowS()
	for _, u := range f.route.uses {
		n.links[u.link].bytes += f.bytes * float64(u.count)
	}
	if f.onDone != nil {
		f.onDone(f)
	}
	if f.pooled {
		*f = Flow{}
		n.free = append(n.free, f)
	}
}

// rebaseFactor bounds route.sent relative to a joining flow's bytes, so that
// target - sent keeps that flow's remaining bytes to ~1e-12 relative.
const rebaseFactor = 1e4

// advance brings r's sent counter to now at r's current rate: every active
// flow of the route has sent the same bytes, so they all advance at once.
func (n *Network) advance(r *Route) {
	now := n.eng.NowS()
	if dt := now - r.lastS; dt > 0 && len(r.active) > 0 && r.rateBps > 0 {
		r.sent += r.rateBps * dt
	}
	r.lastS = now
}

// rebase moves r's counter origin to now (O(active flows); rare).
func (n *Network) rebase(r *Route) {
	for _, f := range r.active {
		f.target -= r.sent
	}
	r.sent = 0
}

func (r *Route) remaining(f *Flow) float64 { return max(f.target-r.sent, 0) }

func (n *Network) markDirty(r *Route) {
	if !r.dirty {
		r.dirty = true
		n.dirty = append(n.dirty, r)
	}
	// Solve once per instant, after every change queued for this instant:
	// equal-time events run in scheduling order, so this one runs last.
	if !n.solvePending {
		n.solvePending = true
		n.eng.PostCall(n.eng.NowS(), n.solveCall, 0)
	}
}

// routeDone fires when the flow at the head of r's heap has sent its bytes.
func (n *Network) routeDone(r *Route) {
	n.advance(r)
	// The head has sent its bytes; flows of the route with exactly as many
	// bytes left finish with it, in issue order.
	f := r.active.pop()
	n.nactive--
	finished := append(n.finished[:0], f)
	for len(r.active) > 0 && r.active[0].target <= f.target {
		finished = append(finished, r.active.pop())
		n.nactive--
	}
	n.finished = finished[:0]
	if len(r.active) == 0 {
		r.rateBps = 0
		n.nbusy--
		n.routeGroups(r)
		for _, grp := range r.groups {
			for i, x := range grp.routes {
				if x == r {
					last := len(grp.routes) - 1
					grp.routes[i] = grp.routes[last]
					grp.routes[last] = nil
					grp.routes = grp.routes[:last]
					break
				}
			}
		}
	}
	n.markDirty(r)
	for _, g := range finished {
		n.complete(g)
	}
}

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
			if r.doneEv != nil {
				n.eng.Cancel(r.doneEv)
			}
			continue
		}
		nact++
		solo = r
	}
	// A lone route with flows (27 % of the solves of attila Cholesky 76800
	// dmda) needs no constraint/variable tables: soloRate is the solver's
	// arithmetic for one variable. With no flows at all there is nothing to
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
			if r.doneEv != nil {
				n.eng.Cancel(r.doneEv)
			}
			continue
		}
		if r.doneEv == nil {
			rr := r
			r.doneEv = n.eng.Schedule(at, func() { n.routeDone(rr) })
		} else {
			n.eng.Reschedule(r.doneEv, at)
		}
	}
	if n.opts.Check {
		if err := n.checkComponent(); err != nil {
			panic("emulator: network invariant violated: " + err.Error())
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
		var hit bool
		if rates, hit = n.solvedSmall[sk]; !hit {
			rates = n.solveFresh()
			if len(n.solvedSmall) < maxSolved {
				if n.solvedSmall == nil {
					n.solvedSmall = map[uint64][]float64{}
				}
				n.solvedSmall[sk] = append([]float64(nil), rates...)
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

// smallKey packs solvedKey's information for the usual component, of at
// most 4 routes with small ids and flow counts, into an integer: 16 bits a
// route, (id+1)<<8 | flow count, the first route lowest. It returns ok =
// false for a component that does not fit.
func (n *Network) smallKey() (k uint64, ok bool) {
	if len(n.compR) > 4 {
		return 0, false
	}
	for i, r := range n.compR {
		if r.id >= 1<<8-1 || len(r.active) >= 1<<8 {
			return 0, false
		}
		k |= (uint64(r.id+1)<<8 | uint64(len(r.active))) << (16 * i)
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

// Stats returns the number of component solves so far.
func (n *Network) Stats() (solves uint64) { return n.nsolves }

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

// flowHeap orders a route's active flows by target (remaining bytes), then
// issue order: a binary min-heap, typed (container/heap's interface calls
// cost more than the sifting of a route's few flows). Keys are unique, so
// the flows come out in the same order whatever the heap's layout.
type flowHeap []*Flow

func flowLess(a, b *Flow) bool {
	if a.target != b.target {
		return a.target < b.target
	}
	return a.seq < b.seq
}

func (h *flowHeap) push(f *Flow) {
	q := append(*h, f)
	i := len(q) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !flowLess(f, q[p]) {
			break
		}
		q[i] = q[p]
		i = p
	}
	q[i] = f
	*h = q
}

func (h *flowHeap) pop() *Flow {
	q := *h
	top := q[0]
	last := len(q) - 1
	f := q[last]
	q[last] = nil
	q = q[:last]
	*h = q
	if last == 0 {
		return top
	}
	i := 0
	for {
		l := 2*i + 1
		if l >= last {
			break
		}
		j := l
		if r := l + 1; r < last && flowLess(q[r], q[l]) {
			j = r
		}
		if !flowLess(q[j], f) {
			break
		}
		q[i] = q[j]
		i = j
	}
	q[i] = f
	return top
}
