package diagnose_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/sources/diagnose"
	"github.com/pdtop/pdtop/sources/sim"
)

// The demo fleet's scenarios, scraped through the real HTTP path with a
// simulated clock, each checked for the verdict its signature implies.

// run plays a scenario for the given simulated seconds and returns the
// snapshot (1-minute window) at the end.
func run(t *testing.T, cfg sim.Config, seconds int) *sources.Snapshot {
	t.Helper()
	if cfg.Seed == 0 {
		cfg.Seed = 1
	}
	if cfg.Prefill == 0 {
		cfg.Prefill, cfg.Decode = 2, 2
	}
	if cfg.Replicas == 0 {
		cfg.Replicas = 2
	}
	r := newFleetRun(t, cfg)
	r.advance(seconds)
	return r.snapshot()
}

func verdictOf(t *testing.T, s *sources.Snapshot, name string) sources.HitVerdict {
	t.Helper()
	for _, v := range s.Diagnosis.Hits {
		if v.Name == name {
			return v
		}
	}
	t.Fatalf("no verdict for %s in %+v", name, s.Diagnosis.Hits)
	return sources.HitVerdict{}
}

func hasCause(v sources.HitVerdict, k sources.CauseKind) bool {
	for _, c := range v.Causes {
		if c.Kind == k {
			return true
		}
	}
	return false
}

func findingFor(s *sources.Snapshot, kind, name string) (sources.Finding, bool) {
	for _, f := range s.Diagnosis.Findings {
		if f.Kind == kind && f.Name == name {
			return f, true
		}
	}
	return sources.Finding{}, false
}

// TestPrefillRestartVerdict: after prefill-0 restarts (1:30) and the
// breakers let traffic back, its actual hit drops far below what the
// routers predict; the verdict names the restart. With the legacy router
// the prediction is a per-request boolean, labelled a different scale;
// with smg (no prediction) the worker is compared with its peers.
func TestPrefillRestartVerdict(t *testing.T) {
	t.Parallel() // each plays its own fleet on loopback
	for _, gen := range []string{sim.GatewayLegacy, sim.GatewaySMG} {
		t.Run(gen, func(t *testing.T) {
			s := run(t, sim.Config{Gateway: gen, Scenario: sim.ScenarioPrefillRestart}, 150)
			v := verdictOf(t, s, "prefill-0")
			if !v.Large || len(v.Causes) == 0 || v.Causes[0].Kind != sources.CauseRestart {
				t.Fatalf("prefill-0: %+v", v)
			}
			if !strings.Contains(v.Verdict, "restarted") || !strings.Contains(v.Verdict, "ago") {
				t.Errorf("verdict does not say when it restarted: %q", v.Verdict)
			}
			// Inside the window, the worker is judged on its hit since the
			// restart, and the gap is taken from that figure.
			if !strings.Contains(v.Actual.Source, "since the restart") || !strings.Contains(v.Verdict, "since the restart") {
				t.Errorf("not judged since the restart: %+v", v.Actual)
			}
			if d := v.Expected.Ratio - v.Actual.Ratio; math.Abs(d-v.Gap) > 1e-9 {
				t.Errorf("gap %v, but expected − actual = %v", v.Gap, d)
			}
			if peer := verdictOf(t, s, "prefill-1"); peer.Large {
				t.Errorf("prefill-1 did not restart but has a large gap: %+v", peer)
			}
			switch gen {
			case sim.GatewayLegacy:
				if v.SameScale || !strings.Contains(v.Basis, "different scale") || !strings.Contains(v.Verdict, "different scale") {
					t.Errorf("legacy per-request prediction not labelled a different scale: %+v", v)
				}
			case sim.GatewaySMG:
				if !strings.Contains(v.Basis, "peers") || !v.SameScale {
					t.Errorf("smg exposes no prediction: the basis should be the peers: %q", v.Basis)
				}
				if f, ok := findingFor(s, "cache-gap", "prefill-0"); !ok || f.Severity != sources.SevWarn {
					t.Errorf("no cache-gap finding for prefill-0: %+v", s.Diagnosis.Findings)
				}
			}
		})
	}
}

