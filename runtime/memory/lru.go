package memory

import (
	"fmt"
	"sort"
)

// LRU lists. A node keeps its allocated copies in two lists, least
// recently used first: main, and prot for copies protected by a pending
// task prefetch (prefetches never evict those, so their reclaims need not
// look at them). Stamps give one LRU order over both, which a fetch's
// reclaim follows, as StarPU's single mc_list.

type lruList struct {
	head, tail *Replica
	// drop indexes the list's copies that are invalid or valid on another
	// node (what a reclaim may drop without a write-back), sorted by
	// stamp. Removal only marks an entry dead, so that removing stays O(1)
	// and a reclaim can free copies while it walks the index.
	drop []dropEntry
	dead int // dead entries in drop
	// dropArr is drop's whole array: trimDead leaves its front unused.
	dropArr []dropEntry
}

// dropEntry is r as indexed at stamp; it is dead once r left the index
// or got a new stamp.
type dropEntry struct {
	stamp int64
	r     *Replica
	l     *lruList
}

func (e dropEntry) live() bool { return e.r.droppable && e.r.stamp == e.stamp && e.r.list == e.l }

// compact removes dead entries once they are the majority.
func (l *lruList) compact() {
	if l.dead < 64 || 2*l.dead < len(l.drop) {
		return
	}
	k := 0
	for _, e := range l.drop {
		if e.live() {
			l.drop[k] = e
			k++
		}
	}
	clear(l.drop[k:])
	l.drop, l.dead = l.drop[:k], 0
}

// trimDead drops the dead entries at the front of l's index: the copies
// a reclaim frees there would otherwise be walked again by every later
// one until a compaction. A copy whose dead entry goes and that becomes
// droppable again with the same stamp gets a new entry (reindexChange).
func (l *lruList) trimDead() {
	k := 0
	for k < len(l.drop) && !l.drop[k].live() {
		k++
	}
	l.drop, l.dead = l.drop[k:], l.dead-k
}

// appendDrop appends e to l's index. A full index moves to the front of
// its array when trimDead's reslicing left half of it or more unused there;
// else to an array with room for as many entries again plus 64.
func (l *lruList) appendDrop(e dropEntry) {
	if n := len(l.drop); n == cap(l.drop) {
		if len(l.dropArr) > 0 && 2*n <= len(l.dropArr) {
			copy(l.dropArr, l.drop)
			clear(l.dropArr[n:])
			l.drop = l.dropArr[:n]
		} else {
			d := make([]dropEntry, n, 2*n+64)
			copy(d, l.drop)
			l.drop, l.dropArr = d, d[:cap(d)]
		}
	}
	l.drop = append(l.drop, e)
}

// A copy whose list, state or sharing changed may have to enter or leave its
// list's droppable index: callers then run
//
//	if n.needsReindex(r) { n.reindexChange(r) }
//
// The test, which most calls stop at, inlines (a call did not: ~885k calls
// in an attila dmda run at N=76800).

// needsReindex reports whether r's place in the droppable index is stale.
func (n *Node) needsReindex(r *Replica) bool {
	return n.indexed && r.list != nil && (r.state == Invalid || r.shared) != r.droppable
}

// reindexChange puts r in, or takes it out of, its list's droppable index.
func (n *Node) reindexChange(r *Replica) {
	l := r.list
	if r.droppable {
		r.droppable = false
		l.dead++
		return
	}
	l.compact() // before r counts as droppable: its dead entry must stay dead
	r.droppable = true
	d := l.drop
	if len(d) == 0 || d[len(d)-1].stamp < r.stamp { // pushTail: the usual case
		l.appendDrop(dropEntry{r.stamp, r, l})
		return
	}
	i := sort.Search(len(d), func(i int) bool { return d[i].stamp >= r.stamp })
	if i < len(d) && d[i].stamp == r.stamp && d[i].r == r { // r's own dead entry: revive it
		l.dead--
		return
	}
	l.appendDrop(dropEntry{})
	d = l.drop
	copy(d[i+1:], d[i:])
	d[i] = dropEntry{r.stamp, r, l}
}

