package collect

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/sources/store"
)

// node_exporter's text: a well-formed body, none of it SGLang's.
const nodeBody = "# HELP node_load1 1m load average.\n# TYPE node_load1 gauge\nnode_load1 0.5\n"

// A target that answers with another exporter's metrics (a wrong port or
// path) is not up: it is down with an ErrNoMetrics error that says so, is
// not counted in Fleet.TargetsUp or its pool's Up; an SGLang worker that
// later serves such a body goes stale with the same error, keeping its
// last figures.
func TestForeignMetricsAreNotUp(t *testing.T) {
	var body atomic.Value
	body.Store(nodeBody)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		w.Write([]byte(body.Load().(string)))
	}))
	defer srv.Close()
	now := t0
	clock := func() time.Time { return now }
	st := store.New(store.Options{Interval: time.Second})
	st.SetTargets(now, []sources.Target{{ID: "n", URL: srv.URL + "/path", Name: "n", Role: sources.RolePrefill}})
	live := &Live{Store: st, Scraper: newScraper(t, clock), Clock: clock}
	round := func() *sources.Snapshot {
		now = now.Add(time.Second)
		for _, j := range live.Round() {
			j.Run(context.Background())
		}
		return st.Snapshot(now, time.Minute)
	}

	snap := round()
	ts := snap.Targets[0]
	if ts.Health != sources.Down || ts.LastError == nil || ts.LastError.Class != sources.ErrNoMetrics {
		t.Fatalf("foreign body: health %v, error %v; want down, no-metrics", ts.Health, ts.LastError)
	}
	if ts.LastError.Message != NoMetricsMessage {
		t.Errorf("message %q", ts.LastError.Message)
	}
	if snap.Fleet.TargetsUp != 0 || snap.Prefill.Up != 0 || !ts.LastSuccess.IsZero() {
		t.Errorf("counted as up: fleet %d/%d, pool %d, last success %v", snap.Fleet.TargetsUp, snap.Fleet.Targets, snap.Prefill.Up, ts.LastSuccess)
	}

	body.Store(okBody)
	if snap = round(); snap.Targets[0].Health != sources.Up || snap.Fleet.TargetsUp != 1 {
		t.Fatalf("SGLang body: %v %v", snap.Targets[0].Health, snap.Targets[0].LastError)
	}
	body.Store(nodeBody) // another process took the port
	snap = round()
	w := snap.Workers[0]
	if w.Health != sources.Stale || w.LastError == nil || w.LastError.Class != sources.ErrNoMetrics {
		t.Fatalf("worker replaced by another exporter: %v %v; want stale, no-metrics", w.Health, w.LastError)
	}
	if r := w.Readings.Get(sources.SigRunning); !r.Present || r.Value != 3 {
		t.Errorf("last good running reqs not kept: %+v", r)
	}
}

// An empty body is not another exporter: an idle SGLang worker that has
// served nothing may expose no family yet. It stays up, with a warning.
func TestEmptyBodyIsUpWithAWarning(t *testing.T) {
	obs, err := Process([]byte("\n"))
	if err != nil {
		t.Fatalf("empty body: %v", err)
	}
	if len(obs.Stats.Warnings) != 1 || obs.Engine != "" {
		t.Errorf("warnings %q, engine %q", obs.Stats.Warnings, obs.Engine)
	}
	if _, err := Process([]byte("hello world\n")); err == nil || err.Class != sources.ErrNoMetrics {
		t.Errorf("nonsense body: %v, want no-metrics", err)
	}
}