// TestEvictionPressureVerdict: the batch sweep makes every prefill worker
// evict most of what it caches; the 2026 router's block prediction (same
// scale) stays where it was, and the verdict is KV pressure.
func TestEvictionPressureVerdict(t *testing.T) {
	t.Parallel() // each plays its own fleet on loopback
	s := run(t, sim.Config{Gateway: sim.Gateway2026, Scenario: sim.ScenarioEvictionPressure}, 240)
	for _, name := range []string{"prefill-0", "prefill-1", "gateway-0"} {
		v := verdictOf(t, s, name)
		if !v.Large || !v.SameScale || !hasCause(v, sources.CauseKVPressure) {
			t.Errorf("%s: %+v", name, v)
		}
		if !strings.Contains(v.Verdict, "evicting") {
			t.Errorf("%s: verdict does not name the evictions: %q", name, v.Verdict)
		}
	}
	if v := verdictOf(t, s, "prefill-0"); v.Causes[0].Kind != sources.CauseKVPressure {
		t.Errorf("prefill-0: first cause %v, want KV pressure", v.Causes[0])
	}
}

// TestReplicaSkewVerdict: gateway-1 loses its path to prefill-0 and marks
// it unhealthy while gateway-0 keeps using it: the replicas disagree, and
// that is said before it moves any hit ratio.
func TestReplicaSkewVerdict(t *testing.T) {
	t.Parallel() // each plays its own fleet on loopback
	s := run(t, sim.Config{Scenario: sim.ScenarioReplicaSkew}, 120)
	v := verdictOf(t, s, "prefill-0")
	if !hasCause(v, sources.CauseReplicasDisagree) {
		t.Fatalf("prefill-0: %+v", v)
	}
	f, ok := findingFor(s, "replicas-disagree", "prefill-0")
	if !ok || !strings.Contains(f.Text, "gateway-1") || !strings.Contains(f.Text, "gateway-0") {
		t.Errorf("finding: %+v in %+v", f, s.Diagnosis.Findings)
	}
	if hasCause(verdictOf(t, s, "prefill-1"), sources.CauseReplicasDisagree) {
		t.Errorf("prefill-1 is seen alike by both replicas")
	}
}

// TestSpilledForLoadVerdict: with the legacy router's imbalance thresholds
// at zero, a large share of requests is routed to the least-loaded worker
// instead of the one holding their prefix. The imbalance events are listed
// as evidence at once, and are the cause when the gap crosses the
// threshold (lowered here: with two workers and much reuse, spilling
// costs few hits).
func TestSpilledForLoadVerdict(t *testing.T) {
	t.Parallel() // each plays its own fleet on loopback
	rt := sim.DefaultRouter()
	rt.BalanceAbsThreshold, rt.BalanceRelThreshold = 0, 1
	s := run(t, sim.Config{Gateway: sim.GatewayLegacy, Scenario: sim.ScenarioSteady, Router: rt, Replicas: 1}, 120)
	v := verdictOf(t, s, "gateway-0")
	if !hasCause(v, sources.CauseSpilled) || !strings.Contains(v.Verdict, "imbalance events on gateway-0") {
		t.Fatalf("spill not listed: %+v", v)
	}
	s.Thresholds.HitGap = 0.05
	diagnose.Run(s)
	v = verdictOf(t, s, "gateway-0")
	if !v.Large || !hasCause(v, sources.CauseSpilled) || hasCause(v, sources.CauseUnexplained) {
		t.Fatalf("gateway-0 with a 5-point threshold: %+v", v)
	}
	if !strings.Contains(v.Verdict, "routed for load") {
		t.Errorf("verdict %q", v.Verdict)
	}
}

// TestScaleOutVerdictAndCapacity: the new prefill worker joins with a cold
// cache (its verdict says it joined), its first minute shows as a cold
// start, and the overloaded pool's measured per-worker rate recovers the
// simulated 20 000 uncached tokens/s.
func TestScaleOutVerdictAndCapacity(t *testing.T) {
	t.Parallel() // each plays its own fleet on loopback
	s := run(t, sim.Config{Gateway: sim.Gateway2026, Scenario: sim.ScenarioScaleOut}, 160)
	v := verdictOf(t, s, "prefill-2")
	if !v.Large || v.Causes[0].Kind != sources.CauseRestart || !strings.Contains(v.Verdict, "joined") {
		t.Fatalf("prefill-2: %+v", v)
	}
	p := s.Diagnosis.Capacity.Prefill
	if !p.Present || p.LowerBound || !p.PerWorker.Present {
		t.Fatalf("prefill capacity not measured: %+v", p)
	}
	if got := p.PerWorker.Value; got < 17000 || got > 23000 {
		t.Errorf("prefill per-worker sustained rate %.0f uncached tok/s, want ≈20000 (the simulated capacity)", got)
	}
	var cold *sources.ColdStart
	for i, c := range s.Diagnosis.Capacity.ColdStarts {
		if c.Name == "prefill-2" {
			cold = &s.Diagnosis.Capacity.ColdStarts[i]
		}
	}
	if cold == nil || cold.Kind != "joined" || !(cold.First < cold.Steady) {
		t.Errorf("prefill-2 cold start: %+v", cold)
	}
}

