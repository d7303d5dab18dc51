package sim

import (
	"fmt"
	"slices"
	"time"
)

// timers runs the replica's periodic work due by t: health checks
// (smg and legacy only: the 2026 router has no health-check loop), the
// prefix tree's LRU trim, and admission-queue timeouts.
func (g *replica) timers(t time.Duration) {
	f := g.f
	rt := f.cfg.Router
	for t >= g.nextHealth {
		if f.cfg.Gateway != Gateway2026 {
			g.healthCheck(g.nextHealth)
		}
		g.nextHealth += rt.HealthInterval
	}
	for t >= g.nextTrim {
		g.tree.trim(rt.MaxTreeTokens)
		g.nextTrim += rt.TreeEvictionInterval
	}
	g.expireQueue(t)
}

func (g *replica) healthCheck(t time.Duration) {
	rt := g.f.cfg.Router
	for id, v := range g.views {
		if v == nil || v.removed || t < v.since {
			continue
		}
		if g.reachable(g.f.workers[id], t) {
			v.hcOK++
			v.hcFail = 0
			if !v.healthy && v.hcOK >= rt.HealthSuccesses {
				v.healthy = true
			}
			continue
		}
		v.hcFail++
		v.hcOK = 0
		if v.healthy && v.hcFail >= rt.HealthFailures {
			v.healthy = false
		}
	}
}

// register makes every replica learn about w at t; each replica's
// discovery lags the previous one's by half a second.
func (f *Fleet) register(w *worker, t time.Duration) {
	for _, g := range f.gateways {
		for len(g.views) <= w.id {
			g.views = append(g.views, nil)
		}
		since := t
		if t > 0 {
			since += time.Duration(g.idx) * 500 * time.Millisecond
		}
		g.views[w.id] = &workerView{
			since:   since,
			uuid:    uuidFor(f.cfg.Seed, g.idx, w.id, since),
			healthy: true,
		}
		pos := int(mix(uint64(f.cfg.Seed), mix(uint64(g.idx)+11, uint64(w.id))) % uint64(len(g.order)+1))
		g.order = slices.Insert(g.order, pos, w.id)
	}
}

// deregister removes w from every replica's registry and tree.
func (f *Fleet) deregister(w *worker) {
	for _, g := range f.gateways {
		if v := g.view(w); v != nil {
			v.removed = true
			g.tree.removeWorker(w.id)
		}
	}
}

// uuidFor is a deterministic version-4-shaped UUID for one registration.
func uuidFor(seed int64, replica, worker int, since time.Duration) string {
	a := mix(uint64(seed), mix(uint64(replica)+1, uint64(worker)+1))
	b := mix(a, uint64(since))
	return fmt.Sprintf("%08x-%04x-4%03x-%04x-%012x",
		uint32(a>>32), uint16(a>>16), uint16(a)&0x0fff, (uint16(b>>48)&0x3fff)|0x8000, b&0xffffffffffff)
}
