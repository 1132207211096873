package network

import (
	"fmt"
	"math"

	"github.com/starsim/starsim/emulator"
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

// Options selects the sharing model.
type Options struct {
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

	active    flowHeap        // flows in their sharing phase, by target
	rateBps   float64         // current rate of each active flow
	sent      float64         // bytes each active flow has sent since the base (see advance)
	lastS     float64         // time sent refers to
	done      *emulator.Timer // the head flow's completion
	dirty     bool
	visit     uint64
	solverIdx int
}

// LatencyS is the sum of the route's link latencies, in seconds.
func (r *Route) LatencyS() float64 { return r.latencyS }

// Links returns the route's links in order (shared; do not modify).
func (r *Route) Links() []LinkID { return r.links }

// flow is one transfer of bytes along a route.
type flow struct {
	route *Route
	bytes float64
	idx   int // in Network.flows
	// target is the route's sent counter at which the flow is done: a
	// flow's remaining bytes are target - route.sent, so advancing every
	// active flow of a route is O(1).
	target float64
	seq    uint64 // issue order: breaks ties between equal flows
	onDone func(int)
	tag    int
}

// Network is a fluid network model: concurrent flows share link bandwidth by
// weighted max-min fairness, recomputed whenever a flow starts sharing or
// finishes (SimGrid's CM02 model as StarPU configures it; see the package
// doc).
type Network struct {
	eng     *emulator.Engine
	opts    Options
	routes  []*Route
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
	solveCall, activateCall, routeDoneCall func(int)
	finished                               []*flow // scratch of routeDone
	flows                                  []*flow // every flow made, by idx
	free                                   []int   // flows completed, for reuse

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
	solvedSmall map[[2]uint64][]float64
	// smallCache holds solvedSmall's entries last used, direct-mapped by
	// key: a run repeats a few components, and a map lookup (hash and
	// probe) costs several times a slot's.
	smallCache [1 << smallCacheBits]smallSolved
	key        []byte
	compL      []LinkID
	elemBuf    []maxmin.Elem

	nsolves uint64
	nactive int
	// nbusy counts the routes with active flows; compLReady says that the
	// search gives compL (collectLinks) in the solve under way.
	nbusy      int
	compLReady bool
	nflows     uint64
}

// NewNetwork returns an empty network driven by eng.
func New(eng *emulator.Engine, opts Options) *Network {
	n := &Network{eng: eng, opts: opts, unused: -1}
	n.solveCall = func(int) { n.solve() }
	n.activateCall = func(i int) { n.activate(n.flows[i]) }
	n.routeDoneCall = func(id int) { n.routeDone(n.routes[id]) }
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

// LinkBytes is the number of bytes that have crossed link id so far, counting
// completed flows only (a link listed twice in a route counts twice).
func (n *Network) LinkBytes(id LinkID) float64 { return n.links[id].bytes }

// NewRoute builds a route over links, in order. A link may appear several
// times; it then counts several times for latency and bandwidth.
func (n *Network) NewRoute(links []LinkID) (*Route, error) {
	r := &Route{id: n.nroutes, links: append([]LinkID(nil), links...)}
	r.done = n.eng.NewTimer(n.routeDoneCall, r.id)
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
	n.routes = append(n.routes, r)
	return r, nil
}

// Send issues a flow of bytes (>= 0) on route r now; onDone(tag) runs at
// its completion time (onDone may be nil). The flow takes no bandwidth
// during its latency phase [now, now+latency); then it shares bandwidth
// until its bytes are sent. Callers bind onDone once and pass what varies
// as tag: sending allocates nothing, the flows being recycled.
func (n *Network) Send(r *Route, bytes float64, onDone func(tag int), tag int) {
	if !(bytes >= 0) || math.IsInf(bytes, 0) {
		panic(fmt.Sprintf("network: flow of %v bytes", bytes))
	}
	var f *flow
	if k := len(n.free); k > 0 {
		f = n.flows[n.free[k-1]]
		n.free = n.free[:k-1]
	} else {
		f = &flow{idx: len(n.flows)}
		n.flows = append(n.flows, f)
	}
	*f = flow{route: r, bytes: bytes, idx: f.idx, seq: n.nflows, onDone: onDone, tag: tag}
	n.nflows++
	// Activation is an event even at zero latency, so onDone never runs
	// inside Send.
	n.eng.Post(r.latencyS, n.activateCall, f.idx)
}

func (n *Network) activate(f *flow) {
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

func (n *Network) complete(f *flow) {
	for _, u := range f.route.uses {
		n.links[u.link].bytes += f.bytes * float64(u.count)
	}
	onDone, tag := f.onDone, f.tag
	*f = flow{idx: f.idx}
	n.free = append(n.free, f.idx)
	if onDone != nil {
		onDone(tag)
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

func (r *Route) remaining(f *flow) float64 { return max(f.target-r.sent, 0) }

func (n *Network) markDirty(r *Route) {
	if !r.dirty {
		r.dirty = true
		n.dirty = append(n.dirty, r)
	}
	// Solve once per instant, after every change queued for this instant:
	// equal-time events run in scheduling order, so this one runs last.
	if !n.solvePending {
		n.solvePending = true
		n.eng.Post(0, n.solveCall, 0)
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

// Stats returns the number of component solves so far.
func (n *Network) Stats() (solves uint64) { return n.nsolves }
