package sim

import (
	"github.com/prometheus/client_golang/prometheus"
)

// smg_* families (reference/gateway.md §3), with SMG's HELP text.
var (
	smgRouterLabels   = []string{"router_type", "backend_type", "connection_mode", "model", "endpoint"}
	smgHTTPRequests   = desc("smg_http_requests_total", "Total HTTP requests by method and path", []string{"method", "path"})
	smgHTTPResponses  = desc("smg_http_responses_total", "Total HTTP responses by path, status_code and error_code", []string{"path", "status_code", "error_code"})
	smgHTTPDuration   = desc("smg_http_request_duration_seconds", "HTTP request duration by method and path", []string{"method", "path"})
	smgConnActive     = desc("smg_http_connections_active", "Currently active HTTP connections", nil)
	smgRateLimit      = desc("smg_http_rate_limit_total", "Rate limiting decisions by result (allowed/rejected)", []string{"result"})
	smgAdmQueueDepth  = desc("smg_admission_queue_depth", "Requests currently parked in the admission queue", nil)
	smgAdmRejected    = desc("smg_admission_queue_rejected_total", "Requests rejected at admission by reason (full/timeout)", []string{"reason"})
	smgAdmInflight    = desc("smg_admission_inflight", "Requests currently holding an admission token", nil)
	smgRouterRequests = desc("smg_router_requests_total", "Total routed requests by router_type, backend_type, connection_mode, model, endpoint, streaming", withLabel(smgRouterLabels, "streaming"))
	smgRouterDuration = desc("smg_router_request_duration_seconds", "Router request duration by router_type, backend_type, connection_mode, model, endpoint", smgRouterLabels)
	smgRouterErrors   = desc("smg_router_request_errors_total", "Router errors by router_type, backend_type, connection_mode, model, endpoint, error_type", withLabel(smgRouterLabels, "error_type"))
	smgPoolSize       = desc("smg_worker_pool_size", "Current worker pool size by worker_type, connection_mode, model", []string{"worker_type", "connection_mode", "model"})
	smgReqActive      = desc("smg_worker_requests_active", "Currently running requests per worker", []string{"worker"})
	smgHealth         = desc("smg_worker_health", "Worker health status (1=healthy, 0=unhealthy)", []string{"worker"})
	smgSelection      = desc("smg_worker_selection_total", "Worker selection events by worker_type, connection_mode, model, policy", []string{"worker_type", "connection_mode", "model", "policy"})
	smgCBState        = desc("smg_worker_cb_state", "Circuit breaker state per worker (0=closed, 1=open, 2=half_open)", []string{"worker"})
	smgCBTransitions  = desc("smg_worker_cb_transitions_total", "Circuit breaker state transitions by worker, from, to", []string{"worker", "from", "to"})
	smgCBOutcomes     = desc("smg_worker_cb_outcomes_total", "Circuit breaker outcomes by worker and outcome (success/failure)", []string{"worker", "outcome"})
	smgCBFails        = desc("smg_worker_cb_consecutive_failures", "Current consecutive failure count per worker", []string{"worker"})
	smgCBSuccesses    = desc("smg_worker_cb_consecutive_successes", "Current consecutive success count per worker", []string{"worker"})
	smgRetries        = desc("smg_worker_retries_total", "Total retry attempts by worker_type and endpoint", []string{"worker_type", "endpoint"})
	smgRetriesExh     = desc("smg_worker_retries_exhausted_total", "Requests that exhausted all retries by worker_type and endpoint", []string{"worker_type", "endpoint"})
	smgTreeChars      = desc("smg_cache_tree_chars", "Cache-aware string tree cached characters by model (summed across tenants)", []string{"model"})
	smgTreeTenants    = desc("smg_cache_tree_tenants", "Cache-aware tree tenant count by model and tree (string/token)", []string{"model", "tree"})
)

// collectSMG exposes the replica as SMG does (HTTP PD router). SMG has no
// predicted-hit counter: only its tree size.
func (g *replica) collectSMG(e emitter) {
	st, model := &g.st, g.f.cfg.Model
	router := []string{"http", "pd", "http", model, chatEndpoint}
	e.counter(smgHTTPRequests, st.intake, "POST", chatPath)
	for _, c := range st.responses {
		e.counter(smgHTTPResponses, c.n, chatPath, code(c.code), "")
	}
	e.hist(smgHTTPDuration, &st.httpDur, "POST", chatPath)
	e.gauge(smgConnActive, float64(g.inflight+len(g.queue)))
	e.counter(smgRateLimit, st.rlAllowed, "allowed")
	e.counter(smgRateLimit, st.rlRejected, "rejected")
	e.gauge(smgAdmQueueDepth, float64(len(g.queue)))
	e.gauge(smgAdmInflight, float64(g.inflight))
	e.counter(smgAdmRejected, st.rejFull, "full")
	e.counter(smgAdmRejected, st.rejTimeout, "timeout")
	e.counter(smgRouterRequests, st.routed, append(router, "true")...)
	e.hist(smgRouterDuration, &st.routerDur, router...)
	e.counter(smgRouterErrors, st.errBackend, append(router, "backend_error")...)
	e.counter(smgRouterErrors, st.errNoWorkers, append(router, "no_workers")...)

	np, nd := g.poolSizes()
	e.gauge(smgPoolSize, float64(np), "prefill", "http", model)
	e.gauge(smgPoolSize, float64(nd), "decode", "http", model)
	e.counter(smgSelection, st.selPrefill, "prefill", "http", model, "cache_aware")
	e.counter(smgSelection, st.selDecode, "decode", "http", model, "power_of_two")
	for i, leg := range legNames {
		e.counter(smgRetries, st.retries[i], leg, chatEndpoint)
		e.counter(smgRetriesExh, st.exhausted[i], leg, chatEndpoint)
	}
	g.visible(func(w *worker, v *workerView) {
		url := w.baseURL()
		health, cb, load, fails, oks := boolValue(v.healthy), float64(v.cb), float64(v.load), float64(v.cbFail), float64(v.cbOK)
		if v.removed { // SMG's removal sentinels
			health, cb, load, fails, oks = -1, -1, 0, 0, 0
		}
		e.gauge(smgReqActive, load, url)
		e.gauge(smgHealth, health, url)
		e.gauge(smgCBState, cb, url)
		e.gauge(smgCBFails, fails, url)
		e.gauge(smgCBSuccesses, oks, url)
		e.counter(smgCBOutcomes, v.success, url, "success")
		e.counter(smgCBOutcomes, v.fail, url, "failure")
		for from, row := range v.cbTrans {
			for to, n := range row {
				if n > 0 {
					e.counter(smgCBTransitions, n, url, cbStateNames[from], cbStateNames[to])
				}
			}
		}
	})
	sum, tenants := g.tree.tokens()
	e.gauge(smgTreeChars, float64(sum*g.f.cfg.Router.CharsPerToken), model)
	e.gauge(smgTreeTenants, float64(tenants), model, "string")
}

var _ prometheus.Collector = (*gatewayCollector)(nil)
