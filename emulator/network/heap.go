package network

// flowHeap orders a route's active flows by target (remaining bytes), then
// issue order: a binary min-heap, typed (container/heap's interface calls
// cost more than the sifting of a route's few flows). Keys are unique, so
// the flows come out in the same order whatever the heap's layout.
type flowHeap []*flow

func flowLess(a, b *flow) bool {
	if a.target != b.target {
		return a.target < b.target
	}
	return a.seq < b.seq
}

func (h *flowHeap) push(f *flow) {
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

func (h *flowHeap) pop() *flow {
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
