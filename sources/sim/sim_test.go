package sim

import (
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/pdtop/pdtop/sources"
)

func TestNewRejectsBadConfig(t *testing.T) {
	bad := map[string]Config{
		"gateway":  {Gateway: "nginx"},
		"scenario": {Scenario: "meteor-strike"},
		"replicas": {Replicas: 9},
		"prefill":  {Prefill: -1},
		"tick":     {Tick: time.Nanosecond},
		"workload": {Workload: Workload{Rate: 1, DocTokens: 1, OutputTokens: 1, OutputCap: 1}}, // no documents
		"capacity": {Capacity: Capacity{PrefillTokensPerSec: 1}},                               // missing the rest
		"router":   {Router: Router{CacheThreshold: 2}},
	}
	for name, cfg := range bad {
		if _, err := New(cfg); err == nil {
			t.Errorf("%s: New(%+v) = nil error, want a validation error", name, cfg)
		}
	}
	f, err := New(Config{})
	if err != nil {
		t.Fatalf("New(zero Config): %v", err)
	}
	c := f.Config()
	if c.Prefill != 4 || c.Decode != 4 || c.Replicas != 2 || c.Gateway != GatewaySMG || c.Scenario != ScenarioCycle {
		t.Errorf("defaults = %d+%d, %d replicas, %q, %q", c.Prefill, c.Decode, c.Replicas, c.Gateway, c.Scenario)
	}
	if f.Rate() <= 0 {
		t.Errorf("auto-sized rate = %v, want > 0", f.Rate())
	}
}

func TestScenariosListed(t *testing.T) {
	infos := Scenarios()
	want := []string{ScenarioAnnouncement, ScenarioPrefillRestart, ScenarioEvictionPressure,
		ScenarioReplicaSkew, ScenarioCongestedLink, ScenarioDecodeSaturation, ScenarioScaleOut, ScenarioSteady}
	if len(infos) != len(want) {
		t.Fatalf("Scenarios() has %d entries, want %d", len(infos), len(want))
	}
	for i, info := range infos {
		if info.Name != want[i] || info.Description == "" || info.Signature == "" || info.Length <= 0 {
			t.Errorf("Scenarios()[%d] = %+v", i, info)
		}
		if _, err := New(Config{Scenario: info.Name}); err != nil {
			t.Errorf("New(%q): %v", info.Name, err)
		}
	}
}

// normalized scrapes every endpoint and replaces worker base URLs (which
// carry ephemeral ports) by worker names, so two fleets can be compared.
func normalized(t *testing.T, f *Fleet) map[string]string {
	t.Helper()
	eps := f.Endpoints()
	// Longest URL first so that ":4123" never rewrites part of ":41234".
	sort.Slice(eps, func(i, j int) bool { return len(eps[i].BaseURL) > len(eps[j].BaseURL) })
	out := map[string]string{}
	for _, e := range eps {
		_, body := get(t, e.MetricsURL)
		s := string(body)
		for _, w := range eps {
			if w.Role != sources.RoleGateway {
				s = strings.ReplaceAll(s, w.BaseURL, "http://"+w.Name)
			}
		}
		// Series are sorted by label value, and the URLs differed: sort again.
		lines := strings.Split(s, "\n")
		sort.Strings(lines)
		out[e.Name] = strings.Join(lines, "\n")
	}
	return out
}

func TestDeterministic(t *testing.T) {
	// Each generation with a scenario whose scripted events land inside
	// the run: a worker joining (and its endpoint), a restart, congestion.
	scenario := map[string]string{GatewaySMG: ScenarioScaleOut, GatewayLegacy: ScenarioPrefillRestart, Gateway2026: ScenarioCongestedLink}
	for _, gw := range []string{GatewaySMG, GatewayLegacy, Gateway2026} {
		t.Run(gw, func(t *testing.T) {
			t.Parallel()
			cfg := Config{Seed: 7, Prefill: 3, Decode: 2, Replicas: 2, Gateway: gw, Scenario: scenario[gw]}
			a, _ := serveFleet(t, cfg)
			b, _ := serveFleet(t, cfg)
			a.Step(150 * time.Second)
			// Same total simulated time, split differently.
			for range 6 {
				b.Step(25 * time.Second)
			}
			na, nb := normalized(t, a), normalized(t, b)
			if len(na) != len(nb) {
				t.Fatalf("%d vs %d endpoints", len(na), len(nb))
			}
			for name, body := range na {
				if nb[name] != body {
					t.Errorf("%s: /metrics differ between two fleets with the same seed and steps", name)
				}
			}
			if !strings.Contains(na["gateway-0"], "http://prefill-0") {
				t.Errorf("gateway-0 body does not name prefill-0 by URL:\n%s", na["gateway-0"])
			}

			cfg.Seed = 8
			c, _ := serveFleet(t, cfg)
			c.Step(150 * time.Second)
			if normalized(t, c)["decode-0"] == na["decode-0"] {
				t.Error("a different seed produced the same decode-0 body")
			}
		})
	}
}

