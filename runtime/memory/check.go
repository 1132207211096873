package memory

import "fmt"

// NeedBytes is the device memory a task's buffers take on a GPU at once
// (each distinct handle once): buffers of at most 4 MiB need whole
// suballocator chunks, packed first fit; larger ones their size. Tasks
// whose bound (every small buffer a chunk of its own) fits every GPU need
// no exact count: NeedBytes returns the bound when it is at most limit.
func NeedBytes(bufs []Buf, limit int64) int64 {
	var bound int64
	for _, b := range bufs {
		if suballocated(1, b.H.size) {
			bound += subChunkBytes
		} else {
			bound += b.H.size
		}
	}
	if bound <= limit {
		return bound
	}
	var need int64
	var chunks []int32 // free blocks left in each chunk
	for k, b := range bufs {
		dup := false
		for _, c := range bufs[:k] {
			dup = dup || c.H == b.H
		}
		if dup {
			continue
		}
		if !suballocated(1, b.H.size) {
			need += b.H.size
			continue
		}
		nb := subBlocks(b.H.size)
		i := 0
		for i < len(chunks) && chunks[i] < nb {
			i++
		}
		if i == len(chunks) {
			chunks = append(chunks, subChunkBlocks)
			need += subChunkBytes
		}
		chunks[i] -= nb
	}
	return need
}

// CheckEnd verifies the end state of a run: every handle has a valid copy
// and bit sets that mirror its copies, no copy is still held, protected,
// loading or being written back, and each device node's accounts match its
// copies, lists, chunks and buffers.
func (m *Memory) CheckEnd() error {
	used := make([]int64, len(m.Nodes))
	dirty := make([]int, len(m.Nodes))
	for i := range m.handles {
		h := &m.handles[i]
		if h.NValid() < 1 {
			return fmt.Errorf("check: %s has no valid copy", h.spec.Name)
		}
		if err := h.checkBits(); err != nil {
			return err
		}
		for n := range h.reps {
			r := &h.reps[n]
			if r.refs != 0 || r.protect != 0 || r.incoming || r.evicting {
				return fmt.Errorf("check: %s on %s still pinned (refs %d, protect %d)", h.spec.Name, m.Nodes[n].Name, r.refs, r.protect)
			}
			if r.allocated && n != 0 {
				used[n] += h.size
				if r.state != Invalid && h.reps[0].state == Invalid {
					dirty[n]++
				}
			}
		}
	}
	for n := 1; n < len(m.Nodes); n++ {
		node := m.Nodes[n]
		if err := node.checkLRU(); err != nil {
			return err
		}
		if dirty[n] != node.ndirty {
			return fmt.Errorf("check: node %s counts %d dirty copies, holds %d", node.Name, node.ndirty, dirty[n])
		}
		if used[n] != node.used {
			return fmt.Errorf("check: node %s accounts %d bytes, its copies hold %d", node.Name, node.used, used[n])
		}
		if dev := int64(len(node.sub.chunks))*subChunkBytes + node.direct; dev != node.devUsed {
			return fmt.Errorf("check: node %s accounts %d device bytes, its chunks and buffers take %d", node.Name, node.devUsed, dev)
		}
		if err := node.sub.check(); err != nil {
			return fmt.Errorf("check: node %s: %v", node.Name, err)
		}
	}
	return nil
}

// CheckHandle verifies that h's bit sets mirror its copies.
func (m *Memory) CheckHandle(h *Handle) error { return h.checkBits() }
