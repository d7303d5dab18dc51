package diagnose

import (
	"math"
	"sort"
	"strings"
	"time"

	"github.com/pdtop/pdtop/sources"
)

// Evidence levels for the hit-gap causes.
const (
	// minRequests is the fewest finished requests (or offered requests, for
	// a replica) in the window worth a verdict.
	minRequests = 30
	// minTokens stands in for minRequests when a worker exposes no request
	// counter: prompt tokens in the window.
	minTokens = 30000
	// evictionShare is the evicted ÷ prompt tokens at which a worker's
	// evictions count as KV pressure.
	evictionShare = 0.25
	// spillShare is the share of offered requests routed for load at
	// which the spill is listed even under the gap threshold.
	spillShare = 0.1
	// peerTraffic is the least prompt tokens, as a share of a worker's,
	// its peers must have seen to serve as its baseline.
	peerTraffic = 0.5
	// coldAfter is how long after a restart or join a worker's cache
	// counts as possibly still cold.
	coldAfter = 5 * time.Minute
)

// hitVerdicts returns one verdict per gateway replica, then one per
// prefill-side worker.
func hitVerdicts(s *sources.Snapshot, th sources.Thresholds) []sources.HitVerdict {
	ws, pool := prefillSide(s)
	e := &evidence{s: s, th: th, ws: ws, pool: pool}
	var out []sources.HitVerdict
	for i := range s.Gateways {
		out = append(out, e.replica(&s.Gateways[i]))
	}
	for _, w := range ws {
		out = append(out, e.worker(w))
	}
	return out
}

// evidence gathers what the verdicts draw on.
type evidence struct {
	s    *sources.Snapshot
	th   sources.Thresholds
	ws   []*sources.WorkerView
	pool *sources.PoolView
}

// predictedOf sums the predictions of the given replicas as a ratio of
// sums; ok is false when none predicts.
func predictedOf(gs []*sources.GatewayView) (sources.HitRatio, bool) {
	var h sources.HitRatio
	for _, g := range gs {
		p := g.Predicted
		if !p.Present {
			continue
		}
		h.Hit += p.Hit
		h.Total += p.Total
		if h.Unit == "" {
			h.Unit, h.Source = p.Unit, p.Source
		}
		h.Present = true
	}
	if h.Total > 0 {
		h.Ratio = math.Min(1, math.Max(0, h.Hit/h.Total))
	}
	return h, h.Present
}

// basisOf describes a prediction's form.
func basisOf(p sources.HitRatio, what string) (string, bool) {
	switch p.Unit {
	case "requests":
		return what + " (requests with >threshold match: a different scale from tokens)", false
	case "blocks":
		return what + " (selected ÷ query KV blocks)", true
	}
	return what + " (" + p.Unit + ")", true
}

func (e *evidence) replica(g *sources.GatewayView) sources.HitVerdict {
	v := sources.HitVerdict{Scope: "replica", ID: g.ID, Name: g.Name, Role: sources.RoleGateway,
		Actual: e.pool.Hit, SameScale: true}
	if !g.Predicted.Present {
		v.Basis = "no prediction exposed"
		if strings.Contains(strings.ToLower(g.Generation+" "+g.Engine), "smg") {
			v.Basis += " (smg has no prefix-hit counter)"
		}
		v.Verdict = v.Basis + ": workers are compared with their pool peers"
		return v
	}
	v.Expected = g.Predicted
	v.Basis, v.SameScale = basisOf(g.Predicted, "this replica's prediction")
	off := g.Readings.Get(sources.SigGWOffered)
	switch {
	case !e.pool.Hit.Present || e.pool.Hit.Total <= 0:
		v.Causes = []sources.Cause{{Kind: sources.CauseLowTraffic, Evidence: "no prompt tokens at the prefill workers in the window"}}
	case g.Predicted.Total <= 0 || off.Present && off.Increase < minRequests:
		v.Causes = []sources.Cause{{Kind: sources.CauseLowTraffic,
			Evidence: "only " + Num(off.Increase) + " requests at this replica in the window"}}
	default:
		v.GapKnown = true
		v.Gap = g.Predicted.Ratio - e.pool.Hit.Ratio
		v.Large = v.Gap >= e.th.HitGap
		v.Causes = e.replicaCauses(g, v.Large)
	}
	v.Verdict = verdictText(&v, e.th)
	return v
}

