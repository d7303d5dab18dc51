package ui

import (
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/pdtop/pdtop/sources/sim"
)

// TestScenarioVerdictsOnScreen plays each demo scenario over the real
// scrape path and checks that its verdict is on screen, in words: in the
// summary line, the panels, or the capacity view (key c).
func TestScenarioVerdictsOnScreen(t *testing.T) {
	cases := []struct {
		scenario, gen string
		seconds       int
		dashboard     []string // on the 200x60 dashboard
		capacity      []string // in the capacity view
	}{
		{sim.ScenarioPrefillRestart, sim.GatewaySMG, 150,
			[]string{"! prefill-0 cache gap: cold: restarted", "! cold: restarted", "↻"}, []string{"cold start: prefill-0 restarted"}},
		{sim.ScenarioEvictionPressure, sim.Gateway2026, 240,
			[]string{"cache gap: KV pressure", "! KV pressure", "evicting"}, nil},
		{sim.ScenarioReplicaSkew, sim.GatewaySMG, 120,
			[]string{"! prefill-0 replicas disagree", "prefill-0: hit 76%, above the 74% on its peers", "gateway-1 unhealthy vs gateway-0 healthy"}, nil},
		{sim.ScenarioScaleOut, sim.Gateway2026, 160,
			[]string{"! cold: joined"}, []string{"cold start: prefill-2 joined", "prefill", "uncached tok/s"}},
		{sim.ScenarioDecodeSaturation, sim.GatewaySMG, 200,
			[]string{"pool over capacity", "goodput"}, []string{"decode @ITL", "!", "429", "goodput"}},
		{sim.ScenarioCongestedLink, sim.GatewaySMG, 120,
			[]string{"! prefill-0 KV transfers queue"}, []string{"KV prefill-0", "100%! ×", "in flight on average (they queue behind each other)", "not a cold cache: prefill-0's KV transfers queue"}},
		{sim.ScenarioAnnouncement, sim.GatewaySMG, 100,
			nil, []string{"cold start: burst", "TTFT p99"}},
	}
	for _, c := range cases {
		t.Run(c.scenario, func(t *testing.T) {
			r := newFleetRun(t, sim.Config{Seed: 1, Prefill: 2, Decode: 2, Replicas: 2, Gateway: c.gen, Scenario: c.scenario})
			for i := 0; i < c.seconds; i++ {
				r.advance(1)
				if i%2 == 0 {
					r.store.SetTargets(r.now, targetsOf(r.fleet.Endpoints())) // follow scale-out
				}
			}
			m := newModel(r, 200, 60)
			m.lastTick = r.now
			m.Update(snapMsg{snap: r.snapshot()})
			v := m.View()
			for _, want := range c.dashboard {
				if !strings.Contains(v, want) {
					t.Errorf("dashboard lacks %q:\n%s", want, v)
				}
			}
			m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("c")})
			cv := m.View()
			checkSize(t, cv, 200, 60)
			if !strings.Contains(cv, "Capacity in units of work") {
				t.Fatalf("c did not open the capacity view:\n%s", cv)
			}
			for _, want := range c.capacity {
				if !strings.Contains(cv, want) {
					t.Errorf("capacity view lacks %q:\n%s", want, cv)
				}
			}
			m.Update(tea.KeyMsg{Type: tea.KeyEsc})
			if strings.Contains(m.View(), "Capacity in units of work") {
				t.Errorf("esc did not close the capacity view")
			}
		})
	}
}
