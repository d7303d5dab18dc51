package promql

import (
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/sources/schema"
	"github.com/pdtop/pdtop/sources/store"
)

// The signals the dashboard reads per worker and per pool (what the panels
// and the fleet summary draw), by how they are queried.
var (
	gaugeSignals = []sources.Signal{
		sources.SigRunning, sources.SigWaiting, sources.SigBootstrapQueue, sources.SigInflightQueue,
		sources.SigPreallocQueue, sources.SigTransferQueue, sources.SigKVUsage, sources.SigKVCapacity,
		sources.SigPendingPrealloc, sources.SigCacheHitLastBatch, sources.SigMaxRunningRequests,
		sources.SigKVXferLatencyGauge, sources.SigKVXferSpeedGauge, sources.SigKVXferSizeGauge,
	}
	counterSignals = []sources.Signal{
		sources.SigPromptTokens, sources.SigGenerationTokens, sources.SigRealtimeDecode, sources.SigCachedTokens,
		sources.SigRequests, sources.SigAborted, sources.SigRetractions, sources.SigTransferFailed,
		sources.SigBootstrapFailed, sources.SigKVXferTimeouts, sources.SigEvictedTokens, sources.SigPrefillRetries,
	}
	histSignals = []sources.Signal{
		sources.SigTTFT, sources.SigITL, sources.SigQueueTime,
		sources.SigKVXferLatency, sources.SigKVXferSpeed, sources.SigKVXferSize,
	}
)

// query is one named instant or range query.
type query struct {
	name string
	q    string
}

// sigTag is the label that says which signal a series of a combined
// query belongs to.
const sigTag = "pdtop_sig"

func sigValue(s sources.Signal) string { return strconv.Itoa(int(s)) }

// tagged combines one expression per signal into one query, each series
// labelled pdtop_sig=<signal number>.
func tagged(sigs []sources.Signal, expr func(sources.Signal) string) string {
	alts := make([]string, 0, len(sigs))
	for _, s := range sigs {
		if x := expr(s); x != "" {
			alts = append(alts, tag(x, sigTag, sigValue(s)))
		}
	}
	return ors(alts)
}

// scalarFn is how a worker signal is read: gauges as their last value,
// counters as a per-second rate.
func scalarFn(s sources.Signal) fn {
	if s.Info().Kind == sources.Counter {
		return fnRate
	}
	return fnLast
}

// phase1 are the queries that need nothing from this round: worker
// counts, which workers get rows, the gateways, and every pool figure.
func (b *Backend) phase1(w time.Duration, gens map[string]string, rows int, recorded bool) []query {
	p := b.plan
	roles := p.roleVec(w)
	live := p.liveVec()
	inst := p.inst
	qs := []query{
		{"workers", ors([]string{
			tag("count by ("+p.role+") ("+roles+")", sigTag, "all"),
			tag("count by ("+p.role+") ("+roles+" and on ("+inst+") "+live+")", sigTag, "live"),
		})},
		{"rows", b.rowsQuery(w, gens, rows)}, // replaced below when recorded
		{"gw_names", "group by (" + inst + ", __name__) (" +
			vs(nil, append([]Matcher{{Name: "__name__", Op: "=~", Value: "smg_.+|sgl_router_.+"}}, p.sel...)...) + ")"},
		{"gw_requests", "group by (" + inst + ", route, method, worker_url) (" + vs([]string{"sgl_router_requests_total"}, p.sel...) + ")"},
	}
	if recorded {
		qs[0].q = b.recordedWorkers(w)
		qs[1].q = b.recordedRows(w, gens, rows)
		return append(qs, b.recordedPoolQueries(w)...)
	}
	return append(qs, b.poolQueries(w, p.roleVec(b.gaugeLookback(w)))...)
}

// rowsQuery picks the workers that get rows: per role the top Rows by
// waiting queue (prefill, unified) or KV usage (decode), workers with no
// such gauge ranking last; every worker whose last scrape failed; and
// workers a gateway marks unhealthy or with an open circuit breaker.
func (b *Backend) rowsQuery(w time.Duration, gens map[string]string, rows int) string {
	p := b.plan
	n := strconv.Itoa(rows)
	roles := p.roleVec(w)
	alts := []string{
		tag("topk by ("+p.role+") ("+n+", "+rankExpr(p, w)+")", sigTag, "rank"),
		tag("topk("+n+", "+roles+" unless on ("+p.inst+") "+p.liveVec()+")", sigTag, "stale"),
	}
	if bad := b.troubledWorkers(w, gens); bad != "" {
		alts = append(alts, tag("topk("+n+", "+roles+" and on ("+p.inst+") "+bad+")", sigTag, "router"))
	}
	return ors(alts)
}

