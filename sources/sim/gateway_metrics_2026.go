package sim

import (
	"strconv"

	"github.com/pdtop/pdtop/sources"
)

// sgl_router_* families of the experimental 2026 router
// (reference/gateway.md §4), after PR #29467 ({route,method} intake).
var (
	g3Requests       = desc("sgl_router_requests_total", "Total requests received at the edge, before worker selection.", []string{"route", "method"})
	g3Responses      = desc("sgl_router_responses_total", "Total responses sent at the edge, by status code.", []string{"route", "method", "status_code"})
	g3WorkerRequests = desc("sgl_router_worker_requests_total", "Total requests dispatched to a worker, by outcome.", []string{"worker_url", "model_id", "mode", "outcome"})
	g3Duration       = desc("sgl_router_request_duration_seconds", "End-to-end request latency in seconds.", []string{"model_id"})
	g3TTFT           = desc("sgl_router_ttft_seconds", "Time to first streamed byte in seconds.", []string{"model_id"})
	g3Workers        = desc("sgl_router_workers", "Registered workers by mode.", []string{"mode"})
	g3Health         = desc("sgl_router_worker_health", "1 when the worker's circuit breaker admits requests.", []string{"worker_url"})
	g3CBState        = desc("sgl_router_worker_cb_state", "Circuit breaker state (0=closed, 1=open, 2=half_open).", []string{"worker_url"})
	g3Inflight       = desc("sgl_router_worker_inflight_requests", "In-flight requests per worker.", []string{"worker_url"})
	g3Decisions      = desc("sgl_router_cache_aware_decisions_total", "Cache-aware prefill selections by decision.", []string{"model_id", "decision"})
	g3QueryBlocks    = desc("sgl_router_cache_aware_query_blocks_total", "Blocks the routed requests hashed to.", []string{"model_id", "decision"})
	g3MatchedBlocks  = desc("sgl_router_matched_overlap_blocks_total", "Blocks the deepest holder in the fleet had.", []string{"model_id", "decision"})
	g3SelectedBlocks = desc("sgl_router_selected_overlap_blocks_total", "Blocks the selected worker had.", []string{"model_id", "decision"})
	g3TreeBlocks     = desc("sgl_router_kv_tree_blocks", "Blocks the tree attributes to a worker, by storage tier.", []string{"worker_url", "dp_rank", "tier"})
	g3BlockSize      = desc("sgl_router_kv_block_size", "Tokens per block hash.", nil)
)

// collect2026 exposes the replica as the 2026 router does. Per-worker
// gauges are sampled from the registry at scrape time, so a removed worker
// simply stops appearing.
func (g *replica) collect2026(e emitter) {
	st, model := &g.st, g.f.cfg.Model
	e.counter(g3Requests, st.intake, chatPath, "POST")
	for _, c := range st.responses {
		e.counter(g3Responses, c.n, chatPath, "POST", code(c.code))
	}
	e.hist(g3Duration, &st.g3Dur, model)
	e.hist(g3TTFT, &st.g3TTFT, model)
	for i, d := range st.decisions {
		if d.n == 0 {
			continue
		}
		e.counter(g3Decisions, d.n, model, decisionNames[i])
		e.counter(g3QueryBlocks, d.query, model, decisionNames[i])
		e.counter(g3MatchedBlocks, d.matched, model, decisionNames[i])
		e.counter(g3SelectedBlocks, d.selected, model, decisionNames[i])
	}
	np, nd := g.poolSizes()
	e.gauge(g3Workers, float64(np), "prefill")
	e.gauge(g3Workers, float64(nd), "decode")
	bs := g.f.cfg.Router.BlockSize
	e.gauge(g3BlockSize, float64(bs))
	g.visible(func(w *worker, v *workerView) {
		url := w.baseURL()
		mode := w.role.String()
		if v.g3OK > 0 {
			e.counter(g3WorkerRequests, v.g3OK, url, model, mode, "success")
		}
		if v.g3Failed > 0 {
			e.counter(g3WorkerRequests, v.g3Failed, url, model, mode, "error")
		}
		if v.removed {
			return
		}
		e.gauge(g3Health, boolValue(v.cb != cbOpen), url)
		e.gauge(g3CBState, float64(v.cb), url)
		e.gauge(g3Inflight, float64(v.load), url)
		if w.role == sources.RolePrefill && w.id < len(g.tree.perWorker) {
			e.gauge(g3TreeBlocks, float64(g.tree.perWorker[w.id]/bs), url, strconv.Itoa(0), "device")
		}
	})
}
