package collect

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/common/config"

	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/sources/scrape"
	"github.com/pdtop/pdtop/sources/sim"
	"github.com/pdtop/pdtop/sources/store"
)

var t0 = time.Date(2026, 11, 29, 3, 0, 0, 0, time.UTC)

func newScraper(t testing.TB, clock func() time.Time) *Scraper {
	t.Helper()
	c, err := scrape.NewClient(config.HTTPClientConfig{}, scrape.Options{Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return New(c, Options{Clock: clock})
}

// refusedAddr is a loopback address nothing listens on.
func refusedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a := ln.Addr().String()
	ln.Close()
	return a
}

// reexportGateway serves the reference /engine_metrics capture with its
// decode worker renamed to addr, counting requests.
func reexportGateway(t *testing.T, addr string, hits *atomic.Int32) *httptest.Server {
	t.Helper()
	body, err := os.ReadFile("../schema/testdata/engine_metrics.prom")
	if err != nil {
		t.Fatal(err)
	}
	body = []byte(strings.ReplaceAll(string(body), "http://10.0.0.2:30001", "http://"+addr))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/engine_metrics" {
			http.NotFound(w, r)
			return
		}
		hits.Add(1)
		w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// A worker pdtop cannot reach directly is read through the gateway's
// re-export, marked as such; once it answers directly again, the direct
// scrape wins. One gateway body serves all lookups within MaxAge.
func TestReexportFallbackAndDirectWins(t *testing.T) {
	now := t0
	clock := func() time.Time { return now }
	addr := refusedAddr(t)
	var hits atomic.Int32
	gw := reexportGateway(t, addr, &hits)
	sc := newScraper(t, clock)
	re := &Reexport{Scraper: sc, MaxAge: time.Second, Clock: clock}
	re.AddGateway(gw.URL+"/metrics", "gw-0", []string{gw.URL}, ReexportAuto)

	w := sources.Target{ID: "http://" + addr + "/metrics", URL: "http://" + addr + "/metrics", Name: addr,
		Role: sources.RoleDecode, Origin: sources.OriginGateway, Gateway: gw.URL + "/metrics"}
	st := store.New(store.Options{Interval: time.Second})
	st.SetTargets(now, []sources.Target{w})
	for i := 0; i < 2; i++ {
		res := re.Scrape(context.Background(), w)
		if res.Err != nil || res.Via != "gw-0 /engine_metrics" || res.DirectErr == nil || res.DirectErr.Class != sources.ErrRefused {
			t.Fatalf("round %d: err %v via %q direct %v", i, res.Err, res.Via, res.DirectErr)
		}
		st.Ingest(res)
	}
	if hits.Load() != 1 {
		t.Fatalf("gateway fetched %d times within MaxAge, want once", hits.Load())
	}
	snap := st.Snapshot(now, time.Minute)
	v := snap.Workers[0]
	if v.Health != sources.Up || v.Via != "gw-0 /engine_metrics" || v.DirectError == nil ||
		v.Readings.Get(sources.SigRunning).Value != 31 || v.Readings.Get(sources.SigRunning).Source != "sglang_num_running_reqs" {
		t.Fatalf("worker view: health %v via %q direct %v running %+v", v.Health, v.Via, v.DirectError, v.Readings.Get(sources.SigRunning))
	}

	// The worker comes back: the direct scrape wins at once.
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("port %s taken meanwhile: %v", addr, err)
	}
	direct := &httptest.Server{Listener: ln, Config: &http.Server{Handler: http.HandlerFunc(func(rw http.ResponseWriter, _ *http.Request) {
		rw.Write([]byte("# TYPE sglang:num_running_reqs gauge\nsglang:num_running_reqs 7\n"))
	})}}
	direct.Start()
	t.Cleanup(direct.Close)
	now = now.Add(2 * time.Second)
	res := re.Scrape(context.Background(), w)
	if res.Err != nil || res.Via != "" || res.DirectErr != nil {
		t.Fatalf("direct back: err %v via %q direct %v", res.Err, res.Via, res.DirectErr)
	}
	st.Ingest(res)
	v = st.Snapshot(now, time.Minute).Workers[0]
	if v.Via != "" || v.Readings.Get(sources.SigRunning).Value != 7 || v.Readings.Get(sources.SigRunning).Source != "sglang:num_running_reqs" {
		t.Fatalf("after recovery: via %q running %+v", v.Via, v.Readings.Get(sources.SigRunning))
	}
}

