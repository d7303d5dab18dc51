package store

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/pdtop/pdtop/sources"
)

var t0 = time.Date(2026, 11, 29, 3, 0, 0, 0, time.UTC)

func at(sec float64) time.Time { return t0.Add(time.Duration(sec * float64(time.Second))) }

func worker(id string, role sources.Role) sources.Target {
	return sources.Target{ID: id, URL: id, Name: sources.WorkerKey(id), Role: role, Origin: sources.OriginFlag}
}

func obs(points ...sources.Point) *sources.Observation {
	return &sources.Observation{Engine: "sglang", Generation: "sglang worker", Points: points,
		Sources: map[sources.Signal]string{}}
}

func pt(sig sources.Signal, v float64) sources.Point { return sources.Point{Signal: sig, Value: v} }

func ok(id string, sec float64, o *sources.Observation) sources.ScrapeResult {
	return sources.ScrapeResult{TargetID: id, Time: at(sec), Obs: o}
}

func newStore(ts ...sources.Target) *Store {
	s := New(Options{Interval: time.Second})
	s.SetTargets(t0, ts)
	return s
}

const w1 = "http://10.0.0.1:30001/metrics"

func TestCounterRateNeedsTwoSamples(t *testing.T) {
	s := newStore(worker(w1, sources.RolePrefill))
	s.Ingest(ok(w1, 0, obs(pt(sources.SigPromptTokens, 5e6))))
	snap := s.Snapshot(at(0), time.Minute)
	if r := snap.Workers[0].Readings.Get(sources.SigPromptTokens); r.Present {
		t.Fatalf("rate from a single sample: %+v", r)
	}
	s.Ingest(ok(w1, 1, obs(pt(sources.SigPromptTokens, 5e6+100))))
	s.Ingest(ok(w1, 2, obs(pt(sources.SigPromptTokens, 5e6+300))))
	snap = s.Snapshot(at(2), time.Minute)
	r := snap.Workers[0].Readings.Get(sources.SigPromptTokens)
	if !r.Present || r.Value != 150 || r.Increase != 300 {
		t.Fatalf("rate = %+v, want 150/s over 300 tokens", r)
	}
}

func TestCounterResetGivesNoNegativeRateAndARestart(t *testing.T) {
	s := newStore(worker(w1, sources.RolePrefill))
	for i, v := range []float64{1000, 1100, 50, 150} {
		s.Ingest(ok(w1, float64(i), obs(pt(sources.SigPromptTokens, v))))
	}
	snap := s.Snapshot(at(3), time.Minute)
	r := snap.Workers[0].Readings.Get(sources.SigPromptTokens)
	// 100 before the reset, 50 since the process started, 100 after.
	if r.Increase != 250 || math.Abs(r.Value-250.0/3) > 1e-9 {
		t.Fatalf("reading = %+v, want increase 250", r)
	}
	if snap.Targets[0].Restarts != 1 || !snap.Workers[0].Restarted {
		t.Fatalf("restart not seen: %+v", snap.Targets[0])
	}
	var found bool
	for _, e := range snap.Events {
		if e.Kind == "restart" && strings.Contains(e.Detail, "counter went down") {
			found = true
		}
	}
	if !found {
		t.Fatalf("no restart event: %+v", snap.Events)
	}
}

