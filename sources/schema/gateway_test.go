package schema

import (
	"testing"

	"github.com/pdtop/pdtop/sources"
)

// gatewayCase is one gateway fixture with everything Map must say about it.
type gatewayCase struct {
	file       string
	generation string
	engine     string
	points     map[pk]float64
	hists      map[sources.Signal]wantHist
	sources    map[sources.Signal]string
}

func TestMapGatewayFixtures(t *testing.T) {
	const (
		w1   = "10.0.0.1:30001"
		w2   = "10.0.0.2:30001"
		gone = "gone:8000"
	)
	cases := []gatewayCase{
		{
			// Full SMG body: −1 sentinels leave the removed worker's health,
			// breaker and engine-hit points absent; its zeroed in-flight and
			// its success counter stay (they are values, not sentinels).
			file: "smg_full.prom", generation: GenSMG, engine: EngineSMG,
			points: map[pk]float64{
				{sources.SigGWOffered, ""}:                1250,
				{sources.SigGWResponses, Class2xx}:        1116,
				{sources.SigGWResponses, Class429}:        60,
				{sources.SigGWResponses, Class408}:        5,
				{sources.SigGWResponses, Class4xx}:        8,
				{sources.SigGWResponses, Class5xx}:        43,
				{sources.SigGWRetries, ""}:                13,
				{sources.SigGWRetriesExhausted, ""}:       2,
				{sources.SigGWErrors, "backend_error"}:    43,
				{sources.SigGWErrors, "validation_error"}: 7,
				{sources.SigGWErrors, "timeout"}:          6,
				{sources.SigGWRateLimited, ""}:            60,
				{sources.SigGWWorkerPicks, w1}:            600,
				{sources.SigGWWorkerPicks, w2}:            500,
				{sources.SigGWWorkerPicks, gone}:          42,
				{sources.SigGWInFlight, ""}:               12,
				{sources.SigGWWorkerInFlight, w1}:         5,
				{sources.SigGWWorkerInFlight, w2}:         7,
				{sources.SigGWWorkerInFlight, gone}:       0,
				{sources.SigGWWorkerHealth, w1}:           1,
				{sources.SigGWWorkerHealth, w2}:           0,
				{sources.SigGWWorkerCB, w1}:               0,
				{sources.SigGWWorkerCB, w2}:               1,
				{sources.SigGWEngineHitLastBatch, w1}:     0.55,
				{sources.SigGWTreeSize, ""}:               123456,
				{sources.SigGWAdmissionQueue, ""}:         3,
			},
			hists: map[sources.Signal]wantHist{
				sources.SigGWLatency: {bounds: []float64{0.1, 0.5, 1, 5, inf}, counts: []float64{116, 716, 1116, 1216, 1232}, sum: 640.58, count: 1232},
				// Summaries (< v1.6.0): Sum/Count only, no Bounds.
				sources.SigGWTTFT: {sum: 300.5, count: 1000},
				sources.SigGWTPOT: {sum: 19.5, count: 950},
			},
			sources: map[sources.Signal]string{
				sources.SigGWOffered:     "smg_http_requests_total",
				sources.SigGWInFlight:    "smg_http_connections_active",
				sources.SigGWTreeSize:    "smg_cache_tree_chars",
				sources.SigGWWorkerPicks: "smg_worker_cb_outcomes_total",
				sources.SigGWLatency:     "smg_http_request_duration_seconds",
			},
		},
		{
			// The reference's SMG lines: in-flight from the gauge-histogram
			// (Σ series, not cumulative), a removed worker's health absent.
			file: "smg_doc.prom", generation: GenSMG, engine: EngineSMG,
			points: map[pk]float64{
				{sources.SigGWOffered, ""}:                    1234,
				{sources.SigGWWorkerPicks, "127.0.0.1:46361"}: 4024,
				{sources.SigGWEngineHitLastBatch, "w:1"}:      0.25,
				{sources.SigGWInFlight, ""}:                   4,
			},
			sources: map[sources.Signal]string{sources.SigGWInFlight: "smg_http_inflight_request_age_count"},
		},
		{
			// G1 May 2025: the latency summary was cut off after its
			// quantiles (no _sum/_count), so latency is absent, not zero;
			// no intake counter exists.
			file: "g1_may2025.prom", generation: GenRouterLegacy, engine: EngineRouter,
			points: map[pk]float64{
				{sources.SigGWWorkerPicks, "localhost:8081"}:    7,
				{sources.SigGWWorkerPicks, "localhost:8080"}:    9,
				{sources.SigGWCacheMisses, ""}:                  14,
				{sources.SigGWCacheHits, ""}:                    2,
				{sources.SigGWWorkerInFlight, "localhost:8081"}: 1,
				{sources.SigGWWorkerInFlight, "localhost:8080"}: 1,
			},
		},
		{
			// G1 0.2.4 without TYPE lines (untyped families): offered is the
			// sum of every response, and Sources says so.
			file: "g1_024_k8s.prom", generation: GenRouterLegacy, engine: EngineRouter,
			points: map[pk]float64{
				{sources.SigGWOffered, ""}:                   13,
				{sources.SigGWResponses, Class2xx}:           13,
				{sources.SigGWWorkerHealth, "10.x.x.x:8000"}: 1,
			},
			sources: map[sources.Signal]string{sources.SigGWOffered: "sgl_router_http_responses_total"},
		},
		{
			file: "g1_024_full.prom", generation: GenRouterLegacy, engine: EngineRouter,
			points: map[pk]float64{
				{sources.SigGWOffered, ""}:                      153,
				{sources.SigGWResponses, Class2xx}:              150,
				{sources.SigGWResponses, Class429}:              2,
				{sources.SigGWResponses, Class5xx}:              1,
				{sources.SigGWErrors, "no_available_workers"}:   1,
				{sources.SigGWErrors, "non_retryable_error"}:    2,
				{sources.SigGWErrors, "server_selection"}:       3,
				{sources.SigGWRetries, ""}:                      5,
				{sources.SigGWRetriesExhausted, ""}:             1,
				{sources.SigGWCacheHits, ""}:                    40,
				{sources.SigGWCacheMisses, ""}:                  10,
				{sources.SigGWImbalanceEvents, ""}:              6,
				{sources.SigGWWorkerPicks, "10.0.0.1:30001"}:    75,
				{sources.SigGWWorkerPicks, "10.0.0.3:30001"}:    71,
				{sources.SigGWWorkerInFlight, "10.0.0.1:30001"}: 4,
				{sources.SigGWWorkerInFlight, "10.0.0.3:30001"}: 6,
				{sources.SigGWWorkerHealth, "10.0.0.1:30001"}:   1,
				{sources.SigGWWorkerHealth, "10.0.0.3:30001"}:   1,
				{sources.SigGWWorkerCB, "10.0.0.1:30001"}:       0,
				{sources.SigGWWorkerCB, "10.0.0.3:30001"}:       2,
			},
			hists: map[sources.Signal]wantHist{
				sources.SigGWLatency: {bounds: []float64{0.001, 0.1, 1, 240, inf}, counts: []float64{0, 20, 120, 140, 140}, sum: 70.5, count: 140},
			},
			sources: map[sources.Signal]string{
				sources.SigGWErrors:  "sgl_router_request_errors_total+sgl_router_pd_errors_total",
				sources.SigGWLatency: "sgl_router_pd_request_duration_seconds",
			},
		},
		{
			file: "g3_2026.prom", generation: GenRouter2026, engine: EngineRouter,
			points: map[pk]float64{
				{sources.SigGWOffered, ""}:                      504,
				{sources.SigGWResponses, Class2xx}:              484,
				{sources.SigGWResponses, Class5xx}:              12,
				{sources.SigGWResponses, Class4xx}:              4,
				{sources.SigGWQueryBlocks, ""}:                  10000,
				{sources.SigGWMatchedBlocks, ""}:                6200,
				{sources.SigGWSelectedBlocks, ""}:               5100,
				{sources.SigGWWorkerPicks, "10.0.1.1:30000"}:    246,
				{sources.SigGWWorkerPicks, "10.0.1.2:30000"}:    232,
				{sources.SigGWWorkerInFlight, "10.0.1.1:30000"}: 3,
				{sources.SigGWWorkerInFlight, "10.0.1.2:30000"}: 4,
				{sources.SigGWWorkerHealth, "10.0.1.1:30000"}:   1,
				{sources.SigGWWorkerHealth, "10.0.1.2:30000"}:   1,
				{sources.SigGWWorkerCB, "10.0.1.1:30000"}:       0,
				{sources.SigGWWorkerCB, "10.0.1.2:30000"}:       2,
				// Σ tier and dp_rank per worker.
				{sources.SigGWWorkerKVBlocks, "10.0.0.11:30000"}: 2300,
				{sources.SigGWWorkerKVBlocks, "10.0.0.12:30000"}: 50,
			},
			hists: map[sources.Signal]wantHist{
				sources.SigGWLatency: {bounds: []float64{0.005, 0.5, 5, 30, inf}, counts: []float64{0, 200, 470, 480, 480}, sum: 520.25, count: 480},
				sources.SigGWTTFT:    {bounds: []float64{0.005, 0.05, 0.1, 1, inf}, counts: []float64{0, 30, 150, 470, 480}, sum: 110.5, count: 480},
			},
			sources: map[sources.Signal]string{
				sources.SigGWOffered:     "sgl_router_requests_total",
				sources.SigGWWorkerPicks: "sgl_router_worker_requests_total",
			},
		},
		{
			// G3 before PR #29467: requests_total is per-worker dispatches,
			// so it feeds picks and offered stays absent.
			file: "g3_m4_2026-05.prom", generation: GenRouter2026, engine: EngineRouter,
			points: map[pk]float64{
				{sources.SigGWWorkerPicks, "127.0.0.1:41939"}: 10,
			},
			sources: map[sources.Signal]string{sources.SigGWWorkerPicks: "sgl_router_requests_total"},
		},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			obs := mapFile(t, c.file)
			if obs.Generation != c.generation || obs.Engine != c.engine {
				t.Fatalf("recognised as %q/%q, want %q/%q", obs.Generation, obs.Engine, c.generation, c.engine)
			}
			if obs.EngineRole != sources.RoleGateway {
				t.Errorf("EngineRole = %v, want gateway", obs.EngineRole)
			}
			if obs.PIDs != nil || obs.StartMarkers != nil {
				t.Errorf("gateway with PIDs %v / markers %v", obs.PIDs, obs.StartMarkers)
			}
			wantPoints(t, obs, c.points)
			wantHists(t, obs, c.hists)
			wantSources(t, obs, c.sources)
			checkSourcesMatch(t, obs)
		})
	}
}

