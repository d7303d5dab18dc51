package store

import (
	"math"
	"sort"
	"time"

	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/sources/diagnose"
)

// historySignals get a per-step history on every worker for sparklines.
var historySignals = []sources.Signal{
	sources.SigWaiting, sources.SigRunning, sources.SigKVUsage,
	sources.SigBootstrapQueue, sources.SigInflightQueue,
	sources.SigPreallocQueue, sources.SigTransferQueue,
	sources.SigPromptTokens, sources.SigGenerationTokens,
	// For the diagnoses (sources/diagnose): uncached prompt tokens and
	// decode progress per step, finished requests for stall detection.
	sources.SigCachedTokens, sources.SigRealtimePrefillCompute, sources.SigRealtimeDecode,
	sources.SigRequests,
}

// historyCounts get a per-step history of their observation rate (per
// second): KV transfers completed, for stall detection.
var historyCounts = []sources.Signal{sources.SigKVXferLatency}

// kvGaugeFallback maps the KV-transfer histogram signals to their old
// gauge form.
var kvGaugeFallback = map[sources.Signal]sources.Signal{
	sources.SigKVXferLatency: sources.SigKVXferLatencyGauge,
	sources.SigKVXferSpeed:   sources.SigKVXferSpeedGauge,
	sources.SigKVXferSize:    sources.SigKVXferSizeGauge,
}

// Snapshot derives the fleet's state at now over the given window (clamped
// to the store's MaxWindow) with the default thresholds. It never returns
// nil.
func (s *Store) Snapshot(now time.Time, window time.Duration) *sources.Snapshot {
	return s.SnapshotWith(now, window, sources.Thresholds{})
}

// SnapshotWith is Snapshot with the given thresholds (zero fields take
// their defaults): they are attached to the snapshot and drive its
// diagnoses (sources/diagnose), run as the last step.
func (s *Store) SnapshotWith(now time.Time, window time.Duration, th sources.Thresholds) *sources.Snapshot {
	snap := s.derive(now, window)
	snap.Thresholds = th.WithDefaults()
	diagnose.Run(snap)
	return snap
}

func (s *Store) derive(now time.Time, window time.Duration) *sources.Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	if window <= 0 {
		window = time.Minute
	}
	if window > s.opts.MaxWindow {
		window = s.opts.MaxWindow
	}
	snap := &sources.Snapshot{
		Time:      now,
		Window:    window,
		Interval:  s.opts.Interval,
		Charts:    map[string]sources.Series{},
		Events:    append([]sources.Event(nil), s.events...),
		Discovery: append([]sources.DiscoveryStatus(nil), s.discovery...),
	}
	steps := s.chartBounds(now, window)
	snap.ChartSpan = steps.total
	var workers, gateways []*targetState
	for _, st := range s.sorted() {
		st.idx = st.stepIndex(steps)
		if st.hist.len() > 0 {
			if t := st.hist.at(0).t; snap.DataSince.IsZero() || t.Before(snap.DataSince) {
				snap.DataSince = t
			}
		}
		status := st.status(now, window)
		if id := st.t.Gateway; id != "" {
			status.Gateway = id
			if g := s.targets[id]; g != nil {
				status.Gateway = g.t.Name
			}
		}
		snap.Targets = append(snap.Targets, status)
		snap.Fleet.Targets++
		if status.Health == sources.Up {
			snap.Fleet.TargetsUp++
		}
		if st.role() == sources.RoleGateway {
			gateways = append(gateways, st)
			snap.Gateways = append(snap.Gateways, st.gatewayView(status, window, steps))
		} else {
			workers = append(workers, st)
			snap.Workers = append(snap.Workers, st.workerView(status, window, steps))
		}
	}
	for i := range snap.Workers {
		w := &snap.Workers[i]
		key := workers[i].t.Key()
		for gi, g := range gateways {
			if rv, ok := g.routerView(key, snap.Gateways[gi].Name, window); ok {
				w.Router = append(w.Router, rv)
			}
		}
	}
	markDisagreement(snap)
	s.pools(snap, workers)
	s.fleet(snap)
	s.charts(snap, workers, gateways, steps)
	return snap
}

// window returns (from, to] for a target: ending at its newest frame so
// a stale target keeps showing its last good figures.
func (ts *targetState) window(window time.Duration) (from, to time.Time) {
	f := ts.hist.latest()
	if f == nil {
		return time.Time{}, time.Time{}
	}
	return f.t.Add(-window), f.t
}

func (ts *targetState) status(now time.Time, window time.Duration) sources.TargetStatus {
	st := sources.TargetStatus{
		ID: ts.t.ID, Name: ts.t.Name, Role: ts.role(), Origin: ts.t.Origin,
		Health: ts.health, LastError: ts.lastErr, LastSuccess: ts.lastSuccess,
		Duration: ts.duration, BytesWire: ts.bytesWire, BytesBody: ts.bytesBody,
		Series: ts.stats.Series, Dropped: ts.stats.Dropped, Skipped: ts.stats.Skipped,
		Problems: ts.stats.ProblemCount, Generation: ts.generation, Engine: ts.engine,
		Restarts: len(ts.restarts), Slow: ts.slow, FreshStart: ts.fresh,
		Auth: ts.t.Auth, Via: ts.via, DirectError: ts.directErr,
		ProblemSamples: ts.stats.Problems, Warnings: ts.stats.Warnings,
	}
	if !ts.lastSuccess.IsZero() {
		st.Age = now.Sub(ts.lastSuccess)
	}
	if n := len(ts.restarts); n > 0 {
		st.LastRestart = ts.restarts[n-1]
	}
	return st
}