// TestCountersReappearingAfterARestart: after a restart, counters created
// only at their first increment come back one by one, lower than before;
// that is the same restart, not one event per counter. A counter that
// goes down again later is a new restart.
func TestCountersReappearingAfterARestart(t *testing.T) {
	s := newStore(worker(w1, sources.RolePrefill))
	before := func(sec float64, p, c, e float64) {
		s.Ingest(ok(w1, sec, obs(pt(sources.SigPromptTokens, p), pt(sources.SigCachedTokens, c), pt(sources.SigEvictedTokens, e))))
	}
	before(0, 1000, 500, 80)
	before(1, 2000, 900, 90)
	s.Ingest(ok(w1, 2, obs(pt(sources.SigPromptTokens, 10)))) // restarted: cached/evicted not created yet
	s.Ingest(ok(w1, 3, obs(pt(sources.SigPromptTokens, 20), pt(sources.SigCachedTokens, 5))))
	s.Ingest(ok(w1, 40, obs(pt(sources.SigPromptTokens, 90), pt(sources.SigCachedTokens, 9), pt(sources.SigEvictedTokens, 3))))
	snap := s.Snapshot(at(40), time.Minute)
	if n := snap.Targets[0].Restarts; n != 1 {
		t.Fatalf("restarts = %d, want 1: %+v", n, snap.Events)
	}
	if r := snap.Workers[0].Readings.Get(sources.SigEvictedTokens); r.Increase < 0 {
		t.Fatalf("evicted %+v", r)
	}
	before(41, 30, 10, 4) // prompt tokens down again: a second restart
	if n := s.Snapshot(at(41), time.Minute).Targets[0].Restarts; n != 2 {
		t.Fatalf("restarts = %d, want 2", n)
	}
}

func TestNewPIDIsARestart(t *testing.T) {
	s := newStore(worker(w1, sources.RoleDecode))
	o := obs(pt(sources.SigRunning, 3))
	o.PIDs = []string{"910", "911"} // several schedulers (DP ranks) from the start
	s.Ingest(ok(w1, 0, o))
	s.Ingest(ok(w1, 1, o))
	o2 := obs(pt(sources.SigRunning, 0))
	o2.PIDs = []string{"910", "911", "4242"} // dead pids persist in multiprocess mode
	s.Ingest(ok(w1, 2, o2))
	snap := s.Snapshot(at(2), time.Minute)
	if snap.Targets[0].Restarts != 1 {
		t.Fatalf("restarts = %d, want 1", snap.Targets[0].Restarts)
	}
	if e := snap.Events[len(snap.Events)-1]; !strings.Contains(e.Detail, "4242") {
		t.Fatalf("event = %+v", e)
	}
}

func TestStaleKeepsLastValuesWithAge(t *testing.T) {
	s := newStore(worker(w1, sources.RoleDecode))
	s.Ingest(ok(w1, 0, obs(pt(sources.SigRunning, 7))))
	s.Ingest(sources.ScrapeResult{TargetID: w1, Time: at(5),
		Err: &sources.ScrapeError{Class: sources.ErrRefused, Message: "connection refused"}})
	snap := s.Snapshot(at(5), time.Minute)
	w := snap.Workers[0]
	if w.Health != sources.Stale || w.Age != 5*time.Second || w.LastError.Class != sources.ErrRefused {
		t.Fatalf("status = %+v", w.TargetStatus)
	}
	if r := w.Readings.Get(sources.SigRunning); !r.Present || r.Value != 7 {
		t.Fatalf("last good value lost: %+v", r)
	}
	if snap.Fleet.TargetsUp != 0 || snap.Fleet.Targets != 1 {
		t.Fatalf("fleet = %+v", snap.Fleet)
	}
}

func TestNeverScrapedIsDown(t *testing.T) {
	s := newStore(worker(w1, sources.RoleDecode))
	s.Ingest(sources.ScrapeResult{TargetID: w1, Time: at(1), Err: &sources.ScrapeError{Class: sources.ErrTimeout}})
	if h := s.Snapshot(at(1), time.Minute).Targets[0].Health; h != sources.Down {
		t.Fatalf("health = %v, want down", h)
	}
}

func hist(sig sources.Signal, counts []float64, sum float64) sources.Hist {
	return sources.Hist{Signal: sig, Bounds: []float64{0.01, 0.02, 0.05, 0.1, math.Inf(1)},
		Counts: counts, Sum: sum, Count: counts[len(counts)-1]}
}

