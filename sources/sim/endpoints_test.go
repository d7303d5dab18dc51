package sim

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"regexp"
	"syscall"
	"testing"
	"time"

	"github.com/pdtop/pdtop/sources"
)

// refused reports whether GET url fails with "connection refused".
func refused(url string) bool {
	resp, err := testClient.Get(url)
	if err == nil {
		resp.Body.Close()
		return false
	}
	return errors.Is(err, syscall.ECONNREFUSED)
}

// tryScrape scrapes url; ok is false if the endpoint refuses connections.
func tryScrape(t *testing.T, url string) (families, bool) {
	t.Helper()
	resp, err := testClient.Get(url)
	if errors.Is(err, syscall.ECONNREFUSED) {
		return nil, false
	}
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", url, resp.StatusCode, err)
	}
	return parse(t, body), true
}

func endpointNamed(t *testing.T, eps []Endpoint, name string) Endpoint {
	t.Helper()
	for _, e := range eps {
		if e.Name == name {
			return e
		}
	}
	t.Fatalf("no endpoint %q", name)
	return Endpoint{}
}

func TestKillRevive(t *testing.T) {
	t.Parallel()
	f, eps := serveFleet(t, Config{Seed: 11, Prefill: 2, Decode: 2, Scenario: ScenarioSteady})
	p0, gw := endpointNamed(t, eps, "prefill-0"), endpointNamed(t, eps, "gateway-0")
	f.Step(60 * time.Second)
	before := scrapeOne(t, p0.MetricsURL).sum("sglang:num_requests_total", nil)
	f.Kill("prefill-0")
	if !refused(p0.MetricsURL) {
		t.Fatal("a killed worker's endpoint does not refuse connections")
	}
	f.Step(60 * time.Second)
	g := scrapeOne(t, gw.MetricsURL)
	who := map[string]string{"worker": p0.BaseURL}
	if h := g.sum("smg_worker_health", who); h != 0 {
		t.Errorf("gateway-0 health of the killed prefill-0 = %v, want 0", h)
	}
	if g.sum("smg_worker_cb_outcomes_total", map[string]string{"worker": p0.BaseURL, "outcome": "failure"}) == 0 {
		t.Error("no failed outcome recorded for the killed worker")
	}
	if g.sum("smg_worker_retries_total", map[string]string{"worker_type": "prefill"}) == 0 {
		t.Error("no prefill retries after killing a prefill worker")
	}
	f.Revive("prefill-0")
	f.Step(60 * time.Second)
	if refused(p0.MetricsURL) {
		t.Fatal("a revived worker still refuses")
	}
	after := scrapeOne(t, p0.MetricsURL).sum("sglang:num_requests_total", nil)
	if after < before {
		t.Errorf("num_requests_total went from %v to %v: Kill/Revive must keep the process state", before, after)
	}
	if h := scrapeOne(t, gw.MetricsURL).sum("smg_worker_health", who); h != 1 {
		t.Errorf("gateway-0 health of the revived prefill-0 = %v, want 1", h)
	}
}

func TestRestart(t *testing.T) {
	t.Parallel()
	f, eps := serveFleet(t, Config{Seed: 12, Prefill: 2, Decode: 2, Scenario: ScenarioSteady})
	d1 := endpointNamed(t, eps, "decode-1")
	f.Step(60 * time.Second)
	old := scrapeOne(t, d1.MetricsURL)
	f.Restart("decode-1")
	f.Step(5 * time.Second)
	if !refused(d1.MetricsURL) {
		t.Fatal("a restarting worker answers during its warm-up")
	}
	f.Step(f.Config().Capacity.Warmup)
	cur := scrapeOne(t, d1.MetricsURL)
	oldPID := old.label("sglang:num_retracted_reqs", "pid", nil)
	newPID := cur.label("sglang:num_retracted_reqs", "pid", nil)
	if oldPID == "" || newPID == "" || oldPID == newPID {
		t.Errorf("scheduler pid %q → %q, want a new pid after a restart", oldPID, newPID)
	}
	if o, n := old.sum("sglang:generation_tokens_total", nil), cur.sum("sglang:generation_tokens_total", nil); n >= o {
		t.Errorf("generation_tokens_total %v → %v, want it to start again from zero", o, n)
	}
}

