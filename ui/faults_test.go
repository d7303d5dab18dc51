package ui

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/common/config"

	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/sources/collect"
	"github.com/pdtop/pdtop/sources/scrape"
	"github.com/pdtop/pdtop/sources/store"
)

const goodBody = "# TYPE sglang:num_running_reqs gauge\nsglang:num_running_reqs{model_name=\"m\"} 3\n" +
	"# TYPE sglang:num_queue_reqs gauge\nsglang:num_queue_reqs{model_name=\"m\"} 1\n"

// hostile is a bad line carrying an OSC window title, a clear-screen, a
// carriage return with fake text, an 8-bit CSI and a bidi override.
const hostile = "sglang:num_queue_reqs{model_name=\"\x1b]0;pwned\x07\x1b[2J\rFAKE OK\u009b31m\u202e\"} true"

type fault struct {
	name    string
	handler http.HandlerFunc // nil: url is used as is
	url     string
	class   string // in the table's error column (or state)
	message string // in the target's detail line
}

func serveH(t *testing.T, h http.HandlerFunc) string {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL + "/metrics"
}

// TestEveryFaultClassOnScreen runs each failure class through the whole
// path — a loopback target, the scraper, the store, the snapshot, the
// targets view — and checks the class and its message are on screen, a
// target with one bad line is up with the problem counted and located,
// and no control character reaches the terminal.
func TestEveryFaultClassOnScreen(t *testing.T) {
	tlsSrv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte(goodBody)) }))
	tlsSrv.Config.ErrorLog = quietLog()
	tlsSrv.StartTLS()
	t.Cleanup(tlsSrv.Close)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + ln.Addr().String() + "/metrics"
	ln.Close()

	status := func(code int, body string) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) {
			if strings.HasPrefix(body, "<") {
				w.Header().Set("Content-Type", "text/html")
			}
			w.WriteHeader(code)
			w.Write([]byte(body))
		}
	}
	faults := []fault{
		{name: "dns", url: "http://no-such-worker.invalid:30001/metrics", class: "dns", message: "DNS lookup failed for no-such-worker.invalid"},
		{name: "refused", url: refused, class: "refused", message: "connection refused by " + strings.TrimSuffix(strings.TrimPrefix(refused, "http://"), "/metrics")},
		{name: "timeout", handler: func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }, class: "timeout", message: "timed out after 1.5s waiting for response headers"},
		{name: "tls", url: tlsSrv.URL + "/metrics", class: "tls", message: "certificate"},
		{name: "unauthorized", handler: status(401, "no"), class: "auth 401", message: "auth failed — check credentials (HTTP 401)"},
		{name: "forbidden", handler: status(403, "no"), class: "auth 403", message: "auth failed — check credentials (HTTP 403)"},
		{name: "notfound", handler: status(404, "no"), class: "http-4xx 404", message: "wrong path? (HTTP 404 for /metrics)"},
		{name: "ratelimited", handler: status(429, "slow down"), class: "http-4xx 429", message: "rate limited, backing off (HTTP 429)"},
		{name: "broken", handler: status(500, "<html><title>Internal\x1b[2J Error</title></html>"), class: "http-5xx 500", message: `serving?, metrics broken (HTTP 500): Internal\x1b[2J Error`},
		{name: "login", handler: status(200, "<!doctype html><html><head><title>Sign in</title></head></html>"), class: "html 200", message: "got HTML (login page?), HTTP 200: Sign in"},
		{name: "huge", handler: status(200, strings.Repeat("sglang:num_running_reqs 1\n", 200)), class: "oversize 200", message: "body over 4 KiB after decompression"},
		{name: "garbage", handler: status(200, "# TYPE sglang:num_running_reqs gauge\nsglang:num_running_reqs{model_name=\"m\" 3\n"), class: "parse", message: `line 2: `},
		{name: "nonsense", handler: status(200, "hello world\nthis is not { metrics\n"), class: "no-metrics", message: "no known SGLang or gateway metrics at this URL — wrong port or path?"},
		{name: "oneline", handler: status(200, goodBody+hostile+"\n"), class: "up", message: `1 unusable line, first at line 5`},
	}
	var targets []sources.Target
	for _, f := range faults {
		u := f.url
		if f.handler != nil {
			u = serveH(t, f.handler)
		}
		targets = append(targets, sources.Target{ID: sources.DisplayURL(u), URL: u, Name: f.name, Role: sources.RoleDecode, Origin: sources.OriginConfig})
	}
	now := start
	st := store.New(store.Options{Interval: time.Second})
	st.SetTargets(now, targets)
	client, err := scrape.NewClient(config.HTTPClientConfig{}, scrape.Options{Timeout: 1500 * time.Millisecond,
		MaxBodyBytes: 4 << 10, Resolver: noDNS()})
	if err != nil {
		t.Fatal(err)
	}
	sc := collect.New(client, collect.Options{Clock: func() time.Time { return now }})
	live := &collect.Live{Store: st, Scraper: sc, Clock: func() time.Time { return now }, Spread: time.Millisecond}
	var wg sync.WaitGroup
	for _, j := range live.Round() {
		wg.Add(1)
		go func(j sources.Job) { defer wg.Done(); j.Run(context.Background()) }(j)
	}
	wg.Wait()

	m := New(Config{Backend: live, Interval: time.Second, Window: time.Minute})
	m.Update(tea_WindowSize(200, 60))
	m.Update(snapMsg{snap: live.Snapshot(time.Minute)})
	hit(m, "t")
	v := m.View()
	if testing.Verbose() {
		t.Log("\n" + v)
	}
	lines := strings.Split(v, "\n")
	for _, f := range faults {
		row, detail := "", ""
		for _, l := range lines {
			if strings.Contains(l, "┃"+f.name+" ") && row == "" {
				row = l
			} else if strings.Contains(l, "┃"+f.name+": ") {
				detail = l
			}
		}
		if !strings.Contains(row, " "+f.class+" ") {
			t.Errorf("%s: row %q lacks class %q", f.name, row, f.class)
		}
		if !strings.Contains(detail, f.message) {
			t.Errorf("%s: detail %q lacks %q", f.name, detail, f.message)
		}
	}
	for _, want := range []string{`\x1b]0;pwned\x07\x1b[2J\rFAKE OK\x9b31m\u202e`} {
		if !strings.Contains(v, want) {
			t.Errorf("hostile excerpt not shown as visible escapes %q:\n%s", want, v)
		}
	}
	checkSize(t, v, 200, 60)
	noControls(t, v)
	// The oneline target is up, with its good series kept.
	for _, ts := range live.Snapshot(time.Minute).Targets {
		if ts.Name == "oneline" && (ts.Health != sources.Up || ts.Problems != 1 || ts.Series != 2) {
			t.Errorf("lenient parse: %+v", ts)
		}
	}
	// At 80x24 the classes are still there for the first rows, and the
	// Restarts panel lists the failing targets too.
	m.Update(tea_WindowSize(80, 24))
	noControls(t, m.View())
	hit(m, "esc")
	m.setFocus(5)
	m.zoom = true
	m.layout()
	r := m.View()
	for _, want := range []string{"dns", "refused", "timeout", "tls", "auth 401"} {
		if !strings.Contains(r, want) {
			t.Errorf("Restarts panel lacks %q:\n%s", want, r)
		}
	}
	noControls(t, r)
}

// noControls fails when a frame drawn without colour carries any control
// character but newline.
func noControls(t *testing.T, v string) {
	t.Helper()
	for i, r := range v {
		if r != '\n' && (r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 || r == 0x202e) {
			t.Fatalf("control character %U at byte %d on screen:\n%q", r, i, v)
		}
	}
}

// noDNS is a resolver that cannot reach any DNS server: lookups fail fast
// and hermetically.
func noDNS() *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(context.Context, string, string) (net.Conn, error) {
		return nil, errors.New("no DNS in tests")
	}}
}

var _ = fmt.Sprint