func (ts *targetState) workerView(status sources.TargetStatus, window time.Duration, cs chartSpec) sources.WorkerView {
	from, to := ts.window(window)
	w := sources.WorkerView{
		TargetStatus: status,
		Readings:     sources.Readings{},
		Dists:        map[sources.Signal]sources.Quantiles{},
		History:      map[sources.Signal][]float64{},
	}
	for id := range ts.scalars {
		if id.key != "" || id.sig.Info().Scope != sources.ScopeWorker {
			continue
		}
		if r := ts.reading(id.sig, "", from, to); r.Present || r.Source != "" {
			w.Readings[id.sig] = r
		}
	}
	for id := range ts.hists {
		if id.key != "" || id.sig.Info().Scope != sources.ScopeWorker {
			continue
		}
		d, _ := ts.histDist(id.sig, "", from, to)
		w.Dists[id.sig] = quantiles(d, id.sig.Info().Unit, ts.sourceNames[id.sig])
	}
	for h, g := range kvGaugeFallback {
		if w.Dists[h].Present {
			continue
		}
		if r := w.Readings.Get(g); r.Present {
			w.Dists[h] = sources.Quantiles{Present: true, Form: "gauge", Mean: r.Value,
				P50: math.NaN(), P90: math.NaN(), P99: math.NaN(), Unit: g.Info().Unit, Source: r.Source}
		}
	}
	if r, ok := kvResident(w.Readings); ok {
		w.Readings[sources.SigKVResident] = r
	}
	w.Output = ts.outputReading(w.Readings)
	if hit, total, src, ok := ts.hitTerms(from, to); ok {
		w.Hit = hitRatio(hit, total, "tokens", src)
	}
	w.HitWindow = w.Hit
	if r := ts.restartIn(from); !r.IsZero() {
		w.Hit = ts.hitSince(r, to)
	}
	idx := ts.idx
	for _, sig := range historySignals {
		if col, ok := ts.scalars[histID{sig, ""}]; ok {
			w.History[sig] = ts.stepSeries(col, idx)
		}
	}
	for _, sig := range historyCounts {
		if hl, ok := ts.hists[histID{sig, ""}]; ok {
			w.History[sig] = ts.stepSeries(hl.count, idx)
		}
	}
	w.HitHistory = ts.hitHistory(idx)
	w.Restarted = !ts.restartIn(from).IsZero()
	return w
}

// restartIn returns the latest restart at or after from (the window's
// start), zero without one.
func (ts *targetState) restartIn(from time.Time) time.Time {
	if n := len(ts.restarts); n > 0 && !ts.restarts[n-1].Before(from) {
		return ts.restarts[n-1]
	}
	return time.Time{}
}

// hitSince is the worker's hit counted by the new process alone after a
// restart: the reset-corrected increases from the last frame before the
// restart's (the old process's last scrape) to `to` — what the new
// process counted, including before its first scrape, as Prometheus'
// increase() reads a counter reset. Present only with at least
// sources.MinTokensSinceRestart prompt tokens; Since is set either way, so
// it reads "n/a (too few tokens since the restart)", never the old
// process's warm-cache ratio.
func (ts *targetState) hitSince(restart, to time.Time) sources.HitRatio {
	h := sources.HitRatio{Unit: "tokens", Since: restart, Source: "since the restart"}
	from := restart
	if fi := ts.hist.firstAtOrAfter(restart); fi > 0 {
		from = ts.hist.at(fi - 1).t
	}
	hit, total, src, ok := ts.hitTerms(from, to)
	if src != "" {
		h.Source = src + ", since the restart"
	}
	if !ok {
		return h
	}
	h.Hit, h.Total = hit, total
	if total >= sources.MinTokensSinceRestart {
		h.Present = true
		h.Ratio = math.Min(1, math.Max(0, hit/total))
	}
	return h
}