func (e *evidence) worker(w *sources.WorkerView) sources.HitVerdict {
	v := sources.HitVerdict{Scope: "worker", ID: w.ID, Name: w.Name, Role: w.Role, Actual: w.Hit, SameScale: true}
	// Expected: the prediction of the replicas that pick this worker.
	var picking, all []*sources.GatewayView
	for i := range e.s.Gateways {
		g := &e.s.Gateways[i]
		all = append(all, g)
		for _, r := range w.Router {
			if r.Replica == g.Name && (r.Picks.Increase > 0 || r.InFlight.Value > 0) {
				picking = append(picking, g)
			}
		}
	}
	if len(picking) == 0 {
		picking = all
	}
	if p, ok := predictedOf(picking); ok {
		v.Expected = p
		what := "the routers' prediction"
		if len(picking) < len(all) {
			what = "the prediction of the replicas that pick it"
		}
		v.Basis, v.SameScale = basisOf(p, what+", fleet-wide")
	} else if peers, n := e.peers(w); n > 0 {
		v.Expected = peers
		v.Basis = "its pool peers' actual hit (no gateway exposes a prediction)"
	} else if len(e.ws) > 1 && w.Hit.Present {
		v.Basis = "nothing to compare: no prediction exposed, and its peers saw under half its prompt tokens"
	} else {
		v.Basis = "nothing to compare: no prediction exposed and no peer with traffic"
	}
	low, lowWhy := e.lowTraffic(w)
	if a, ok := e.sinceRestart(w); ok {
		// A restart inside the window: the window's ratio still mixes in
		// the warm cache before it; what matters is the cold one since.
		v.Actual = a
		low = a.Total < minTokens
		lowWhy = "only " + Num(a.Total) + " prompt tokens since the restart"
	}
	switch {
	case w.Health == sources.Down || w.Health == sources.Pending:
		v.Verdict = "no data: target " + w.Health.String()
		return v
	case noCacheData(w):
		v.Causes = []sources.Cause{{Kind: sources.CauseNoCacheData,
			Evidence: "publishes no prompt/cached-token counters"}}
	case low:
		v.Causes = []sources.Cause{{Kind: sources.CauseLowTraffic, Evidence: lowWhy}}
		if c, ok := e.restartCause(w); ok {
			v.Causes = append(v.Causes, c)
		}
	case !v.Expected.Present || v.Expected.Total <= 0:
		v.Causes = e.workerCauses(w, false)
	default:
		v.GapKnown = true
		v.Gap = v.Expected.Ratio - v.Actual.Ratio
		v.Large = v.Gap >= e.th.HitGap
		v.Causes = e.workerCauses(w, v.Large)
	}
	v.Verdict = verdictText(&v, e.th)
	return v
}

// peers returns the actual hit of w's pool peers with traffic (ratio of
// sums) and how many there are.
func (e *evidence) peers(w *sources.WorkerView) (sources.HitRatio, int) {
	var h sources.HitRatio
	n := 0
	for _, o := range e.ws {
		if o.ID == w.ID || !o.Hit.Present || o.Hit.Total <= 0 {
			continue
		}
		if low, _ := e.lowTraffic(o); low {
			continue
		}
		h.Hit += o.Hit.Hit
		h.Total += o.Hit.Total
		h.Unit, h.Source = o.Hit.Unit, o.Hit.Source
		n++
	}
	// Peers much quieter than w (a worker the routers avoid hits on the
	// little it still gets) are no baseline.
	if h.Total < peerTraffic*w.Hit.Total {
		return sources.HitRatio{}, 0
	}
	if h.Total > 0 {
		h.Present = true
		h.Ratio = h.Hit / h.Total
	}
	return h, n
}

// sinceRestart is w's actual hit since a restart or join inside the
// window (from its history: Σ cached ÷ Σ prompt tokens per step); ok is
// false without one or without that history.
func (e *evidence) sinceRestart(w *sources.WorkerView) (sources.HitRatio, bool) {
	last := lastStart(e.s, w)
	if last == nil || e.s.Time.Sub(last.Time) > e.s.Window || !w.Hit.Present {
		return sources.HitRatio{}, false
	}
	st := step(e.s)
	ratio, hit, total := windowHit(e.s, w, last.Time, e.s.Time.Add(coldAfter), st)
	if total <= 0 || !finite(ratio) {
		return sources.HitRatio{}, false
	}
	sec := st.Seconds()
	return sources.HitRatio{Present: true, Ratio: ratio, Hit: hit * sec, Total: total * sec, Unit: "tokens",
		Source: "cached ÷ prompt tokens since the restart " + dur(e.s.Time.Sub(last.Time)) + " ago"}, true
}

