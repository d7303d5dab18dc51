package store

import (
	"math"
	"testing"
	"time"

	"github.com/pdtop/pdtop/sources"
)

// Counters created at their first increment (Python's labelled counters,
// SGLang's failure counters, cached_tokens_total) are absent from a
// target's earlier scrapes. Over a window, such a series counts from 0 (or
// from its last value before the window) over the whole span from the
// window's first frame — not from the frame it first appeared in, which
// would divide its whole count by a few seconds.

// lateRun scrapes a prefill worker every second for 60 s: prompt tokens
// all along at 100/s; transfer failures and a KV-transfer latency
// histogram created at t=54 with 19 failures and 10 transfers.
func lateRun(t *testing.T) *Store {
	t.Helper()
	s := newStore(worker(w1, sources.RolePrefill))
	for i := 0; i <= 60; i++ {
		o := obs(pt(sources.SigPromptTokens, float64(1e6+100*i)))
		if i >= 54 {
			o.Points = append(o.Points, pt(sources.SigTransferFailed, float64(19+(i-54)/6)))
			o.Hists = append(o.Hists, sources.Hist{Signal: sources.SigKVXferLatency,
				Bounds: []float64{100, 1000, math.Inf(1)}, Counts: []float64{4, 10, 10}, Sum: 2000, Count: 10})
		}
		s.Ingest(ok(w1, float64(i), o))
	}
	return s
}

func TestLateCounterRateCoversTheWholeWindow(t *testing.T) {
	snap := lateRun(t).Snapshot(at(60), time.Minute)
	w := snap.Workers[0]
	r := w.Readings.Get(sources.SigTransferFailed)
	if !r.Present || r.Increase != 20 || math.Abs(r.Value-20.0/60) > 1e-9 {
		t.Fatalf("transfer failures = %+v, want +20 over 60 s (0.33/s), not over the 6 s since they appeared", r)
	}
	if p := snap.Prefill.Readings.Get(sources.SigTransferFailed); math.Abs(p.Value-20.0/60) > 1e-9 {
		t.Fatalf("pool transfer failures = %+v", p)
	}
	q := w.Dist(sources.SigKVXferLatency)
	if !q.Present || q.Count != 10 || math.Abs(q.Mean-200) > 1e-9 {
		t.Fatalf("KV latency created inside the window = %+v, want its 10 observations", q)
	}
	// The chart step that holds the appearance has the rate, not a gap.
	h := w.History[sources.SigPromptTokens]
	if len(h) == 0 || math.IsNaN(h[len(h)-1]) {
		t.Fatalf("prompt history %v", h)
	}
}

// TestLateCounterNeedsTwoScrapesOfTheTarget: a series seen in one scrape
// has a rate once the target has been scraped twice in the window (it was
// absent, i.e. 0, in the earlier scrape) — never from the target's single
// scrape.
func TestLateCounterNeedsTwoScrapesOfTheTarget(t *testing.T) {
	s := newStore(worker(w1, sources.RolePrefill))
	s.Ingest(ok(w1, 0, obs(pt(sources.SigTransferFailed, 3))))
	if r := s.Snapshot(at(0), time.Minute).Workers[0].Readings.Get(sources.SigTransferFailed); r.Present {
		t.Fatalf("rate from one scrape: %+v", r)
	}
	s = newStore(worker(w1, sources.RolePrefill))
	s.Ingest(ok(w1, 0, obs(pt(sources.SigRunning, 1))))
	s.Ingest(ok(w1, 2, obs(pt(sources.SigRunning, 1), pt(sources.SigTransferFailed, 3))))
	r := s.Snapshot(at(2), time.Minute).Workers[0].Readings.Get(sources.SigTransferFailed)
	if !r.Present || r.Increase != 3 || r.Value != 1.5 {
		t.Fatalf("rate = %+v, want +3 over 2 s", r)
	}
}

// TestLateCounterCountsFromItsValueBeforeTheWindow: a series that existed
// before the window, vanished (its process restarted) and came back
// counts from its last value before the window, reset-corrected.
func TestLateCounterCountsFromItsValueBeforeTheWindow(t *testing.T) {
	s := newStore(worker(w1, sources.RolePrefill))
	s.Ingest(ok(w1, 0, obs(pt(sources.SigPromptTokens, 500), pt(sources.SigCachedTokens, 100))))
	s.Ingest(ok(w1, 1, obs(pt(sources.SigPromptTokens, 600), pt(sources.SigCachedTokens, 150))))
	for i := 2; i <= 70; i++ { // restarted at 2: cached_tokens_total not created again until 65
		o := obs(pt(sources.SigPromptTokens, float64(10*i)))
		if i >= 65 {
			o.Points = append(o.Points, pt(sources.SigCachedTokens, float64(i-60)))
		}
		s.Ingest(ok(w1, float64(i), o))
	}
	snap := s.Snapshot(at(70), time.Minute)
	r := snap.Workers[0].Readings.Get(sources.SigCachedTokens)
	if !r.Present || r.Increase != 10 || math.Abs(r.Value-10.0/60) > 1e-9 {
		t.Fatalf("cached = %+v, want +10 over the 60 s window", r)
	}
	if h := snap.Workers[0].Hit; h.Hit != 10 {
		t.Fatalf("hit = %+v, want 10 cached tokens", h)
	}
}

