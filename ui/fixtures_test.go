package ui

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/config"

	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/sources/collect"
	"github.com/pdtop/pdtop/sources/scrape"
	"github.com/pdtop/pdtop/sources/store"
)

// serveFixture serves a reference exposition body from the schema's
// fixtures as a target's /metrics.
func serveFixture(t *testing.T, name string) *httptest.Server {
	t.Helper()
	body, err := os.ReadFile("../sources/schema/testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestFixturesShowTheirValues points the dashboard at the reference
// fixtures (a 2026 PD prefill and decode worker with dp/tp ranks, an smg
// gateway and a legacy router) and checks the values on screen.
func TestFixturesShowTheirValues(t *testing.T) {
	type tgt struct {
		file string
		role sources.Role
	}
	var targets []sources.Target
	for _, f := range []tgt{
		{"worker_2026_prefill.prom", sources.RolePrefill},
		{"worker_2026_decode.prom", sources.RoleDecode},
		{"smg_full.prom", sources.RoleGateway},
		{"g1_024_full.prom", sources.RoleGateway},
	} {
		srv := serveFixture(t, f.file)
		u := srv.URL + "/metrics"
		targets = append(targets, sources.Target{ID: u, URL: u, Name: strings.TrimSuffix(f.file, ".prom"), Role: f.role})
	}
	now := start
	st := store.New(store.Options{Interval: time.Second})
	st.SetTargets(now, targets)
	client, err := scrape.NewClient(config.HTTPClientConfig{}, scrape.Options{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	sc := collect.New(client, collect.Options{Clock: func() time.Time { return now }})
	for i := 0; i < 2; i++ {
		for _, tg := range targets {
			st.Ingest(sc.Scrape(context.Background(), tg))
		}
		now = now.Add(time.Second)
	}
	snap := st.Snapshot(now, time.Minute)
	for _, ts := range snap.Targets {
		if ts.Health != sources.Up {
			t.Fatalf("%s: %v %+v", ts.Name, ts.Health, ts.LastError)
		}
	}
	m := New(Config{Backend: &collect.Live{Store: st, Clock: func() time.Time { return now }},
		Interval: time.Second, Window: time.Minute})
	m.Update(snapMsg{snap: snap})
	for _, c := range []struct {
		panel int
		row   string // regexp on the worker's row
	}{
		// waiting = 7 (dp 0) + 2 (dp 1), priority="" only, tp copies not summed.
		{0, `worker_2026_prefill\s+9\s`},
		// running = 30 + 28, prealloc 2 + 3.
		{3, `worker_2026_decode\s+58\s+5\s`},
	} {
		m.setFocus(c.panel)
		m.zoom = true
		m.width, m.height = 120, 40
		m.layout()
		v := m.View()
		if !regexp.MustCompile(c.row).MatchString(v) {
			t.Errorf("panel %d: no row matching %q in\n%s", c.panel+1, c.row, v)
		}
	}
}