// cacheCounters are the worker counters a prefix-hit ratio is built from
// (store.hitTerms); a worker exposing none publishes no cache data.
var cacheCounters = []sources.Signal{sources.SigPromptTokens, sources.SigEffectiveInput, sources.SigRealtimePrefillCompute}

// noCacheData reports a worker that is up, has served requests, and
// exposes none of the counters a hit ratio needs. (A worker with no
// request counter yet has had no traffic: many counters appear only at
// their first increment.)
func noCacheData(w *sources.WorkerView) bool {
	if w.Health != sources.Up || w.Hit.Present {
		return false
	}
	for _, sig := range cacheCounters {
		if _, ok := w.Readings[sig]; ok {
			return false
		}
	}
	served := false
	for _, sig := range []sources.Signal{sources.SigRequests, sources.SigGenerationTokens} {
		if r, ok := w.Readings[sig]; ok && r.Source != "" {
			served = true
		}
	}
	return served
}

// lowTraffic reports whether w saw too little work in the window to judge
// its hit ratio, and says how little.
func (e *evidence) lowTraffic(w *sources.WorkerView) (bool, string) {
	if !w.Hit.Present {
		if noCacheData(w) || w.Health != sources.Up {
			return false, ""
		}
		for _, sig := range cacheCounters {
			if _, ok := w.Readings[sig]; ok {
				return true, "not enough samples yet"
			}
		}
		return true, "no requests yet"
	}
	if r := w.Readings.Get(sources.SigRequests); r.Present {
		if r.Increase < minRequests {
			return true, "only " + Num(r.Increase) + " requests in the window"
		}
		return false, ""
	}
	if w.Hit.Total < minTokens {
		return true, "only " + Num(w.Hit.Total) + " prompt tokens in the window"
	}
	return false, ""
}

// workerCauses lists the evidence about w; with large false only the
// evidence worth seeing before it moves the numbers (restarts, replicas
// disagreeing) is listed.
func (e *evidence) workerCauses(w *sources.WorkerView, large bool) []sources.Cause {
	var out []sources.Cause
	if c, ok := e.restartCause(w); ok {
		out = append(out, c)
	}
	if c, ok := kvPressure(w, e.th); ok && large {
		out = append(out, c)
	}
	if c, ok := e.disagreement(w); ok {
		out = append(out, c)
	}
	if c, share, ok := e.spill(nil); ok && (large || share >= spillShare) {
		out = append(out, c)
	}
	if large && len(out) == 0 {
		out = append(out, sources.Cause{Kind: sources.CauseUnexplained,
			Evidence: "no restart, eviction, disagreement or spill seen"})
	}
	return out
}

func (e *evidence) replicaCauses(g *sources.GatewayView, large bool) []sources.Cause {
	var out []sources.Cause
	for _, w := range e.ws {
		if c, ok := e.restartCause(w); ok {
			c.Evidence = w.Name + " " + c.Evidence
			out = append(out, c)
		}
	}
	if large {
		var hot []string
		for _, w := range e.ws {
			if c, ok := kvPressure(w, e.th); ok {
				hot = append(hot, w.Name+" "+c.Evidence)
			}
		}
		if len(hot) > 0 {
			out = append(out, sources.Cause{Kind: sources.CauseKVPressure, Evidence: strings.Join(hot, "; ")})
		}
	}
	if c, ok := e.replicaSkew(g); ok {
		out = append(out, c)
	}
	if c, share, ok := e.spill(g); ok && (large || share >= spillShare) {
		out = append(out, c)
	}
	if large {
		var none []string
		for _, w := range e.ws {
			if noCacheData(w) {
				none = append(none, w.Name)
			}
		}
		if len(none) > 0 {
			out = append(out, sources.Cause{Kind: sources.CauseNoCacheData,
				Evidence: strings.Join(none, ", ") + " publish no cache counters"})
		}
	}
	if large && len(out) == 0 {
		out = append(out, sources.Cause{Kind: sources.CauseUnexplained,
			Evidence: "no restart, eviction, disagreement or spill seen"})
	}
	return out
}

