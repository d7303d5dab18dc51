package promql

import (
	"math"
	"sort"
	"strconv"
	"time"

	"github.com/prometheus/common/model"

	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/sources/sanitize"
	"github.com/pdtop/pdtop/sources/schema"
	"github.com/pdtop/pdtop/sources/store"
)

// OriginPrometheus marks targets learned from the query server.
const OriginPrometheus sources.Origin = "prometheus"

// ErrNoSamples is a worker or gateway the server has no fresh samples of:
// its own scrapes fail (up = 0) or the target is gone.
const ErrNoSamples sources.ErrorClass = "no-samples"

// kvGaugeFallback maps the KV-transfer histogram signals to their old
// gauge form, as the store does.
var kvGaugeFallback = map[sources.Signal]sources.Signal{
	sources.SigKVXferLatency: sources.SigKVXferLatencyGauge,
	sources.SigKVXferSpeed:   sources.SigKVXferSpeedGauge,
	sources.SigKVXferSize:    sources.SigKVXferSizeGauge,
}

func sanitizeName(s string) string { return sanitize.Truncate(sanitize.Text(s), 120) }

func parseSig(v string) sources.Signal {
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 || n >= sources.NumSignals {
		return sources.SigInvalid
	}
	return sources.Signal(n)
}

// build derives the Snapshot from the latest results.
func build(b *Backend, f *frame, h *history, srv serverState, events []sources.Event,
	restarts map[string][]time.Time, now time.Time, window time.Duration) *sources.Snapshot {
	snap := &sources.Snapshot{Time: now, Window: window, Interval: b.opts.Interval,
		Charts: map[string]sources.Series{}, Events: events, ChartSpan: window}
	server := srv.status(now)
	snap.Targets = append(snap.Targets, server)
	snap.Fleet.Targets = 1
	if server.Health == sources.Up {
		snap.Fleet.TargetsUp = 1
	}
	for r, p := range map[sources.Role]*sources.PoolView{sources.RolePrefill: &snap.Prefill,
		sources.RoleDecode: &snap.Decode, sources.RoleUnified: &snap.Unified} {
		p.Role = r
		p.Readings = sources.Readings{}
		p.Dists = map[sources.Signal]sources.Quantiles{}
	}
	if f == nil {
		return snap
	}
	snap.Window = f.window
	d := &decoder{b: b, f: f, srv: server, skew: srv.skew, now: now, secs: f.window.Seconds()}
	snap.Gateways = d.gateways(h)
	rows := d.workers(restarts, window, h)
	snap.Workers = rows
	for i := range snap.Gateways {
		snap.Targets = append(snap.Targets, snap.Gateways[i].TargetStatus)
		snap.Fleet.Targets++
		if snap.Gateways[i].Health == sources.Up {
			snap.Fleet.TargetsUp++
		}
	}
	for i := range rows {
		snap.Targets = append(snap.Targets, rows[i].TargetStatus)
	}
	d.pools(snap)
	// Output tokens/s by the store's rule, per worker and per pool (the
	// pools' readings are the server's sums by role).
	for i := range snap.Workers {
		snap.Workers[i].Output = store.OutputOf(snap.Workers[i].Readings)
	}
	for _, p := range []*sources.PoolView{&snap.Prefill, &snap.Decode, &snap.Unified} {
		p.Output = store.OutputOf(p.Readings)
	}
	for _, p := range []*sources.PoolView{&snap.Prefill, &snap.Decode, &snap.Unified} {
		snap.Fleet.Targets += p.Workers
		snap.Fleet.TargetsUp += p.Up
	}
	store.DeriveFleet(snap)
	if h != nil {
		n := len(h.spec.ends)
		snap.ChartSpan = time.Duration(n) * h.spec.step
		if snap.ChartSpan < window {
			snap.ChartSpan = window
		}
		units := map[string]string{cInput: "tok/s", cOutput: "tok/s", cTTFT50: "s", cTTFT99: "s",
			cITL50: "s", cITL99: "s", "hit_actual": "ratio", "hit_predicted": "ratio"}
		for name, pts := range h.charts {
			snap.Charts[name] = sources.Series{Name: name, Unit: units[name], Step: h.spec.step, Points: pts}
		}
	}
	return snap
}

// decoder reads the vectors of one frame.
type decoder struct {
	b    *Backend
	f    *frame
	srv  sources.TargetStatus
	skew time.Duration // server clock − local clock
	now  time.Time
	secs float64 // the rate window in seconds
}

// stale reports whether a query's result is carried over from an earlier
// round (it failed this time).
func (d *decoder) stale(names ...string) bool {
	for _, n := range names {
		if d.f.carried[n] {
			return true
		}
	}
	return false
}

