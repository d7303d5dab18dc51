package diagnose

import (
	"math"
	"sort"
	"strings"
	"time"

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

// lastStart returns w's latest restart, or join of a freshly started
// worker, moved back to the first event of its cluster; nil when there is
// none.
func lastStart(s *sources.Snapshot, w *sources.WorkerView) *sources.Event {
	var evs []*sources.Event
	for i := range s.Events {
		ev := &s.Events[i]
		// A worker that joined already busy (discovered when pdtop
		// started, or added to the list) is not a cold start.
		if ev.TargetID == w.ID && (ev.Kind == "restart" || ev.Kind == "joined" && w.FreshStart) {
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