func TestSizes(t *testing.T) {
	for _, sz := range []struct{ p, d, r int }{{1, 1, 1}, {64, 64, 4}} {
		t.Run(itoa(sz.p)+"+"+itoa(sz.d), func(t *testing.T) {
			t.Parallel()
			f, eps := serveFleet(t, Config{Seed: 3, Prefill: sz.p, Decode: sz.d, Replicas: sz.r, Scenario: ScenarioSteady})
			if len(eps) != sz.p+sz.d+sz.r {
				t.Fatalf("%d endpoints, want %d", len(eps), sz.p+sz.d+sz.r)
			}
			f.Step(90 * time.Second)
			s := scrapeAll(t, eps)
			ok := s.poolSum("gateway", "smg_http_responses_total", map[string]string{"status_code": "200"})
			if ok < 0.8*90*f.Rate() {
				t.Errorf("%.0f successful responses in 90 s at %.1f req/s", ok, f.Rate())
			}
			if bad := s.poolSum("gateway", "smg_http_responses_total", nil) - ok; bad > 0 {
				t.Errorf("%.0f unsuccessful responses in steady state", bad)
			}
			served := 0
			for _, n := range names(eps, "prefill") {
				if s[n].label("sglang:num_running_reqs", "engine_type", nil) != "prefill" {
					t.Errorf("%s: engine_type label is not prefill", n)
				}
				if s[n].sum("sglang:num_requests_total", nil) > 0 {
					served++
				}
			}
			if served < (sz.p+3)/4 {
				t.Errorf("only %d of %d prefill workers served requests", served, sz.p)
			}
			for _, n := range names(eps, "decode") {
				if s[n].label("sglang:num_running_reqs", "engine_type", nil) != "decode" {
					t.Errorf("%s: engine_type label is not decode", n)
				}
			}
		})
	}
}

func TestStepIsTickAligned(t *testing.T) {
	f, err := New(Config{Seed: 1, Scenario: ScenarioSteady})
	if err != nil {
		t.Fatal(err)
	}
	f.Step(10 * time.Millisecond)
	f.Step(15 * time.Millisecond)
	f.Step(0)
	f.Step(-time.Second)
	if got := f.Now(); got != 25*time.Millisecond {
		t.Errorf("Now() = %v, want 25ms", got)
	}
	if name, elapsed := f.Scenario(); name != ScenarioSteady || elapsed != 0 {
		t.Errorf("Scenario() = %q, %v; want steady, 0 (no whole tick simulated yet)", name, elapsed)
	}
	f.Step(25 * time.Millisecond)
	if _, elapsed := f.Scenario(); elapsed != 50*time.Millisecond {
		t.Errorf("after 50ms the scenario clock is %v, want one tick", elapsed)
	}
}

// TestCycleMovesSoon: a presenter starting the default demo sees
// something happen within the first two minutes, not four calm ones.
func TestCycleMovesSoon(t *testing.T) {
	f, err := New(Config{Seed: 2, Prefill: 2, Decode: 2})
	if err != nil {
		t.Fatal(err)
	}
	if name, _ := f.Scenario(); name == ScenarioSteady {
		t.Fatalf("the cycle opens with steady")
	}
	if got := Scenarios()[len(Scenarios())-1]; got.Name != ScenarioSteady || got.Length > time.Minute {
		t.Errorf("steady's turn closes the cycle and is short: %+v", got)
	}
}

func TestRunStopsWithContext(t *testing.T) {
	f, err := New(Config{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	f.Run(ctx, 100) // must return: the context is already done
	if f.Now() != 0 {
		t.Errorf("Run advanced a cancelled fleet to %v", f.Now())
	}
}

func TestCycleVisitsEveryScenario(t *testing.T) {
	f, err := New(Config{Seed: 2, Prefill: 2, Decode: 2})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	total := time.Duration(0)
	for _, s := range Scenarios() {
		total += s.Length
	}
	for f.Now() < total+time.Minute {
		name, _ := f.Scenario()
		seen[name] = true
		f.Step(30 * time.Second)
	}
	for _, s := range Scenarios() {
		if !seen[s.Name] {
			t.Errorf("the cycle never played %q", s.Name)
		}
	}
	if name, _ := f.Scenario(); name != Scenarios()[0].Name {
		t.Errorf("after one full cycle the fleet plays %q, want it to start over with %s", name, Scenarios()[0].Name)
	}
	// scale-out's worker was removed again at the end of its turn.
	live := 0
	for _, w := range f.workers {
		if w.role == sources.RolePrefill && !w.removed {
			live++
		}
	}
	if live != 2 {
		t.Errorf("%d live prefill workers after the cycle, want 2", live)
	}
}
