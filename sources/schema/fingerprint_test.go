package schema

import (
	"testing"

	dto "github.com/prometheus/client_model/go"

	"github.com/pdtop/pdtop/sources"
)

func TestFingerprint(t *testing.T) {
	cases := []struct {
		name     string
		body     string
		declared []string // extra TYPE-line names the parser skipped
		want     string
	}{
		{"smg by any smg_ family", "# TYPE smg_mcp_servers gauge\nsmg_mcp_servers 1\n", nil, GenSMG},
		{"smg wins over sgl_router_", "sgl_router_cb_state{worker=\"a\"} 0\nsmg_worker_health{worker=\"a\"} 1\n", nil, GenSMG},
		{"smg from declared only", "", []string{"smg_tokio_alive_tasks"}, GenSMG},
		{"2026 marker", "sgl_router_workers{mode=\"decode\"} 2\n", nil, GenRouter2026},
		{"2026 kv_ prefix, declared only", "", []string{"sgl_router_kv_event_batches_lost_total"}, GenRouter2026},
		{"2026 marker beats requests_total{route}", "sgl_router_requests_total{route=\"/v1/chat/completions\"} 1\nsgl_router_responses_total{route=\"/\",method=\"GET\",status_code=\"200\"} 1\n", nil, GenRouter2026},
		{"requests_total{route,method}", "sgl_router_requests_total{route=\"/v1/chat/completions\",method=\"POST\"} 1\n", nil, GenRouter2026},
		{"requests_total{worker_url,…}", "sgl_router_requests_total{worker_url=\"http://a:1\",model_id=\"m\",mode=\"plain\",outcome=\"success\"} 1\n", nil, GenRouter2026},
		{"requests_total{route} only", "sgl_router_requests_total{route=\"/generate\"} 1\n", nil, GenRouterLegacy},
		{"legacy marker", "sgl_router_cache_hits_total 3\n", nil, GenRouterLegacy},
		{"legacy marker declared only", "", []string{"sgl_router_cb_state"}, GenRouterLegacy},
		{"unknown sgl_router_ family only", "sgl_router_job_success_total{job_type=\"AddWorker\"} 1\n", nil, ""},
		{"sglang worker", "sglang:num_running_reqs{model_name=\"m\"} 1\n", nil, GenSGLangWorker},
		{"sglang re-export spelling", "sglang_num_running_reqs{model_name=\"m\"} 1\n", nil, GenSGLangWorker},
		{"idle sglang worker, declared only", "", []string{"sglang:num_running_reqs"}, GenSGLangWorker},
		{"nothing known", "# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total 3\n", nil, ""},
		{"empty body", "", nil, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fams := map[string]*dto.MetricFamily{}
			var declared []string
			if c.body != "" {
				fams, declared = parseBody(t, []byte(c.body))
			}
			obs := Map(fams, append(declared, c.declared...))
			if obs == nil {
				t.Fatal("Map returned nil")
			}
			if obs.Generation != c.want {
				t.Fatalf("Generation = %q, want %q", obs.Generation, c.want)
			}
			if c.want == "" && (obs.Engine != "" || len(obs.Points) != 0 || len(obs.Hists) != 0 || len(obs.Sources) != 0) {
				t.Errorf("unrecognised body produced %q %v %v", obs.Engine, obs.Points, obs.Hists)
			}
		})
	}
}

func TestMapNilInputs(t *testing.T) {
	if obs := Map(nil, nil); obs == nil || obs.Generation != "" {
		t.Fatalf("Map(nil, nil) = %+v", obs)
	}
	if got := MapEngineMetrics(nil, nil); got == nil || len(got) != 0 {
		t.Fatalf("MapEngineMetrics(nil, nil) = %v", got)
	}
}

// A worker scraped at a gateway URL and vice versa: Map says what it saw.
func TestWrongURL(t *testing.T) {
	if obs := mapFile(t, "worker_2026_decode.prom"); obs.Engine != EngineSGLang {
		t.Errorf("worker body recognised as %q", obs.Engine)
	}
	if obs := mapFile(t, "smg_full.prom"); obs.Engine != EngineSMG {
		t.Errorf("smg body recognised as %q", obs.Engine)
	}
	// A gateway's /engine_metrics handed to Map is still SGLang worker data.
	if obs := mapFile(t, "engine_metrics.prom"); obs.Engine != EngineSGLang {
		t.Errorf("/engine_metrics body recognised as %q", obs.Engine)
	}
}

func TestMapEngineMetrics(t *testing.T) {
	fams, declared := load(t, "engine_metrics.prom")
	got := MapEngineMetrics(fams, declared)
	if len(got) != 2 {
		t.Fatalf("workers = %d (%v), want 2", len(got), keys(got))
	}
	a, b := got["127.0.0.1:8001"], got["10.0.0.2:30001"]
	if a == nil || b == nil {
		t.Fatalf("worker keys %v", keys(got))
	}
	for _, obs := range []*sources.Observation{a, b} {
		if obs.Generation != GenSGLangWorker {
			t.Errorf("generation %q", obs.Generation)
		}
		checkSourcesMatch(t, obs)
	}
	if a.EngineRole != sources.RoleUnknown || b.EngineRole != sources.RoleDecode {
		t.Errorf("roles %v, %v", a.EngineRole, b.EngineRole)
	}
	wantPoints(t, a, map[pk]float64{
		{sources.SigRunning, ""}:                2,
		{sources.SigKVUsage, ""}:                0.125,
		{sources.SigRealtimePrefillCompute, ""}: 55,
		{sources.SigRealtimePrefillCache, ""}:   45,
		{sources.SigPromptTokens, ""}:           100,
	})
	wantPoints(t, b, map[pk]float64{
		{sources.SigRunning, ""}:        31,
		{sources.SigKVUsage, ""}:        0.875,
		{sources.SigRealtimeDecode, ""}: 9000,
	})
	wantHists(t, b, map[sources.Signal]wantHist{
		sources.SigITL: {bounds: []float64{0.01, 0.02, inf}, counts: []float64{1000, 8500, 9000}, sum: 180, count: 9000},
	})
	wantSources(t, a, map[sources.Signal]string{sources.SigRunning: "sglang_num_running_reqs"})

	// The reference capture: the untyped cuda-graph family maps to nothing.
	fams, declared = load(t, "engine_metrics_doc.prom")
	got = MapEngineMetrics(fams, declared)
	if len(got) != 1 || got["127.0.0.1:8001"] == nil {
		t.Fatalf("workers %v", keys(got))
	}
	wantPoints(t, got["127.0.0.1:8001"], map[pk]float64{{sources.SigRealtimePrefillCompute, ""}: 55})
}

func keys(m map[string]*sources.Observation) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
