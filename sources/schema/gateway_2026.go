package schema

import "github.com/pdtop/pdtop/sources"

// The 2026 experimental sgl-router adapter (G3: sglang
// experimental/sgl-router, `sgl_router_*` again with new labels and
// meanings, gateway.md §4, §5). sgl_router_requests_total changed meaning
// on 2026-06-26 (PR #29467): {route,method} series are edge intake, older
// {worker_url,model_id,mode,outcome} series are per-worker dispatches. Each
// series is routed by its labels, so a body with either (or both) maps.
var router2026Adapter = adapter{
	generation: GenRouter2026,
	engine:     EngineRouter,
	role:       sources.RoleGateway,
	rules: []rule{
		{sig: sources.SigGWOffered, aliases: names("sgl_router_requests_total"), match: match{label: "route"}},
		byStatus("sgl_router_responses_total"),
		// Router-predicted locality in blocks, summed over decision and model.
		{sig: sources.SigGWQueryBlocks, aliases: names("sgl_router_cache_aware_query_blocks_total")},
		{sig: sources.SigGWMatchedBlocks, aliases: names("sgl_router_matched_overlap_blocks_total")},
		{sig: sources.SigGWSelectedBlocks, aliases: names("sgl_router_selected_overlap_blocks_total")},
		// Dispatches per worker (decode worker in PD), summed over outcome.
		{sig: sources.SigGWWorkerPicks, aliases: []alias{
			{names: []string{"sgl_router_worker_requests_total"}},
			{names: []string{"sgl_router_requests_total"}, match: match{label: "worker_url"}},
		}, keyLabel: "worker_url", keyFn: sources.WorkerKey},

		perWorker(sources.SigGWWorkerInFlight, "worker_url", aggSum, names("sgl_router_worker_inflight_requests")),
		perWorker(sources.SigGWWorkerHealth, "worker_url", aggMin, names("sgl_router_worker_health")),
		perWorker(sources.SigGWWorkerCB, "worker_url", aggMax, names("sgl_router_worker_cb_state")),
		// The router's KV-event tree per worker, summed over tier and dp_rank.
		perWorker(sources.SigGWWorkerKVBlocks, "worker_url", aggSum, names("sgl_router_kv_tree_blocks")),

		{sig: sources.SigGWLatency, aliases: names("sgl_router_request_duration_seconds")},
		{sig: sources.SigGWTTFT, aliases: names("sgl_router_ttft_seconds")},
	},
}
