package schema

import (
	"strings"

	dto "github.com/prometheus/client_model/go"
)

// kind is what a body was recognised as.
type kind uint8

const (
	kindNone kind = iota
	kindWorker
	kindSMG
	kindLegacy
	kind2026
)

// Fingerprint families (gateway.md §1). Only names matter, so a family
// declared with no samples (the 2026 router prints HELP/TYPE for empty
// families) counts; that is what Map's declared argument is for.
var (
	// router2026Markers, plus any sgl_router_kv_* family, mean G3.
	router2026Markers = map[string]bool{
		"sgl_router_worker_requests_total":       true,
		"sgl_router_workers":                     true,
		"sgl_router_cache_aware_decisions_total": true,
		"sgl_router_responses_total":             true,
	}
	// router2026KV lists the documented sgl_router_kv_* families, so that
	// Wanted keeps them for callers that fingerprint from parsed families.
	router2026KV = []string{
		"sgl_router_kv_tree_blocks", "sgl_router_kv_block_size", "sgl_router_kv_events_total",
		"sgl_router_kv_event_batches_lost_total", "sgl_router_kv_tree_maintained",
	}
	// legacyMarkers mean G1 (checked after the requests_total label test).
	legacyMarkers = map[string]bool{
		"sgl_router_processed_requests_total": true,
		"sgl_router_cache_hits_total":         true,
		"sgl_router_cb_state":                 true,
	}
)

// fingerprint recognises a body, first match wins: any smg_ family → SMG;
// a G3 marker → 2026 router; sgl_router_requests_total labelled
// {route,method} or {worker_url,…} → 2026 router, {route} only → legacy; a
// G1 marker → legacy; any sglang: / sglang_ family → SGLang worker; else
// nothing known.
func fingerprint(fams map[string]*dto.MetricFamily, declared []string) kind {
	var smg, g3, g1, sglang bool
	note := func(name string) {
		switch {
		case strings.HasPrefix(name, "smg_"):
			smg = true
		case strings.HasPrefix(name, "sgl_router_"):
			if router2026Markers[name] || strings.HasPrefix(name, "sgl_router_kv_") {
				g3 = true
			} else if legacyMarkers[name] {
				g1 = true
			}
		case strings.HasPrefix(name, "sglang:"), strings.HasPrefix(name, "sglang_"):
			sglang = true
		}
	}
	for name := range fams {
		note(name)
	}
	for _, name := range declared {
		note(name)
	}
	switch {
	case smg:
		return kindSMG
	case g3:
		return kind2026
	}
	if k := requestsTotalKind(fams["sgl_router_requests_total"]); k != kindNone {
		return k
	}
	switch {
	case g1:
		return kindLegacy
	case sglang:
		return kindWorker
	}
	return kindNone
}

// requestsTotalKind tells the router generations apart by the label set of
// sgl_router_requests_total: {route,method} (2026 after PR #29467) or
// {worker_url,model_id,mode,outcome} (2026 before it) → 2026; {route} only
// → legacy; no series → undecided.
func requestsTotalKind(mf *dto.MetricFamily) kind {
	if mf == nil {
		return kindNone
	}
	routeOnly := false
	for _, s := range mf.Metric {
		_, route := lookup(s, "route")
		_, method := lookup(s, "method")
		_, worker := lookup(s, "worker_url")
		switch {
		case route && method, worker:
			return kind2026
		case route:
			routeOnly = true
		}
	}
	if routeOnly {
		return kindLegacy
	}
	return kindNone
}
