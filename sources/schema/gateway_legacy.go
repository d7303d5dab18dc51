package schema

import "github.com/pdtop/pdtop/sources"

// The legacy sgl-router adapter (G1: sglang-router ≤ 0.2.4, `sgl_router_*`,
// gateway.md §2, §5). G1 has no true intake counter: requests_total counts
// only 2xx HTTP-regular requests, so offered load is the sum of every
// response (http_responses_total, 0.2.4 only) and absent before 0.2.4. G1
// has no TTFT/TPOT, no rate-limit counter and no model label.
var legacyAdapter = adapter{
	generation: GenRouterLegacy,
	engine:     EngineRouter,
	role:       sources.RoleGateway,
	rules: []rule{
		{sig: sources.SigGWOffered, aliases: names("sgl_router_http_responses_total")},
		byStatus("sgl_router_http_responses_total"),
		{sig: sources.SigGWRetries, aliases: names("sgl_router_retries_total")},
		{sig: sources.SigGWRetriesExhausted, aliases: names("sgl_router_retries_exhausted_total")},
		// Regular-mode and PD errors, both keyed by error_type.
		{sig: sources.SigGWErrors, aliases: names("sgl_router_request_errors_total", "sgl_router_pd_errors_total"),
			keyLabel: "error_type", keyFn: identity, all: true},
		// Per-request booleans from the cache-aware balanced branch.
		{sig: sources.SigGWCacheHits, aliases: names("sgl_router_cache_hits_total")},
		{sig: sources.SigGWCacheMisses, aliases: names("sgl_router_cache_misses_total")},
		{sig: sources.SigGWImbalanceEvents, aliases: names("sgl_router_load_balancing_events_total")},
		// Bumped inside the policy at pick time (failed requests included).
		{sig: sources.SigGWWorkerPicks, aliases: names("sgl_router_processed_requests_total"), keyLabel: "worker", keyFn: sources.WorkerKey},

		perWorker(sources.SigGWWorkerInFlight, "worker", aggSum, names("sgl_router_running_requests")),
		perWorker(sources.SigGWWorkerHealth, "worker", aggMin, names("sgl_router_worker_health")),
		perWorker(sources.SigGWWorkerCB, "worker", aggMax, names("sgl_router_cb_state")),

		// PD mode records pd_request_duration (until both legs' headers);
		// regular mode generate_duration. Summaries before 2025-07-20.
		{sig: sources.SigGWLatency, aliases: names("sgl_router_pd_request_duration_seconds", "sgl_router_generate_duration_seconds")},
	},
}