// restartCause reports a restart or join of w recent enough that its
// cache may still be cold: inside the window, or within coldAfter.
func (e *evidence) restartCause(w *sources.WorkerView) (sources.Cause, bool) {
	last := lastStart(e.s, w)
	if last == nil {
		if w.Restarted {
			return sources.Cause{Kind: sources.CauseRestart, Evidence: "restarted inside the window: cold cache"}, true
		}
		return sources.Cause{}, false
	}
	ago := e.s.Time.Sub(last.Time)
	if ago > coldAfter && !w.Restarted {
		return sources.Cause{}, false
	}
	what := "restarted"
	if last.Kind == "joined" {
		what = "joined"
	}
	txt := what + " " + dur(ago) + " ago"
	if d, _, _ := strings.Cut(last.Detail, " ("); d != "" && last.Kind == "restart" {
		txt += " (" + d + ")"
	}
	if ago <= e.s.Window {
		txt += ": cold cache"
	} else {
		txt += ": cache may still be warming"
	}
	return sources.Cause{Kind: sources.CauseRestart, Evidence: txt}, true
}

// restartCluster is how close restart events of one target must be to
// count as one restart (a restarted worker can show a new pid first and
// a counter decrease a few scrapes later, when a counter reappears).
const restartCluster = time.Minute

// lastStart returns w's latest restart or join, moved back to the first
// event of its cluster; nil when there is none.
func lastStart(s *sources.Snapshot, w *sources.WorkerView) *sources.Event {
	var evs []*sources.Event
	for i := range s.Events {
		ev := &s.Events[i]
		if ev.TargetID == w.ID && (ev.Kind == "restart" || ev.Kind == "joined") {
			evs = append(evs, ev)
		}
	}
	if len(evs) == 0 {
		return nil
	}
	i := len(evs) - 1
	for i > 0 && evs[i].Time.Sub(evs[i-1].Time) <= restartCluster {
		i--
	}
	return evs[i]
}

// kvPressure reports evictions, a full KV pool or retractions on w.
func kvPressure(w *sources.WorkerView, th sources.Thresholds) (sources.Cause, bool) {
	var parts []string
	r := w.Readings
	if ev, pr := r.Get(sources.SigEvictedTokens), r.Get(sources.SigPromptTokens); ev.Present && pr.Present && pr.Value > 0 {
		if share := ev.Value / pr.Value; share >= evictionShare {
			parts = append(parts, "evicting "+Num(ev.Value)+" tok/s ("+Pct(share)+" of its prompt tokens)")
		}
	}
	if u := r.Get(sources.SigKVUsage); u.Present && u.Value >= th.KVUsage {
		parts = append(parts, "KV "+Pct(u.Value)+" full")
	}
	if rt := r.Get(sources.SigRetractions); rt.Present && rt.Value > 0 {
		parts = append(parts, Num(rt.Value)+" retractions/s")
	}
	if len(parts) == 0 {
		return sources.Cause{}, false
	}
	return sources.Cause{Kind: sources.CauseKVPressure, Evidence: strings.Join(parts, ", ")}, true
}

// disagreement reports gateway replicas seeing w differently: health or
// circuit state.
func (e *evidence) disagreement(w *sources.WorkerView) (sources.Cause, bool) {
	if len(w.Router) < 2 {
		return sources.Cause{}, false
	}
	state := func(r *sources.RouterView) string {
		switch {
		case r.Health.Present && r.Health.Value == 0:
			return "unhealthy"
		case r.CB.Present && r.CB.Value == 1:
			return "circuit open"
		case r.CB.Present && r.CB.Value == 2:
			return "circuit half-open"
		case r.Health.Present || r.CB.Present:
			return "healthy"
		}
		return ""
	}
	byState := map[string][]string{}
	for i := range w.Router {
		if st := state(&w.Router[i]); st != "" {
			byState[st] = append(byState[st], w.Router[i].Replica)
		}
	}
	if len(byState) < 2 {
		return sources.Cause{}, false
	}
	keys := make([]string, 0, len(byState))
	for k := range byState {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] > keys[j] }) // unhealthy, healthy, circuit …
	var parts []string
	for _, k := range keys {
		parts = append(parts, strings.Join(byState[k], ", ")+" "+k)
	}
	return sources.Cause{Kind: sources.CauseReplicasDisagree,
		Evidence: "replicas disagree: " + strings.Join(parts, " vs ")}, true
}