// TestLateStatusClassAgreesWithOffered: a gateway's response series by
// status class are created at the first response of each class; in the
// first seconds of a run the 2xx rate must not exceed what was offered.
func TestLateStatusClassAgreesWithOffered(t *testing.T) {
	gw := sources.Target{ID: "http://gw:29000/metrics", Name: "gw", Role: sources.RoleGateway}
	s := newStore(gw)
	for i := 0; i <= 10; i++ {
		o := &sources.Observation{Engine: "smg", Generation: "smg gateway",
			Points: []sources.Point{{Signal: sources.SigGWOffered, Value: float64(5 * i)}}}
		if i >= 8 { // the first answers arrive after a slow start
			o.Points = append(o.Points,
				sources.Point{Signal: sources.SigGWResponses, Key: "2xx", Value: float64(40 + 5*(i-8))},
				sources.Point{Signal: sources.SigGWResponses, Key: "429", Value: 4})
		}
		s.Ingest(ok(gw.ID, float64(i), o))
	}
	snap := s.Snapshot(at(10), time.Minute)
	g := snap.Gateways[0]
	off, ok2xx := g.Readings.Get(sources.SigGWOffered), g.Responses["2xx"]
	if ok2xx.Value > off.Value {
		t.Fatalf("2xx %.1f/s exceeds offered %.1f/s", ok2xx.Value, off.Value)
	}
	if ok2xx.Increase != 50 || ok2xx.Value != 5 {
		t.Fatalf("2xx = %+v, want +50 over 10 s", ok2xx)
	}
	// The chart's hit and rate steps use the same rule: per-step rates of
	// the late class exist and agree with the window's.
	if s429 := g.Responses["429"]; s429.Increase != 4 {
		t.Fatalf("429 = %+v", s429)
	}
}

// TestQuantileBeyondTheTopBucket: a quantile whose rank falls in the +Inf
// bucket holds the highest finite bound and says so, in the window's
// figures and in the chart series.
func TestQuantileBeyondTheTopBucket(t *testing.T) {
	s := newStore(worker(w1, sources.RoleDecode))
	bounds := []float64{0.01, 0.1, 5, math.Inf(1)}
	for i := 0; i <= 60; i++ {
		o := obs()
		// 100 fast observations, then 3/s slower than the top finite bound.
		c := []float64{100, 100, 100, 100 + 3*float64(i)}
		o.Hists = []sources.Hist{{Signal: sources.SigTTFT, Bounds: bounds, Counts: c, Sum: 30 * float64(i), Count: c[3]}}
		s.Ingest(ok(w1, float64(i), o))
	}
	snap := s.Snapshot(at(60), time.Minute)
	q := snap.Workers[0].Dist(sources.SigTTFT)
	if !q.P99Beyond || q.P99 != 5 || !q.P50Beyond || q.P90Beyond != true {
		t.Fatalf("quantiles = p50 %v (%v) p90 %v (%v) p99 %v (%v): want the 5 s bound, beyond",
			q.P50, q.P50Beyond, q.P90, q.P90Beyond, q.P99, q.P99Beyond)
	}
	ser := snap.Charts["ttft_p99"]
	if n := len(ser.Points); n == 0 || len(ser.Beyond) != n || !ser.Beyond[n-1] || ser.Points[n-1] != 5 {
		t.Fatalf("ttft_p99 chart: points %v beyond %v", ser.Points, ser.Beyond)
	}
	var d dist
	d = dist{bounds: []float64{1, 2, math.Inf(1)}, counts: []float64{5, 10, 10}, count: 10}
	if v, b := d.quantileBeyond(0.99); b || v > 2 {
		t.Fatalf("inside the buckets: %v beyond=%v", v, b)
	}
}

// TestInitialDiscoveryJoins: workers the first discovery passes list
// (within a minute of the first target list) are "joined" events marked
// Initial; later joins are not.
func TestInitialDiscoveryJoins(t *testing.T) {
	gw := sources.Target{ID: "http://gw:29000/metrics", Name: "gw", Role: sources.RoleGateway}
	s := newStore(gw)
	const w2 = "http://10.0.0.2:30001/metrics"
	s.SetTargets(at(0.5), []sources.Target{gw, worker(w1, sources.RolePrefill)})
	s.SetTargets(at(61), []sources.Target{gw, worker(w1, sources.RolePrefill), worker(w2, sources.RolePrefill)})
	evs := s.Snapshot(at(61), time.Minute).Events
	if len(evs) != 2 || !evs[0].Initial || evs[1].Initial || evs[0].ColdStart(true) || !evs[1].ColdStart(true) || evs[1].ColdStart(false) {
		t.Fatalf("events = %+v", evs)
	}
}
