package sim

import "github.com/pdtop/pdtop/sources"

// sgl_router_* families of sglang-router ≤ 0.2.4 (reference/gateway.md §2).
var (
	lgHTTPResponses = desc("sgl_router_http_responses_total", "Total number of HTTP responses by status code", []string{"status_code"})
	lgPDRequests    = desc("sgl_router_pd_requests_total", "Total PD requests", []string{"route"})
	lgPDDuration    = desc("sgl_router_pd_request_duration_seconds", "PD request duration", []string{"route"})
	lgPDPrefillReqs = desc("sgl_router_pd_prefill_requests_total", "Total prefill requests per worker", []string{"worker"})
	lgPDDecodeReqs  = desc("sgl_router_pd_decode_requests_total", "Total decode requests per worker", []string{"worker"})
	lgPDErrors      = desc("sgl_router_pd_errors_total", "PD errors by type", []string{"error_type"})
	lgPDPrefillErrs = desc("sgl_router_pd_prefill_errors_total", "Prefill server errors per worker", []string{"worker"})
	lgPDDecodeErrs  = desc("sgl_router_pd_decode_errors_total", "Decode server errors per worker", []string{"worker"})
	lgRetries       = desc("sgl_router_retries_total", "Total retries by route", []string{"route"})
	lgRetriesExh    = desc("sgl_router_retries_exhausted_total", "Requests that exhausted retries by route", []string{"route"})
	lgCBState       = desc("sgl_router_cb_state", "Circuit breaker state per worker (0=closed, 1=open, 2=half_open)", []string{"worker"})
	lgCBTransitions = desc("sgl_router_cb_state_transitions_total", "Circuit breaker state transitions", []string{"worker", "from", "to"})
	lgCBOutcomes    = desc("sgl_router_cb_outcomes_total", "Circuit breaker outcomes per worker", []string{"worker", "outcome"})
	lgWorkerHealth  = desc("sgl_router_worker_health", "Worker health (1 healthy, 0 unhealthy)", []string{"worker"})
	lgRunning       = desc("sgl_router_running_requests", "Running requests per worker", []string{"worker"})
	lgProcessed     = desc("sgl_router_processed_requests_total", "Total requests processed per worker", []string{"worker"})
	lgPolicy        = desc("sgl_router_policy_decisions_total", "Routing policy decisions", []string{"policy", "worker"})
	lgCacheHits     = desc("sgl_router_cache_hits_total", "Cache-aware routing hits", nil)
	lgCacheMisses   = desc("sgl_router_cache_misses_total", "Cache-aware routing misses", nil)
	lgLBEvents      = desc("sgl_router_load_balancing_events_total", "Load balancing events", nil)
	lgMaxLoad       = desc("sgl_router_max_load", "Maximum worker load", nil)
	lgMinLoad       = desc("sgl_router_min_load", "Minimum worker load", nil)
	lgActiveWorkers = desc("sgl_router_active_workers", "Number of active workers", nil)
)

// collectLegacy exposes the replica as sglang-router 0.2.4 does. Removed
// workers keep their last values (the exporter never forgets a series).
func (g *replica) collectLegacy(e emitter) {
	st := &g.st
	for _, c := range st.responses {
		e.counter(lgHTTPResponses, c.n, code(c.code))
	}
	e.counter(lgPDRequests, st.pdRequests, chatPath)
	e.hist(lgPDDuration, &st.pdDur, chatPath)
	e.counter(lgPDErrors, st.pdSelectError, "server_selection")
	e.counter(lgRetries, st.retries[0]+st.retries[1], chatPath)
	e.counter(lgRetriesExh, st.exhausted[0]+st.exhausted[1], chatPath)
	e.counter(lgCacheHits, st.hits)
	e.counter(lgCacheMisses, st.misses)
	e.counter(lgLBEvents, st.lbEvents)
	if st.lbSeen { // set only when the imbalance branch fires
		e.gauge(lgMaxLoad, st.maxLoad)
		e.gauge(lgMinLoad, st.minLoad)
	}
	e.gauge(lgActiveWorkers, float64(g.startWorkers))
	g.visible(func(w *worker, v *workerView) {
		url := w.baseURL()
		e.gauge(lgCBState, float64(v.cb), url)
		e.gauge(lgWorkerHealth, boolValue(v.healthy), url)
		e.gauge(lgRunning, float64(v.load), url)
		e.counter(lgProcessed, v.picks, url)
		e.counter(lgCBOutcomes, v.success, url, "success")
		e.counter(lgCBOutcomes, v.fail, url, "failure")
		for from, row := range v.cbTrans {
			for to, n := range row {
				if n > 0 {
					e.counter(lgCBTransitions, n, url, cbStateNames[from], cbStateNames[to])
				}
			}
		}
		if w.role == sources.RolePrefill {
			e.counter(lgPDPrefillReqs, v.legOK, url)
			e.counter(lgPDPrefillErrs, v.legErr, url)
			if v.policy > 0 {
				e.counter(lgPolicy, v.policy, "cache_aware", url)
			}
		} else {
			e.counter(lgPDDecodeReqs, v.legOK, url)
			e.counter(lgPDDecodeErrs, v.legErr, url)
			e.counter(lgPolicy, v.policy, "power_of_two", url)
		}
	})
}
