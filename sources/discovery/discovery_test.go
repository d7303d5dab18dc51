package discovery

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	pconfig "github.com/prometheus/common/config"

	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/sources/config"
	"github.com/pdtop/pdtop/sources/scrape"
	"github.com/pdtop/pdtop/sources/store"
)

var t0 = time.Date(2026, 11, 29, 3, 0, 0, 0, time.UTC)

// fakeClients records the clients handed out.
type fakeClients struct {
	mu sync.Mutex
	m  map[string]*scrape.Client
}

func (f *fakeClients) SetClient(id string, c *scrape.Client) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.m == nil {
		f.m = map[string]*scrape.Client{}
	}
	if c == nil {
		delete(f.m, id)
		return
	}
	f.m[id] = c
}

// gatewayServer serves /metrics plus the given JSON routes.
func gatewayServer(t *testing.T, routes map[string]any) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte("# TYPE smg_http_requests_total counter\nsmg_http_requests_total 1\n"))
	})
	for path, v := range routes {
		v := v
		mux.HandleFunc(path, func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(v)
		})
	}
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func gwTarget(srv *httptest.Server, name string) sources.Target {
	u := srv.URL + "/metrics"
	return sources.Target{ID: u, URL: u, Name: name, Role: sources.RoleGateway, Origin: sources.OriginFlag}
}