// buildIndex starts keeping the droppable indexes, from the lists as they
// are (their stamps already increase from head to tail).
func (n *Node) buildIndex() {
	n.indexed = true
	for _, l := range []*lruList{&n.main, &n.prot} {
		for r := l.head; r != nil; r = r.next {
			if r.state == Invalid || r.shared {
				r.droppable = true
				l.appendDrop(dropEntry{r.stamp, r, l})
			}
		}
	}
}

// checkLRU verifies that each list's stamps increase from head to tail,
// that the stamp order links hold both lists' copies in that order, and
// that each list's droppable index is exactly its invalid or shared
// copies, in order.
func (n *Node) checkLRU() error {
	count := 0
	for i := n.ordHead; i >= 0; i = n.ord[i].next {
		r, o := n.rep(i), n.ord[i]
		if r.list != &n.main && r.list != &n.prot {
			return fmt.Errorf("check: stamp order of %s holds %s, in no list", n.Name, r.h.spec.Name)
		}
		if o.prot != (r.list == &n.prot) {
			return fmt.Errorf("check: stamp order of %s has %s in the wrong list", n.Name, r.h.spec.Name)
		}
		if (o.next >= 0 && (n.rep(o.next).stamp <= r.stamp || n.ord[o.next].prev != i)) || (o.next < 0 && n.ordTail != i) {
			return fmt.Errorf("check: stamp order of %s broken at %s", n.Name, r.h.spec.Name)
		}
		count++
	}
	for _, l := range []*lruList{&n.main, &n.prot} {
		for r := l.head; r != nil; r = r.next {
			count--
		}
	}
	if count != 0 {
		return fmt.Errorf("check: stamp order of %s and its lists hold different copies", n.Name)
	}
	for _, l := range []*lruList{&n.main, &n.prot} {
		var want []*Replica
		for r := l.head; r != nil; r = r.next {
			if r.next != nil && r.next.stamp <= r.stamp {
				return fmt.Errorf("check: LRU list of %s out of order at %s", n.Name, r.h.spec.Name)
			}
			if n.indexed && (r.state == Invalid || r.shared) {
				want = append(want, r)
			}
		}
		var live []*Replica
		for i, e := range l.drop {
			if i > 0 && e.stamp <= l.drop[i-1].stamp {
				return fmt.Errorf("check: droppable index of %s out of order at position %d", n.Name, i)
			}
			if e.live() {
				if e.r.list != l {
					return fmt.Errorf("check: droppable index of %s holds %s from another list", n.Name, e.r.h.spec.Name)
				}
				live = append(live, e.r)
			}
		}
		if len(l.drop)-len(live) != l.dead {
			return fmt.Errorf("check: droppable index of %s counts %d dead entries, holds %d", n.Name, l.dead, len(l.drop)-len(live))
		}
		if len(want) != len(live) {
			return fmt.Errorf("check: %s indexes %d droppable copies, its list has %d", n.Name, len(live), len(want))
		}
		for i := range want {
			if want[i] != live[i] {
				return fmt.Errorf("check: droppable index of %s differs from its list at position %d", n.Name, i)
			}
		}
	}
	return nil
}

func (l *lruList) pushTail(r *Replica) {
	r.prev, r.next, r.list = l.tail, nil, l
	if l.tail != nil {
		l.tail.next = r
	} else {
		l.head = r
	}
	l.tail = r
}

func (l *lruList) pushHead(r *Replica) {
	r.prev, r.next, r.list = nil, l.head, l
	if l.head != nil {
		l.head.prev = r
	} else {
		l.tail = r
	}
	l.head = r
}

func (l *lruList) remove(r *Replica) {
	if r.prev != nil {
		r.prev.next = r.next
	} else {
		l.head = r.next
	}
	if r.next != nil {
		r.next.prev = r.prev
	} else {
		l.tail = r.prev
	}
	r.prev, r.next, r.list = nil, nil, nil
}

// listFor is the list r belongs in.
func (n *Node) listFor(r *Replica) *lruList {
	if r.protect > 0 {
		return &n.prot
	}
	return &n.main
}

// ordLink is a copy's place in its node's stamp order (Node.ord): the
// handle IDs of the copies before and after it (-1: none), and whether it
// is in the prot list. The links live apart from the replicas, in one
// dense array per node: relist's walk back in stamp order reads a link per
// step, where the replicas, each in its handle's row of the slab, would
// cost a cache miss each.
type ordLink struct {
	prev, next int32
	prot       bool
}