// TestDecodeSaturationCapacityAndGoodput: five times longer answers
// overload decode: its utilisation passes 1 and more workers are needed,
// the gateways reject, and goodput falls with stated bounds.
func TestDecodeSaturationCapacityAndGoodput(t *testing.T) {
	t.Parallel() // each plays its own fleet on loopback
	s := run(t, sim.Config{Scenario: sim.ScenarioDecodeSaturation}, 200)
	d := s.Diagnosis
	dec := d.Capacity.Decode
	if !dec.Utilisation.Present || dec.Utilisation.Value <= 1 || dec.LowerBound || dec.WorkersNeeded <= dec.Workers {
		t.Errorf("decode load: %+v", dec)
	}
	if !dec.ITL.Present {
		t.Errorf("decode capacity without the ITL it was measured at")
	}
	if pre := d.Capacity.Prefill; pre.Utilisation.Present && pre.Utilisation.Value >= 1 {
		t.Errorf("prefill is not the bottleneck here: %+v", pre)
	}
	a := d.Admission
	if !a.RejectedShare.Present || a.RejectedShare.Value < s.Thresholds.ErrorRate || !a.Rejected["429"].Present {
		t.Errorf("rejections: %+v", a)
	}
	if !(a.Admitted.Value < a.Offered.Value) {
		t.Errorf("admitted %v should be below offered %v", a.Admitted.Value, a.Offered.Value)
	}
	g := a.Goodput
	if !g.Present || !(g.Share.Lo <= g.Share.Est && g.Share.Est <= g.Share.Hi) || g.Share.Hi >= 0.99 {
		t.Errorf("goodput: %+v", g)
	}
	if _, ok := findingFor(s, "capacity", "decode"); !ok {
		t.Errorf("no decode capacity finding: %+v", d.Findings)
	}
}

// TestCongestedLinkTransfer: the 1 % path makes prefill-0's transfers
// queue behind each other; the transfer account, not the hit rate, says so.
func TestCongestedLinkTransfer(t *testing.T) {
	t.Parallel() // each plays its own fleet on loopback
	s := run(t, sim.Config{Scenario: sim.ScenarioCongestedLink}, 120)
	tr := s.Diagnosis.Capacity.Transfer
	if !tr.Busiest.Present || tr.Busiest.Source != "prefill-0" || tr.Busiest.Value != 1 {
		t.Fatalf("transfer: %+v", tr)
	}
	for _, l := range tr.Links {
		if l.Busy.Value > 1 || l.Headroom.Value < 0 {
			t.Errorf("%s: a share of time above 100%% or a negative headroom: %+v", l.Name, l)
		}
		if l.Name == "prefill-0" && (!l.Queued || !(l.InFlight.Value > 1)) {
			t.Errorf("prefill-0's transfers queue: %+v", l)
		}
		if l.Name == "prefill-1" && (!l.Busy.Present || l.Busy.Value >= 0.5 || l.Queued) {
			t.Errorf("prefill-1's paths are fine: %+v", l)
		}
	}
	if _, ok := findingFor(s, "capacity", "prefill-0"); !ok {
		t.Errorf("no transfer finding: %+v", s.Diagnosis.Findings)
	}
	if len(s.Diagnosis.Stalls) > 0 {
		t.Errorf("a congested link still moves bytes, not a stall: %+v", s.Diagnosis.Stalls)
	}
	// The traffic burst at about 1:20 keeps its hit ratio: its TTFT rise
	// is the congested path's, not a cold cache's.
	var burst *sources.ColdStart
	for i, c := range s.Diagnosis.Capacity.ColdStarts {
		if c.Kind == "burst" && c.Metric == "TTFT p99" {
			burst = &s.Diagnosis.Capacity.ColdStarts[i]
		}
	}
	if burst == nil || burst.Cold || !strings.HasPrefix(burst.Explained, "prefill-0's KV transfers queue") ||
		!strings.Contains(burst.Text, "not a cold cache") {
		t.Errorf("burst: %+v", s.Diagnosis.Capacity.ColdStarts)
	}
}

