package sim

// radixNode is one cached segment on a prefill worker.
type radixNode struct {
	key      uint64
	tokens   int
	parent   *radixNode
	children int
	lock     int  // requests pinning this node (running or transferring)
	ready    bool // KV computed; false while its first prefill is running
	// LRU list; head is most recent. A node is always touched after its
	// descendants, so the tail end of the list holds leaves.
	prev, next *radixNode
}

// radixCache is a prefill worker's prefix cache: finite capacity in tokens,
// LRU eviction of unpinned leaves — the worker's truth, which the routers'
// approximate trees do not follow.
type radixCache struct {
	capacity int
	nodes    map[uint64]*radixNode
	size     int // tokens held by nodes
	locked   int // tokens in nodes with lock > 0
	lru      radixNode
}

func newRadixCache(capacity int) *radixCache {
	c := &radixCache{capacity: capacity, nodes: map[uint64]*radixNode{}}
	c.lru.next, c.lru.prev = &c.lru, &c.lru
	return c
}

func (c *radixCache) unlink(n *radixNode) {
	n.prev.next, n.next.prev = n.next, n.prev
}

func (c *radixCache) pushFront(n *radixNode) {
	n.next, n.prev = c.lru.next, &c.lru
	c.lru.next.prev = n
	c.lru.next = n
}

// touch marks the path from n to the root as most recently used, the
// ancestors last so they stay more recent than their descendants.
func (c *radixCache) touch(n *radixNode) {
	for ; n != nil; n = n.parent {
		c.unlink(n)
		c.pushFront(n)
	}
}

// match returns the tokens of the longest ready cached prefix of segs.
func (c *radixCache) match(segs []segment) int {
	tokens := 0
	for _, s := range segs {
		n := c.nodes[s.key]
		if n == nil || !n.ready {
			break
		}
		tokens += n.tokens
	}
	return tokens
}

// acquire makes room for the segments of segs that are not cached yet,
// evicting LRU leaves, inserts them (not ready) and pins the whole path.
// It reports the deepest node and the tokens evicted; ok is false when
// pinned KV leaves no room (nothing is inserted then, though LRU leaves may
// already have been evicted).
func (c *radixCache) acquire(segs []segment) (leaf *radixNode, evicted int, ok bool) {
	need := 0
	for _, s := range segs {
		if c.nodes[s.key] == nil {
			need += s.tokens
		}
	}
	if need > c.capacity-c.locked {
		return nil, 0, false
	}
	if over := c.size + need - c.capacity; over > 0 {
		evicted = c.evict(over, segs)
		if c.size+need > c.capacity {
			return nil, evicted, false
		}
	}
	var parent *radixNode
	for _, s := range segs {
		n := c.nodes[s.key]
		if n == nil {
			n = &radixNode{key: s.key, tokens: s.tokens, parent: parent}
			c.nodes[s.key] = n
			c.size += n.tokens
			c.pushFront(n)
			if parent != nil {
				parent.children++
			}
		}
		parent = n
	}
	if parent == nil {
		return nil, evicted, true
	}
	for n := parent; n != nil; n = n.parent {
		if n.lock == 0 {
			c.locked += n.tokens
		}
		n.lock++
	}
	c.touch(parent)
	return parent, evicted, true
}

// evict frees at least want tokens from unpinned leaves, oldest first,
// sparing the path of segs (about to be reused). It returns the tokens
// freed.
func (c *radixCache) evict(want int, segs []segment) int {
	keep := func(n *radixNode) bool {
		for _, s := range segs {
			if s.key == n.key {
				return true
			}
		}
		return false
	}
	freed := 0
	for n := c.lru.prev; n != &c.lru && freed < want; {
		prev := n.prev
		if n.lock == 0 && n.children == 0 && !keep(n) {
			freed += n.tokens
			c.remove(n)
			// The parent may have become an evictable leaf; it is more
			// recent than n, so the scan reaches it later.
		}
		n = prev
	}
	return freed
}

func (c *radixCache) remove(n *radixNode) {
	c.unlink(n)
	delete(c.nodes, n.key)
	c.size -= n.tokens
	if n.parent != nil {
		n.parent.children--
	}
}

// markReady makes the path up to leaf matchable (its prefill finished).
func (c *radixCache) markReady(leaf *radixNode) {
	for n := leaf; n != nil && !n.ready; n = n.parent {
		n.ready = true
	}
}

// release unpins the path up to leaf. Nodes that never became ready and
// are no longer pinned (a cancelled prefill) are dropped.
func (c *radixCache) release(leaf *radixNode) {
	for n := leaf; n != nil; n = n.parent {
		n.lock--
		if n.lock == 0 {
			c.locked -= n.tokens
		}
	}
	for n := leaf; n != nil && !n.ready && n.lock == 0 && n.children == 0; {
		p := n.parent
		c.remove(n)
		n = p
	}
}

// evictable is the cached tokens no request pins (kv_evictable_tokens).
func (c *radixCache) evictable() int { return c.size - c.locked }