// rankExpr ranks each worker for a row, {<instance>, <role>}: waiting
// requests for prefill and unified workers, KV usage for decode workers, 0
// for a worker exposing neither.
func rankExpr(p *plan, w time.Duration) string {
	wait := p.workerSeries(p.rules[sources.SigWaiting], fnLast, w, "", []Matcher{Ne(p.role, "decode")}, p.ids(), p.role)
	kv := p.workerSeries(p.rules[sources.SigKVUsage], fnLast, w, "", []Matcher{Eq(p.role, "decode")}, p.ids(), p.role)
	return "((" + wait + ") or (" + kv + ")) or on (" + p.ids() + ") (" + p.roleVec(w) + " * 0)"
}

// troubledWorkers is one series per worker (by the instance label) that
// some gateway replica marks unhealthy or whose breaker is not closed.
func (b *Backend) troubledWorkers(w time.Duration, gens map[string]string) string {
	var alts []string
	for _, gen := range distinctGens(gens) {
		for _, r := range schema.GatewayRules(gen) {
			var cond string
			switch r.Signal {
			case sources.SigGWWorkerHealth:
				cond = " == 0"
			case sources.SigGWWorkerCB:
				cond = " > 0"
			default:
				continue
			}
			x := b.plan.series(family{}, r, fnNow, w, "", nil, r.KeyLabel)
			alts = append(alts, "label_replace(("+x+")"+cond+", "+Quote(b.plan.inst)+", \"$1\", "+Quote(r.KeyLabel)+
				", "+Quote(`(?i)(?:[a-z][a-z0-9+.-]*://)?(?:[^/@]*@)?([^/?#]+).*`)+")")
		}
	}
	if len(alts) == 0 {
		return ""
	}
	return "group by (" + b.plan.inst + ") (" + ors(alts) + ")"
}

func distinctGens(gens map[string]string) []string {
	seen := map[string]bool{}
	var out []string
	for _, g := range gens {
		if g != "" && g != schema.GenSGLangWorker && !seen[g] {
			seen[g] = true
			out = append(out, g)
		}
	}
	sort.Strings(out)
	return out
}

// gaugeLookback is how far back pool figures look for a worker's latest
// gauge sample: a few scrape intervals (reading the whole window would
// cost a window of samples per series), so a worker whose scrapes fail
// drops out of the pool sums after about three intervals while its own
// row keeps its last values for the window.
func (b *Backend) gaugeLookback(w time.Duration) time.Duration {
	l := 3 * b.scrapeInterval()
	if l < 5*time.Second {
		l = 5 * time.Second
	}
	if l > w {
		l = w
	}
	return l
}

// poolQueries are the per-role figures over every worker; roles is the
// role vector to join on (over the gauge lookback).
func (b *Backend) poolQueries(w time.Duration, roles string) []query {
	p := b.plan
	lookback := b.gaugeLookback(w)
	pool := func(s sources.Signal, f fn) string {
		r := p.rules[s]
		agg := "sum"
		if store.PoolMax(s) {
			agg = "max"
		}
		return p.byRole(p.workerSeries(r, f, w, "", nil, p.ids()), agg, roles)
	}
	hit, total := p.hitTerms(w, nil)
	qs := []query{
		{"pool_gauges", tagged(gaugeSignals, func(s sources.Signal) string {
			r := p.rules[s]
			agg := "sum"
			if store.PoolMax(s) {
				agg = "max"
			}
			return p.byRole(p.workerSeries(r, fnLast, lookback, "", nil, p.ids()), agg, roles)
		})},
		{"pool_counters", tagged(counterSignals, func(s sources.Signal) string { return pool(s, fnRate) })},
		{"pool_hit", ors([]string{
			tag(p.byRole(hit, "sum", roles, "pdtop_src"), sigTag, "hit"),
			tag(p.byRole(total, "sum", roles, "pdtop_src"), sigTag, "total"),
		})},
	}
	for _, s := range histSignals {
		r := p.rules[s]
		buckets := p.byRole(p.workerSeries(r, fnRate, w, "_bucket", nil, p.ids(), "le"), "sum", roles, "le")
		count := p.byRole(p.workerSeries(r, fnIncrease, w, "_count", nil, p.ids()), "sum", roles)
		sum := p.byRole(p.workerSeries(r, fnIncrease, w, "_sum", nil, p.ids()), "sum", roles)
		qs = append(qs, query{"pool_" + histName(s), quantileSet(buckets, count, sum)})
	}
	qs = append(qs, poolBucketsQuery(func(s sources.Signal) string {
		return p.byRole(p.workerSeries(p.rules[s], fnRate, w, "_bucket", nil, p.ids(), "le"), "sum", roles, "le")
	}))
	return qs
}