func newDiscoverer(t *testing.T, static []sources.Target, gws []Gateway, st Store, cl Clients, opts Options) *Discoverer {
	t.Helper()
	if opts.Clock == nil {
		opts.Clock = func() time.Time { return t0 }
	}
	if opts.Timeout == 0 {
		opts.Timeout = 2 * time.Second
	}
	d, err := New(static, gws, st, cl, opts)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func byName(ts []sources.Target) map[string]sources.Target {
	out := map[string]sources.Target{}
	for _, t := range ts {
		out[t.Name] = t
	}
	return out
}

// smg's /workers with everything a hostile or odd registry can hold: the
// usable workers come out with their roles and a forced /metrics path;
// the rest are rejected with a visible reason.
func TestSMGWorkersAndHostileEntries(t *testing.T) {
	workers := []any{
		map[string]any{"id": "2b1e0c7e-1111-4e5e-9a3c-000000000001", "url": "http://10.0.0.1:30001", "worker_type": "prefill", "connection_mode": "http", "is_healthy": true},
		map[string]any{"id": "2b1e0c7e-1111-4e5e-9a3c-000000000002", "url": "http://10.0.0.2:30011/generate?token=abc#x", "worker_type": "decode", "connection_mode": "http"},
		map[string]any{"id": "u3", "url": "http://10.0.0.3:30001@0", "dp_base_url": "http://10.0.0.3:30001", "worker_type": "prefill", "connection_mode": "http"},
		map[string]any{"id": "u4", "url": "http://10.0.0.3:30001@1", "dp_base_url": "http://10.0.0.3:30001", "worker_type": "prefill", "connection_mode": "http"},
		map[string]any{"id": "u5", "url": "http://10.0.0.5:8000", "worker_type": "regular", "connection_mode": "http"},
		map[string]any{"id": "u6", "url": "grpc://10.0.0.6:50051", "worker_type": "decode", "connection_mode": "grpc"},
		map[string]any{"id": "u7", "url": "http://admin:hunter2@10.0.0.7:30001", "worker_type": "decode"},
		map[string]any{"id": "u8", "url": "file:///etc/passwd", "worker_type": "decode"},
		map[string]any{"id": "u9", "url": "http://evil\x1b]0;pwned\x07:1", "worker_type": "decode"},
		map[string]any{"id": "u10", "url": 42},
		"not an object",
		map[string]any{"id": "u12", "url": "http://169.254.169.254:80", "worker_type": "decode"},
	}
	srv := gatewayServer(t, map[string]any{"/workers": map[string]any{"workers": workers, "total": len(workers)}})
	gw := gwTarget(srv, "gw-0")
	st := store.New(store.Options{})
	st.SetTargets(t0, []sources.Target{gw})
	cl := &fakeClients{}
	d := newDiscoverer(t, []sources.Target{gw}, []Gateway{{Target: gw}}, st, cl, Options{})
	status := d.Refresh(context.Background())

	got := byName(st.Targets())
	want := map[string]sources.Role{
		"10.0.0.1:30001": sources.RolePrefill, "10.0.0.2:30011": sources.RoleDecode,
		"10.0.0.3:30001": sources.RolePrefill, "10.0.0.5:8000": sources.RoleUnified,
		"169.254.169.254:80": sources.RoleDecode,
	}
	if len(got) != len(want)+1 {
		t.Errorf("targets %v", got)
	}
	for name, role := range want {
		tg, ok := got[name]
		if !ok {
			t.Errorf("missing %s", name)
			continue
		}
		if tg.Role != role || tg.Origin != sources.OriginGateway || tg.Gateway != gw.ID || tg.Auth != "" {
			t.Errorf("%s: %+v", name, tg)
		}
		if !strings.HasSuffix(tg.URL, "/metrics") || strings.ContainsAny(tg.URL, "?#@") {
			t.Errorf("%s: URL %q not forced to /metrics", name, tg.URL)
		}
		if cl.m[tg.ID] == nil {
			t.Errorf("%s: no client set", name)
		}
	}
	s := status[0]
	if s.Shape != ShapeSMG || s.Workers != 6 || s.Rejected != 6 || s.Err != nil || s.API != srv.URL+"/workers" {
		t.Errorf("status %+v", s)
	}
	notes := strings.Join(s.Notes, " | ")
	for _, w := range []string{"gRPC worker «grpc://10.0.0.6:50051»", "credentials in URL «http://10.0.0.7:30001»"} {
		if !strings.Contains(notes, w) {
			t.Errorf("notes %q lack %q", notes, w)
		}
	}
	if strings.Contains(notes, "hunter2") || strings.ContainsAny(notes, "\x1b\x07") {
		t.Errorf("notes leak or carry controls: %q", notes)
	}

	// The metadata address is listed but its scrape is refused before any
	// connection is made.
	md := got["169.254.169.254:80"]
	r := cl.m[md.ID].Fetch(context.Background(), md.URL)
	if r.Err == nil || r.Err.Class != sources.ErrConfig || !strings.Contains(r.Err.Message, "link-local") {
		t.Fatalf("metadata scrape: %+v", r.Err)
	}
}

// sglang-router 0.1.x: no /workers; /list_workers gives URLs and the PD
// /get_loads gives the roles.
func TestListWorkersAndPDLoads(t *testing.T) {
	srv := gatewayServer(t, map[string]any{
		"/list_workers": map[string]any{"urls": []string{"http://10.0.0.1:30001", "http://10.0.0.2:30011", "http://10.0.0.9:1"}},
		"/get_loads": map[string]any{
			"prefill": []map[string]any{{"engine": "(Prefill@http://10.0.0.1:30001)", "load": 10}},
			"decode":  []map[string]any{{"engine": "(Decode@http://10.0.0.2:30011)", "load": -1}},
		},
	})
	gw := gwTarget(srv, "gw")
	st := store.New(store.Options{})
	d := newDiscoverer(t, []sources.Target{gw}, []Gateway{{Target: gw}}, st, nil, Options{})
	status := d.Refresh(context.Background())
	got := byName(st.Targets())
	if got["10.0.0.1:30001"].Role != sources.RolePrefill || got["10.0.0.2:30011"].Role != sources.RoleDecode ||
		got["10.0.0.9:1"].Role != sources.RoleUnknown {
		t.Fatalf("roles: %+v", got)
	}
	if status[0].Shape != ShapeListLoads || status[0].API != srv.URL+"/list_workers" {
		t.Fatalf("status %+v", status[0])
	}
}

// The 2026 router (and anything else without a worker list) says so; the
// gateway stays a target.
func TestNoWorkerList(t *testing.T) {
	srv := gatewayServer(t, nil)
	gw := gwTarget(srv, "gw")
	st := store.New(store.Options{})
	d := newDiscoverer(t, []sources.Target{gw}, []Gateway{{Target: gw, APIURL: srv.URL}}, st, nil, Options{})
	s := d.Refresh(context.Background())[0]
	if s.Err == nil || !strings.Contains(s.Err.Message, "2026 sgl-router has none") || s.Workers != 0 {
		t.Fatalf("status %+v", s.Err)
	}
	if ts := st.Targets(); len(ts) != 1 || ts[0].ID != gw.ID {
		t.Fatalf("targets %v", ts)
	}
}

// A metrics listener that answers every path with metrics (the legacy
// router's :29000) is not a worker list: the serving port is tried next.
func TestAPICandidates(t *testing.T) {
	for _, c := range []struct {
		metrics, api string
		want         []string
	}{
		{"http://gw:29000/metrics", "", []string{"http://gw:29000", "http://gw:30000"}},
		{"https://gw:30000/metrics", "", []string{"https://gw:30000"}},
		{"http://gw:29000/metrics", "https://api.gw:8443/", []string{"https://api.gw:8443"}},
		{"http://[fd00::1]:29000/metrics", "", []string{"http://[fd00::1]:29000", "http://[fd00::1]:30000"}},
	} {
		if got := APICandidates(c.metrics, c.api); strings.Join(got, " ") != strings.Join(c.want, " ") {
			t.Errorf("APICandidates(%q, %q) = %v, want %v", c.metrics, c.api, got, c.want)
		}
	}
	anyPath := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte("# TYPE sgl_router_requests_total counter\nsgl_router_requests_total{route=\"/generate\"} 3\n"))
	}))
	t.Cleanup(anyPath.Close)
	gw := gwTarget(anyPath, "gw")
	d := newDiscoverer(t, nil, []Gateway{{Target: gw}}, nil, nil, Options{})
	s := d.Refresh(context.Background())[0]
	if s.Err == nil || !strings.Contains(s.Err.Message, anyPath.URL) || !strings.Contains(s.Err.Message, ":30000") ||
		!strings.HasPrefix(s.Err.Message, "no worker list") {
		t.Fatalf("status %+v", s.Err)
	}
}