func TestAddAndRemoveWorker(t *testing.T) {
	t.Parallel()
	f, eps := serveFleet(t, Config{Seed: 13, Prefill: 2, Decode: 2, Scenario: ScenarioSteady})
	gw := endpointNamed(t, eps, "gateway-1")
	if _, err := f.AddWorker(sources.RoleGateway); err == nil {
		t.Error("AddWorker(gateway) succeeded")
	}
	ep, err := f.AddWorker(sources.RoleDecode)
	if err != nil {
		t.Fatal(err)
	}
	if ep.Name != "decode-2" || ep.Role != sources.RoleDecode {
		t.Errorf("new endpoint %+v", ep)
	}
	if !refused(ep.MetricsURL) {
		t.Error("a new worker answers before its warm-up is over")
	}
	f.Step(f.Config().Capacity.Warmup + 30*time.Second)
	g := scrapeOne(t, gw.MetricsURL)
	if n := g.sum("smg_worker_pool_size", map[string]string{"worker_type": "decode"}); n != 3 {
		t.Errorf("decode pool size = %v after scale-out, want 3", n)
	}
	if g.sum("smg_worker_cb_outcomes_total", map[string]string{"worker": ep.BaseURL, "outcome": "success"}) == 0 {
		t.Error("the new decode worker served nothing in 30 s")
	}

	f.RemoveWorker("decode-2")
	f.Step(time.Second)
	g = scrapeOne(t, gw.MetricsURL)
	if h := g.sum("smg_worker_health", map[string]string{"worker": ep.BaseURL}); h != -1 {
		t.Errorf("smg health of a removed worker = %v, want the -1 sentinel", h)
	}
	var list struct {
		Workers []struct{ URL string }
	}
	_, body := get(t, gw.BaseURL+"/workers")
	if err := json.Unmarshal(body, &list); err != nil {
		t.Fatal(err)
	}
	for _, w := range list.Workers {
		if w.URL == ep.BaseURL {
			t.Error("/workers still lists the removed worker")
		}
	}
	f.Step(40 * time.Second)
	if !refused(ep.MetricsURL) {
		t.Error("a removed worker's endpoint still answers after it drained")
	}
	for _, e := range f.Endpoints() {
		if e.Name == "decode-2" {
			t.Error("Endpoints() still lists the removed worker")
		}
	}
}

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func TestDiscoveryEndpoints(t *testing.T) {
	t.Parallel()
	type worker struct {
		ID         string `json:"id"`
		URL        string `json:"url"`
		WorkerType string `json:"worker_type"`
		IsHealthy  bool   `json:"is_healthy"`
		Load       *int   `json:"load"`
	}
	for _, gen := range []string{GatewaySMG, GatewayLegacy, Gateway2026} {
		f, eps := serveFleet(t, Config{Seed: 14, Prefill: 2, Decode: 1, Replicas: 1, Gateway: gen, Scenario: ScenarioSteady})
		f.Step(10 * time.Second)
		gw := endpointNamed(t, eps, "gateway-0")
		code, body := get(t, gw.BaseURL+"/workers")
		if gen == Gateway2026 {
			if code != http.StatusNotFound {
				t.Errorf("2026 router: GET /workers = %d, want 404 (it has none)", code)
			}
			continue
		}
		var resp struct {
			Workers []worker
			Total   int
			Stats   struct {
				PrefillCount int `json:"prefill_count"`
				DecodeCount  int `json:"decode_count"`
			}
		}
		if err := json.Unmarshal(body, &resp); err != nil || code != http.StatusOK {
			t.Fatalf("%s /workers: %d %v\n%s", gen, code, err, body)
		}
		if resp.Total != 3 || resp.Stats.PrefillCount != 2 || resp.Stats.DecodeCount != 1 {
			t.Errorf("%s /workers: total %d, stats %+v", gen, resp.Total, resp.Stats)
		}
		roles := map[string]string{}
		for _, w := range resp.Workers {
			roles[w.URL] = w.WorkerType
			if !w.IsHealthy || w.Load == nil {
				t.Errorf("%s /workers entry %+v", gen, w)
			}
			if gen == GatewaySMG && !uuidRE.MatchString(w.ID) {
				t.Errorf("smg worker id %q is not a UUID", w.ID)
			}
			if gen == GatewayLegacy && w.ID != w.URL {
				t.Errorf("legacy worker id %q, want its URL", w.ID)
			}
		}
		for _, e := range eps {
			if e.Role.IsWorker() && roles[e.BaseURL] != e.Role.String() {
				t.Errorf("%s /workers says %s is %q", gen, e.Name, roles[e.BaseURL])
			}
		}
		if gen == GatewayLegacy {
			var urls struct{ URLs []string }
			_, body = get(t, gw.BaseURL+"/list_workers")
			if json.Unmarshal(body, &urls) != nil || len(urls.URLs) != 3 {
				t.Errorf("/list_workers = %s", body)
			}
			var loads struct {
				Prefill []struct {
					Engine string
					Load   int
				}
				Decode []struct{ Engine string }
			}
			_, body = get(t, gw.BaseURL+"/get_loads")
			if json.Unmarshal(body, &loads) != nil || len(loads.Prefill) != 2 || len(loads.Decode) != 1 ||
				loads.Prefill[0].Engine[:9] != "(Prefill@" {
				t.Errorf("/get_loads = %s", body)
			}
		}
	}
}