func TestQuantilesFromBucketDeltas(t *testing.T) {
	s := newStore(worker(w1, sources.RoleDecode))
	o1 := obs()
	o1.Hists = []sources.Hist{hist(sources.SigITL, []float64{1000, 1000, 1000, 1000, 1000}, 5)}
	o2 := obs()
	// 100 new observations: 50 in (0.01,0.02], 50 in (0.02,0.05].
	o2.Hists = []sources.Hist{hist(sources.SigITL, []float64{1000, 1050, 1100, 1100, 1100}, 7.5)}
	s.Ingest(ok(w1, 0, o1))
	s.Ingest(ok(w1, 1, o2))
	q := s.Snapshot(at(1), time.Minute).Workers[0].Dist(sources.SigITL)
	if !q.Present || q.Count != 100 || q.Form != "histogram" {
		t.Fatalf("q = %+v", q)
	}
	if math.Abs(q.P50-0.02) > 1e-9 || math.Abs(q.P99-(0.02+0.03*49/50)) > 1e-9 || math.Abs(q.Mean-0.025) > 1e-9 {
		t.Fatalf("p50=%v p99=%v mean=%v", q.P50, q.P99, q.Mean)
	}
}

func TestQuantileEdgeCases(t *testing.T) {
	inf := math.Inf(1)
	cases := []struct {
		name string
		d    dist
		q    float64
		want float64
	}{
		{"all in +Inf returns highest finite bound", dist{bounds: []float64{1, 2, inf}, counts: []float64{0, 0, 10}, count: 10}, 0.5, 2},
		{"non-monotonic buckets are clamped", dist{bounds: []float64{1, 2, 4, inf}, counts: []float64{5, 3, 10, 10}, count: 10}, 0.5, 1},
		{"no observations", dist{bounds: []float64{1, inf}, counts: []float64{0, 0}}, 0.5, math.NaN()},
		{"first bucket interpolates from 0", dist{bounds: []float64{4, inf}, counts: []float64{10, 10}, count: 10}, 0.5, 2},
	}
	for _, c := range cases {
		got := c.d.quantile(c.q)
		if !(got == c.want || math.IsNaN(got) && math.IsNaN(c.want)) {
			t.Errorf("%s: got %v want %v", c.name, got, c.want)
		}
	}
}

func TestHitRatioCountsMissingCachedAsZero(t *testing.T) {
	s := newStore(worker(w1, sources.RolePrefill))
	s.Ingest(ok(w1, 0, obs(pt(sources.SigPromptTokens, 1000))))
	s.Ingest(ok(w1, 1, obs(pt(sources.SigPromptTokens, 2000))))
	h := s.Snapshot(at(1), time.Minute).Workers[0].Hit
	if !h.Present || h.Ratio != 0 || h.Total != 1000 || h.Unit != "tokens" {
		t.Fatalf("hit = %+v, want 0 of 1000 tokens", h)
	}
	// The first hit creates cached_tokens_total.
	s.Ingest(ok(w1, 2, obs(pt(sources.SigPromptTokens, 3000), pt(sources.SigCachedTokens, 500))))
	h = s.Snapshot(at(2), time.Minute).Workers[0].Hit
	if h.Hit != 500 || h.Total != 2000 || h.Ratio != 0.25 {
		t.Fatalf("hit = %+v, want 500 of 2000", h)
	}
}