func (ts *targetState) gatewayView(status sources.TargetStatus, window time.Duration, cs chartSpec) sources.GatewayView {
	from, to := ts.window(window)
	g := sources.GatewayView{
		TargetStatus: status,
		Readings:     sources.Readings{},
		Responses:    map[string]sources.Reading{},
		Errors:       map[string]sources.Reading{},
		Dists:        map[sources.Signal]sources.Quantiles{},
	}
	workers := map[string]bool{}
	for id := range ts.scalars {
		if id.sig.Info().Scope != sources.ScopeGateway {
			continue
		}
		switch {
		case id.sig == sources.SigGWResponses:
			g.Responses[id.key] = ts.reading(id.sig, id.key, from, to)
		case id.sig == sources.SigGWErrors:
			g.Errors[id.key] = ts.reading(id.sig, id.key, from, to)
		case id.key != "":
			workers[id.key] = true
		default:
			if r := ts.reading(id.sig, "", from, to); r.Present || r.Source != "" {
				g.Readings[id.sig] = r
			}
		}
	}
	fillClasses(g.Responses)
	for k := range workers {
		g.Workers = append(g.Workers, k)
	}
	sort.Strings(g.Workers)
	for id := range ts.hists {
		if id.key == "" && id.sig.Info().Scope == sources.ScopeGateway {
			d, _ := ts.histDist(id.sig, "", from, to)
			g.Dists[id.sig] = quantiles(d, id.sig.Info().Unit, ts.sourceNames[id.sig])
		}
	}
	g.Predicted, g.Ceiling = ts.predicted(from, to)
	g.PredictedHistory = ts.predictedHistory(ts.idx)
	return g
}

// predicted returns the replica's predicted hit figure and, on the 2026
// router, the fleet-best ceiling (matched ÷ query blocks).
func (ts *targetState) predicted(from, to time.Time) (pred, ceil sources.HitRatio) {
	inc := func(sig sources.Signal) (float64, bool) {
		col, ok := ts.scalars[histID{sig, ""}]
		if !ok {
			return 0, false
		}
		d, _, ok := ts.counterDelta(col, from, to)
		return d, ok
	}
	if q, ok := inc(sources.SigGWQueryBlocks); ok {
		sel, _ := inc(sources.SigGWSelectedBlocks)
		m, _ := inc(sources.SigGWMatchedBlocks)
		return hitRatio(sel, q, "blocks", "selected_overlap_blocks / cache_aware_query_blocks"),
			hitRatio(m, q, "blocks", "matched_overlap_blocks / cache_aware_query_blocks")
	}
	h, okh := inc(sources.SigGWCacheHits)
	m, okm := inc(sources.SigGWCacheMisses)
	if okh || okm {
		return hitRatio(h, h+m, "requests", "cache_hits / (cache_hits + cache_misses), per request >threshold"), sources.HitRatio{}
	}
	return sources.HitRatio{}, sources.HitRatio{}
}

// routerView is this gateway's view of the worker with the given key.
func (ts *targetState) routerView(key, replica string, window time.Duration) (sources.RouterView, bool) {
	from, to := ts.window(window)
	rv := sources.RouterView{
		Replica:   replica,
		InFlight:  ts.reading(sources.SigGWWorkerInFlight, key, from, to),
		Health:    ts.reading(sources.SigGWWorkerHealth, key, from, to),
		CB:        ts.reading(sources.SigGWWorkerCB, key, from, to),
		Picks:     ts.reading(sources.SigGWWorkerPicks, key, from, to),
		KVBlocks:  ts.reading(sources.SigGWWorkerKVBlocks, key, from, to),
		EngineHit: ts.reading(sources.SigGWEngineHitLastBatch, key, from, to),
	}
	any := false
	for _, sig := range []sources.Signal{sources.SigGWWorkerInFlight, sources.SigGWWorkerHealth, sources.SigGWWorkerCB,
		sources.SigGWWorkerPicks, sources.SigGWWorkerKVBlocks, sources.SigGWEngineHitLastBatch} {
		if _, ok := ts.scalars[histID{sig, key}]; ok {
			any = true
		}
	}
	return rv, any
}

// FillStatusClasses applies fillClasses' rule to another backend's
// gateway responses (the Prometheus backend's), so both modes show the
// same status-class columns.
func FillStatusClasses(rs map[string]sources.Reading) { fillClasses(rs) }

// fillClasses gives a replica that exposes its responses family a reading
// for every status class: a class it never answered has no series yet
// (labelled counters are created at their first increment), which is 0
// answers, not "not exposed". The filled readings have a rate exactly
// when the replica's other classes do.
func fillClasses(rs map[string]sources.Reading) {
	if len(rs) == 0 {
		return
	}
	var fam sources.Reading
	for _, r := range rs {
		fam.Present = fam.Present || r.Present
		if fam.Source == "" {
			fam.Source = r.Source
		}
	}
	for _, k := range sources.StatusClasses {
		if _, ok := rs[k]; !ok {
			rs[k] = sources.Reading{Present: fam.Present, Source: fam.Source}
		}
	}
}

// kvResident derives sources.SigKVResident from the worker's latest KV
// token gauges: (used + evictable) ÷ capacity, capped at 1.
func kvResident(rs sources.Readings) (sources.Reading, bool) {
	used, ev, capy := rs[sources.SigKVUsedTokens], rs[sources.SigKVEvictableTokens], rs[sources.SigKVCapacity]
	if !used.Present || !ev.Present || !capy.Present || !(capy.Value > 0) {
		return sources.Reading{}, false
	}
	v := math.Min(1, math.Max(0, (used.Value+ev.Value)/capy.Value))
	return sources.Reading{Present: true, Value: v, Source: KVResidentSource}, true
}

// KVResidentSource is SigKVResident's Source: the formula over the three
// readings it is derived from (each with its own raw metric).
const KVResidentSource = "(KV used + KV evictable) ÷ KV capacity"
