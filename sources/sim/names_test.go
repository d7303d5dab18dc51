package sim

import (
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
)

// The simulator may expose only names and labels that real SGLang workers
// and gateways expose (reference/sglang-worker.md, reference/gateway.md).
// These tables are written from those documents, independently of the
// simulator's own descriptors.

type famSpec struct {
	typ    dto.MetricType
	labels string // sorted, comma-separated label names (le excluded)
}

const (
	counter   = dto.MetricType_COUNTER
	gauge     = dto.MetricType_GAUGE
	histogram = dto.MetricType_HISTOGRAM
	sLabels   = "engine_type,model_name,moe_ep_rank,pp_rank,tp_rank"
)

var workerFamilies = map[string]famSpec{
	"sglang:num_running_reqs":                 {gauge, sLabels},
	"sglang:num_queue_reqs":                   {gauge, sLabels},
	"sglang:num_prefill_bootstrap_queue_reqs": {gauge, sLabels},
	"sglang:num_prefill_inflight_queue_reqs":  {gauge, sLabels},
	"sglang:num_decode_prealloc_queue_reqs":   {gauge, sLabels},
	"sglang:num_decode_transfer_queue_reqs":   {gauge, sLabels},
	"sglang:token_usage":                      {gauge, sLabels},
	"sglang:max_total_num_tokens":             {gauge, sLabels},
	"sglang:num_used_tokens":                  {gauge, sLabels},
	"sglang:kv_available_tokens":              {gauge, sLabels},
	"sglang:kv_evictable_tokens":              {gauge, sLabels},
	"sglang:kv_used_tokens":                   {gauge, sLabels},
	"sglang:pending_prealloc_token_usage":     {gauge, sLabels},
	"sglang:gen_throughput":                   {gauge, sLabels},
	"sglang:cache_hit_rate":                   {gauge, sLabels},
	"sglang:num_retracted_reqs":               {gauge, "engine_type,model_name,moe_ep_rank,pid,pp_rank,tp_rank"},
	"sglang:realtime_tokens_total":            {counter, "engine_type,mode,model_name,moe_ep_rank,pp_rank,tp_rank"},
	"sglang:num_retracted_requests_total":     {counter, sLabels},
	"sglang:num_transfer_failed_reqs_total":   {counter, sLabels},
	"sglang:num_bootstrap_failed_reqs_total":  {counter, sLabels},
	"sglang:kv_transfer_timeouts_total":       {counter, "engine_type,model_name,moe_ep_rank,pp_rank,stage,tp_rank"},
	"sglang:evicted_tokens_total":             {counter, "cache_type"},
	"sglang:queue_time_seconds":               {histogram, sLabels},
	"sglang:kv_transfer_latency_ms":           {histogram, sLabels},
	"sglang:kv_transfer_speed_gb_s":           {histogram, sLabels},
	"sglang:kv_transfer_total_mb":             {histogram, sLabels},
	"sglang:prompt_tokens_total":              {counter, "is_streaming,model_name"},
	"sglang:generation_tokens_total":          {counter, "is_streaming,model_name"},
	"sglang:cached_tokens_total":              {counter, "cache_source,model_name"},
	"sglang:num_requests_total":               {counter, "is_streaming,model_name"},
	"sglang:num_aborted_requests_total":       {counter, "model_name"},
	"sglang:time_to_first_token_seconds":      {histogram, "is_streaming,model_name"},
	"sglang:inter_token_latency_seconds":      {histogram, "model_name"},
	"sglang:e2e_request_latency_seconds":      {histogram, "is_streaming,model_name"},
}