func TestGatewayPredictionAndRouterView(t *testing.T) {
	gw := sources.Target{ID: "http://gw:29000/metrics", Name: "gw:29000", Role: sources.RoleGateway}
	s := newStore(gw, worker(w1, sources.RolePrefill))
	key := sources.WorkerKey(w1)
	for i, v := range []float64{0, 10} {
		o := &sources.Observation{Engine: "sgl-router", Generation: "sgl-router (legacy)", Points: []sources.Point{
			{Signal: sources.SigGWCacheHits, Value: 3 * v},
			{Signal: sources.SigGWCacheMisses, Value: v},
			{Signal: sources.SigGWWorkerInFlight, Key: key, Value: 4},
			{Signal: sources.SigGWWorkerPicks, Key: key, Value: 40 * v},
			{Signal: sources.SigGWResponses, Key: "2xx", Value: 90 * v},
			{Signal: sources.SigGWResponses, Key: "429", Value: 10 * v},
		}}
		s.Ingest(ok(gw.ID, float64(i), o))
		s.Ingest(ok(w1, float64(i), obs(pt(sources.SigRunning, 1))))
	}
	snap := s.Snapshot(at(1), time.Minute)
	g := snap.Gateways[0]
	if !g.Predicted.Present || g.Predicted.Ratio != 0.75 || g.Predicted.Unit != "requests" {
		t.Fatalf("predicted = %+v", g.Predicted)
	}
	if len(snap.Workers[0].Router) != 1 {
		t.Fatalf("router views = %+v", snap.Workers[0].Router)
	}
	rv := snap.Workers[0].Router[0]
	if rv.InFlight.Value != 4 || rv.Picks.Value != 400 || rv.Health.Present {
		t.Fatalf("router view = %+v", rv)
	}
	if r := snap.Fleet.Rejected; !r.Present || math.Abs(r.Value-0.1) > 1e-9 {
		t.Fatalf("rejected = %+v", r)
	}
}

func TestChartsHaveNoPanicOnEmptyStoreAndRightLength(t *testing.T) {
	s := New(Options{})
	snap := s.Snapshot(t0, 2*time.Minute)
	for name, c := range snap.Charts {
		if len(c.Points) == 0 || c.Step <= 0 {
			t.Fatalf("%s: %+v", name, c)
		}
		for _, p := range c.Points {
			if !math.IsNaN(p) {
				t.Fatalf("%s has data with no targets", name)
			}
		}
	}
}

func TestChartRatesFollowTraffic(t *testing.T) {
	s := newStore(worker(w1, sources.RoleDecode))
	for i := 0; i <= 60; i++ {
		s.Ingest(ok(w1, float64(i), obs(pt(sources.SigGenerationTokens, float64(i*800)))))
	}
	c := s.Snapshot(at(60), time.Minute).Charts["output_tps"]
	last := c.Points[len(c.Points)-1]
	if math.Abs(last-800) > 1e-6 {
		t.Fatalf("last output_tps point = %v, want 800 (points %v)", last, c.Points)
	}
}

func TestHistoryThinningKeepsLongWindows(t *testing.T) {
	s := New(Options{Interval: time.Second, FineSpan: 10 * time.Second, CoarseStep: 5 * time.Second, MaxWindow: time.Minute})
	s.SetTargets(t0, []sources.Target{worker(w1, sources.RoleDecode)})
	for i := 0; i <= 120; i++ {
		s.Ingest(ok(w1, float64(i), obs(pt(sources.SigGenerationTokens, float64(i*10)))))
	}
	st := s.targets[w1]
	if st.hist.len() > 12+14 {
		t.Fatalf("history not bounded: %d frames", st.hist.len())
	}
	r := s.Snapshot(at(120), time.Minute).Workers[0].Readings.Get(sources.SigGenerationTokens)
	if !r.Present || math.Abs(r.Value-10) > 1e-9 || r.Increase < 550 {
		t.Fatalf("rate over a thinned minute = %+v", r)
	}
}

func TestTargetsJoinAndLeave(t *testing.T) {
	s := newStore(worker(w1, sources.RoleDecode))
	s.SetTargets(at(1), []sources.Target{worker("http://10.0.0.2:1/metrics", sources.RoleDecode)})
	snap := s.Snapshot(at(1), time.Minute)
	kinds := []string{}
	for _, e := range snap.Events {
		kinds = append(kinds, e.Kind)
	}
	if strings.Join(kinds, ",") != "joined,left" && strings.Join(kinds, ",") != "left,joined" {
		t.Fatalf("events = %v", kinds)
	}
}