// rep is handle i's copy on n (nil for -1).
func (n *Node) rep(i int32) *Replica {
	if i < 0 {
		return nil
	}
	return &n.reps[int(i)*n.stride]
}

func (n *Node) pushTail(r *Replica) {
	n.tailStamp++
	r.stamp = n.tailStamp
	l := n.listFor(r)
	l.pushTail(r)
	id := r.h.id
	n.ord[id] = ordLink{prev: n.ordTail, next: -1, prot: l == &n.prot}
	if n.ordTail >= 0 {
		n.ord[n.ordTail].next = id
	} else {
		n.ordHead = id
	}
	n.ordTail = id
	if n.needsReindex(r) {
		n.reindexChange(r)
	}
}

// unlist takes r out of its list (and its droppable index), leaving its
// place in stamp order.
func (n *Node) unlist(r *Replica) {
	if r.droppable {
		r.droppable = false
		r.list.dead++
	}
	r.list.remove(r)
}

func (n *Node) remove(r *Replica) {
	if r.list == nil {
		return
	}
	n.unlist(r)
	o := n.ord[r.h.id]
	if o.prev >= 0 {
		n.ord[o.prev].next = o.next
	} else {
		n.ordHead = o.next
	}
	if o.next >= 0 {
		n.ord[o.next].prev = o.prev
	} else {
		n.ordTail = o.prev
	}
}

// touch marks r as just used (tail of its list).
func (n *Node) touch(r *Replica) {
	if r.list == nil {
		return
	}
	n.remove(r)
	n.pushTail(r)
}

// relist moves r to the list its protection says, at its place in LRU
// order: StarPU's protection count does not move a copy in its one list.
func (n *Node) relist(r *Replica) {
	if r.list == nil || r.list == n.listFor(r) {
		return
	}
	n.unlist(r)
	l := n.listFor(r)
	p := n.before(r, l)
	switch {
	case p == nil:
		l.pushHead(r)
	case p == l.tail:
		l.pushTail(r)
	default:
		r.prev, r.next, r.list = p, p.next, l
		p.next.prev = r
		p.next = r
	}
	n.ord[r.h.id].prot = l == &n.prot
	if n.needsReindex(r) {
		n.reindexChange(r)
	}
}

// before returns the last copy of l whose stamp is below r's (nil: none),
// r being out of l. Three walks race, a step each in turn: back from r in
// stamp order to the first copy of l, forward from r to the first copy of
// l (whose predecessor in l is the answer), both short when l holds most
// copies near r, and along l from its end nearer r's stamp (short when l
// is short), so a relist costs the shortest, where any alone may walk a
// whole long list. The stamp-order walks read the dense links (Node.ord);
// the two of them halve the steps where l's copies near r are sparse.
func (n *Node) before(r *Replica, l *lruList) *Replica {
	if l.head == nil {
		return nil
	}
	fromHead := r.stamp-l.head.stamp < l.tail.stamp-r.stamp
	prot := l == &n.prot
	o, f := n.ord[r.h.id].prev, n.ord[r.h.id].next // the stamp-order walks
	var p, c *Replica                              // the list walk: p the last copy below r, c the next
	if fromHead {
		c = l.head
	} else {
		c = l.tail
	}
	for {
		if o < 0 || n.ord[o].prot == prot {
			return n.rep(o)
		}
		if f < 0 {
			return l.tail // no copy of l after r
		}
		if n.ord[f].prot == prot {
			return n.rep(f).prev
		}
		o, f = n.ord[o].prev, n.ord[f].next
		if fromHead {
			if c == nil || c.stamp > r.stamp {
				return p
			}
			p, c = c, c.next
		} else {
			if c == nil || c.stamp < r.stamp {
				return c
			}
			c = c.prev
		}
	}
}

func (n *Node) moveHead(r *Replica) {
	if r.list == nil {
		return
	}
	n.remove(r)
	n.headStamp--
	r.stamp = n.headStamp
	l := n.listFor(r)
	l.pushHead(r)
	id := r.h.id
	n.ord[id] = ordLink{prev: -1, next: n.ordHead, prot: l == &n.prot}
	if n.ordHead >= 0 {
		n.ord[n.ordHead].prev = id
	} else {
		n.ordTail = id
	}
	n.ordHead = id
	if n.needsReindex(r) {
		n.reindexChange(r)
	}
}
