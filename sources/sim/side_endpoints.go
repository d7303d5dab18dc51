package sim

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/pdtop/pdtop/sources"
)

func itoa(i int) string { return strconv.Itoa(i) }

func writeJSON(rw http.ResponseWriter, status int, v any) {
	rw.Header().Set("Content-Type", "application/json")
	rw.WriteHeader(status)
	_ = json.NewEncoder(rw).Encode(v)
}

// mux serves a worker's /metrics (the current incarnation's registry),
// /server_info (as SGLang does, with disaggregation_mode) and /health.
func (w *worker) mux() http.Handler {
	f := w.f
	m := http.NewServeMux()
	m.HandleFunc("GET /metrics", func(rw http.ResponseWriter, r *http.Request) {
		f.mu.RLock()
		h := w.handler
		f.mu.RUnlock()
		h.ServeHTTP(rw, r) // the collector takes the read lock itself
	})
	info := func(rw http.ResponseWriter, _ *http.Request) {
		f.mu.RLock()
		defer f.mu.RUnlock()
		k := f.cfg.Capacity
		pool := k.DecodeKVTokens
		if w.role == sources.RolePrefill {
			pool = k.PrefillKVTokens
		}
		writeJSON(rw, http.StatusOK, map[string]any{
			"disaggregation_mode":             w.engineType(),
			"disaggregation_transfer_backend": "mooncake",
			"disaggregation_bootstrap_port":   8998,
			"model_path":                      f.cfg.Model,
			"served_model_name":               f.cfg.Model,
			"tp_size":                         1,
			"dp_size":                         1,
			"page_size":                       1,
			"chunked_prefill_size":            k.PrefillChunkTokens,
			"max_running_requests":            k.MaxRunningRequests,
			"max_total_num_tokens":            pool,
			"enable_metrics":                  true,
		})
	}
	m.HandleFunc("GET /server_info", info)
	m.HandleFunc("GET /get_server_info", info)
	m.HandleFunc("GET /health", func(rw http.ResponseWriter, _ *http.Request) { rw.WriteHeader(http.StatusOK) })
	return m
}

// mux serves a replica's /metrics and the discovery endpoints its
// generation has (reference/gateway.md §10).
func (g *replica) mux() http.Handler {
	f := g.f
	m := http.NewServeMux()
	m.HandleFunc("GET /metrics", func(rw http.ResponseWriter, r *http.Request) {
		f.mu.RLock()
		h := g.handler
		f.mu.RUnlock()
		h.ServeHTTP(rw, r)
	})
	ok := func(rw http.ResponseWriter, _ *http.Request) { rw.WriteHeader(http.StatusOK) }
	locked := func(fn func(rw http.ResponseWriter)) http.HandlerFunc {
		return func(rw http.ResponseWriter, _ *http.Request) {
			f.mu.RLock()
			defer f.mu.RUnlock()
			fn(rw)
		}
	}
	switch f.cfg.Gateway {
	case Gateway2026:
		m.HandleFunc("GET /healthz", ok)
		m.HandleFunc("GET /readyz", ok)
	case GatewayLegacy:
		m.HandleFunc("GET /health", ok)
		m.HandleFunc("GET /liveness", ok)
		m.HandleFunc("GET /readiness", locked(g.readiness))
		m.HandleFunc("GET /workers", locked(g.legacyWorkers))
		m.HandleFunc("GET /list_workers", locked(g.listWorkers))
		m.HandleFunc("GET /get_loads", locked(g.pdLoads))
		m.HandleFunc("GET /engine_metrics", g.engineMetrics)
	default:
		m.HandleFunc("GET /health", ok)
		m.HandleFunc("GET /liveness", ok)
		m.HandleFunc("GET /readiness", locked(g.readiness))
		m.HandleFunc("GET /workers", locked(g.smgWorkers))
		m.HandleFunc("GET /engine_metrics", g.engineMetrics)
	}
	return m
}

// registered calls fn for every worker in the replica's registry now.
func (g *replica) registered(fn func(w *worker, v *workerView)) {
	g.visible(func(w *worker, v *workerView) {
		if !v.removed {
			fn(w, v)
		}
	})
}