// A fresh process exposes a counter only once it is non-zero: after a
// restart seen by its new pid, each counter that comes back lower is the
// same restart, corrected for (the rate stays right) but counted once.
func TestRestartCountedOnceWhenCountersComeBackLater(t *testing.T) {
	s := newStore(worker(w1, sources.RolePrefill))
	withPID := func(pid string, points ...sources.Point) *sources.Observation {
		o := obs(points...)
		o.PIDs = []string{pid}
		return o
	}
	s.Ingest(ok(w1, 0, withPID("910", pt(sources.SigPromptTokens, 1000), pt(sources.SigRequests, 10))))
	s.Ingest(ok(w1, 1, withPID("910", pt(sources.SigPromptTokens, 1100), pt(sources.SigRequests, 11))))
	s.Ingest(ok(w1, 2, withPID("4242"))) // restarted: no counter yet
	s.Ingest(ok(w1, 3, withPID("4242", pt(sources.SigPromptTokens, 40))))
	s.Ingest(ok(w1, 4, withPID("4242", pt(sources.SigPromptTokens, 90), pt(sources.SigRequests, 1))))
	snap := s.Snapshot(at(4), time.Minute)
	if n := snap.Targets[0].Restarts; n != 1 {
		var ev []string
		for _, e := range snap.Events {
			ev = append(ev, e.Kind+": "+e.Detail)
		}
		t.Fatalf("restarts = %d, want 1: %v", n, ev)
	}
	// 100 before the restart, 90 since.
	if r := snap.Workers[0].Readings.Get(sources.SigPromptTokens); r.Increase != 190 {
		t.Fatalf("prompt tokens increase %+v, want 190", r)
	}
	// A later decrease is a new restart again.
	s.Ingest(ok(w1, 5, withPID("4242", pt(sources.SigPromptTokens, 5), pt(sources.SigRequests, 1))))
	if n := s.Snapshot(at(5), time.Minute).Targets[0].Restarts; n != 2 {
		t.Fatalf("restarts = %d after a second decrease, want 2", n)
	}
}

// Until a restarted process counts its first token its counters are
// absent: the rate covers the whole window (flat since the restart), not
// only the frames before it.
func TestRateAfterRestartBeforeCountersReturn(t *testing.T) {
	s := newStore(worker(w1, sources.RolePrefill))
	withPID := func(pid string, points ...sources.Point) *sources.Observation {
		o := obs(append(points, pt(sources.SigRunning, 0))...)
		o.PIDs = []string{pid}
		return o
	}
	s.Ingest(ok(w1, 0, withPID("910", pt(sources.SigPromptTokens, 1000))))
	s.Ingest(ok(w1, 1, withPID("910", pt(sources.SigPromptTokens, 1400))))
	for sec := 2.0; sec <= 4; sec++ {
		s.Ingest(ok(w1, sec, withPID("4242"))) // restarted, nothing finished yet
	}
	r := s.Snapshot(at(4), time.Minute).Workers[0].Readings.Get(sources.SigPromptTokens)
	if !r.Present || r.Increase != 400 || r.Value != 100 {
		t.Fatalf("prompt tokens %+v, want 400 over 4s = 100/s (not 400/s over the 1s before the restart)", r)
	}
}

func TestLateSeriesAfterARestartIsNotASecondRestart(t *testing.T) {
	s := newStore(worker(w1, sources.RolePrefill))
	s.Ingest(ok(w1, 0, obs(pt(sources.SigPromptTokens, 1000), pt(sources.SigCachedTokens, 600))))
	s.Ingest(ok(w1, 1, obs(pt(sources.SigPromptTokens, 1100), pt(sources.SigCachedTokens, 650))))
	// Restart: counters from zero; cached_tokens_total absent until the first hit.
	s.Ingest(ok(w1, 2, obs(pt(sources.SigPromptTokens, 10))))
	s.Ingest(ok(w1, 3, obs(pt(sources.SigPromptTokens, 40), pt(sources.SigCachedTokens, 5))))
	snap := s.Snapshot(at(3), time.Minute)
	if n := snap.Targets[0].Restarts; n != 1 {
		t.Fatalf("restarts = %d, want 1 (the late cached_tokens_total is the same restart)", n)
	}
	if h := snap.Workers[0].HitWindow; h.Hit != 55 || h.Total != 140 {
		t.Fatalf("window hit = %+v, want 50+5 cached of 100+40 prompt tokens", h)
	}
	// The row's figure counts the new process alone: 5 cached of its 40
	// prompt tokens (10 of them before its first scrape), too few to show.
	if h := snap.Workers[0].Hit; h.Hit != 5 || h.Total != 40 || h.Present || !h.Since.Equal(at(2)) {
		t.Fatalf("hit since the restart = %+v, want 5 of 40 tokens, not present, since %v", h, at(2))
	}
}

