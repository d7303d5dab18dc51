package promql

import (
	"sort"
	"strings"

	"github.com/prometheus/common/model"

	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/sources/schema"
	"github.com/pdtop/pdtop/sources/store"
)

// poolRole maps a role label value to the pool it counts in: unknown
// roles count as unified, as in the store.
func poolRole(v string) sources.Role {
	r := sources.ParseRole(v)
	if r == sources.RoleUnknown || r == sources.RoleGateway {
		return sources.RoleUnified
	}
	return r
}

// pools fills the three pools from the pool queries.
func (d *decoder) pools(snap *sources.Snapshot) {
	p := d.b.plan
	pools := map[sources.Role]*sources.PoolView{
		sources.RolePrefill: &snap.Prefill, sources.RoleDecode: &snap.Decode, sources.RoleUnified: &snap.Unified,
	}
	for _, s := range d.f.v["workers"] {
		v, ok := value(s)
		if !ok {
			continue
		}
		pv := pools[poolRole(string(s.Metric[model.LabelName(p.role)]))]
		switch s.Metric[sigTag] {
		case "all":
			pv.Workers += int(v)
		case "live":
			if !d.stale("workers") { // stale counts say nothing about now
				pv.Up += int(v)
			}
		}
	}
	for _, name := range []string{"pool_gauges", "pool_counters"} {
		for _, s := range d.f.v[name] {
			sig := parseSig(string(s.Metric[sigTag]))
			v, ok := value(s)
			if sig == sources.SigInvalid || !ok {
				continue
			}
			pv := pools[poolRole(string(s.Metric[model.LabelName(p.role)]))]
			rd := d.reading(sig, v)
			// Unknown and unified roles share a pool: combine as the store does.
			if cur := pv.Readings[sig]; cur.Present {
				if store.PoolMax(sig) {
					if v > cur.Value {
						cur.Value = v
					}
				} else {
					cur.Value += rd.Value
					cur.Increase += rd.Increase
				}
				rd = cur
			}
			pv.Readings[sig] = rd
		}
	}
	hits := map[sources.Role]*sources.HitRatio{}
	for key, h := range d.hits("pool_hit", p.role) {
		r := poolRole(key)
		acc := hits[r]
		if acc == nil {
			acc = &sources.HitRatio{Unit: "tokens"}
			hits[r] = acc
		}
		acc.Hit += h.Hit
		acc.Total += h.Total
		if h.Source != "" {
			acc.Source = h.Source
		}
	}
	for r, h := range hits {
		if h.Total > 0 {
			h.Present = true
			h.Ratio = h.Hit / h.Total
			if h.Ratio > 1 {
				h.Ratio = 1
			}
		}
		pools[r].Hit = *h
	}
	for key, ds := range d.dists("pool_", p.role) {
		pv := pools[poolRole(key)]
		for sig, q := range ds {
			q.Source = ""
			pv.Dists[sig] = q
		}
	}
	d.poolBuckets(pools)
}

