package diagnose

import (
	"math"
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
	for _, w := range ws {
		// A backend that does not count the hit since a restart itself
		// gets it from the history here, into the worker's own figure: the
		// table and the verdict show one number.
		if w.Hit.Since.IsZero() && w.Restarted {
			if a, ok := e.historySinceRestart(w); ok {
				w.Hit = a
			}
		}
	}
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
	p, predicted := predictedOf(picking)
	if predicted {
		v.Expected = p
		what := "the routers' prediction"
		if len(picking) < len(all) {
			what = "the prediction of the replicas that pick it"
		}
		v.Basis, v.SameScale = basisOf(p, what+", fleet-wide")
	} else if peers, n := e.peers(w); n > 0 {
		v.Expected = peers
		v.Basis = peersBasis
	} else if len(e.ws) > 1 && w.Hit.Present {
		v.Basis = noBaseline + "no prediction exposed, and its peers saw under half its prompt tokens"
	} else {
		v.Basis = noBaseline + "no prediction exposed and no peer with traffic"
	}
	if w.Health != sources.Up {
		// Its last figures are kept on screen, but a worker that does not
		// answer is not judged on them: never "ok".
		v.Verdict = notUpVerdict(e.s, w)
		return v
	}
	low, lowWhy := e.lowTraffic(w)
	if !w.Hit.Since.IsZero() {
		// A restart inside the window: the window's ratio would mix in the
		// warm cache before it; the figure counts the new process alone.
		low = !w.Hit.Present || w.Hit.Total < minTokens
		lowWhy = "only " + Num(w.Hit.Total) + " prompt tokens since the restart"
	}
	switch {
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
		if c, ok := e.takesMisses(w); ok && v.Basis == peersBasis && v.Large {
			// Against its peers, the routing explains the gap: instead of
			// "unexplained", or after the evidence found.
			if rest := without(v.Causes, sources.CauseUnexplained); len(rest) > 0 {
				v.Causes = append(rest, c)
			} else {
				v.Causes = []sources.Cause{c}
			}
		}
	}
	if !predicted && !low && !v.Large && w.Health == sources.Up {
		e.ownDrop(w, &v)
	}
	v.Verdict = verdictText(&v, e.th)
	return v
}

// noBaseline starts HitVerdict.Basis when there is nothing to compare a
// worker's hit with; the reason follows.
const noBaseline = "no baseline: "

// peersBasis is HitVerdict.Basis when a worker is compared with its pool
// peers.
const peersBasis = "its pool peers' actual hit (no gateway exposes a prediction)"

// ownBasis is HitVerdict.Basis when a worker is compared with its own
// earlier hit.
const ownBasis = "its own earlier hit: its best minute before the window (no gateway exposes a prediction; its peers may have fallen alike)"

// ownDrop judges w against its own earlier hit where no gateway exposes a
// prediction: with its peers under the same churn (smg in
// eviction-pressure) the peer comparison sees no gap, yet the worker's
// hit fell. A fall of at least the gap threshold while it evicts and its
// pool is full (KV churn) makes v a large gap with KV pressure as cause.
func (e *evidence) ownDrop(w *sources.WorkerView, v *sources.HitVerdict) {
	churn, ok := kvChurn(w, e.th)
	if !ok {
		return
	}
	earlier, ok := e.earlierHit(w)
	if !ok || earlier.Ratio-v.Actual.Ratio < e.th.HitGap {
		return
	}
	v.Expected, v.Basis, v.SameScale = earlier, ownBasis, true
	v.GapKnown, v.Gap, v.Large = true, earlier.Ratio-v.Actual.Ratio, true
	v.Causes = append([]sources.Cause{churn}, without(e.workerCauses(w, false), sources.CauseKVPressure)...)
}

