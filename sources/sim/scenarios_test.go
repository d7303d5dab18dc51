package sim

import (
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Each scenario's documented signature is checked from scraped metrics
// only, over windows of simulated time, the way pdtop's panels would show
// it.

// timeline plays a scenario and scrapes every answering endpoint at the
// moments asked for (in increasing order).
type timeline struct {
	t *testing.T
	f *Fleet
}

func play(t *testing.T, cfg Config) *timeline {
	t.Helper()
	if s := os.Getenv("SIM_SEED"); s != "" { // try other seeds by hand
		cfg.Seed, _ = strconv.ParseInt(s, 10, 64)
	}
	f, _ := serveFleet(t, cfg)
	return &timeline{t: t, f: f}
}

func (tl *timeline) at(d time.Duration) snapshot {
	tl.t.Helper()
	tl.f.Step(d - tl.f.Now())
	s := snapshot{}
	for _, e := range tl.f.Endpoints() {
		if fams, ok := tryScrape(tl.t, e.MetricsURL); ok {
			s[e.Name] = fams
		}
	}
	return s
}

func (tl *timeline) url(name string) string {
	for _, e := range tl.f.Endpoints() {
		if e.Name == name {
			return e.BaseURL
		}
	}
	tl.t.Fatalf("no endpoint %q", name)
	return ""
}

// delta is the increase of a family summed over the targets whose name
// has prefix (a target name is a prefix of itself).
func delta(a, b snapshot, prefix, name string, match map[string]string) float64 {
	return b.poolSum(prefix, name, match) - a.poolSum(prefix, name, match)
}

func window(a, b snapshot, prefix, name string, match map[string]string) histo {
	return b.poolHist(prefix, name, match).minus(a.poolHist(prefix, name, match))
}

// legacyPredicted is sgl-router's predicted hit ratio: hits ÷ (hits+misses).
func legacyPredicted(a, b snapshot) float64 {
	h := delta(a, b, "gateway", "sgl_router_cache_hits_total", nil)
	m := delta(a, b, "gateway", "sgl_router_cache_misses_total", nil)
	return h / (h + m)
}

// non200 counts responses that were not 200 (any generation).
func non200(a, b snapshot) float64 {
	all := delta(a, b, "gateway", "smg_http_responses_total", nil) + delta(a, b, "gateway", "sgl_router_http_responses_total", nil)
	ok := delta(a, b, "gateway", "smg_http_responses_total", map[string]string{"status_code": "200"}) +
		delta(a, b, "gateway", "sgl_router_http_responses_total", map[string]string{"status_code": "200"})
	return all - ok
}

func TestScenarioSteady(t *testing.T) {
	t.Parallel()
	tl := play(t, Config{Seed: 1, Gateway: GatewayLegacy, Scenario: ScenarioSteady})
	a, b := tl.at(time.Minute), tl.at(4*time.Minute)
	if n := non200(a, b); n != 0 {
		t.Errorf("%v non-200 responses in steady state", n)
	}
	for _, name := range []string{"sgl_router_retries_total", "sglang:num_transfer_failed_reqs_total",
		"sglang:num_retracted_requests_total", "sglang:num_bootstrap_failed_reqs_total"} {
		if n := delta(a, b, "", name, nil); n != 0 {
			t.Errorf("%s increased by %v in steady state", name, n)
		}
	}
	actual, predicted := hitRatio(a, b, "prefill"), legacyPredicted(a, b)
	if actual < 0.5 || actual > 0.95 {
		t.Errorf("actual prefix-hit ratio %.2f, want a warm fleet (0.5–0.95)", actual)
	}
	if predicted <= actual {
		t.Errorf("router predicts %.2f, workers hit %.2f: the prediction should run above the truth", predicted, actual)
	}
	if q := b.poolSum("prefill", "sglang:num_queue_reqs", nil); q > 20 {
		t.Errorf("%v requests waiting for prefill in steady state", q)
	}
	if p99 := window(a, b, "decode", "sglang:time_to_first_token_seconds", nil).quantile(0.99); p99 > 5 {
		t.Errorf("TTFT p99 %.1fs in steady state", p99)
	}
}

func TestScenarioAnnouncement(t *testing.T) {
	t.Parallel()
	tl := play(t, Config{Seed: 1, Scenario: ScenarioAnnouncement})
	s0, s1, s2 := tl.at(20*time.Second), tl.at(time.Minute), tl.at(90*time.Second)
	s3, s4 := tl.at(135*time.Second), tl.at(195*time.Second)
	steady, cold, warm := hitRatio(s0, s1, "prefill"), hitRatio(s1, s2, "prefill"), hitRatio(s3, s4, "prefill")
	if cold > steady-0.05 || warm < cold+0.05 {
		t.Errorf("hit ratio steady %.2f → first 30 s %.2f → two minutes later %.2f: want a cold dip, then warm again",
			steady, cold, warm)
	}
	perSec := func(a, b snapshot, d time.Duration) float64 {
		return delta(a, b, "prefill", "sglang:realtime_tokens_total", map[string]string{"mode": "prefill_compute"}) / d.Seconds()
	}
	if c0, c1 := perSec(s0, s1, 40*time.Second), perSec(s1, s2, 30*time.Second); c1 < 1.3*c0 {
		t.Errorf("prefill compute %.0f → %.0f tokens/s: want the cold burst to show", c0, c1)
	}
	t0 := window(s0, s1, "decode", "sglang:time_to_first_token_seconds", nil).quantile(0.5)
	t1 := window(s1, s2, "decode", "sglang:time_to_first_token_seconds", nil).quantile(0.5)
	if t1 < 1.5*t0 {
		t.Errorf("TTFT p50 %.2fs → %.2fs: want it to rise during the cold minute", t0, t1)
	}
	q0 := window(s0, s1, "prefill", "sglang:queue_time_seconds", nil).mean()
	q1 := window(s1, s2, "prefill", "sglang:queue_time_seconds", nil).mean()
	if q1 < 1.5*q0 {
		t.Errorf("prefill queue time %.3fs → %.3fs: want the waiting queue to build", q0, q1)
	}
}

func TestScenarioPrefillRestart(t *testing.T) {
	t.Parallel()
	tl := play(t, Config{Seed: 1, Gateway: Gateway2026, Scenario: ScenarioPrefillRestart})
	s0, before := tl.at(30*time.Second), tl.at(85*time.Second)
	during := tl.at(100 * time.Second)
	if _, ok := during["prefill-0"]; ok {
		t.Error("prefill-0 answered during its warm-up")
	}
	// It answers again at 1:50; the gateways' breakers let traffic back
	// from about 2:00. The next half minute is its cold spell.
	s1, s2 := tl.at(2*time.Minute), tl.at(150*time.Second)
	if p, q := before["prefill-0"].label("sglang:num_retracted_reqs", "pid", nil), s1["prefill-0"].label("sglang:num_retracted_reqs", "pid", nil); p == q {
		t.Errorf("prefill-0 pid unchanged (%s) across its restart", p)
	}
	if o, n := before["prefill-0"].sum("sglang:prompt_tokens_total", nil), s1["prefill-0"].sum("sglang:prompt_tokens_total", nil); n >= o {
		t.Errorf("prefill-0 prompt_tokens_total %v → %v, want a counter reset", o, n)
	}
	wasHit, nowHit := hitRatio(s0, before, "prefill-0"), hitRatio(s1, s2, "prefill-0")
	peers := 0.0
	for _, p := range []string{"prefill-1", "prefill-2", "prefill-3"} {
		peers = math.Max(peers, hitRatio(s1, s2, p))
	}
	predicted := delta(s1, s2, "gateway", "sgl_router_selected_overlap_blocks_total", nil) /
		delta(s1, s2, "gateway", "sgl_router_cache_aware_query_blocks_total", nil)
	if nowHit > wasHit-0.1 || nowHit > peers-0.2 {
		t.Errorf("prefill-0 hit ratio %.2f before, %.2f after its restart (peers %.2f): want it cold", wasHit, nowHit, peers)
	}
	if predicted < nowHit+0.15 {
		t.Errorf("router predicts %.2f (selected/query blocks), restarted prefill-0 hits %.2f: want the router still warm", predicted, nowHit)
	}
	if delta(before, s1, "gateway", "sgl_router_worker_requests_total", map[string]string{"worker_url": tl.url("prefill-0"), "outcome": "error"}) == 0 {
		t.Error("no failed dispatches to prefill-0 around its restart")
	}
}

func TestScenarioEvictionPressure(t *testing.T) {
	t.Parallel()
	tl := play(t, Config{Seed: 1, Gateway: GatewayLegacy, Scenario: ScenarioEvictionPressure})
	s0, s1 := tl.at(20*time.Second), tl.at(time.Minute)
	s2, s3 := tl.at(2*time.Minute), tl.at(5*time.Minute)
	ev0 := delta(s0, s1, "prefill", "sglang:evicted_tokens_total", nil) / 40
	ev1 := delta(s2, s3, "prefill", "sglang:evicted_tokens_total", nil) / 180
	if ev1 < 2*ev0 || ev1 == 0 {
		t.Errorf("evicted tokens/s %.0f → %.0f: want a jump", ev0, ev1)
	}
	gap0 := legacyPredicted(s0, s1) - hitRatio(s0, s1, "prefill")
	gap1 := legacyPredicted(s2, s3) - hitRatio(s2, s3, "prefill")
	if gap1 < gap0+0.15 || gap1 < 0.2 {
		t.Errorf("predicted−actual hit gap %.2f → %.2f: want it to widen", gap0, gap1)
	}
	for _, n := range names(tl.f.Endpoints(), "prefill") {
		fs := s3[n]
		full := (fs.sum("sglang:kv_used_tokens", nil) + fs.sum("sglang:kv_evictable_tokens", nil)) / fs.sum("sglang:max_total_num_tokens", nil)
		if full < 0.9 {
			t.Errorf("%s KV (used + evictable) at %.2f of capacity under eviction pressure", n, full)
		}
	}
}

func TestScenarioReplicaSkew(t *testing.T) {
	t.Parallel()
	tl := play(t, Config{Seed: 1, Replicas: 1, Scenario: ScenarioReplicaSkew})
	if r := tl.f.Config().Replicas; r != 2 {
		t.Fatalf("replica-skew runs with %d replicas, want it raised to 2", r)
	}
	s1, s2 := tl.at(time.Minute), tl.at(3*time.Minute)
	p0 := map[string]string{"worker": tl.url("prefill-0")}
	g0, g1 := s2["gateway-0"], s2["gateway-1"]
	if g0.sum("smg_worker_health", p0) != 1 || g1.sum("smg_worker_health", p0) != 0 {
		t.Errorf("prefill-0 health: gateway-0 %v, gateway-1 %v; want 1 and 0", g0.sum("smg_worker_health", p0), g1.sum("smg_worker_health", p0))
	}
	fail := map[string]string{"worker": p0["worker"], "outcome": "failure"}
	if f0 := g0.sum("smg_worker_cb_outcomes_total", fail); f0 != 0 {
		t.Errorf("gateway-0 saw %v failures on prefill-0, which it can reach", f0)
	}
	in0 := delta(s1, s2, "gateway-0", "smg_http_requests_total", nil)
	in1 := delta(s1, s2, "gateway-1", "smg_http_requests_total", nil)
	if r := in0 / in1; r < 2 || r > 4.5 {
		t.Errorf("intake gateway-0/gateway-1 = %.1f, want the 3:1 load-balancer skew", r)
	}
	ok := map[string]string{"worker": p0["worker"], "outcome": "success"}
	if delta(s1, s2, "gateway-0", "smg_worker_cb_outcomes_total", ok) == 0 {
		t.Error("gateway-0 stopped using prefill-0")
	}
	if n := delta(tl.at(2*time.Minute+30*time.Second), tl.at(3*time.Minute), "gateway-1", "smg_worker_cb_outcomes_total", ok); n != 0 {
		t.Errorf("gateway-1 still completes requests on the prefill-0 it cannot reach (%v)", n)
	}
}

func TestScenarioCongestedLink(t *testing.T) {
	t.Parallel()
	tl := play(t, Config{Seed: 1, Scenario: ScenarioCongestedLink})
	s0, s1 := tl.at(20*time.Second), tl.at(time.Minute)
	s2, s3 := tl.at(90*time.Second), tl.at(4*time.Minute)
	lat := func(n string) float64 { return window(s2, s3, n, "sglang:kv_transfer_latency_ms", nil).quantile(0.99) }
	if bad, good := lat("prefill-0"), lat("prefill-1"); bad < 1000 || good > 250 {
		t.Errorf("KV transfer latency p99: prefill-0 %.0f ms, prefill-1 %.0f ms; want prefill-0 alone slow", bad, good)
	}
	for _, e := range tl.f.Endpoints() {
		if !e.Role.IsWorker() {
			continue
		}
		before := delta(s0, s1, e.Name, "sglang:num_transfer_failed_reqs_total", nil)
		after := delta(s2, s3, e.Name, "sglang:kv_transfer_timeouts_total", map[string]string{"stage": "transfer"})
		onPath := e.Name == "prefill-0" || e.Name == "decode-0"
		if before != 0 || (after > 0) != onPath {
			t.Errorf("%s: %v transfer failures before, %v timeouts after; want timeouts only on the congested path", e.Name, before, after)
		}
	}
	stuck := func(name, family string) bool {
		for _, s := range []snapshot{tl.at(150 * time.Second), tl.at(200 * time.Second), tl.at(230 * time.Second)} {
			if s[name].sum(family, nil) == 0 {
				return false
			}
		}
		return true
	}
	if !stuck("prefill-0", "sglang:num_prefill_inflight_queue_reqs") || !stuck("decode-0", "sglang:num_decode_transfer_queue_reqs") {
		t.Error("prefill-0's in-flight queue or decode-0's transfer queue emptied: want them stuck")
	}
	g := s3["gateway-0"]
	for _, n := range []string{"prefill-0", "decode-0"} {
		if h := g.sum("smg_worker_health", map[string]string{"worker": tl.url(n)}); h != 1 {
			t.Errorf("%s health %v: the workers themselves are fine", n, h)
		}
	}
}

func TestScenarioDecodeSaturation(t *testing.T) {
	t.Parallel()
	tl := play(t, Config{Seed: 1, Scenario: ScenarioDecodeSaturation})
	s0, s1 := tl.at(20*time.Second), tl.at(time.Minute)
	s2, s3 := tl.at(2*time.Minute), tl.at(4*time.Minute)
	c429 := map[string]string{"status_code": "429"}
	if b, a := delta(s0, s1, "gateway", "smg_http_responses_total", c429), delta(s2, s3, "gateway", "smg_http_responses_total", c429); b != 0 || a == 0 {
		t.Errorf("429s: %v before, %v during saturation", b, a)
	}
	usage := 0.0
	for _, n := range names(tl.f.Endpoints(), "decode") {
		usage = math.Max(usage, s3[n].sum("sglang:token_usage", nil))
	}
	if usage < 0.85 {
		t.Errorf("decode KV usage peaks at %.2f, want the pool full", usage)
	}
	if s3.poolSum("decode", "sglang:num_decode_prealloc_queue_reqs", nil) == 0 || s3.poolSum("prefill", "sglang:num_prefill_bootstrap_queue_reqs", nil) == 0 {
		t.Error("want requests waiting for decode preallocation, and prefill bootstrap waiting on them")
	}
	if i0, i1 := window(s0, s1, "decode", "sglang:inter_token_latency_seconds", nil).mean(),
		window(s2, s3, "decode", "sglang:inter_token_latency_seconds", nil).mean(); i1 < 1.5*i0 {
		t.Errorf("mean ITL %.3fs → %.3fs: want decode slowed by its batch", i0, i1)
	}
	if w := s3.poolSum("prefill", "sglang:num_queue_reqs", nil); w > s3.poolSum("prefill", "sglang:num_prefill_bootstrap_queue_reqs", nil) {
		t.Errorf("%v requests wait for prefill compute: the bottleneck should be decode, not prefill", w)
	}
}

func TestScenarioScaleOut(t *testing.T) {
	t.Parallel()
	tl := play(t, Config{Seed: 1, Scenario: ScenarioScaleOut})
	pool := map[string]string{"worker_type": "prefill"}
	// The prefill waiting queue averaged over a few scrapes.
	waiting := func(ds ...time.Duration) (avg float64, last snapshot) {
		for _, d := range ds {
			last = tl.at(d)
			avg += last.poolSum("prefill", "sglang:num_queue_reqs", nil) / float64(len(ds))
		}
		return avg, last
	}
	before, s1 := waiting(50*time.Second, 60*time.Second, 70*time.Second)
	if _, ok := s1["prefill-4"]; ok {
		t.Error("the new prefill worker answers before its warm-up")
	}
	if n := s1["gateway-0"].sum("smg_worker_pool_size", pool); n != 4 {
		t.Errorf("prefill pool size %v before scale-out, want 4", n)
	}
	// Its first half minute in service (it answers at 1:20).
	j0, j1 := tl.at(80*time.Second), tl.at(110*time.Second)
	if newHit, fleetHit := hitRatio(j0, j1, "prefill-4"), hitRatio(j0, j1, "prefill"); newHit > 0.6*fleetHit {
		t.Errorf("new worker hit ratio %.2f vs fleet %.2f in its first 30 s: want it cold", newHit, fleetHit)
	}
	s2 := tl.at(150 * time.Second)
	for _, g := range []string{"gateway-0", "gateway-1"} {
		if n := s2[g].sum("smg_worker_pool_size", pool); n != 5 {
			t.Errorf("%s prefill pool size %v after scale-out, want 5", g, n)
		}
		ok := map[string]string{"worker": tl.url("prefill-4"), "outcome": "success"}
		if s2[g].sum("smg_worker_cb_outcomes_total", ok) == 0 {
			t.Errorf("%s sent the new worker nothing", g)
		}
	}
	_, body := get(t, tl.url("gateway-0")+"/workers")
	if !strings.Contains(string(body), tl.url("prefill-4")) {
		t.Error("gateway-0 /workers does not list the new worker")
	}
	if after, _ := waiting(270*time.Second, 285*time.Second, 300*time.Second); after > 0.75*before {
		t.Errorf("prefill waiting queue %.0f before the new worker, %.0f after: want it to shrink", before, after)
	}
}
