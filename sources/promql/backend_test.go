package promql

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/common/config"
	"github.com/prometheus/common/model"

	"github.com/pdtop/pdtop/sources"
)

// fakeProm answers each query by the first route whose substrings it
// contains, else with an empty vector; 'fail' overrides everything.
type fakeProm struct {
	mu     sync.Mutex
	routes []route
	fail   *answer
	seen   []string
}

type route struct {
	has    []string
	result string // JSON result array of a vector
	err    *answer
}

func (f *fakeProm) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm()
	q := r.Form.Get("query")
	f.mu.Lock()
	f.seen = append(f.seen, q)
	fail, routes := f.fail, f.routes
	f.mu.Unlock()
	reply := func(a answer) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(a.status)
		_, _ = w.Write([]byte(a.body))
	}
	if fail != nil {
		reply(*fail)
		return
	}
	result := "[]"
	for _, rt := range routes {
		ok := true
		for _, h := range rt.has {
			ok = ok && strings.Contains(q, h)
		}
		if ok {
			if rt.err != nil {
				reply(*rt.err)
				return
			}
			result = rt.result
			break
		}
	}
	kind := "vector"
	if strings.HasSuffix(r.URL.Path, "query_range") {
		kind, result = "matrix", "[]"
	}
	reply(answer{status: 200, body: `{"status":"success","data":{"resultType":"` + kind + `","result":` + result + `}}`})
}