// bySig reads a tagged per-instance query: instance → signal → reading.
func (d *decoder) bySig(name string) map[string]sources.Readings {
	out := map[string]sources.Readings{}
	for _, s := range d.f.v[name] {
		sig := parseSig(string(s.Metric[sigTag]))
		v, ok := value(s)
		if sig == sources.SigInvalid || !ok {
			continue
		}
		key := string(s.Metric[model.LabelName(d.b.plan.inst)])
		if out[key] == nil {
			out[key] = sources.Readings{}
		}
		rd := d.reading(sig, v)
		if n := s.Metric[nameTag]; n != "" {
			rd.Source = sanitizeName(string(n))
		}
		out[key][sig] = rd
	}
	return out
}

// reading makes a Reading of a value: counters carry their increase over
// the window; Source is the signal's first accepted name.
func (d *decoder) reading(sig sources.Signal, v float64) sources.Reading {
	r := sources.Reading{Present: true, Value: v, Source: d.sourceName(sig)}
	if sig.Info().Kind == sources.Counter {
		r.Increase = v * d.secs
	}
	return r
}

func (d *decoder) sourceName(sig sources.Signal) string {
	if r, ok := d.b.plan.rules[sig]; ok && len(r.Aliases) > 0 && len(r.Aliases[0].Names) > 0 {
		return r.Aliases[0].Names[0]
	}
	return ""
}

// dists reads the quantile queries of one scope: key label → signal → Quantiles.
func (d *decoder) dists(prefix, keyLabel string) map[string]map[sources.Signal]sources.Quantiles {
	out := map[string]map[sources.Signal]sources.Quantiles{}
	for _, sig := range histSignals {
		type acc struct {
			q                  map[string]float64
			hasCount, hasQuant bool
		}
		accs := map[string]*acc{}
		for _, s := range d.f.v[prefix+histName(sig)] {
			key := string(s.Metric[model.LabelName(keyLabel)])
			a := accs[key]
			if a == nil {
				a = &acc{q: map[string]float64{}}
				accs[key] = a
			}
			part := string(s.Metric["pdtop_q"])
			a.q[part] = float64(s.Value)
			switch part {
			case "count":
				a.hasCount = true
			case "0.5", "0.9", "0.99":
				a.hasQuant = true
			}
		}
		for key, a := range accs {
			if !a.hasCount {
				continue
			}
			q := sources.Quantiles{Present: true, Unit: sig.Info().Unit, Source: d.sourceName(sig),
				Count: finiteOr0(a.q["count"]), P50: math.NaN(), P90: math.NaN(), P99: math.NaN(), Mean: math.NaN(), Form: "summary"}
			if q.Count > 0 {
				q.Mean = a.q["sum"] / q.Count
			}
			if a.hasQuant {
				q.Form = "histogram"
				if q.Count > 0 {
					q.P50, q.P90, q.P99 = finiteOrNaN(a.q, "0.5"), finiteOrNaN(a.q, "0.9"), finiteOrNaN(a.q, "0.99")
				}
			}
			if out[key] == nil {
				out[key] = map[sources.Signal]sources.Quantiles{}
			}
			out[key][sig] = q
		}
	}
	return out
}

func finiteOr0(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}

func finiteOrNaN(m map[string]float64, k string) float64 {
	v, ok := m[k]
	if !ok || math.IsInf(v, 0) {
		return math.NaN()
	}
	return v
}

// hits reads a hit/total query tagged with the formula: key → ratio.
func (d *decoder) hits(name, keyLabel string) map[string]sources.HitRatio {
	type acc struct {
		hit, total float64
		src        string
	}
	accs := map[string]*acc{}
	for _, s := range d.f.v[name] {
		v, ok := value(s)
		if !ok {
			continue
		}
		key := string(s.Metric[model.LabelName(keyLabel)])
		a := accs[key]
		if a == nil {
			a = &acc{}
			accs[key] = a
		}
		if src := hitSources[string(s.Metric["pdtop_src"])]; src != "" {
			a.src = src
		}
		switch s.Metric[sigTag] {
		case cHit:
			a.hit += v
		case cTotal:
			a.total += v
		}
	}
	out := map[string]sources.HitRatio{}
	for key, a := range accs {
		h := sources.HitRatio{Hit: a.hit, Total: a.total, Unit: "tokens", Source: a.src}
		if a.total > 0 {
			h.Present = true
			h.Ratio = math.Min(1, math.Max(0, a.hit/a.total))
		}
		out[key] = h
	}
	return out
}

