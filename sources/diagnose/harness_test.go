package diagnose_test

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/common/config"

	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/sources/collect"
	"github.com/pdtop/pdtop/sources/scrape"
	"github.com/pdtop/pdtop/sources/sim"
	"github.com/pdtop/pdtop/sources/store"
)

var start = time.Date(2026, 11, 29, 3, 0, 0, 0, time.UTC)

// fleetRun is a demo fleet scraped through the real HTTP path with a
// simulated clock (the ui/e2e_test.go pattern): Step(1s), then one scrape
// of every target, so a run is deterministic for its seed.
type fleetRun struct {
	t       testing.TB
	fleet   *sim.Fleet
	store   *store.Store
	scraper *collect.Scraper
	now     time.Time
}

func newFleetRun(t testing.TB, cfg sim.Config) *fleetRun {
	t.Helper()
	f, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Serve("127.0.0.1"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	r := &fleetRun{t: t, fleet: f, now: start, store: store.New(store.Options{Interval: time.Second})}
	client, err := scrape.NewClient(config.HTTPClientConfig{}, scrape.Options{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	r.scraper = collect.New(client, collect.Options{Clock: func() time.Time { return r.now }})
	r.store.SetTargets(r.now, targetsOf(f.Endpoints()))
	return r
}

func targetsOf(eps []sim.Endpoint) []sources.Target {
	var out []sources.Target
	for _, e := range eps {
		out = append(out, sources.Target{ID: sources.DisplayURL(e.MetricsURL), URL: e.MetricsURL,
			Name: e.Name, Role: e.Role, Origin: sources.OriginDemo})
	}
	return out
}

// advance steps the fleet and scrapes every target once per second,
// following workers that scenarios add.
func (r *fleetRun) advance(seconds int) {
	for i := 0; i < seconds; i++ {
		r.fleet.Step(time.Second)
		r.now = r.now.Add(time.Second)
		if i%2 == 0 {
			r.store.SetTargets(r.now, targetsOf(r.fleet.Endpoints()))
		}
		for _, t := range r.store.Targets() {
			r.store.Ingest(r.scraper.Scrape(context.Background(), t))
		}
	}
}

func (r *fleetRun) snapshot() *sources.Snapshot { return r.store.Snapshot(r.now, time.Minute) }