var gatewayFamilies = map[string]map[string]famSpec{
	GatewaySMG: {
		"smg_http_requests_total":             {counter, "method,path"},
		"smg_http_responses_total":            {counter, "error_code,path,status_code"},
		"smg_http_request_duration_seconds":   {histogram, "method,path"},
		"smg_http_connections_active":         {gauge, ""},
		"smg_http_rate_limit_total":           {counter, "result"},
		"smg_admission_queue_depth":           {gauge, ""},
		"smg_admission_queue_rejected_total":  {counter, "reason"},
		"smg_admission_inflight":              {gauge, ""},
		"smg_router_requests_total":           {counter, "backend_type,connection_mode,endpoint,model,router_type,streaming"},
		"smg_router_request_duration_seconds": {histogram, "backend_type,connection_mode,endpoint,model,router_type"},
		"smg_router_request_errors_total":     {counter, "backend_type,connection_mode,endpoint,error_type,model,router_type"},
		"smg_worker_pool_size":                {gauge, "connection_mode,model,worker_type"},
		"smg_worker_requests_active":          {gauge, "worker"},
		"smg_worker_health":                   {gauge, "worker"},
		"smg_worker_selection_total":          {counter, "connection_mode,model,policy,worker_type"},
		"smg_worker_cb_state":                 {gauge, "worker"},
		"smg_worker_cb_transitions_total":     {counter, "from,to,worker"},
		"smg_worker_cb_outcomes_total":        {counter, "outcome,worker"},
		"smg_worker_cb_consecutive_failures":  {gauge, "worker"},
		"smg_worker_cb_consecutive_successes": {gauge, "worker"},
		"smg_worker_retries_total":            {counter, "endpoint,worker_type"},
		"smg_worker_retries_exhausted_total":  {counter, "endpoint,worker_type"},
		"smg_cache_tree_chars":                {gauge, "model"},
		"smg_cache_tree_tenants":              {gauge, "model,tree"},
	},
	GatewayLegacy: {
		"sgl_router_http_responses_total":        {counter, "status_code"},
		"sgl_router_pd_requests_total":           {counter, "route"},
		"sgl_router_pd_request_duration_seconds": {histogram, "route"},
		"sgl_router_pd_prefill_requests_total":   {counter, "worker"},
		"sgl_router_pd_decode_requests_total":    {counter, "worker"},
		"sgl_router_pd_errors_total":             {counter, "error_type"},
		"sgl_router_pd_prefill_errors_total":     {counter, "worker"},
		"sgl_router_pd_decode_errors_total":      {counter, "worker"},
		"sgl_router_retries_total":               {counter, "route"},
		"sgl_router_retries_exhausted_total":     {counter, "route"},
		"sgl_router_cb_state":                    {gauge, "worker"},
		"sgl_router_cb_state_transitions_total":  {counter, "from,to,worker"},
		"sgl_router_cb_outcomes_total":           {counter, "outcome,worker"},
		"sgl_router_worker_health":               {gauge, "worker"},
		"sgl_router_running_requests":            {gauge, "worker"},
		"sgl_router_processed_requests_total":    {counter, "worker"},
		"sgl_router_policy_decisions_total":      {counter, "policy,worker"},
		"sgl_router_cache_hits_total":            {counter, ""},
		"sgl_router_cache_misses_total":          {counter, ""},
		"sgl_router_load_balancing_events_total": {counter, ""},
		"sgl_router_max_load":                    {gauge, ""},
		"sgl_router_min_load":                    {gauge, ""},
		"sgl_router_active_workers":              {gauge, ""},
	},
	Gateway2026: {
		"sgl_router_requests_total":                 {counter, "method,route"},
		"sgl_router_responses_total":                {counter, "method,route,status_code"},
		"sgl_router_worker_requests_total":          {counter, "mode,model_id,outcome,worker_url"},
		"sgl_router_request_duration_seconds":       {histogram, "model_id"},
		"sgl_router_ttft_seconds":                   {histogram, "model_id"},
		"sgl_router_workers":                        {gauge, "mode"},
		"sgl_router_worker_health":                  {gauge, "worker_url"},
		"sgl_router_worker_cb_state":                {gauge, "worker_url"},
		"sgl_router_worker_inflight_requests":       {gauge, "worker_url"},
		"sgl_router_cache_aware_decisions_total":    {counter, "decision,model_id"},
		"sgl_router_cache_aware_query_blocks_total": {counter, "decision,model_id"},
		"sgl_router_matched_overlap_blocks_total":   {counter, "decision,model_id"},
		"sgl_router_selected_overlap_blocks_total":  {counter, "decision,model_id"},
		"sgl_router_kv_tree_blocks":                 {gauge, "dp_rank,tier,worker_url"},
		"sgl_router_kv_block_size":                  {gauge, ""},
	},
}

func labelNames(m *dto.Metric) string {
	var ns []string
	for _, l := range m.GetLabel() {
		if l.GetName() != "le" && l.GetName() != "quantile" {
			ns = append(ns, l.GetName())
		}
	}
	slices.Sort(ns)
	return strings.Join(ns, ",")
}

func checkFamilies(t *testing.T, who string, fams families, allowed map[string]famSpec, seen map[string]bool) {
	t.Helper()
	for name, fam := range fams {
		spec, ok := allowed[name]
		if !ok {
			t.Errorf("%s exposes %q, a name no real target of its kind exposes", who, name)
			continue
		}
		seen[name] = true
		if fam.GetType() != spec.typ {
			t.Errorf("%s: %s is a %v, want %v", who, name, fam.GetType(), spec.typ)
		}
		for _, m := range fam.GetMetric() {
			if got := labelNames(m); got != spec.labels {
				t.Errorf("%s: %s has labels {%s}, want {%s}", who, name, got, spec.labels)
				break
			}
		}
	}
}

func TestExposesOnlyRealNamesAndLabels(t *testing.T) {
	for gen, allowed := range gatewayFamilies {
		t.Run(gen, func(t *testing.T) {
			t.Parallel()
			// Congestion (failures, timeouts), a restart and a removal
			// exercise the rarer families too.
			f, eps := serveFleet(t, Config{Seed: 5, Prefill: 3, Decode: 3, Gateway: gen, Scenario: ScenarioCongestedLink})
			f.Step(100 * time.Second)
			f.Restart("decode-2")
			f.RemoveWorker("prefill-2")
			f.Step(100 * time.Second)
			seenW, seenG := map[string]bool{}, map[string]bool{}
			for _, e := range eps {
				if e.Name == "prefill-2" {
					continue // removed: its endpoint is closing
				}
				fams := scrapeOne(t, e.MetricsURL)
				if strings.HasPrefix(e.Name, "gateway") {
					checkFamilies(t, e.Name, fams, allowed, seenG)
				} else {
					checkFamilies(t, e.Name, fams, workerFamilies, seenW)
				}
			}
			// The fleet must also expose what pdtop's panels need.
			for _, name := range []string{"sglang:num_prefill_bootstrap_queue_reqs", "sglang:cached_tokens_total",
				"sglang:kv_transfer_latency_ms", "sglang:num_transfer_failed_reqs_total", "sglang:inter_token_latency_seconds",
				"sglang:num_decode_prealloc_queue_reqs", "sglang:evicted_tokens_total", "sglang:num_retracted_reqs"} {
				if !seenW[name] {
					t.Errorf("no worker exposed %s", name)
				}
			}
			if len(seenG) < len(allowed)*2/3 {
				t.Errorf("gateways exposed only %d of the %d families of their generation", len(seenG), len(allowed))
			}
		})
	}
}
