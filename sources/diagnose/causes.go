package diagnose

import (
	"math"
	"sort"
	"strings"

	"github.com/pdtop/pdtop/sources"
)

// The evidence behind a hit-gap verdict: each function reports one kind
// of cause, in words, from the snapshot's figures and events.

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
// cache may still be cold: a restart inside the window or within
// coldAfter; a join while the window still holds part of the worker's
// first minute (coldSpan) — after that its own traffic has warmed it and
// the window's figures no longer include its cold start.
func (e *evidence) restartCause(w *sources.WorkerView) (sources.Cause, bool) {
	last := lastStart(e.s, w)
	if last == nil {
		if w.Restarted {
			return sources.Cause{Kind: sources.CauseRestart, Evidence: "restarted inside the window: cold cache"}, true
		}
		return sources.Cause{}, false
	}
	ago := e.s.Time.Sub(last.Time)
	if last.Kind == "joined" && ago > coldSpan+e.s.Window {
		return sources.Cause{}, false
	}
	if ago > coldAfter && !w.Restarted {
		return sources.Cause{}, false
	}
	what := "restarted"
	if last.Kind == "joined" {
		what = "joined"
	}
	txt := what + " " + sources.FormatAge(ago) + " ago"
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

// lastStart returns w's latest restart, or join of a freshly started
// worker; nil when there is none. Its time is the restart event's (the
// store's TargetStatus.LastRestart): every age and every since-restart
// figure of one restart counts from it.
func lastStart(s *sources.Snapshot, w *sources.WorkerView) *sources.Event {
	var evs []*sources.Event
	for i := range s.Events {
		ev := &s.Events[i]
		// A worker found by pdtop's initial discovery, or that joined
		// already busy, is not a cold start.
		if ev.TargetID == w.ID && ev.ColdStart(w.FreshStart) {
			evs = append(evs, ev)
		}
	}
	if len(evs) == 0 {
		return nil
	}
	return evs[len(evs)-1]
}

// kvPressure reports evictions, a full KV pool or retractions on w.
func kvPressure(w *sources.WorkerView, th sources.Thresholds) (sources.Cause, bool) {
	var parts []string
	r := w.Readings
	evicting := false
	if ev, pr := r.Get(sources.SigEvictedTokens), r.Get(sources.SigPromptTokens); ev.Present && pr.Present && pr.Value > 0 {
		if share := ev.Value / pr.Value; share >= evictionShare {
			evicting = true
			parts = append(parts, "evicting "+Num(ev.Value)+" tok/s ("+Pct(share)+" of its prompt tokens)")
		}
	}
	if u := r.Get(sources.SigKVUsage); u.Present && u.Value >= th.KVUsage {
		parts = append(parts, "KV "+Pct(u.Value)+" full")
	} else if res := r.Get(sources.SigKVResident); evicting && res.Present && res.Value >= th.KVUsage {
		parts = append(parts, "KV "+Pct(res.Value)+" resident (used + evictable)")
	}
	if rt := r.Get(sources.SigRetractions); rt.Present && rt.Value > 0 {
		parts = append(parts, Num(rt.Value)+" retractions/s")
	}
	if len(parts) == 0 {
		return sources.Cause{}, false
	}
	return sources.Cause{Kind: sources.CauseKVPressure, Evidence: strings.Join(parts, ", ")}, true
}

// missLoadGap is how many fewer in-flight requests than its peers' mean
// the least-loaded worker must carry to count as the one taking the misses.
const missLoadGap = 5

// takesMisses reports a worker that is the least loaded of its pool at the
// routers (in-flight requests summed over replicas, below every peer and
// missLoadGap below their mean): cache-aware routing sends a prompt that
// matches no worker's cache to the least-loaded one, so this worker gets
// the pool's misses and a lower hit than its peers, whatever its cache
// does. When the load is prefill
// waiting for decode (bootstrap queues over the queue threshold, as in a
// decode saturation) the evidence says so.
func (e *evidence) takesMisses(w *sources.WorkerView) (sources.Cause, bool) {
	load := func(x *sources.WorkerView) (float64, bool) {
		sum, ok := 0.0, false
		for _, r := range x.Router {
			if r.InFlight.Present {
				sum += r.InFlight.Value
				ok = true
			}
		}
		return sum, ok
	}
	mine, ok := load(w)
	if !ok {
		return sources.Cause{}, false
	}
	var peers []string
	var total float64
	for _, o := range e.ws {
		if o.ID == w.ID || o.Health != sources.Up {
			continue
		}
		if l, ok := load(o); ok {
			if l <= mine {
				return sources.Cause{}, false // not the least loaded
			}
			total += l
			peers = append(peers, o.Name+" "+Num(l))
		}
	}
	if len(peers) == 0 || total/float64(len(peers))-mine < missLoadGap {
		return sources.Cause{}, false
	}
	txt := "least loaded at the routers (" + Num(mine) + " in flight vs " + strings.Join(peers, ", ") +
		"): cache-aware routing sends it the prompts no worker has cached"
	var boot []string
	for _, o := range e.ws {
		if q := o.Readings.Get(sources.SigBootstrapQueue); q.Present && q.Value >= e.th.QueueDepth {
			boot = append(boot, o.Name+" "+Num(q.Value))
		}
	}
	if len(boot) > 0 {
		txt += "; that load is prefill waiting for decode (bootstrap queue " + strings.Join(boot, ", ") + ")"
	}
	return sources.Cause{Kind: sources.CauseTakesMisses, Evidence: txt}, true
}

// kvChurn reports the evidence of KV pressure that needs no prediction:
// evicting at least evictionShare of its prompt tokens while its KV pool
// is full — usage, or residency (used + evictable) for a radix cache that
// keeps what it could evict — at or over the KV threshold.
func kvChurn(w *sources.WorkerView, th sources.Thresholds) (sources.Cause, bool) {
	r := w.Readings
	ev, pr := r.Get(sources.SigEvictedTokens), r.Get(sources.SigPromptTokens)
	if !ev.Present || !pr.Present || !(pr.Value > 0) || ev.Value/pr.Value < evictionShare {
		return sources.Cause{}, false
	}
	u, res := r.Get(sources.SigKVUsage), r.Get(sources.SigKVResident)
	if !(u.Present && u.Value >= th.KVUsage) && !(res.Present && res.Value >= th.KVUsage) {
		return sources.Cause{}, false
	}
	return kvPressure(w, th)
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