// replicaSkew reports g's prediction differing from the other replicas'
// by at least half the gap threshold, or a worker g sees unlike the others.
func (e *evidence) replicaSkew(g *sources.GatewayView) (sources.Cause, bool) {
	var others []*sources.GatewayView
	for i := range e.s.Gateways {
		if o := &e.s.Gateways[i]; o.ID != g.ID {
			others = append(others, o)
		}
	}
	if p, ok := predictedOf(others); ok && p.Total > 0 && g.Predicted.Present {
		if d := g.Predicted.Ratio - p.Ratio; math.Abs(d) >= e.th.HitGap/2 {
			return sources.Cause{Kind: sources.CauseReplicasDisagree,
				Evidence: "replicas disagree: this one predicts " + Pct(g.Predicted.Ratio) + ", the others " + Pct(p.Ratio)}, true
		}
	}
	for _, w := range e.ws {
		if c, ok := e.disagreement(w); ok && strings.Contains(c.Evidence, g.Name) {
			c.Evidence = strings.Replace(c.Evidence, "replicas disagree:", "replicas disagree on "+w.Name+":", 1)
			return c, true
		}
	}
	return sources.Cause{}, false
}

// spill reports requests routed for load rather than locality (imbalance
// events) at g, or at any replica when g is nil, with their share of the
// offered requests (0 when unknown).
func (e *evidence) spill(g *sources.GatewayView) (sources.Cause, float64, bool) {
	var rate, offered float64
	var where []string
	for i := range e.s.Gateways {
		o := &e.s.Gateways[i]
		if g != nil && o.ID != g.ID {
			continue
		}
		if r := o.Readings.Get(sources.SigGWImbalanceEvents); r.Present && r.Increase > 0 {
			rate += r.Value
			where = append(where, o.Name)
			if off := o.Readings.Get(sources.SigGWOffered); off.Present {
				offered += off.Value
			}
		}
	}
	if len(where) == 0 {
		return sources.Cause{}, 0, false
	}
	txt := Num(rate) + " req/s"
	share := 0.0
	if offered > 0 {
		share = rate / offered
		txt += " (" + Pct(share) + " of offered)"
	}
	return sources.Cause{Kind: sources.CauseSpilled, Evidence: txt + " routed for load, not locality (imbalance events on " +
		strings.Join(where, ", ") + ")"}, share, true
}

// verdictText is the reading of v in words.
func verdictText(v *sources.HitVerdict, th sources.Thresholds) string {
	first := func() string {
		if len(v.Causes) == 0 {
			return ""
		}
		parts := []string{v.Causes[0].Evidence}
		if len(v.Causes) > 1 {
			parts = append(parts, v.Causes[1].Evidence)
		}
		return strings.Join(parts, "; ")
	}
	scale := ""
	if !v.SameScale {
		scale = " (different scale)"
	}
	hit := "hit " + Pct(v.Actual.Ratio)
	if strings.Contains(v.Actual.Source, "since the restart") {
		hit += " since the restart"
	}
	expected := Pct(v.Expected.Ratio) + " predicted"
	if strings.HasPrefix(v.Basis, "its pool peers") {
		expected = Pct(v.Expected.Ratio) + " on its peers"
	}
	figures := hit + " vs " + expected + ", gap " + Pts(v.Gap) + scale
	switch {
	case !v.GapKnown && len(v.Causes) > 0 && (v.Causes[0].Kind == sources.CauseLowTraffic || v.Causes[0].Kind == sources.CauseNoCacheData):
		if v.Causes[0].Kind == sources.CauseLowTraffic {
			return "too little traffic to judge: " + v.Causes[0].Evidence
		}
		return "no cache data: " + v.Causes[0].Evidence
	case !v.GapKnown:
		if c := first(); c != "" {
			return "nothing to compare; " + c
		}
		return "nothing to compare"
	case v.Large:
		return figures + ": " + first()
	}
	c := first()
	switch {
	case c != "" && v.Gap >= 0:
		return figures + " (under the " + Pts(th.HitGap) + " threshold); " + c
	case c != "":
		return hit + ", above the " + expected + scale + "; " + c
	case v.Gap < 0:
		return "actual above expected by " + Pts(-v.Gap) + scale
	}
	return "gap " + Pts(v.Gap) + scale + ", under the " + Pts(th.HitGap) + " threshold"
}