// TestAnnouncementColdStart: the handbook email at 1:00 is a burst whose
// first minute has a far higher TTFT p99 than the minute before.
func TestAnnouncementColdStart(t *testing.T) {
	t.Parallel() // each plays its own fleet on loopback
	s := run(t, sim.Config{Scenario: sim.ScenarioAnnouncement}, 100)
	var ttft *sources.ColdStart
	for i, c := range s.Diagnosis.Capacity.ColdStarts {
		if c.Kind == "burst" && c.Metric == "TTFT p99" {
			ttft = &s.Diagnosis.Capacity.ColdStarts[i]
		}
	}
	if ttft == nil || !(ttft.First > 2*ttft.Steady) || !ttft.Cold {
		t.Fatalf("burst cold start: %+v", s.Diagnosis.Capacity.ColdStarts)
	}
	if got := s.Time.Sub(ttft.At); got < 20*time.Second || got > 60*time.Second {
		t.Errorf("burst at %v before the end, want about 40s (the 1:00 email)", got)
	}
}

// TestLowTrafficVerdict: a trickle of requests is too little to judge.
func TestLowTrafficVerdict(t *testing.T) {
	t.Parallel() // each plays its own fleet on loopback
	wl := sim.DefaultWorkload()
	wl.Rate, wl.BurstEvery = 0.05, 0
	s := run(t, sim.Config{Gateway: sim.Gateway2026, Scenario: sim.ScenarioSteady, Workload: wl}, 60)
	v := verdictOf(t, s, "prefill-0")
	if v.Large || v.GapKnown || len(v.Causes) == 0 || v.Causes[0].Kind != sources.CauseLowTraffic ||
		!strings.HasPrefix(v.Verdict, "too little traffic to judge") {
		t.Fatalf("prefill-0: %+v", v)
	}
}

// TestSteadyIsCalm: nominal traffic produces no warning in any gateway
// generation.
func TestSteadyIsCalm(t *testing.T) {
	t.Parallel() // each plays its own fleet on loopback
	for _, gen := range []string{sim.GatewaySMG, sim.Gateway2026} {
		s := run(t, sim.Config{Gateway: gen, Scenario: sim.ScenarioSteady}, 120)
		for _, f := range s.Diagnosis.Findings {
			if f.Severity >= sources.SevWarn {
				t.Errorf("%s: steady traffic flagged: %+v", gen, f)
			}
		}
		// A calm pool is never "over capacity": a lower bound covers
		// what it served and was offered.
		c := s.Diagnosis.Capacity
		for _, p := range []sources.PoolLoad{c.Prefill, c.Decode} {
			if p.LowerBound && (p.Utilisation.Value > 1 || p.Headroom.Value < 0 ||
				p.Served.Present && p.Capacity.Value < p.Served.Value) {
				t.Errorf("%s: %s pool never saturated but read over capacity: %+v", gen, p.Role, p)
			}
		}
		if a := s.Diagnosis.Admission; a.Admitted.Value > a.Offered.Value {
			t.Errorf("%s: admitted %.2f/s > offered %.2f/s", gen, a.Admitted.Value, a.Offered.Value)
		}
	}
}

// TestFirstSecondsAreNotOverCapacity: in the first seconds (what
// 'pdtop snapshot demo' sees) the sum of per-step peaks can read below
// what a calm pool serves; a never-saturated pool is not over capacity,
// and no more requests are admitted than offered.
func TestFirstSecondsAreNotOverCapacity(t *testing.T) {
	t.Parallel()
	for _, secs := range []int{6, 10, 20} {
		s := run(t, sim.Config{Scenario: sim.ScenarioSteady}, secs)
		c := s.Diagnosis.Capacity
		for _, p := range []sources.PoolLoad{c.Prefill, c.Decode} {
			if p.LowerBound && (p.Utilisation.Value > 1 || p.Headroom.Value < 0 ||
				p.Served.Present && p.Capacity.Value < p.Served.Value) {
				t.Errorf("%ds: %s pool never saturated but read over capacity: util %.2f headroom %.0f capacity %.0f served %.0f",
					secs, p.Role, p.Utilisation.Value, p.Headroom.Value, p.Capacity.Value, p.Served.Value)
			}
		}
		if a := s.Diagnosis.Admission; a.Admitted.Value > a.Offered.Value {
			t.Errorf("%ds: admitted %.2f/s > offered %.2f/s", secs, a.Admitted.Value, a.Offered.Value)
		}
	}
}