// Workers join and leave as the list changes (events in the store); a
// failing worker list keeps the last good one.
func TestJoinLeaveAndFailure(t *testing.T) {
	var mu sync.Mutex
	list := []string{"http://10.0.0.1:30001", "http://10.0.0.2:30001"}
	fail := false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if r.URL.Path != "/workers" {
			http.NotFound(w, r)
			return
		}
		if fail {
			http.Error(w, "boom", http.StatusInternalServerError)
			return
		}
		var ws []map[string]any
		for _, u := range list {
			ws = append(ws, map[string]any{"id": u, "url": u, "worker_type": "prefill", "connection_mode": "Http"})
		}
		json.NewEncoder(w).Encode(map[string]any{"workers": ws})
	}))
	t.Cleanup(srv.Close)
	gw := gwTarget(srv, "gw")
	st := store.New(store.Options{})
	st.SetTargets(t0, []sources.Target{gw})
	d := newDiscoverer(t, []sources.Target{gw}, []Gateway{{Target: gw}}, st, nil, Options{})
	if s := d.Refresh(context.Background())[0]; s.Shape != ShapeLegacy || s.Workers != 2 {
		t.Fatalf("status %+v", s)
	}
	mu.Lock()
	list = []string{"http://10.0.0.2:30001", "http://10.0.0.3:30001"}
	mu.Unlock()
	d.Refresh(context.Background())
	mu.Lock()
	fail = true
	mu.Unlock()
	s := d.Refresh(context.Background())[0]
	if s.Err == nil || s.Err.Class != sources.ErrHTTP5xx || s.LastSuccess.IsZero() {
		t.Fatalf("failing list: %+v", s)
	}
	names := byName(st.Targets())
	if _, ok := names["10.0.0.3:30001"]; !ok || len(names) != 3 {
		t.Fatalf("targets after a failed list: %v", names)
	}
	var ev []string
	for _, e := range st.Snapshot(t0, time.Minute).Events {
		ev = append(ev, e.Kind+" "+e.Name)
	}
	got := strings.Join(ev, ", ")
	for _, w := range []string{"joined 10.0.0.1:30001", "joined 10.0.0.2:30001", "left 10.0.0.1:30001", "joined 10.0.0.3:30001"} {
		if !strings.Contains(got, w) {
			t.Errorf("events %q lack %q", got, w)
		}
	}
}

// A discovered worker is not sent the gateway's credentials unless its
// host is on the allow-list (robustness.md §6.6).
func TestGatewayCredentialsStayWithTheGateway(t *testing.T) {
	const token = "SENTINEL-gw-token-93f1"
	var mu sync.Mutex
	var seen []string
	worker := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization")+"|"+r.Header.Get("X-Api-Key"))
		mu.Unlock()
		w.Write([]byte("sglang:num_running_reqs 1\n"))
	}))
	t.Cleanup(worker.Close)
	gwSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"workers": []map[string]any{
			{"id": "w", "url": worker.URL, "worker_type": "decode", "connection_mode": "http"}}})
	}))
	t.Cleanup(gwSrv.Close)
	httpCfg := config.NewHTTP(pconfig.HTTPClientConfig{
		Authorization: &pconfig.Authorization{Type: "Bearer", Credentials: token},
		HTTPHeaders:   &pconfig.Headers{Headers: map[string]pconfig.Header{"X-Api-Key": {Secrets: []pconfig.Secret{token}}}},
	})
	gw := gwTarget(gwSrv, "gw")
	for _, c := range []struct {
		allow    []string
		wantAuth string
		wantSent bool
	}{{nil, "", false}, {[]string{"10.0.0.0/8"}, "", false}, {[]string{"127.0.0.1"}, "bearer,headers", true}} {
		allow, _ := config.ParseHostList(c.allow)
		cl := &fakeClients{}
		st := store.New(store.Options{})
		d := newDiscoverer(t, []sources.Target{gw}, []Gateway{{Target: gw, HTTP: httpCfg}}, st, cl, Options{CredentialsFor: allow})
		if s := d.Refresh(context.Background())[0]; s.Err != nil || s.Workers != 1 {
			t.Fatalf("gateway with credentials: %+v", s)
		}
		var w sources.Target
		for _, tg := range st.Targets() {
			if tg.Origin == sources.OriginGateway {
				w = tg
			}
		}
		if w.Auth != c.wantAuth {
			t.Errorf("allow %v: Auth %q, want %q", c.allow, w.Auth, c.wantAuth)
		}
		mu.Lock()
		seen = nil
		mu.Unlock()
		if r := cl.m[w.ID].Fetch(context.Background(), w.URL); r.Err != nil {
			t.Fatalf("worker scrape: %v", r.Err)
		}
		mu.Lock()
		got := strings.Join(seen, ",")
		mu.Unlock()
		if sent := strings.Contains(got, token); sent != c.wantSent {
			t.Errorf("allow %v: worker saw %q, credentials sent = %v, want %v", c.allow, got, sent, c.wantSent)
		}
	}
}