// A worker missing from every re-export (a dead worker is) keeps its
// direct error, and the gateway is not asked about it again for a while.
func TestReexportMissKeepsTheDirectError(t *testing.T) {
	now := t0
	clock := func() time.Time { return now }
	addr := refusedAddr(t)
	var hits atomic.Int32
	gw := reexportGateway(t, refusedAddr(t), &hits)
	re := &Reexport{Scraper: newScraper(t, clock), MaxAge: time.Second, Clock: clock}
	re.AddGateway("gw", "gw", []string{gw.URL}, ReexportAuto)
	w := sources.Target{ID: "w", URL: "http://" + addr + "/metrics", Role: sources.RoleDecode}
	for i := 0; i < 12; i++ {
		res := re.Scrape(context.Background(), w)
		if res.Err == nil || res.Err.Class != sources.ErrRefused || res.Via != "" || res.Obs != nil {
			t.Fatalf("got err %v via %q", res.Err, res.Via)
		}
		now = now.Add(time.Second)
	}
	if hits.Load() != 1 {
		t.Fatalf("gateway asked %d times in 12 s about a worker it does not have, want once", hits.Load())
	}
	now = now.Add(5 * time.Second)
	re.Scrape(context.Background(), w)
	if hits.Load() != 2 {
		t.Fatalf("gateway asked %d times after the back-off, want twice", hits.Load())
	}
}

// In "only" mode the demo fleet's workers are read entirely through the
// gateway's /engine_metrics (the demo replicas serve it like smg), and
// the re-export yields the same signals as a direct scrape, under the
// re-export's sglang_ names.
func TestReexportOnlyAgainstTheDemoFleet(t *testing.T) {
	f, err := sim.New(sim.Config{Seed: 5, Prefill: 1, Decode: 1, Replicas: 1, Scenario: "steady"})
	if err != nil {
		t.Fatal(err)
	}
	eps, err := f.Serve("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	f.Step(30 * time.Second)
	sc := newScraper(t, nil)
	re := &Reexport{Scraper: sc}
	var gw sim.Endpoint
	for _, e := range eps {
		if e.Role == sources.RoleGateway {
			gw = e
			re.AddGateway(e.MetricsURL, e.Name, []string{e.BaseURL}, ReexportOnly)
		}
	}
	for _, e := range eps {
		if e.Role == sources.RoleGateway {
			continue
		}
		tg := sources.Target{ID: e.MetricsURL, URL: e.MetricsURL, Name: e.Name, Role: e.Role,
			Origin: sources.OriginGateway, Gateway: gw.MetricsURL}
		via := re.Scrape(context.Background(), tg)
		direct := sc.Scrape(context.Background(), tg)
		if via.Err != nil || via.Via != gw.Name+" /engine_metrics" || via.DirectErr != nil {
			t.Fatalf("%s: err %v via %q", e.Name, via.Err, via.Via)
		}
		if direct.Err != nil {
			t.Fatal(direct.Err)
		}
		if via.Obs.Generation != direct.Obs.Generation || len(via.Obs.Points) != len(direct.Obs.Points) || len(via.Obs.Hists) != len(direct.Obs.Hists) {
			t.Errorf("%s: re-export %s %d points %d hists, direct %s %d/%d", e.Name, via.Obs.Generation, len(via.Obs.Points),
				len(via.Obs.Hists), direct.Obs.Generation, len(direct.Obs.Points), len(direct.Obs.Hists))
		}
		for sig, name := range via.Obs.Sources {
			if strings.Contains(name, ":") {
				t.Errorf("%s: %v from %q, want the re-export's sglang_ spelling", e.Name, sig, name)
			}
		}
	}
}
