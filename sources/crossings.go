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
}

// queueSignals are the queues QueueDepth applies to.
var queueSignals = []Signal{SigWaiting, SigBootstrapQueue, SigInflightQueue, SigPreallocQueue, SigTransferQueue}

// Crossings lists every figure of the snapshot at or over its threshold:
// per up worker its queues (waiting, bootstrap, in-flight transfer,
// prealloc, transfer; req), KV usage (ratio), TTFT and ITL p99 (s, from
// histogram windows with observations); per gateway replica the
// predicted − actual prefix-hit gap against the prefill side's pool (ratio
// points) and its rejected share (429+408+5xx ÷ answered). Zero
// thresholds take their defaults. Stale and down targets are left out:
// their figures are not current.
func (s *Snapshot) Crossings() []Crossing {
	if s == nil {
		return nil
	}
	th := s.Thresholds.WithDefaults()
	var out []Crossing
	add := func(ts *TargetStatus, what string, sig Signal, v, thr float64, unit string) {
		if Finite(v) && v >= thr {
			out = append(out, Crossing{TargetID: ts.ID, Name: ts.Name, Role: ts.Role, What: what,
				Signal: sig, Value: v, Threshold: thr, Unit: unit})
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
			add(&w.TargetStatus, "TTFT p99", SigTTFT, q.P99, th.TTFTP99, "s")
		}
		if q := w.Dist(SigITL); q.Present && q.Form == "histogram" && q.Count > 0 {
			add(&w.TargetStatus, "ITL p99", SigITL, q.P99, th.ITLP99, "s")
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

// RejectedShare is the replica's (429 + 408 + 5xx) ÷ all answered
// responses over the window (ratio 0–1); false when it answered none or
// exposes no responses by status.
func (g *GatewayView) RejectedShare() (float64, bool) {
	var total, bad float64
	for k, r := range g.Responses {
		if !r.Present || !Finite(r.Value) {
			continue
		}
		total += r.Value
		if k == "429" || k == "408" || k == "5xx" {
			bad += r.Value
		}
	}
	if total <= 0 {
		return 0, false
	}
	return bad / total, true
}
