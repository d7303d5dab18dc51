package sim_test

// The scenario signatures and the calibration of issue 3, checked the way
// a user sees them: the fleet is scraped over loopback HTTP through
// pdtop's own sources (collect → schema → store) and judged from the
// Snapshot the panels draw, never from the simulator's internals.

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/config"

	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/sources/collect"
	"github.com/pdtop/pdtop/sources/scrape"
	"github.com/pdtop/pdtop/sources/sim"
	"github.com/pdtop/pdtop/sources/store"
)

var epoch = time.Date(2026, 11, 29, 3, 0, 0, 0, time.UTC)

// run is a fleet scraped every Every of simulated time into a store.
type run struct {
	t       *testing.T
	f       *sim.Fleet
	st      *store.Store
	sc      *collect.Scraper
	every   time.Duration
	scrapes bool
}

func newRun(t *testing.T, cfg sim.Config) *run {
	t.Helper()
	f, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Serve("127.0.0.1"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	r := &run{t: t, f: f, every: 5 * time.Second, scrapes: true,
		st: store.New(store.Options{Interval: 5 * time.Second, FineSpan: 15 * time.Minute, MaxWindow: 15 * time.Minute})}
	client, err := scrape.NewClient(config.HTTPClientConfig{}, scrape.Options{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	r.sc = collect.New(client, collect.Options{Clock: r.now})
	r.syncTargets()
	return r
}

func (r *run) now() time.Time { return epoch.Add(r.f.Now()) }

func (r *run) syncTargets() {
	var ts []sources.Target
	for _, e := range r.f.Endpoints() {
		ts = append(ts, sources.Target{ID: sources.DisplayURL(e.MetricsURL), URL: e.MetricsURL, Name: e.Name, Role: e.Role})
	}
	r.st.SetTargets(r.now(), ts)
}

func (r *run) scrapeAll() {
	r.syncTargets()
	for _, t := range r.st.Targets() {
		r.st.Ingest(r.sc.Scrape(context.Background(), t))
	}
}

// to advances simulated time to d, scraping every r.every on the way, and
// returns the snapshot at d over the window since `since`.
func (r *run) to(d, since time.Duration) *sources.Snapshot {
	r.t.Helper()
	for r.f.Now() < d {
		step := r.every - r.f.Now()%r.every
		if r.f.Now()+step > d {
			step = d - r.f.Now()
		}
		r.f.Step(step)
		if r.f.Now()%r.every == 0 || r.f.Now() == d {
			r.scrapeAll()
		}
	}
	return r.st.Snapshot(r.now(), d-since)
}

func worker(t *testing.T, s *sources.Snapshot, name string) *sources.WorkerView {
	t.Helper()
	for i := range s.Workers {
		if s.Workers[i].Name == name {
			return &s.Workers[i]
		}
	}
	t.Fatalf("no worker %q in the snapshot", name)
	return nil
}

func router(w *sources.WorkerView, replica string) sources.RouterView {
	for _, rv := range w.Router {
		if rv.Replica == replica {
			return rv
		}
	}
	return sources.RouterView{}
}

func predicted(s *sources.Snapshot) float64 {
	var hit, total float64
	for _, g := range s.Gateways {
		hit += g.Predicted.Hit
		total += g.Predicted.Total
	}
	return hit / total
}

func TestSignatureSteady(t *testing.T) {
	t.Parallel()
	r := newRun(t, sim.Config{Seed: 1, Gateway: sim.GatewayLegacy, Scenario: sim.ScenarioSteady})
	r.to(time.Minute, 0)
	s := r.to(4*time.Minute, time.Minute)
	if rej := s.Fleet.Rejected; !rej.Present || rej.Value != 0 {
		t.Errorf("rejected share %+v, want 0 in steady state", rej)
	}
	for _, g := range s.Gateways {
		if rt := g.Readings.Get(sources.SigGWRetries); rt.Present && rt.Value != 0 {
			t.Errorf("%s retries %.2f/s in steady state", g.Name, rt.Value)
		}
	}
	if h := s.Prefill.Hit; !h.Present || h.Ratio < 0.5 || h.Ratio > 0.95 {
		t.Errorf("prefill pool hit %+v, want a warm fleet (0.5–0.95)", h)
	}
	if p := predicted(s); p <= s.Prefill.Hit.Ratio {
		t.Errorf("router predicts %.2f (requests over threshold), workers hit %.2f", p, s.Prefill.Hit.Ratio)
	}
	if p99 := s.Decode.Dists[sources.SigTTFT].P99; !(p99 < 5) {
		t.Errorf("decode TTFT p99 %.2fs in steady state", p99)
	}
	for _, e := range s.Events {
		if e.Kind == "restart" {
			t.Errorf("restart in steady state: %+v", e)
		}
	}
}

func TestSignatureAnnouncement(t *testing.T) {
	t.Parallel()
	r := newRun(t, sim.Config{Seed: 1, Scenario: sim.ScenarioAnnouncement})
	r.to(20*time.Second, 0)
	steady := r.to(time.Minute, 20*time.Second)
	cold := r.to(90*time.Second, time.Minute)
	r.to(135*time.Second, 90*time.Second)
	warm := r.to(195*time.Second, 135*time.Second)
	h0, h1, h2 := steady.Prefill.Hit.Ratio, cold.Prefill.Hit.Ratio, warm.Prefill.Hit.Ratio
	if h1 > h0-0.05 || h2 < h1+0.05 {
		t.Errorf("prefill hit %.2f → first 30 s %.2f → later %.2f: want a cold dip, then warm", h0, h1, h2)
	}
	t0, t1 := steady.Decode.Dists[sources.SigTTFT].P50, cold.Decode.Dists[sources.SigTTFT].P50
	if !(t1 >= 1.5*t0) {
		t.Errorf("TTFT p50 %.2fs → %.2fs: want it to rise in the cold minute", t0, t1)
	}
}

func TestSignaturePrefillRestart(t *testing.T) {
	t.Parallel()
	r := newRun(t, sim.Config{Seed: 1, Gateway: sim.Gateway2026, Scenario: sim.ScenarioPrefillRestart})
	r.to(30*time.Second, 0)
	before := r.to(85*time.Second, 30*time.Second)
	during := r.to(100*time.Second, 85*time.Second)
	p0 := worker(t, during, "prefill-0")
	if p0.Health != sources.Stale || p0.LastError == nil || p0.LastError.Class != sources.ErrRefused {
		t.Errorf("prefill-0 during warm-up: %v %+v, want stale, refused", p0.Health, p0.LastError)
	}
	r.to(2*time.Minute, 100*time.Second)
	after := r.to(150*time.Second, 2*time.Minute)
	p0 = worker(t, after, "prefill-0")
	if at := p0.LastRestart.Sub(epoch); p0.Restarts != 1 || at < 90*time.Second || at > 2*time.Minute {
		t.Errorf("prefill-0 restarts %d, last at %v; want 1, seen when it answers again (1:30–2:00)", p0.Restarts, at)
	}
	var why string
	for _, e := range after.Events {
		if e.Kind == "restart" && e.Name == "prefill-0" {
			why = e.Detail
		}
	}
	if !strings.Contains(why, "counter went down") && !strings.Contains(why, "pid") {
		t.Errorf("restart reason %q, want a counter reset or new pid", why)
	}
	was, now := worker(t, before, "prefill-0").Hit.Ratio, p0.Hit.Ratio
	peers := 0.0
	for _, w := range after.WorkersByRole(sources.RolePrefill) {
		if w.Name != "prefill-0" {
			peers = math.Max(peers, w.Hit.Ratio)
		}
	}
	if now > was-0.1 || now > peers-0.2 {
		t.Errorf("prefill-0 hit %.2f before, %.2f after (peers %.2f): want it cold", was, now, peers)
	}
	g := after.Gateways[0]
	if g.Predicted.Unit != "blocks" || g.Predicted.Ratio < now+0.15 {
		t.Errorf("router predicts %+v, restarted prefill-0 hits %.2f: want the router still warm", g.Predicted, now)
	}
}

func TestSignatureEvictionPressure(t *testing.T) {
	t.Parallel()
	r := newRun(t, sim.Config{Seed: 1, Gateway: sim.GatewayLegacy, Scenario: sim.ScenarioEvictionPressure})
	r.to(20*time.Second, 0)
	s1 := r.to(time.Minute, 20*time.Second)
	r.to(2*time.Minute, time.Minute)
	s3 := r.to(5*time.Minute, 2*time.Minute)
	ev0 := s1.Prefill.Readings.Get(sources.SigEvictedTokens).Value
	ev1 := s3.Prefill.Readings.Get(sources.SigEvictedTokens)
	if !ev1.Present || ev1.Value < 2*ev0 {
		t.Errorf("evicted tokens/s %.0f → %+v: want a jump", ev0, ev1)
	}
	gap0, gap1 := predicted(s1)-s1.Prefill.Hit.Ratio, predicted(s3)-s3.Prefill.Hit.Ratio
	if gap1 < gap0+0.15 || gap1 < 0.2 {
		t.Errorf("predicted − actual gap %.2f → %.2f: want it to widen", gap0, gap1)
	}
}

func TestSignatureReplicaSkew(t *testing.T) {
	t.Parallel()
	r := newRun(t, sim.Config{Seed: 1, Replicas: 1, Scenario: sim.ScenarioReplicaSkew})
	s := r.to(3*time.Minute, time.Minute)
	if len(s.Gateways) != 2 {
		t.Fatalf("%d gateway replicas, want 2", len(s.Gateways))
	}
	p0 := worker(t, s, "prefill-0")
	h0, h1 := router(p0, "gateway-0").Health, router(p0, "gateway-1").Health
	if !h0.Present || h0.Value != 1 || !h1.Present || h1.Value != 0 {
		t.Errorf("prefill-0 health: gateway-0 %+v, gateway-1 %+v; want the replicas to disagree (1 vs 0)", h0, h1)
	}
	in0 := s.Gateways[0].Readings.Get(sources.SigGWOffered).Value
	in1 := s.Gateways[1].Readings.Get(sources.SigGWOffered).Value
	if ratio := in0 / in1; ratio < 2 || ratio > 4.5 {
		t.Errorf("offered gateway-0/gateway-1 = %.1f, want the 3:1 skew", ratio)
	}
}

func TestSignatureCongestedLink(t *testing.T) {
	t.Parallel()
	r := newRun(t, sim.Config{Seed: 1, Scenario: sim.ScenarioCongestedLink})
	r.to(90*time.Second, 0)
	s := r.to(4*time.Minute, 90*time.Second)
	bad := worker(t, s, "prefill-0").Dist(sources.SigKVXferLatency).P99
	good := worker(t, s, "prefill-1").Dist(sources.SigKVXferLatency).P99
	if !(bad > 1000) || !(good < 250) {
		t.Errorf("KV transfer latency p99: prefill-0 %.0f ms, prefill-1 %.0f ms; want prefill-0 alone slow", bad, good)
	}
	if q := worker(t, s, "prefill-0").Readings.Get(sources.SigInflightQueue); !q.Present || q.Value == 0 {
		t.Errorf("prefill-0 in-flight queue %+v, want it stuck non-empty", q)
	}
	if h := router(worker(t, s, "prefill-0"), "gateway-0").Health; h.Value != 1 {
		t.Errorf("prefill-0 health %+v: the worker itself is fine", h)
	}
}

func TestSignatureDecodeSaturation(t *testing.T) {
	t.Parallel()
	r := newRun(t, sim.Config{Seed: 1, Scenario: sim.ScenarioDecodeSaturation})
	r.to(20*time.Second, 0)
	s1 := r.to(time.Minute, 20*time.Second)
	r.to(2*time.Minute, time.Minute)
	s3 := r.to(4*time.Minute, 2*time.Minute)
	r429 := func(s *sources.Snapshot) (sum float64) {
		for _, g := range s.Gateways {
			sum += g.Responses["429"].Increase
		}
		return sum
	}
	if b, a := r429(s1), r429(s3); b != 0 || a == 0 {
		t.Errorf("429s: %v before, %v during saturation", b, a)
	}
	if kv := s3.Decode.Readings.Get(sources.SigKVUsage); kv.Value < 0.85 {
		t.Errorf("decode KV usage max %+v, want the pool full", kv)
	}
	if q := s3.Decode.Readings.Get(sources.SigPreallocQueue); q.Value == 0 {
		t.Errorf("decode prealloc queue %+v, want requests waiting for KV", q)
	}
	if rej := s3.Fleet.Rejected; !rej.Present || rej.Value == 0 {
		t.Errorf("rejected share %+v, want backpressure shown", rej)
	}
}

func TestSignatureScaleOut(t *testing.T) {
	t.Parallel()
	r := newRun(t, sim.Config{Seed: 1, Scenario: sim.ScenarioScaleOut})
	r.to(80*time.Second, 0)
	j := r.to(110*time.Second, 80*time.Second)
	if n := len(j.WorkersByRole(sources.RolePrefill)); n != 5 {
		t.Fatalf("%d prefill workers after scale-out, want 5", n)
	}
	joined := false
	for _, e := range j.Events {
		joined = joined || e.Kind == "joined" && e.Name == "prefill-4"
	}
	if !joined {
		t.Error("no 'joined' event for prefill-4")
	}
	if nw, fleet := worker(t, j, "prefill-4").Hit.Ratio, j.Prefill.Hit.Ratio; nw > 0.6*fleet {
		t.Errorf("new worker hit %.2f vs fleet %.2f in its first 30 s: want it cold", nw, fleet)
	}
}

// TestCalibrationThroughPdtop is issue 3's calibration judged through pdtop: 4 req/s
// of 8,000 uncached input and 500 output tokens; prefill workers doing
// 10,000 tokens/s, decode workers 800. The fleet saturates below 4 prefill
// / 3 decode workers and holds its latency at and above them.
func TestCalibrationThroughPdtop(t *testing.T) {
	if testing.Short() {
		t.Skip("12 simulated minutes per case")
	}
	for _, tc := range []struct {
		prefill, decode int
		holds           bool
	}{{3, 6, false}, {4, 6, true}, {6, 2, false}, {6, 3, true}} {
		tc := tc
		t.Run(strings.Repeat("p", tc.prefill)+"+"+strings.Repeat("d", tc.decode), func(t *testing.T) {
			t.Parallel()
			k := sim.DefaultCapacity()
			k.PrefillTokensPerSec, k.DecodeTokensPerSec = 10000, 800
			r := newRun(t, sim.Config{Seed: 42, Prefill: tc.prefill, Decode: tc.decode, Replicas: 1, Scenario: sim.ScenarioSteady,
				Workload: sim.Workload{Rate: 4, PrivateDocuments: true, DocTokens: 8000, FollowUp: 0, MaxTurns: 1,
					OutputTokens: 500, OutputCap: 500},
				Capacity: k})
			r.every = 4 * time.Minute // two frames: minute 4 and minute 12
			r.to(4*time.Minute, 0)
			r.every = 8 * time.Minute
			s := r.to(12*time.Minute, 4*time.Minute)
			ttft := s.Decode.Dists[sources.SigTTFT].P99
			done := s.Decode.Readings.Get(sources.SigRequests).Value
			rej := s.Fleet.Rejected.Value
			t.Logf("%d prefill + %d decode: TTFT p99 %.1fs, %.2f req/s done, rejected %.1f%%", tc.prefill, tc.decode, ttft, done, rej*100)
			holds := rej == 0 && ttft < 10 && done > 0.95*4
			saturated := rej > 0 || ttft > 20 || done < 0.9*4
			if tc.holds && !holds {
				t.Errorf("want the fleet to hold its latency (no rejections, TTFT p99 < 10 s, ≥ 3.8 req/s done)")
			}
			if !tc.holds && !saturated {
				t.Errorf("want the fleet saturated")
			}
		})
	}
}