// histName is a short query-name part for a histogram signal.
func histName(s sources.Signal) string {
	return strings.ReplaceAll(strings.ToLower(s.String()), " ", "_")
}

// rowQueries are the per-worker figures of the workers that have rows.
func (b *Backend) rowQueries(w time.Duration, insts []string) []query {
	if len(insts) == 0 {
		return nil
	}
	p := b.plan
	only := []Matcher{OneOf(p.inst, insts)}
	row := func(s sources.Signal, f fn) string {
		return p.series(p.workers.named(), p.rules[s], f, w, "", only, p.inst)
	}
	hit, total := p.hitTerms(w, only)
	qs := []query{
		{"row_gauges", tagged(gaugeSignals, func(s sources.Signal) string { return row(s, fnLast) })},
		{"row_counters", tagged(counterSignals, func(s sources.Signal) string { return row(s, fnRate) })},
		{"row_hit", ors([]string{tag(hit, sigTag, "hit"), tag(total, sigTag, "total")})},
		// When each row last answered (for the age of a stale one).
		{"row_seen", "max by (" + p.inst + ") (timestamp(" + vs(runningNames(p), concat(p.sel, only)...) + ")) or " +
			"max by (" + p.inst + ") (max_over_time(timestamp(" + vs(runningNames(p), concat(p.sel, only)...) + ")[" +
			dur(w) + ":" + dur(b.scrapeInterval()) + "]))"},
	}
	for _, s := range histSignals {
		r := p.rules[s]
		buckets := p.workerSeries(r, fnRate, w, "_bucket", only, p.inst, "le")
		count := p.workerSeries(r, fnIncrease, w, "_count", only, p.inst)
		sum := p.workerSeries(r, fnIncrease, w, "_sum", only, p.inst)
		qs = append(qs, query{"row_" + histName(s), quantileSet(buckets, count, sum)})
	}
	return qs
}

func runningNames(p *plan) []string {
	var names []string
	for _, a := range p.rules[sources.SigRunning].Aliases {
		names = append(names, a.Names...)
	}
	return names
}

// gatewayQueries read the gateway replicas of one generation: their own
// figures, responses by status and errors by type, and their view of the
// workers that have rows.
func (b *Backend) gatewayQueries(w time.Duration, gen string, insts, workers []string) []query {
	p := b.plan
	only := concat(p.sel, []Matcher{OneOf(p.inst, insts)})
	pg := &plan{sel: only, inst: p.inst}
	fam := familyOf(gen).named()
	var own, keyed, router []string
	for _, r := range schema.GatewayRules(gen) {
		kind := r.Signal.Info().Kind
		if kind == sources.Histogram {
			continue
		}
		f := fnLast
		if kind == sources.Counter {
			f = fnRate
		}
		switch r.Key {
		case schema.KeyNone:
			own = append(own, tag(pg.series(fam, r, f, w, "", nil, p.inst), sigTag, sigValue(r.Signal)))
		case schema.KeyWorker:
			if len(workers) == 0 {
				continue
			}
			only := []Matcher{{Name: r.KeyLabel, Op: "=~", Value: workerKeyRegex(workers)}}
			router = append(router, tag(tag(pg.series(fam, r, f, w, "", only, p.inst, r.KeyLabel), "pdtop_key", r.KeyLabel), sigTag, sigValue(r.Signal)))
		default:
			keyed = append(keyed, tag(tag(pg.series(fam, r, f, w, "", nil, p.inst, r.KeyLabel), "pdtop_key", r.KeyLabel), sigTag, sigValue(r.Signal)))
		}
	}
	var qs []query
	name := "gw_" + strings.NewReplacer(" ", "_", "(", "", ")", "").Replace(gen)
	if len(own) > 0 {
		qs = append(qs, query{name + "_own", ors(own)})
	}
	if len(keyed) > 0 {
		qs = append(qs, query{name + "_keyed", ors(keyed)})
	}
	if len(router) > 0 {
		qs = append(qs, query{name + "_router", ors(router)})
	}
	return qs
}
