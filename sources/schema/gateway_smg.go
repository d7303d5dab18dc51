package schema

import "github.com/pdtop/pdtop/sources"

// The SMG adapter (G2: sglang-router 0.3.0 → smg v1.x → main, `smg_*`,
// gateway.md §3, §5, §6). SMG has no predicted-hit counter of any kind, so
// SigGWCacheHits/Misses and the block counters stay absent.
var smgAdapter = adapter{
	generation: GenSMG,
	engine:     EngineSMG,
	role:       sources.RoleGateway,
	rules: []rule{
		// Intake, counted at arrival: the true offered load.
		{sig: sources.SigGWOffered, aliases: names("smg_http_requests_total")},
		byStatus("smg_http_responses_total"),
		{sig: sources.SigGWRetries, aliases: names("smg_worker_retries_total")},
		{sig: sources.SigGWRetriesExhausted, aliases: names("smg_worker_retries_exhausted_total")},
		{sig: sources.SigGWErrors, aliases: names("smg_router_request_errors_total"), keyLabel: "error_type", keyFn: identity},
		{sig: sources.SigGWRateLimited, aliases: names("smg_http_rate_limit_total"), match: match{label: "result", values: []string{"rejected"}}},
		// The only per-worker request counter in SMG.
		{sig: sources.SigGWWorkerPicks, aliases: names("smg_worker_cb_outcomes_total"), match: match{label: "outcome", values: []string{"success"}},
			keyLabel: "worker", keyFn: sources.WorkerKey},

		// In flight at this replica: the connections gauge (really requests),
		// else the sum of the in-flight-by-age gauge-histogram, whose
		// {gt,le} series are non-cumulative and TYPE gauge.
		{sig: sources.SigGWInFlight, aliases: names("smg_http_connections_active", "smg_http_inflight_request_age_count"), types: tGaugeOnly},
		perWorker(sources.SigGWWorkerInFlight, "worker", aggSum, names("smg_worker_requests_active")),
		perWorker(sources.SigGWWorkerHealth, "worker", aggMin, names("smg_worker_health")),
		perWorker(sources.SigGWWorkerCB, "worker", aggMax, names("smg_worker_cb_state")),
		// The worker's last-batch gauge re-exported per dp_rank: max over dp_rank.
		perWorker(sources.SigGWEngineHitLastBatch, "worker", aggMax, names("smg_engine_cache_hit_rate")),
		{sig: sources.SigGWTreeSize, aliases: names("smg_cache_tree_tokens", "smg_cache_tree_chars")},
		{sig: sources.SigGWAdmissionQueue, aliases: names("smg_admission_queue_depth")},

		// Histograms, or summaries before v1.6.0 (TTFT/TPOT): Sum/Count only.
		{sig: sources.SigGWLatency, aliases: names("smg_http_request_duration_seconds", "smg_router_request_duration_seconds")},
		{sig: sources.SigGWTTFT, aliases: names("smg_router_ttft_seconds", "smg_pd_ttft_seconds")},
		{sig: sources.SigGWTPOT, aliases: names("smg_router_tpot_seconds")},
	},
}
