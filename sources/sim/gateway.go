package sim

import (
	"math"
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/pdtop/pdtop/sources"
	"github.com/prometheus/client_golang/prometheus"
)

// replica is one gateway replica: its own admission limit, its own view of
// every worker (in-flight load, health, circuit breaker) and its own
// approximate prefix tree. Replicas never share any of it.
type replica struct {
	f     *Fleet
	idx   int
	name  string
	tree  *routerTree
	views []*workerView // by worker id; nil = never registered here
	// order is the replica's registry iteration order (a hash map in the
	// real gateways): fixed per process, different per replica. Ties in
	// "least loaded" go to the first worker in this order.
	order []int
	rng   *rand.Rand

	inflight int        // admitted, not finished
	queue    []*request // waiting for admission
	killed   bool       // Kill: endpoint closed, no traffic from the load balancer

	nextHealth, nextTrim time.Duration
	startWorkers         int // legacy sgl_router_active_workers: set once, never updated
	st                   gatewayStats

	reg     *prometheus.Registry
	handler http.Handler
	url     string
	ep      *endpoint
}

// Circuit-breaker states, numbered as the gateways expose them.
const (
	cbClosed = iota
	cbOpen
	cbHalfOpen
)

var cbStateNames = [3]string{"closed", "open", "half_open"}

// workerView is what one replica knows and counts about one worker.
type workerView struct {
	since   time.Duration // registered (visible) from
	uuid    string        // smg assigns its own UUID per registration
	removed bool
	load    int // this replica's in-flight requests on the worker

	healthy        bool
	hcFail, hcOK   int
	cb             int
	cbFail, cbOK   int
	cbOpenedAt     time.Duration
	cbTrans        [3][3]float64
	success, fail  float64 // circuit-breaker outcomes
	picks, policy  float64 // legacy processed_requests / policy_decisions
	legOK, legErr  float64 // legacy pd_{prefill,decode}_requests / _errors
	g3OK, g3Failed float64 // 2026 worker_requests_total success / error
}

// gatewayStats are a replica's counters and histograms across generations;
// each generation's collector exposes the ones it really has.
type gatewayStats struct {
	intake, routed            float64
	responses                 []codeCount
	httpDur, routerDur        hist // smg buckets
	pdDur                     hist // legacy buckets
	g3Dur, g3TTFT             hist
	errNoWorkers, errBackend  float64
	retries, exhausted        [2]float64 // by failing leg: prefill, decode
	rlAllowed, rlRejected     float64
	rejFull, rejTimeout       float64
	selPrefill, selDecode     float64
	hits, misses, lbEvents    float64
	maxLoad, minLoad          float64
	lbSeen                    bool
	pdRequests, pdSelectError float64
	decisions                 [3]decisionStats // cache_hit, no_candidates, candidates_exhausted
}

type codeCount struct {
	code int
	n    float64
}

type decisionStats struct{ n, query, matched, selected float64 }

const (
	decHit = iota
	decNoCandidates
	decExhausted
)

var decisionNames = [3]string{"cache_hit", "no_candidates", "candidates_exhausted"}

func newReplica(f *Fleet, idx int) *replica {
	g := &replica{
		f: f, idx: idx, name: replicaName(idx), tree: newRouterTree(),
		rng: newRand(f.cfg.Seed, 100+uint64(idx)),
		st: gatewayStats{
			httpDur: newHist(smgDurationBuckets), routerDur: newHist(smgDurationBuckets),
			pdDur: newHist(legacyDurationBuckets), g3Dur: newHist(g3DurationBuckets),
			g3TTFT: newHist(g3TTFTBuckets),
		},
	}
	// Stagger the replicas' timers so they do not act in lockstep.
	rt := f.cfg.Router
	g.nextHealth = rt.HealthInterval * time.Duration(idx+1) / time.Duration(f.cfg.Replicas+1)
	g.nextTrim = rt.TreeEvictionInterval * time.Duration(idx+1) / time.Duration(f.cfg.Replicas)
	return g
}

func (g *replica) view(w *worker) *workerView {
	if w == nil || w.id >= len(g.views) {
		return nil
	}
	return g.views[w.id]
}

// eligible reports whether the replica would route to worker id at t.
func (g *replica) eligible(id int, t time.Duration) bool {
	if id >= len(g.views) {
		return false
	}
	v := g.views[id]
	if v == nil || v.removed || t < v.since || !v.healthy {
		return false
	}
	if v.cb == cbOpen && t >= v.cbOpenedAt+g.f.cfg.Router.CBTimeout {
		g.transition(v, cbHalfOpen, t)
	}
	return v.cb != cbOpen
}

// reachable is whether a connection from this replica to w succeeds.
func (g *replica) reachable(w *worker, t time.Duration) bool {
	return w.up(t) && !g.f.cond.partitioned(g.idx, w.id)
}

