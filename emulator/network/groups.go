package network

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
