package sim

import (
	"slices"
	"time"
)

// rtNode is one segment in a gateway replica's approximate prefix tree,
// with the workers ("tenants") the replica believes hold it.
type rtNode struct {
	key      uint64
	tokens   int
	depth    int
	parent   *rtNode
	children int
	tenants  []tenant
}

type tenant struct {
	w    int // worker id
	last time.Duration
}

// routerTree is one replica's own view of which prefill worker caches
// which prefix. It is fed only by the replica's own routing decisions and
// trimmed by its own LRU on its own schedule: it never learns about worker
// eviction, restarts, or what other replicas routed.
type routerTree struct {
	nodes     map[uint64]*rtNode
	perWorker []int // tokens attributed to each worker (its tenancy)
}

func newRouterTree() *routerTree {
	return &routerTree{nodes: map[uint64]*rtNode{}}
}

func (t *routerTree) grow(w int) {
	for len(t.perWorker) <= w {
		t.perWorker = append(t.perWorker, 0)
	}
}

// match returns the eligible worker holding the longest prefix of segs
// (most recently used on ties; -1 if none) and that prefix in tokens.
func (t *routerTree) match(segs []segment, eligible func(w int) bool) (best, tokens int) {
	best = -1
	var bestNode *rtNode
	sum := 0
	for _, s := range segs {
		n := t.nodes[s.key]
		if n == nil {
			break
		}
		found := false
		for _, tn := range n.tenants {
			if eligible(tn.w) {
				found = true
				break
			}
		}
		if !found {
			break
		}
		sum += n.tokens
		bestNode, tokens = n, sum
	}
	if bestNode == nil {
		return -1, 0
	}
	var last time.Duration = -1
	for _, tn := range bestNode.tenants {
		if eligible(tn.w) && (tn.last > last || (tn.last == last && tn.w < best)) {
			best, last = tn.w, tn.last
		}
	}
	return best, tokens
}

// matchFor is the prefix of segs the tree attributes to worker w.
func (t *routerTree) matchFor(segs []segment, w int) int {
	sum := 0
	for _, s := range segs {
		n := t.nodes[s.key]
		if n == nil || n.tenantIndex(w) < 0 {
			break
		}
		sum += n.tokens
	}
	return sum
}

func (n *rtNode) tenantIndex(w int) int {
	for i, tn := range n.tenants {
		if tn.w == w {
			return i
		}
	}
	return -1
}

// insert records that worker w now holds segs (the router's assumption
// after routing a request there).
func (t *routerTree) insert(segs []segment, w int, now time.Duration) {
	t.grow(w)
	var parent *rtNode
	for i, s := range segs {
		n := t.nodes[s.key]
		if n == nil {
			n = &rtNode{key: s.key, tokens: s.tokens, depth: i, parent: parent}
			t.nodes[s.key] = n
			if parent != nil {
				parent.children++
			}
		}
		if j := n.tenantIndex(w); j >= 0 {
			n.tenants[j].last = now
		} else {
			n.tenants = append(n.tenants, tenant{w: w, last: now})
			t.perWorker[w] += n.tokens
		}
		parent = n
	}
}

// trim is the periodic LRU eviction: every worker whose tenancy exceeds
// maxTokens loses its least recently routed leaves first.
func (t *routerTree) trim(maxTokens int) {
	over := map[int]bool{}
	for w, tok := range t.perWorker {
		if tok > maxTokens {
			over[w] = true
		}
	}
	if len(over) == 0 {
		return
	}
	type entry struct {
		n    *rtNode
		w    int
		last time.Duration
	}
	var es []entry
	for _, n := range t.nodes {
		for _, tn := range n.tenants {
			if over[tn.w] {
				es = append(es, entry{n, tn.w, tn.last})
			}
		}
	}
	// Oldest first, deeper first on ties (a parent is never older than its
	// child), then a fixed order so map iteration cannot leak in.
	slices.SortFunc(es, func(a, b entry) int {
		switch {
		case a.last != b.last:
			return cmpDur(a.last, b.last)
		case a.n.depth != b.n.depth:
			return b.n.depth - a.n.depth
		case a.n.key != b.n.key:
			if a.n.key < b.n.key {
				return -1
			}
			return 1
		}
		return a.w - b.w
	})
	for _, e := range es {
		if t.perWorker[e.w] <= maxTokens {
			continue
		}
		t.dropTenant(e.n, e.w)
	}
}

func cmpDur(a, b time.Duration) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func (t *routerTree) dropTenant(n *rtNode, w int) {
	j := n.tenantIndex(w)
	if j < 0 {
		return
	}
	n.tenants = slices.Delete(n.tenants, j, j+1)
	t.perWorker[w] -= n.tokens
	for n != nil && len(n.tenants) == 0 && n.children == 0 {
		delete(t.nodes, n.key)
		p := n.parent
		if p != nil {
			p.children--
		}
		n = p
	}
}

// removeWorker forgets a worker entirely (it left the registry).
func (t *routerTree) removeWorker(w int) {
	if w >= len(t.perWorker) || t.perWorker[w] == 0 {
		return
	}
	var ns []*rtNode
	for _, n := range t.nodes {
		if n.tenantIndex(w) >= 0 {
			ns = append(ns, n)
		}
	}
	slices.SortFunc(ns, func(a, b *rtNode) int { return b.depth - a.depth })
	for _, n := range ns {
		t.dropTenant(n, w)
	}
}

// tokens is the tree's total tenancy in tokens, summed over workers.
func (t *routerTree) tokens() (sum, tenants int) {
	for _, v := range t.perWorker {
		sum += v
		if v > 0 {
			tenants++
		}
	}
	return sum, tenants
}