// Without smg_http_connections_active, in-flight is the sum of the
// gauge-histogram's series (9+2+1+0), never its largest "bucket".
func TestSMGInFlightFromGaugeHistogram(t *testing.T) {
	fams, declared := load(t, "smg_full.prom")
	delete(fams, "smg_http_connections_active")
	obs := Map(fams, declared)
	got := points(t, obs)[pk{sources.SigGWInFlight, ""}]
	if got != 12 || obs.Sources[sources.SigGWInFlight] != "smg_http_inflight_request_age_count" {
		t.Fatalf("in-flight = %v from %q, want 12 from the gauge-histogram", got, obs.Sources[sources.SigGWInFlight])
	}
}

// One sgl_router_requests_total family carrying both label generations:
// each series goes where its labels say.
func TestRouter2026BothRequestLabelSets(t *testing.T) {
	body := []byte(`# TYPE sgl_router_requests_total counter
sgl_router_requests_total{route="/v1/chat/completions",method="POST"} 500
sgl_router_requests_total{worker_url="http://127.0.0.1:41939",model_id="Qwen/Qwen3-0.6B",mode="plain",outcome="success"} 10
sgl_router_requests_total{worker_url="http://127.0.0.1:41939",model_id="Qwen/Qwen3-0.6B",mode="plain",outcome="error"} 2
`)
	obs := mapBody(t, body)
	if obs.Generation != GenRouter2026 {
		t.Fatalf("generation %q", obs.Generation)
	}
	wantPoints(t, obs, map[pk]float64{
		{sources.SigGWOffered, ""}:                    500,
		{sources.SigGWWorkerPicks, "127.0.0.1:41939"}: 12,
	})
}

func TestStatusClass(t *testing.T) {
	for code, want := range map[string]string{
		"200": Class2xx, "204": Class2xx, "429": Class429, "408": Class408, "400": Class4xx, "413": Class4xx,
		"404": Class4xx, "500": Class5xx, "503": Class5xx, "101": ClassOther, "302": ClassOther, "": ClassOther, "abc": ClassOther,
	} {
		if got := StatusClass(code); got != want {
			t.Errorf("StatusClass(%q) = %q, want %q", code, got, want)
		}
	}
}
