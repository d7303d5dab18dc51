package store

import (
	"math"
	"strings"

	"github.com/pdtop/pdtop/sources"
)

// poolMembers splits workers by what they contribute to fleet figures. In
// a PD fleet, input tokens and prefix hits are the prefill pool's (decode
// workers receive KV by transfer; their hit metrics say nothing about
// routing), output tokens and token cadence the decode pool's. Unified
// workers (and workers of unknown role) contribute to everything.
func poolMembers(workers []*targetState) (input, output, cadence, hit []*targetState) {
	pd := false
	for _, w := range workers {
		if r := w.role(); r == sources.RolePrefill || r == sources.RoleDecode {
			pd = true
		}
	}
	for _, w := range workers {
		r := w.role()
		if !pd || r == sources.RolePrefill || r == sources.RoleUnified || r == sources.RoleUnknown {
			input = append(input, w)
			hit = append(hit, w)
		}
		if !pd || r == sources.RoleDecode || r == sources.RoleUnified || r == sources.RoleUnknown {
			output = append(output, w)
			cadence = append(cadence, w)
		}
	}
	if len(cadence) == 0 {
		cadence = workers
	}
	return input, output, cadence, hit
}

// maxSignals are aggregated over a pool by max, not sum.
var maxSignals = map[sources.Signal]bool{
	sources.SigKVUsage: true, sources.SigKVResident: true, sources.SigPendingPrealloc: true, sources.SigCacheHitLastBatch: true,
	sources.SigKVXferLatencyGauge: true, sources.SigKVXferSpeedGauge: true, sources.SigKVXferSizeGauge: true,
	sources.SigEngineStartupTime: true,
}

// PoolMax reports whether a pool shows signal sig as the max over its
// workers (ratios, per-request gauges) rather than their sum. Other
// backends deriving pools (sources/promql) follow the same rule.
func PoolMax(sig sources.Signal) bool { return maxSignals[sig] }

func (s *Store) pools(snap *sources.Snapshot, workers []*targetState) {
	pools := map[sources.Role]*sources.PoolView{
		sources.RolePrefill: &snap.Prefill,
		sources.RoleDecode:  &snap.Decode,
		sources.RoleUnified: &snap.Unified,
	}
	for r, p := range pools {
		p.Role = r
		p.Readings = sources.Readings{}
		p.Dists = map[sources.Signal]sources.Quantiles{}
	}
	merged := map[sources.Role]map[sources.Signal]*dist{}
	hits := map[sources.Role][2]float64{}
	hitSrc := map[sources.Role]string{}
	for i, ts := range workers {
		w := &snap.Workers[i]
		r := ts.role()
		if r == sources.RoleUnknown {
			r = sources.RoleUnified
		}
		p := pools[r]
		if p == nil {
			continue
		}
		p.Workers++
		if w.Health == sources.Up {
			p.Up++
		}
		for sig, rd := range w.Readings {
			if !rd.Present {
				continue
			}
			cur := p.Readings[sig]
			switch {
			case !cur.Present:
				cur = sources.Reading{Present: true, Value: rd.Value, Increase: rd.Increase, Source: rd.Source}
			case maxSignals[sig]:
				cur.Value = math.Max(cur.Value, rd.Value)
			default:
				cur.Value += rd.Value
				cur.Increase += rd.Increase
			}
			p.Readings[sig] = cur
		}
		p.Output = addOutput(p.Output, w.Output)
		// The pool counts every token its workers served in the window,
		// before and after a restart alike.
		if wh := w.HitWindow; wh.Total > 0 || wh.Source != "" {
			h := hits[r]
			h[0] += wh.Hit
			h[1] += wh.Total
			hits[r] = h
			hitSrc[r] = wh.Source
		}
		from, to := ts.window(snap.Window)
		for id := range ts.hists {
			if id.key != "" || id.sig.Info().Scope != sources.ScopeWorker {
				continue
			}
			d, ok := ts.histDist(id.sig, "", from, to)
			if !ok {
				continue
			}
			if merged[r] == nil {
				merged[r] = map[sources.Signal]*dist{}
			}
			if merged[r][id.sig] == nil {
				merged[r][id.sig] = &dist{}
			}
			merged[r][id.sig].merge(d)
		}
	}
	for r, p := range pools {
		if h, ok := hits[r]; ok {
			p.Hit = hitRatio(h[0], h[1], "tokens", hitSrc[r])
		}
		for sig, d := range merged[r] {
			p.Dists[sig] = quantiles(d, sig.Info().Unit, "")
		}
	}
}

// DeriveFleet fills snap.Fleet's request, token and rejection rates and
// hit ratio from snap's pools and gateways by the store's rules (input and
// hits from the prefill pool in a PD fleet, output from the decode pool,
// requests offered at the gateways, else finished at the workers).
// TargetsUp and Targets are left as they are. Other backends
// (sources/promql) use it so the summary means the same everywhere.
func DeriveFleet(snap *sources.Snapshot) { (*Store)(nil).fleet(snap) }

func (s *Store) fleet(snap *sources.Snapshot) {
	f := &snap.Fleet
	pd := snap.Prefill.Workers > 0 || snap.Decode.Workers > 0
	in, out, hitPools := []*sources.PoolView{&snap.Unified}, []*sources.PoolView{&snap.Unified}, []*sources.PoolView{&snap.Unified}
	if pd {
		in = append(in, &snap.Prefill)
		out = append(out, &snap.Decode)
		hitPools = append(hitPools, &snap.Prefill)
	}
	sum := func(ps []*sources.PoolView, sig sources.Signal) sources.Reading {
		var r sources.Reading
		for _, p := range ps {
			if x := p.Readings.Get(sig); x.Present {
				r.Present = true
				r.Value += x.Value
				r.Increase += x.Increase
				r.Source = x.Source
			}
		}
		return r
	}
	f.InputRate = sum(in, sources.SigPromptTokens)
	f.OutputRate = sources.Reading{}
	for _, p := range out {
		f.OutputRate = addOutput(f.OutputRate, p.Output)
	}
	var hit, total float64
	src := ""
	for _, p := range hitPools {
		if p.Hit.Total > 0 || p.Hit.Source != "" {
			hit += p.Hit.Hit
			total += p.Hit.Total
			src = p.Hit.Source
		}
	}
	if src != "" {
		f.Hit = hitRatio(hit, total, "tokens", src)
	}
	var offered sources.Reading
	gws := make([]*sources.GatewayView, len(snap.Gateways))
	for i := range snap.Gateways {
		g := &snap.Gateways[i]
		gws[i] = g
		if r := g.Readings.Get(sources.SigGWOffered); r.Present {
			offered.Present = true
			offered.Value += r.Value
			offered.Increase += r.Increase
			offered.Source = r.Source
		}
	}
	if offered.Present {
		f.ReqRate = offered
	} else {
		f.ReqRate = sum(out, sources.SigRequests)
	}
	f.Rejected = sources.RejectedShareOf(gws...)
}

// addOutput adds one worker's (or pool's) output tokens/s to a sum: rates
// and increases of present readings add up; the source is kept, or both
// named when they differ; a reading that exists without a rate yet keeps
// its source.
func addOutput(sum, r sources.Reading) sources.Reading {
	switch {
	case r.Source == "":
	case sum.Source == "":
		sum.Source = r.Source
	case !strings.Contains(sum.Source, r.Source):
		sum.Source += " + " + r.Source
	}
	if r.Present {
		sum.Present = true
		sum.Value += r.Value
		sum.Increase += r.Increase
	}
	return sum
}