func sample(labels string, v float64) string {
	return fmt.Sprintf(`{"metric":{%s},"value":[%d,"%g"]}`, labels, time.Now().Unix(), v)
}

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func newFakeBackend(t *testing.T, f *fakeProm) (*Backend, *fakeClock) {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	clk := &fakeClock{t: time.Now()}
	b, err := New(srv.URL, config.HTTPClientConfig{}, Options{Clock: clk.now, ScrapeInterval: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return b, clk
}

func runRound(b *Backend) int {
	jobs := b.Round()
	for _, j := range jobs {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		j.Run(ctx)
		cancel()
	}
	return len(jobs)
}

// One worker whose running gauge the fake serves; a later 422 on that
// query keeps the value, marked stale with the query shown.
func TestFailingQueryKeepsLastValuesStale(t *testing.T) {
	f := &fakeProm{routes: []route{
		{has: []string{`"rank"`}, result: "[" + sample(`"instance":"w1","engine_type":"decode","pdtop_sig":"rank"`, 0) + "]"},
		{has: []string{`instance="w1"`, `"pdtop_name"`, "num_running_reqs"},
			result: "[" + sample(`"instance":"w1","pdtop_sig":"1","pdtop_name":"sglang:num_running_reqs"`, 7) + "]"},
	}}
	b, clk := newFakeBackend(t, f)
	runRound(b)
	s := b.Snapshot(time.Minute)
	if len(s.Workers) != 1 || s.Workers[0].Health != sources.Up || s.Workers[0].Readings.Get(sources.SigRunning).Value != 7 {
		t.Fatalf("first round: %+v", s.Workers)
	}
	if s.Targets[0].Health != sources.Up {
		t.Fatalf("server: %+v", s.Targets[0])
	}

	f.mu.Lock()
	f.routes[1].err = &answer{status: 422, body: `{"status":"error","errorType":"execution","error":"many-to-many matching not allowed"}`}
	f.mu.Unlock()
	clk.add(time.Second)
	runRound(b)
	s = b.Snapshot(time.Minute)
	w := s.Workers[0]
	if r := w.Readings.Get(sources.SigRunning); !r.Present || r.Value != 7 {
		t.Errorf("running lost after a failed query: %+v", r)
	}
	if w.Health != sources.Stale || w.LastError == nil || w.LastError.Class != ErrQuery {
		t.Errorf("worker %v %+v, want stale with the query error", w.Health, w.LastError)
	}
	srv := s.Targets[0]
	if srv.Health != sources.Stale || srv.LastError == nil || srv.LastError.Status != 422 ||
		!strings.Contains(srv.LastError.Message, "many-to-many") || !strings.Contains(srv.LastError.Message, "query: ") {
		t.Errorf("server %v %+v", srv.Health, srv.LastError)
	}
	var stale bool
	for _, e := range s.Events {
		stale = stale || (e.Kind == "stale" && e.Name == "prometheus")
	}
	if !stale {
		t.Errorf("no stale event: %+v", s.Events)
	}
}

// 503 means the server is overloaded: pdtop stops asking for a while,
// doubling the pause while it lasts, and says so.
func TestOverloadBacksOff(t *testing.T) {
	f := &fakeProm{fail: &answer{status: 503, body: "overloaded"}}
	b, clk := newFakeBackend(t, f)
	if runRound(b) == 0 {
		t.Fatal("no jobs in the first round")
	}
	s := b.Snapshot(time.Minute)
	e := s.Targets[0].LastError
	if s.Targets[0].Health != sources.Down || e == nil || e.Status != 503 || !strings.Contains(e.Message, "backing off 1s") {
		t.Fatalf("server %v %+v", s.Targets[0].Health, e)
	}
	if n := runRound(b); n != 0 {
		t.Fatalf("%d jobs while backing off", n)
	}
	clk.add(1100 * time.Millisecond)
	if runRound(b) == 0 {
		t.Fatal("no jobs after the back-off")
	}
	if e := b.Snapshot(time.Minute).Targets[0].LastError; !strings.Contains(e.Message, "backing off 2s") {
		t.Fatalf("second back-off: %+v", e)
	}
	f.mu.Lock()
	f.fail = nil
	f.mu.Unlock()
	clk.add(2100 * time.Millisecond)
	runRound(b)
	if s := b.Snapshot(time.Minute); s.Targets[0].Health != sources.Up {
		t.Fatalf("after recovery: %+v", s.Targets[0])
	}
}

// A server that never answered: one target, down, with the reason; no
// rows, no pools, no panic.
func TestServerDownFromTheStart(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	b, err := New(url, config.HTTPClientConfig{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := b.Snapshot(time.Minute)
	if len(s.Targets) != 1 || s.Targets[0].Health != sources.Pending {
		t.Fatalf("before any round: %+v", s.Targets)
	}
	runRound(b)
	s = b.Snapshot(time.Minute)
	if s.Targets[0].Health != sources.Down || s.Targets[0].LastError.Class != sources.ErrRefused {
		t.Fatalf("targets %+v", s.Targets)
	}
	if len(s.Workers) != 0 || s.Fleet.Targets != 1 || s.Fleet.TargetsUp != 0 {
		t.Fatalf("workers %d fleet %+v", len(s.Workers), s.Fleet)
	}
}

func TestNewRejectsBadConfiguration(t *testing.T) {
	for _, c := range []struct {
		url  string
		opts Options
		want string
	}{
		{"prometheus:9090", Options{}, "want an http or https URL"},
		{"ftp://p:9090", Options{}, "want an http or https URL"},
		{"http://p:9090/?token=abc", Options{}, "no query string"},
		{"http://p:9090", Options{RoleLabel: "bad-label"}, "not a label name"},
		{"http://p:9090", Options{RoleLabel: "instance"}, "must differ"},
	} {
		_, err := New(c.url, config.HTTPClientConfig{}, c.opts)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %+v: %v, want %q", c.url, c.opts, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "abc") {
			t.Errorf("error leaks the query string: %v", err)
		}
	}
	// Credentials over plain http to a remote host are refused.
	_, err := New("http://prom.example:9090", config.HTTPClientConfig{BearerToken: "s3cret-token"}, Options{})
	if err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("credentials over http: %v", err)
	}
}

// When the server goes away, everything it told us goes stale with its
// reason and age: rows, gateways, and the "up" counts (stale counts say
// nothing about now).
func TestServerGoesAway(t *testing.T) {
	f := &fakeProm{routes: []route{
		{has: []string{`"rank"`}, result: "[" + sample(`"instance":"w1","engine_type":"decode","pdtop_sig":"rank"`, 0) + "]"},
		{has: []string{`"all"`, `"live"`}, result: "[" + sample(`"engine_type":"decode","pdtop_sig":"all"`, 1) + "," +
			sample(`"engine_type":"decode","pdtop_sig":"live"`, 1) + "]"},
		{has: []string{"group by (instance, __name__)"}, result: "[" + sample(`"__name__":"smg_http_requests_total","instance":"gw:29000"`, 1) + "]"},
	}}
	b, clk := newFakeBackend(t, f)
	runRound(b)
	s := b.Snapshot(time.Minute)
	if s.Fleet.TargetsUp != 3 || s.Fleet.Targets != 3 || len(s.Gateways) != 1 || s.Gateways[0].Generation != "smg gateway" {
		t.Fatalf("first round: fleet %+v gateways %+v", s.Fleet, s.Gateways)
	}
	f.mu.Lock()
	f.fail = &answer{status: 500, body: "boom"}
	f.mu.Unlock()
	clk.add(3 * time.Second)
	runRound(b)
	s = b.Snapshot(time.Minute)
	if s.Fleet.TargetsUp != 0 {
		t.Errorf("targets up %d with the server failing", s.Fleet.TargetsUp)
	}
	g := s.Gateways[0]
	if g.Health != sources.Stale || g.LastError == nil || g.LastError.Status != 500 || g.Age.Round(time.Second) != 3*time.Second {
		t.Errorf("gateway %v %+v age %v", g.Health, g.LastError, g.Age)
	}
	if w := s.Workers[0]; w.Health != sources.Stale || w.LastError == nil || w.LastError.Status != 500 {
		t.Errorf("worker %v %+v", w.Health, w.LastError)
	}
}

// A malformed answer that slipped through cannot take the dashboard down:
// the snapshot shows the server with the reason.
func TestSnapshotSurvivesMalformedResults(t *testing.T) {
	b, err := New("http://127.0.0.1:1", config.HTTPClientConfig{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	b.now = &frame{v: map[string]model.Vector{"row_gauges": {nil}}, rows: []rowRef{{inst: "w1"}}, window: time.Minute}
	s := b.Snapshot(time.Minute)
	if len(s.Targets) != 1 || s.Targets[0].LastError == nil || !strings.Contains(s.Targets[0].LastError.Message, "internal error") {
		t.Fatalf("targets %+v", s.Targets)
	}
}