func (g *replica) readiness(rw http.ResponseWriter) {
	var healthy, total int
	var hp, hd bool
	g.registered(func(w *worker, v *workerView) {
		total++
		if v.healthy {
			healthy++
			hp = hp || w.role == sources.RolePrefill
			hd = hd || w.role == sources.RoleDecode
		}
	})
	if !hp || !hd {
		writeJSON(rw, http.StatusServiceUnavailable, map[string]any{"status": "not ready", "reason": "insufficient healthy workers"})
		return
	}
	writeJSON(rw, http.StatusOK, map[string]any{"status": "ready", "healthy_workers": healthy, "total_workers": total})
}

// smgWorkerInfo is SMG's WorkerInfo (the fields a PD HTTP fleet fills).
type smgWorkerInfo struct {
	ID             string  `json:"id"`
	ModelID        string  `json:"model_id"`
	URL            string  `json:"url"`
	WorkerType     string  `json:"worker_type"`
	ConnectionMode string  `json:"connection_mode"`
	RuntimeType    string  `json:"runtime_type"`
	Priority       int     `json:"priority"`
	Cost           float64 `json:"cost"`
	BootstrapPort  *int    `json:"bootstrap_port,omitempty"`
	IsHealthy      bool    `json:"is_healthy"`
	Status         string  `json:"status"`
	Load           int     `json:"load"`
	JobStatus      any     `json:"job_status"`
}

type workerStatsJSON struct {
	PrefillCount int `json:"prefill_count"`
	DecodeCount  int `json:"decode_count"`
	RegularCount int `json:"regular_count"`
}

func (g *replica) smgWorkers(rw http.ResponseWriter) {
	list := []smgWorkerInfo{}
	var st workerStatsJSON
	g.registered(func(w *worker, v *workerView) {
		info := smgWorkerInfo{ID: v.uuid, ModelID: g.f.cfg.Model, URL: w.baseURL(), WorkerType: w.role.String(),
			ConnectionMode: "http", RuntimeType: "sglang", Priority: 50, Cost: 1, IsHealthy: v.healthy,
			Status: "ready", Load: v.load}
		if !v.healthy {
			info.Status = "not_ready"
		}
		if w.role == sources.RolePrefill {
			port := 8998
			info.BootstrapPort = &port
			st.PrefillCount++
		} else {
			st.DecodeCount++
		}
		list = append(list, info)
	})
	writeJSON(rw, http.StatusOK, map[string]any{"workers": list, "total": len(list), "stats": st})
}

// legacyWorkers is sglang-router 0.2.x's GET /workers.
func (g *replica) legacyWorkers(rw http.ResponseWriter) {
	list := []map[string]any{}
	var st workerStatsJSON
	g.registered(func(w *worker, v *workerView) {
		list = append(list, map[string]any{
			"id": w.baseURL(), "url": w.baseURL(), "model_id": g.f.cfg.Model, "priority": 50, "cost": 1.0,
			"worker_type": w.role.String(), "is_healthy": v.healthy, "load": v.load,
			"connection_mode": "Http", "metadata": map[string]any{}, "job_status": nil,
		})
		if w.role == sources.RolePrefill {
			st.PrefillCount++
		} else {
			st.DecodeCount++
		}
	})
	writeJSON(rw, http.StatusOK, map[string]any{"workers": list, "total": len(list), "stats": st})
}

// listWorkers is sglang-router 0.1.x–0.2.x's GET /list_workers.
func (g *replica) listWorkers(rw http.ResponseWriter) {
	urls := []string{}
	g.registered(func(w *worker, _ *workerView) { urls = append(urls, w.baseURL()) })
	writeJSON(rw, http.StatusOK, map[string]any{"urls": urls})
}

// pdLoads is sglang-router 0.1.x's PD GET /get_loads: tokens per engine
// from each worker's own load report, −1 when it does not answer.
func (g *replica) pdLoads(rw http.ResponseWriter) {
	type load struct {
		Engine string `json:"engine"`
		Load   int    `json:"load"`
	}
	out := map[string][]load{"prefill": {}, "decode": {}}
	g.registered(func(w *worker, _ *workerView) {
		n := -1
		if w.up(g.f.simT) {
			if w.p != nil {
				n = w.p.tokens()
			} else {
				n = w.d.tokens()
			}
		}
		if w.role == sources.RolePrefill {
			out["prefill"] = append(out["prefill"], load{"(Prefill@" + w.baseURL() + ")", n})
		} else {
			out["decode"] = append(out["decode"], load{"(Decode@" + w.baseURL() + ")", n})
		}
	})
	writeJSON(rw, http.StatusOK, out)
}