func TestCapAndStaticWin(t *testing.T) {
	var ws []map[string]any
	for _, u := range []string{"http://10.0.0.5:1", "http://10.0.0.4:1", "http://10.0.0.3:1", "http://10.0.0.2:1", "http://10.0.0.1:1"} {
		ws = append(ws, map[string]any{"id": u, "url": u, "worker_type": "decode", "connection_mode": "Http"})
	}
	srv := gatewayServer(t, map[string]any{"/workers": map[string]any{"workers": ws}})
	gw := gwTarget(srv, "gw")
	static := sources.Target{ID: "http://10.0.0.1:1/metrics", URL: "http://10.0.0.1:1/metrics", Name: "mine", Origin: sources.OriginConfig}
	st := store.New(store.Options{})
	d := newDiscoverer(t, []sources.Target{gw, static}, []Gateway{{Target: gw}}, st, nil, Options{MaxTargets: 2})
	s := d.Refresh(context.Background())[0]
	got := byName(st.Targets())
	if len(got) != 4 || got["mine"].Role != sources.RoleDecode || got["mine"].Origin != sources.OriginConfig {
		t.Fatalf("targets %+v", got)
	}
	if _, ok := got["10.0.0.2:1"]; !ok || s.Capped != 2 {
		t.Fatalf("cap: capped %d, targets %v", s.Capped, got)
	}
}

func TestBlockedAddresses(t *testing.T) {
	allow, _ := config.ParseHostList([]string{"169.254.10.0/24"})
	g := guard(allow, false)
	gl := guard(config.HostList{}, true)
	for _, c := range []struct {
		ip        string
		blocked   bool
		loopGWBlk bool
	}{
		{"169.254.169.254", true, true}, {"fe80::1", true, true}, {"100.100.100.200", true, true},
		{"fd00:ec2::254", true, true}, {"0.0.0.0", true, true}, {"224.0.0.1", true, true},
		{"127.0.0.1", true, false}, {"::1", true, false}, {"::ffff:127.0.0.1", true, false},
		{"10.0.0.1", false, false}, {"169.254.10.7", false, true}, {"2001:db8::1", false, false},
	} {
		ip := netip.MustParseAddr(c.ip)
		if got := g(ip) != nil; got != c.blocked {
			t.Errorf("%s: blocked %v, want %v", c.ip, got, c.blocked)
		}
		if got := gl(ip) != nil; got != c.loopGWBlk {
			t.Errorf("%s (gateway on loopback): blocked %v, want %v", c.ip, got, c.loopGWBlk)
		}
	}
}

// A worker configured at a proxy address with worker_addr set to the
// address its gateway lists is one target, not two.
func TestStaticWorkerBehindAProxy(t *testing.T) {
	srv := gatewayServer(t, map[string]any{"/workers": map[string]any{"workers": []map[string]any{
		{"id": "a", "url": "http://10.0.0.1:30001", "worker_type": "prefill", "connection_mode": "http"},
		{"id": "b", "url": "http://10.0.0.2:30001", "worker_type": "prefill", "connection_mode": "http"}}}})
	gw := gwTarget(srv, "gw")
	proxied := sources.Target{ID: "https://proxy:8443/metrics", URL: "https://proxy:8443/metrics", Name: "p1-tls",
		Origin: sources.OriginConfig, Addr: "10.0.0.1:30001"}
	st := store.New(store.Options{})
	d := newDiscoverer(t, []sources.Target{gw, proxied}, []Gateway{{Target: gw}}, st, nil, Options{})
	d.Refresh(context.Background())
	got := byName(st.Targets())
	if len(got) != 3 || got["p1-tls"].Role != sources.RolePrefill || got["10.0.0.2:30001"].Origin != sources.OriginGateway {
		t.Fatalf("targets %+v", got)
	}
}
