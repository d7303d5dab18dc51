package discovery

import (
	"context"
	"testing"

	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/sources/sim"
	"github.com/pdtop/pdtop/sources/store"
)

// The demo fleet's replicas serve the worker lists of the generation they
// impersonate: discovery from them finds exactly the fleet's workers,
// with their roles, and nothing from the 2026 router.
func TestDiscoverTheDemoFleet(t *testing.T) {
	for _, gen := range []string{sim.GatewaySMG, sim.GatewayLegacy, sim.Gateway2026} {
		t.Run(gen, func(t *testing.T) {
			f, err := sim.New(sim.Config{Seed: 1, Prefill: 2, Decode: 3, Replicas: 2, Gateway: gen, Scenario: "steady"})
			if err != nil {
				t.Fatal(err)
			}
			eps, err := f.Serve("127.0.0.1")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { f.Close() })
			var static []sources.Target
			var gws []Gateway
			want := map[string]sources.Role{}
			for _, e := range eps {
				if e.Role != sources.RoleGateway {
					want[sources.WorkerKey(e.MetricsURL)] = e.Role
					continue
				}
				tg := sources.Target{ID: e.MetricsURL, URL: e.MetricsURL, Name: e.Name, Role: e.Role, Origin: sources.OriginDemo}
				static = append(static, tg)
				gws = append(gws, Gateway{Target: tg})
			}
			st := store.New(store.Options{})
			d := newDiscoverer(t, static, gws, st, nil, Options{})
			status := d.Refresh(context.Background())
			got := map[string]sources.Role{}
			for _, tg := range st.Targets() {
				if tg.Origin == sources.OriginGateway {
					got[tg.Name] = tg.Role
					if tg.Gateway != static[0].ID {
						t.Errorf("%s listed by %s, want the first replica", tg.Name, tg.Gateway)
					}
				}
			}
			if gen == sim.Gateway2026 {
				if len(got) != 0 || status[0].Err == nil {
					t.Fatalf("2026 router: discovered %v, status %+v", got, status[0])
				}
				return
			}
			if len(got) != len(want) {
				t.Fatalf("discovered %v, want %v", got, want)
			}
			for k, r := range want {
				if got[k] != r {
					t.Errorf("%s: role %v, want %v", k, got[k], r)
				}
			}
			for _, s := range status {
				if s.Err != nil || s.Workers != 5 {
					t.Errorf("status %+v", s)
				}
			}
		})
	}
}