// admit takes a new request at t: admitted, queued, or rejected.
func (g *replica) admit(r *request, t time.Duration) {
	rt := g.f.cfg.Router
	r.gw, r.arrival = g, t
	g.st.intake++
	switch {
	case g.inflight < rt.MaxConcurrent && len(g.queue) == 0:
		g.start(r, t)
	case len(g.queue) < rt.QueueSize:
		r.queuedAt = t
		g.queue = append(g.queue, r)
	default:
		g.st.rlRejected++
		g.st.rejFull++
		code := 429
		if g.f.cfg.Gateway == Gateway2026 {
			code = 503
		}
		g.respond(code, 0)
		g.f.wl.done(r.conv, 0, false)
	}
}

func (g *replica) start(r *request, t time.Duration) {
	g.inflight++
	g.st.rlAllowed++
	g.st.routed++
	g.dispatch(r, t)
}

// admitNext admits queued requests while the limit allows.
func (g *replica) admitNext(t time.Duration) {
	for g.inflight < g.f.cfg.Router.MaxConcurrent && len(g.queue) > 0 {
		r := g.queue[0]
		g.queue = g.queue[1:]
		g.start(r, max(t, r.queuedAt))
	}
}

// expireQueue answers 408 to requests that waited QueueTimeout.
func (g *replica) expireQueue(t time.Duration) {
	limit := g.f.cfg.Router.QueueTimeout
	for len(g.queue) > 0 && g.queue[0].queuedAt+limit <= t {
		r := g.queue[0]
		g.queue = g.queue[1:]
		g.st.rejTimeout++
		g.respond(408, limit)
		g.f.wl.done(r.conv, 0, false)
	}
}

// dispatch routes one attempt of r at t: cache-aware prefill pick,
// power-of-two decode pick, then both legs go out at once.
func (g *replica) dispatch(r *request, t time.Duration) {
	f := g.f
	r.attempt++
	var ps, ds []int
	for _, id := range g.order {
		w := f.workers[id]
		if !g.eligible(id, t) {
			continue
		}
		if w.role == sources.RolePrefill {
			ps = append(ps, w.id)
		} else {
			ds = append(ds, w.id)
		}
	}
	if len(ps) == 0 || len(ds) == 0 {
		g.st.errNoWorkers++
		g.st.pdSelectError++
		g.finish(r, t, 503)
		return
	}
	pw, dw := f.workers[g.pickPrefill(r, ps, t)], f.workers[g.pickDecode(ds)]
	pv, dv := g.views[pw.id], g.views[dw.id]
	pv.load++
	dv.load++
	pv.picks++
	dv.picks++
	dv.policy++
	g.st.selPrefill++
	g.st.selDecode++
	r.p, r.d, r.pLoad, r.dLoad, r.sentAt = pw, dw, true, true, t
	switch {
	case !g.reachable(pw, t):
		g.failAttempt(r, t, pw)
	case !g.reachable(dw, t):
		g.failAttempt(r, t, dw)
	default:
		f.sendPrefill(r, pw, t)
		f.sendDecode(r, dw, t)
	}
}

// pickPrefill is the documented cache_aware rule on this replica's own
// in-flight counts and its own tree.
func (g *replica) pickPrefill(r *request, ids []int, t time.Duration) int {
	rt := g.f.cfg.Router
	minW, minL, maxL := ids[0], g.views[ids[0]].load, g.views[ids[0]].load
	for _, id := range ids[1:] {
		l := g.views[id].load
		if l < minL {
			minW, minL = id, l
		}
		maxL = max(maxL, l)
	}
	best, matched := g.tree.match(r.segs, func(w int) bool { return g.eligible(w, t) })
	var w, dec int
	switch {
	case maxL-minL > rt.BalanceAbsThreshold && float64(maxL) > float64(minL)*rt.BalanceRelThreshold:
		w, dec = minW, decExhausted
		g.st.lbEvents++
		g.st.maxLoad, g.st.minLoad, g.st.lbSeen = float64(maxL), float64(minL), true
		g.views[w].policy++
	case best >= 0 && float64(matched)/float64(r.prompt) > rt.CacheThreshold:
		w, dec = best, decHit
		g.st.hits++
	default:
		w, dec = minW, decNoCandidates
		g.st.misses++
	}
	selected := matched
	if w != best {
		selected = g.tree.matchFor(r.segs, w)
	}
	bs := float64(rt.BlockSize)
	d := &g.st.decisions[dec]
	d.n++
	d.query += math.Ceil(float64(r.prompt) / bs)
	d.matched += math.Floor(float64(matched) / bs)
	d.selected += math.Floor(float64(selected) / bs)
	g.tree.insert(r.segs, w, t)
	return w
}

// pickDecode is power-of-two choices on this replica's in-flight counts.
func (g *replica) pickDecode(ids []int) int {
	if len(ids) == 1 {
		return ids[0]
	}
	i := g.rng.IntN(len(ids))
	j := g.rng.IntN(len(ids) - 1)
	if j >= i {
		j++
	}
	a, b := ids[i], ids[j]
	if g.views[b].load < g.views[a].load {
		return b
	}
	return a
}