// gateways builds one view per gateway replica.
func (d *decoder) gateways(h *history) []sources.GatewayView {
	p := d.b.plan
	live := map[string]bool{}
	if !d.stale("gw_names") {
		for _, s := range d.f.v["gw_names"] {
			live[string(s.Metric[model.LabelName(p.inst)])] = true
		}
	}
	insts := make([]string, 0, len(d.f.gens))
	for inst := range d.f.gens {
		insts = append(insts, inst)
	}
	sort.Strings(insts)
	views := map[string]*sources.GatewayView{}
	out := make([]sources.GatewayView, 0, len(insts))
	for _, inst := range insts {
		gen := d.f.gens[inst]
		name := sanitizeName(inst)
		engine := schema.EngineRouter
		if gen == schema.GenSMG {
			engine = schema.EngineSMG
		}
		g := sources.GatewayView{
			TargetStatus: sources.TargetStatus{ID: name, Name: name, Role: sources.RoleGateway, Origin: OriginPrometheus,
				Health: sources.Up, Generation: gen, Engine: engine},
			Readings: sources.Readings{}, Responses: map[string]sources.Reading{}, Errors: map[string]sources.Reading{},
			Dists: map[sources.Signal]sources.Quantiles{},
		}
		if t, ok := d.f.gwSeen[inst]; ok {
			g.LastSuccess, g.Age = t, nonNegDur(d.now.Sub(t))
		}
		switch {
		case d.stale("gw_names"):
			g.Health, g.LastError = sources.Stale, d.srv.LastError
		case !live[inst]:
			g.Health = sources.Stale
			g.LastError = &sources.ScrapeError{Class: ErrNoSamples,
				Message: "the server has no fresh samples of this gateway replica (up = 0, or it is gone)"}
		}
		out = append(out, g)
	}
	for i := range out {
		views[insts[i]] = &out[i]
	}
	gwSource := func(gen string, sig sources.Signal) string {
		for _, r := range schema.GatewayRules(gen) {
			if r.Signal == sig && len(r.Aliases) > 0 {
				return r.Aliases[0].Names[0]
			}
		}
		return ""
	}
	workers := map[string]map[string]bool{}
	for name, v := range d.f.v {
		if !strings.HasPrefix(name, "gw_") {
			continue
		}
		own, keyed, router := strings.HasSuffix(name, "_own"), strings.HasSuffix(name, "_keyed"), strings.HasSuffix(name, "_router")
		for _, s := range v {
			inst := string(s.Metric[model.LabelName(p.inst)])
			g := views[inst]
			sig := parseSig(string(s.Metric[sigTag]))
			val, ok := value(s)
			if g == nil || sig == sources.SigInvalid || !ok {
				continue
			}
			rd := sources.Reading{Present: true, Value: val, Source: gwSource(d.f.gens[inst], sig)}
			if n := s.Metric[nameTag]; n != "" {
				rd.Source = sanitizeName(string(n))
			}
			if sig.Info().Kind == sources.Counter {
				rd.Increase = val * d.secs
			}
			key := string(s.Metric[model.LabelName(string(s.Metric["pdtop_key"]))])
			switch {
			case own:
				g.Readings[sig] = rd
			case keyed && sig == sources.SigGWResponses:
				addReading(g.Responses, schema.StatusClass(key), rd)
			case keyed && sig == sources.SigGWErrors:
				addReading(g.Errors, sanitizeName(key), rd)
			case router:
				if workers[inst] == nil {
					workers[inst] = map[string]bool{}
				}
				workers[inst][sources.WorkerKey(key)] = true
			}
		}
	}
	for inst, g := range views {
		for k := range workers[inst] {
			g.Workers = append(g.Workers, sanitizeName(k))
		}
		sort.Strings(g.Workers)
		store.FillStatusClasses(g.Responses)
		g.Predicted, g.Ceiling = predicted(g.Readings)
		if h != nil && h.predTotal[inst] != nil {
			g.PredictedHistory = ratio(h.predHit[inst], h.predTotal[inst])
		}
	}
	return out
}

func addReading(m map[string]sources.Reading, key string, rd sources.Reading) {
	if cur, ok := m[key]; ok {
		rd.Value += cur.Value
		rd.Increase += cur.Increase
	}
	m[key] = rd
}

// predicted is the replica's predicted hit from its counters' increases
// over the window, as the store derives it.
func predicted(r sources.Readings) (pred, ceil sources.HitRatio) {
	ratio := func(hit, total float64, unit, src string) sources.HitRatio {
		h := sources.HitRatio{Hit: hit, Total: total, Unit: unit, Source: src}
		if total > 0 {
			h.Present = true
			h.Ratio = min(1, max(0, hit/total))
		}
		return h
	}
	if q := r.Get(sources.SigGWQueryBlocks); q.Present {
		return ratio(r.Get(sources.SigGWSelectedBlocks).Increase, q.Increase, "blocks", "selected_overlap_blocks / cache_aware_query_blocks"),
			ratio(r.Get(sources.SigGWMatchedBlocks).Increase, q.Increase, "blocks", "matched_overlap_blocks / cache_aware_query_blocks")
	}
	h, m := r.Get(sources.SigGWCacheHits), r.Get(sources.SigGWCacheMisses)
	if h.Present || m.Present {
		return ratio(h.Increase, h.Increase+m.Increase, "requests", "cache_hits / (cache_hits + cache_misses), per request >threshold"), sources.HitRatio{}
	}
	return sources.HitRatio{}, sources.HitRatio{}
}