// workers builds the rows.
func (d *decoder) workers(restarts map[string][]time.Time, window time.Duration, h *history) []sources.WorkerView {
	p := d.b.plan
	gauges, counters := d.bySig("row_gauges"), d.bySig("row_counters")
	dists := d.dists("row_", p.inst)
	hits := d.hits("row_hit", p.inst)
	sinceMemo := map[string]map[string]sources.HitRatio{}
	seen := map[string]time.Time{}
	for _, s := range d.f.v["row_seen"] {
		if v, ok := value(s); ok {
			seen[string(s.Metric[model.LabelName(p.inst)])] = time.UnixMilli(int64(v * 1000)).Add(-d.skew)
		}
	}
	stale := map[string]bool{}
	for _, s := range d.f.v["rows"] {
		if s.Metric[sigTag] == "stale" {
			stale[string(s.Metric[model.LabelName(p.inst)])] = true
		}
	}
	router := d.routerViews()
	rowsStale := d.stale("row_gauges", "row_counters", "rows")
	out := make([]sources.WorkerView, 0, len(d.f.rows))
	for _, r := range d.f.rows {
		name := sanitizeName(r.inst)
		w := sources.WorkerView{
			TargetStatus: sources.TargetStatus{ID: name, Name: name, Role: r.role, Origin: OriginPrometheus,
				Health: sources.Up, Generation: schema.GenSGLangWorker, Engine: schema.EngineSGLang},
			Readings: sources.Readings{}, Dists: dists[r.inst], History: map[sources.Signal][]float64{},
			Hit: hits[r.inst], HitWindow: hits[r.inst], Router: router[sources.WorkerKey(r.inst)],
		}
		if h, ok := d.sinceHit(r.inst, sinceMemo); ok {
			w.Hit = h
		}
		if w.Dists == nil {
			w.Dists = map[sources.Signal]sources.Quantiles{}
		}
		for sig, rd := range gauges[r.inst] {
			w.Readings[sig] = rd
		}
		for sig, rd := range counters[r.inst] {
			w.Readings[sig] = rd
		}
		for hsig, g := range kvGaugeFallback {
			if w.Dists[hsig].Present {
				continue
			}
			if rd := w.Readings.Get(g); rd.Present {
				w.Dists[hsig] = sources.Quantiles{Present: true, Form: "gauge", Mean: rd.Value,
					P50: math.NaN(), P90: math.NaN(), P99: math.NaN(), Unit: g.Info().Unit, Source: rd.Source}
			}
		}
		last, known := seen[r.inst]
		if known {
			w.LastSuccess = last
			w.Age = nonNegDur(d.now.Sub(last))
		}
		switch {
		case stale[r.inst]:
			w.Health = sources.Stale
			if !known {
				w.Health = sources.Down
			}
			w.LastError = &sources.ScrapeError{Class: ErrNoSamples,
				Message: "the server has no fresh samples: its scrapes of this worker fail (up = 0, reason on its /targets page) or the worker is gone"}
		case rowsStale:
			w.Health = sources.Stale
			w.LastError = d.srv.LastError
		}
		ts := restarts[r.inst]
		w.Restarts = len(ts)
		if len(ts) > 0 {
			w.LastRestart = ts[len(ts)-1]
		}
		for _, t := range ts {
			if !t.Before(d.now.Add(-window)) {
				w.Restarted = true
			}
		}
		if h != nil {
			for sig, pts := range h.rows[r.inst] {
				w.History[sig] = pts
			}
			if t := h.rowTotal[r.inst]; t != nil {
				w.HitHistory = ratio(h.rowHit[r.inst], t)
			}
		}
		out = append(out, w)
	}
	return out
}

func nonNegDur(d time.Duration) time.Duration {
	if d < 0 {
		return 0
	}
	return d
}

// routerViews reads every gateway's view of the row workers: worker key
// → one RouterView per replica.
func (d *decoder) routerViews() map[string][]sources.RouterView {
	p := d.b.plan
	type rk struct{ worker, replica string }
	views := map[rk]*sources.RouterView{}
	for name, v := range d.f.v {
		if len(name) < 7 || name[len(name)-7:] != "_router" {
			continue
		}
		for _, s := range v {
			sig := parseSig(string(s.Metric[sigTag]))
			val, ok := value(s)
			if sig == sources.SigInvalid || !ok {
				continue
			}
			keyLabel := string(s.Metric["pdtop_key"])
			k := rk{sources.WorkerKey(string(s.Metric[model.LabelName(keyLabel)])), sanitizeName(string(s.Metric[model.LabelName(p.inst)]))}
			rv := views[k]
			if rv == nil {
				rv = &sources.RouterView{Replica: k.replica}
				views[k] = rv
			}
			rd := sources.Reading{Present: true, Value: val}
			if sig.Info().Kind == sources.Counter {
				rd.Increase = val * d.secs
			}
			switch sig {
			case sources.SigGWWorkerInFlight:
				rv.InFlight = rd
			case sources.SigGWWorkerHealth:
				rv.Health = rd
			case sources.SigGWWorkerCB:
				rv.CB = rd
			case sources.SigGWWorkerPicks:
				rv.Picks = rd
			case sources.SigGWWorkerKVBlocks:
				rv.KVBlocks = rd
			case sources.SigGWEngineHitLastBatch:
				rv.EngineHit = rd
			}
		}
	}
	out := map[string][]sources.RouterView{}
	for k, rv := range views {
		out[k.worker] = append(out[k.worker], *rv)
	}
	for _, rvs := range out {
		sort.Slice(rvs, func(i, j int) bool { return rvs[i].Replica < rvs[j].Replica })
	}
	return out
}