// TestFreshStart: a target whose first scrape has counted no work had just
// started; one that has, had not.
func TestFreshStart(t *testing.T) {
	const w2 = "http://10.0.0.2:30001/metrics"
	s := newStore(worker(w1, sources.RolePrefill), worker(w2, sources.RolePrefill))
	s.Ingest(ok(w1, 0, obs(pt(sources.SigRunning, 2), pt(sources.SigPromptTokens, 0))))
	s.Ingest(ok(w2, 0, obs(pt(sources.SigPromptTokens, 9e6))))
	s.Ingest(ok(w1, 1, obs(pt(sources.SigPromptTokens, 500)))) // later work does not change it
	snap := s.Snapshot(at(1), time.Minute)
	fresh := map[string]bool{}
	for _, ts := range snap.Targets {
		fresh[ts.ID] = ts.FreshStart
	}
	if !fresh[w1] || fresh[w2] {
		t.Fatalf("fresh starts: %v", fresh)
	}
}

// TestHitSinceRestart: after a restart inside the window a worker's hit
// counts the new process alone (its whole count, 2 000 tokens before its
// first scrape included) while the pool adds up the whole window; a
// restart that has left the window changes nothing.
func TestHitSinceRestart(t *testing.T) {
	s := newStore(worker(w1, sources.RolePrefill))
	s.Ingest(ok(w1, 0, obs(pt(sources.SigPromptTokens, 100000), pt(sources.SigCachedTokens, 90000))))
	s.Ingest(ok(w1, 1, obs(pt(sources.SigPromptTokens, 200000), pt(sources.SigCachedTokens, 180000))))
	// Restart: counters from zero, an empty cache.
	s.Ingest(ok(w1, 2, obs(pt(sources.SigPromptTokens, 2000), pt(sources.SigCachedTokens, 0))))
	s.Ingest(ok(w1, 3, obs(pt(sources.SigPromptTokens, 40000), pt(sources.SigCachedTokens, 4000))))
	snap := s.Snapshot(at(3), time.Minute)
	w := snap.Workers[0]
	if h := w.Hit; !h.Present || h.Hit != 4000 || h.Total != 40000 || !h.Since.Equal(at(2)) || !h.Since.Equal(w.LastRestart) {
		t.Fatalf("hit since the restart = %+v, want 4000 of 40000 tokens since %v", h, at(2))
	}
	if h := w.HitWindow; h.Hit != 94000 || h.Total != 140000 || !h.Since.IsZero() {
		t.Fatalf("window hit = %+v, want 90k+4k of 100k+40k tokens", h)
	}
	if p := snap.Prefill.Hit; p.Hit != 94000 || p.Total != 140000 {
		t.Fatalf("pool hit = %+v, want the window's 94k of 140k", p)
	}
	// Two minutes on, the restart is outside the 1-minute window.
	for sec := 4.0; sec <= 120; sec++ {
		s.Ingest(ok(w1, sec, obs(pt(sources.SigPromptTokens, 40000+1000*(sec-3)), pt(sources.SigCachedTokens, 4000+500*(sec-3)))))
	}
	w = s.Snapshot(at(120), time.Minute).Workers[0]
	if !w.Hit.Since.IsZero() || w.Restarted || w.Hit != w.HitWindow || w.Hit.Ratio != 0.5 {
		t.Fatalf("restart outside the window: hit %+v, window %+v, restarted %v", w.Hit, w.HitWindow, w.Restarted)
	}
}
