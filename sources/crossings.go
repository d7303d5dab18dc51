package sources

import "math"

// Crossing is one figure at or over its threshold (Snapshot.Thresholds),
// for the summary line, the panels' "!" marks and the snapshot JSON.
type Crossing struct {
	// TargetID and Name identify the worker or gateway replica; Role is
	// its role ("fleet"-wide figures use the gateway replica).
	TargetID, Name string
	Role           Role
	// What is the figure: "queue", "KV usage", "TTFT p99", "ITL p99",
	// "hit gap" or "error rate".
	What string
	// Signal is the canonical signal behind the figure (SigInvalid for the
	// derived hit gap and error rate).
	Signal Signal
	// Value and Threshold are in Unit: "req" (queue), "ratio" (KV usage,
	// hit gap, error rate, 0–1) or "s" (latencies).
	Value, Threshold float64
	Unit             string
	// Beyond is true when Value is a quantile whose rank fell in the +Inf
	// bucket: the true figure lies above Value (the top finite bound).
	Beyond bool
}

// queueSignals are the queues QueueDepth applies to.
var queueSignals = []Signal{SigWaiting, SigBootstrapQueue, SigInflightQueue, SigPreallocQueue, SigTransferQueue}

// Crossings lists every figure of the snapshot at or over its threshold:
// per up worker its queues (waiting, bootstrap, in-flight transfer,
// prealloc, transfer; req), KV usage (ratio), TTFT and ITL p99 (s, from
// histogram windows with observations); per gateway replica the
// predicted − actual prefix-hit gap against the prefill side's pool (ratio
// points) and its rejected share (RejectedShareOf). Zero
// thresholds take their defaults. Stale and down targets are left out:
// their figures are not current.
func (s *Snapshot) Crossings() []Crossing {
	if s == nil {
		return nil
	}
	th := s.Thresholds.WithDefaults()
	var out []Crossing
	add := func(ts *TargetStatus, what string, sig Signal, v, thr float64, unit string, beyond ...bool) {
		if Finite(v) && v >= thr {
			out = append(out, Crossing{TargetID: ts.ID, Name: ts.Name, Role: ts.Role, What: what,
				Signal: sig, Value: v, Threshold: thr, Unit: unit, Beyond: len(beyond) > 0 && beyond[0]})
		}
	}
	for i := range s.Workers {
		w := &s.Workers[i]
		if w.Health != Up {
			continue
		}
		worst, wsig := math.NaN(), SigInvalid
		for _, sig := range queueSignals {
			if r := w.Readings.Get(sig); r.Present && Finite(r.Value) && !(r.Value <= worst) {
				worst, wsig = r.Value, sig
			}
		}
		add(&w.TargetStatus, "queue", wsig, worst, th.QueueDepth, "req")
		if r := w.Readings.Get(SigKVUsage); r.Present {
			add(&w.TargetStatus, "KV usage", SigKVUsage, r.Value, th.KVUsage, "ratio")
		}
		if q := w.Dist(SigTTFT); q.Present && q.Form == "histogram" && q.Count > 0 {
			add(&w.TargetStatus, "TTFT p99", SigTTFT, q.P99, th.TTFTP99, "s", q.P99Beyond)
		}
		if q := w.Dist(SigITL); q.Present && q.Form == "histogram" && q.Count > 0 {
			add(&w.TargetStatus, "ITL p99", SigITL, q.P99, th.ITLP99, "s", q.P99Beyond)
		}
	}
	pool := s.PrefillSidePool()
	for i := range s.Gateways {
		g := &s.Gateways[i]
		if g.Health != Up {
			continue
		}
		if gap, ok := HitGap(g.Predicted, pool.Hit); ok {
			add(&g.TargetStatus, "hit gap", SigInvalid, gap, th.HitGap, "ratio")
		}
		if r, ok := g.RejectedShare(); ok {
			add(&g.TargetStatus, "error rate", SigInvalid, r, th.ErrorRate, "ratio")
		}
	}
	return out
}

// PrefillSidePool is the pool that prefills: the prefill pool, or the
// unified pool when the fleet is not disaggregated.
func (s *Snapshot) PrefillSidePool() *PoolView {
	if s.Prefill.Workers == 0 && s.Unified.Workers > 0 {
		return &s.Unified
	}
	return &s.Prefill
}

// HitGap is predicted − actual (ratio points, −1…1) when both figures
// have lookups in the window. The two may count different things
// (requests or blocks vs tokens): compare their Units before reading much
// into it.
func HitGap(predicted, actual HitRatio) (float64, bool) {
	if !predicted.Present || !actual.Present || predicted.Total <= 0 || actual.Total <= 0 ||
		!Finite(predicted.Ratio) || !Finite(actual.Ratio) {
		return 0, false
	}
	return predicted.Ratio - actual.Ratio, true
}

// WorkerHitGap is the largest predicted − actual gap between any gateway
// replica's prediction (replica-wide: no generation predicts per worker)
// and this worker's actual hit ratio.
func (s *Snapshot) WorkerHitGap(w *WorkerView) (float64, bool) {
	best, ok := 0.0, false
	for i := range s.Gateways {
		if g, has := HitGap(s.Gateways[i].Predicted, w.Hit); has && (!ok || g > best) {
			best, ok = g, true
		}
	}
	return best, ok
}

// RejectedShare is the replica's rejected share (see RejectedShareOf);
// false when it answered nothing in the window or exposes no responses by
// status.
func (g *GatewayView) RejectedShare() (float64, bool) {
	r := RejectedShareOf(g)
	return r.Value, r.Present
}

// StatusClasses are the Keys of SigGWResponses a gateway can answer with:
// success, rate limited or admission queue full, admission queue timeout,
// other client errors, server errors. A replica that exposes its
// responses family has a reading for each (0 for a class it never
// answered: the family's labelled series are created at their first
// response).
var StatusClasses = []string{"2xx", "429", "408", "4xx", "5xx"}

// RejectedSource is the rejected share's definition, shown as its source.
const RejectedSource = "gateway responses (429 + 408 + 5xx) ÷ all responses over the window"

// RejectedShareOf is the one definition of the rejected share used by the
// summary, the panels, the diagnoses and the snapshot JSON: responses
// answered 429 (rejected at the door), 408 (timed out waiting for
// admission) or 5xx, divided by all responses (every status class,
// 2xx and 4xx included), both summed over the given replicas as
// increases over the window (ratio 0–1). Absent when the replicas expose
// no responses by status or answered none.
func RejectedShareOf(gs ...*GatewayView) Reading {
	var total, bad float64
	for _, g := range gs {
		for k, r := range g.Responses {
			if !r.Present || !Finite(r.Increase) {
				continue
			}
			total += r.Increase
			if k == "429" || k == "408" || k == "5xx" {
				bad += r.Increase
			}
		}
	}
	if total <= 0 {
		return Reading{}
	}
	return Reading{Present: true, Value: bad / total, Source: RejectedSource}
}