// earlierHit is w's own earlier level: its best one-minute hit (Σ cached
// ÷ Σ prompt tokens over the history steps of each whole minute before the
// window, within the chart span) among minutes with at least minTokens of
// prompt tokens; ok is false without one. The best minute, not the mean
// of all: the mean would include the fall itself.
func (e *evidence) earlierHit(w *sources.WorkerView) (sources.HitRatio, bool) {
	st := step(e.s)
	prompt, cached := w.History[sources.SigPromptTokens], w.History[sources.SigCachedTokens]
	if st <= 0 || len(prompt) == 0 {
		return sources.HitRatio{}, false
	}
	sec := st.Seconds()
	oldest := e.s.Time.Add(-e.s.ChartSpan)
	var best sources.HitRatio
	for to := e.s.Time.Add(-e.s.Window); !to.Add(-coldSpan).Before(oldest); to = to.Add(-coldSpan) {
		from := to.Add(-coldSpan)
		var hit, total float64
		for j := range prompt {
			end := stepEnd(e.s, st, j, len(prompt))
			if !end.After(from) || end.After(to) {
				continue
			}
			p, c := at(prompt, j), at(cached, j)
			if !finite(p) || p <= 0 {
				continue
			}
			if !finite(c) {
				c = 0 // no cached tokens in the step
			}
			hit += c
			total += p
		}
		if total*sec < minTokens {
			continue
		}
		if r := math.Min(1, hit/total); !best.Present || r > best.Ratio {
			ago := dur(e.s.Time.Sub(to))
			best = sources.HitRatio{Present: true, Ratio: r, Hit: hit * sec, Total: total * sec, Unit: "tokens",
				Source: "cached ÷ prompt tokens in its best minute before the window (ending " + ago + " ago)"}
		}
	}
	return best, best.Present
}

func without(cs []sources.Cause, kind sources.CauseKind) []sources.Cause {
	var out []sources.Cause
	for _, c := range cs {
		if c.Kind != kind {
			out = append(out, c)
		}
	}
	return out
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

// historySinceRestart is w's actual hit since its latest restart inside
// the window, from its history (Σ cached ÷ Σ prompt tokens per step), for
// backends whose WorkerView.Hit does not count it (HitRatio.Since zero);
// ok is false without a restart event, a window hit or that history.
// Like the store's figure it is Present only from
// sources.MinTokensSinceRestart prompt tokens.
func (e *evidence) historySinceRestart(w *sources.WorkerView) (sources.HitRatio, bool) {
	last := lastStart(e.s, w)
	if last == nil || last.Kind != "restart" || e.s.Time.Sub(last.Time) > e.s.Window || !w.Hit.Present {
		return sources.HitRatio{}, false
	}
	st := step(e.s)
	if st <= 0 {
		return sources.HitRatio{}, false
	}
	ratio, hit, total := windowHit(e.s, w, last.Time, e.s.Time.Add(coldAfter), st)
	if total <= 0 || !finite(ratio) {
		// No token history to count from (or no traffic yet): unknown,
		// so the worker keeps its own figure.
		return sources.HitRatio{}, false
	}
	sec := st.Seconds()
	h := sources.HitRatio{Unit: "tokens", Since: last.Time, Source: "cached ÷ prompt tokens per step, since the restart",
		Hit: hit * sec, Total: total * sec, Ratio: ratio}
	h.Present = h.Total >= sources.MinTokensSinceRestart
	return h, true
}

// notUpVerdict is the verdict of a worker whose scrapes fail: its health
// first ("stale", "down", "pending"), then since when and why.
func notUpVerdict(s *sources.Snapshot, w *sources.WorkerView) string {
	out := w.Health.String()
	switch w.Health {
	case sources.Stale:
		out += ": no answer for " + sources.FormatAge(w.Age) + "; its last figures are not judged"
	case sources.Down:
		out += ": no data received"
	default:
		out += ": not scraped yet"
	}
	if w.LastError != nil {
		out += " (" + string(w.LastError.Class) + ")"
	}
	return out
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
