package collect

import (
	"os"
	"testing"
	"time"

	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/sources/schema"
	"github.com/pdtop/pdtop/sources/store"
)

// Every generation's reference body, through Process and the store: the
// snapshot carries the fingerprinted generation on the target (for the
// targets view) and, on each figure, the raw name that fed it (for the
// drill-down).
func TestGenerationAndSourceNamesReachTheSnapshot(t *testing.T) {
	for _, c := range []struct {
		file, gen string
		role      sources.Role
		sig       sources.Signal
		key       string
		source    string
	}{
		{"f1_early2025.prom", schema.GenSGLangWorker, sources.RoleUnified, sources.SigPromptTokens, "", "sglang:prompt_tokens_total"},
		{"worker_2026_prefill.prom", schema.GenSGLangWorker, sources.RolePrefill, sources.SigWaiting, "", "sglang:num_queue_reqs"},
		{"engine_metrics.prom", schema.GenSGLangWorker, sources.RoleDecode, sources.SigRunning, "", "sglang_num_running_reqs"},
		{"smg_full.prom", schema.GenSMG, sources.RoleGateway, sources.SigGWResponses, "2xx", "smg_http_responses_total"},
		{"g1_024_full.prom", schema.GenRouterLegacy, sources.RoleGateway, sources.SigGWCacheHits, "", "sgl_router_cache_hits_total"},
		{"g1_may2025.prom", schema.GenRouterLegacy, sources.RoleGateway, sources.SigGWWorkerPicks, "localhost:8080", "sgl_router_processed_requests_total"},
		{"g3_2026.prom", schema.GenRouter2026, sources.RoleGateway, sources.SigGWOffered, "", "sgl_router_requests_total"},
	} {
		body, err := os.ReadFile("../schema/testdata/" + c.file)
		if err != nil {
			t.Fatal(err)
		}
		st := store.New(store.Options{Interval: time.Second})
		st.SetTargets(t0, []sources.Target{{ID: "t", URL: "http://t/metrics", Name: "t", Role: c.role}})
		for i := 0; i < 2; i++ {
			obs, perr := Process(body)
			if perr != nil {
				t.Fatalf("%s: %v", c.file, perr)
			}
			st.Ingest(sources.ScrapeResult{TargetID: "t", Time: t0.Add(time.Duration(i) * time.Second), Obs: obs})
		}
		snap := st.Snapshot(t0.Add(time.Second), time.Minute)
		if got := snap.Targets[0].Generation; got != c.gen {
			t.Errorf("%s: generation %q, want %q", c.file, got, c.gen)
		}
		var r sources.Reading
		switch {
		case c.role != sources.RoleGateway:
			r = snap.Workers[0].Readings.Get(c.sig)
		case c.sig == sources.SigGWResponses:
			r = snap.Gateways[0].Responses[c.key]
		case c.key != "":
			// per-worker gateway figures reach the worker's router view;
			// here there is no worker target, so read the gateway's keys.
			found := false
			for _, k := range snap.Gateways[0].Workers {
				found = found || k == c.key
			}
			if !found {
				t.Errorf("%s: gateway reports on %v, want %s", c.file, snap.Gateways[0].Workers, c.key)
			}
			continue
		default:
			r = snap.Gateways[0].Readings.Get(c.sig)
		}
		if r.Source != c.source {
			t.Errorf("%s: %v fed by %q, want %q", c.file, c.sig, r.Source, c.source)
		}
	}
}