func TestServerInfo(t *testing.T) {
	t.Parallel()
	f, err := New(Config{Seed: 15, Prefill: 1, Decode: 1, Replicas: 1, Scenario: ScenarioSteady})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	if _, err := f.Serve("127.0.0.1:30000"); err == nil {
		t.Fatal("Serve on one fixed port for many targets succeeded")
	}
	eps, err := f.Serve("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range eps {
		if !e.Role.IsWorker() {
			continue
		}
		var info struct {
			Mode string `json:"disaggregation_mode"`
		}
		_, body := get(t, e.BaseURL+"/server_info")
		if err := json.Unmarshal(body, &info); err != nil || info.Mode != e.Role.String() {
			t.Errorf("%s /server_info = %s", e.Name, body)
		}
	}
}

// TestRetraction drives one decode worker into SGLang's retraction path: a
// cohort of long, similar generations admitted under a decayed (optimistic)
// new_token_ratio outgrows the KV it reserved.
func TestRetraction(t *testing.T) {
	t.Parallel()
	k := DefaultCapacity()
	k.DecodeKVTokens = 120000
	f, eps := serveFleet(t, Config{Seed: 16, Prefill: 1, Decode: 1, Replicas: 1, Scenario: ScenarioSteady,
		Workload: Workload{Rate: 3, PrivateDocuments: true, DocTokens: 2000, MaxTurns: 1,
			OutputTokens: 2500, OutputSpread: 0.1, OutputCap: 4096},
		Capacity: k})
	d := endpointNamed(t, eps, "decode-0")
	f.Step(4 * time.Minute)
	s := scrapeOne(t, d.MetricsURL)
	if s.sum("sglang:num_retracted_requests_total", nil) == 0 {
		t.Error("no retractions although the KV pool was oversubscribed")
	}
	if s.sum("sglang:num_requests_total", nil) == 0 {
		t.Error("no request finished: retracted requests must resume and complete")
	}
	if u := s.sum("sglang:token_usage", nil); u < 0.5 {
		t.Errorf("decode KV usage %.2f, want the pool under pressure", u)
	}
}
