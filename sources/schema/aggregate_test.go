package schema

import (
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/pdtop/pdtop/sources"
)

// Label and value rules on small inline bodies.
func TestAggregationRules(t *testing.T) {
	cases := []struct {
		name   string
		body   string
		points map[pk]float64
		hists  map[sources.Signal]wantHist
		source map[sources.Signal]string
	}{
		{
			// expfmt keeps both copies of a repeated series; never sum them.
			name: "exact duplicate series counted once",
			body: "# TYPE sglang:num_running_reqs gauge\n" +
				"sglang:num_running_reqs{model_name=\"m\"} 3\nsglang:num_running_reqs{model_name=\"m\"} 3\n",
			points: map[pk]float64{{sources.SigRunning, ""}: 3},
		},
		{
			name: "NaN rank skipped, not propagated",
			body: "# TYPE sglang:token_usage gauge\n" +
				"sglang:token_usage{dp_rank=\"0\",model_name=\"m\"} NaN\nsglang:token_usage{dp_rank=\"1\",model_name=\"m\"} 0.4\n",
			points: map[pk]float64{{sources.SigKVUsage, ""}: 0.4},
		},
		{
			// An alias whose every series is unusable is not "present":
			// the next alias wins.
			name: "all-NaN alias falls through to the next",
			body: "# TYPE sglang:token_usage gauge\nsglang:token_usage{model_name=\"m\"} NaN\n" +
				"# TYPE sglang:kv_cache_usage_perc gauge\nsglang:kv_cache_usage_perc{model_name=\"m\"} 0.7\n",
			points: map[pk]float64{{sources.SigKVUsage, ""}: 0.7},
			source: map[sources.Signal]string{sources.SigKVUsage: "sglang:kv_cache_usage_perc"},
		},
		{
			// A family with an unexpected TYPE is not accepted.
			name: "wrong type skipped",
			body: "# TYPE sglang:token_usage histogram\nsglang:token_usage_bucket{le=\"+Inf\"} 1\nsglang:token_usage_sum 1\nsglang:token_usage_count 1\n" +
				"# TYPE sglang:kv_cache_usage_perc gauge\nsglang:kv_cache_usage_perc{model_name=\"m\"} 0.7\n",
			points: map[pk]float64{{sources.SigKVUsage, ""}: 0.7},
		},
		{
			name: "priority breakdown without a total is summed",
			body: "# TYPE sglang:num_queue_reqs gauge\n" +
				"sglang:num_queue_reqs{model_name=\"m\",priority=\"1\"} 4\nsglang:num_queue_reqs{model_name=\"m\",priority=\"2\"} 3\n",
			points: map[pk]float64{{sources.SigWaiting, ""}: 7},
		},
		{
			name: "cache_source total preferred over a breakdown",
			body: "# TYPE sglang:cached_tokens_total counter\n" +
				"sglang:cached_tokens_total{cache_source=\"device\",model_name=\"m\"} 30\n" +
				"sglang:cached_tokens_total{cache_source=\"host\",model_name=\"m\"} 10\n" +
				"sglang:cached_tokens_total{cache_source=\"total\",model_name=\"m\"} 40\n",
			points: map[pk]float64{{sources.SigCachedTokens, ""}: 40},
		},
		{
			name: "pid gauges take the max, never the sum",
			body: "# TYPE sglang:num_retracted_reqs gauge\n" +
				"sglang:num_retracted_reqs{dp_rank=\"0\",model_name=\"m\",pid=\"11\"} 2\n" +
				"sglang:num_retracted_reqs{dp_rank=\"1\",model_name=\"m\",pid=\"12\"} 5\n" +
				"sglang:num_retracted_reqs{dp_rank=\"1\",model_name=\"m\",pid=\"9\"} 4\n",
			points: map[pk]float64{{sources.SigRetractedGauge, ""}: 5},
		},
		{
			// Buckets are keyed by the parsed bound: "1"="1.0", "+inf"="+Inf".
			name: "le spellings merge",
			body: "# TYPE sglang:time_to_first_token_seconds histogram\n" +
				"sglang:time_to_first_token_seconds_bucket{is_streaming=\"false\",le=\"1.0\"} 2\n" +
				"sglang:time_to_first_token_seconds_bucket{is_streaming=\"false\",le=\"+Inf\"} 3\n" +
				"sglang:time_to_first_token_seconds_sum{is_streaming=\"false\"} 2.5\n" +
				"sglang:time_to_first_token_seconds_count{is_streaming=\"false\"} 3\n" +
				"sglang:time_to_first_token_seconds_bucket{is_streaming=\"true\",le=\"1\"} 5\n" +
				"sglang:time_to_first_token_seconds_bucket{is_streaming=\"true\",le=\"+inf\"} 7\n" +
				"sglang:time_to_first_token_seconds_sum{is_streaming=\"true\"} 6\n" +
				"sglang:time_to_first_token_seconds_count{is_streaming=\"true\"} 7\n",
			hists: map[sources.Signal]wantHist{
				sources.SigTTFT: {bounds: []float64{1, inf}, counts: []float64{7, 10}, sum: 8.5, count: 10},
			},
		},
		{
			// No +Inf bucket: _count stands in for it.
			name: "missing +Inf filled from _count",
			body: "# TYPE sglang:queue_time_seconds histogram\n" +
				"sglang:queue_time_seconds_bucket{model_name=\"m\",le=\"0.1\"} 4\n" +
				"sglang:queue_time_seconds_bucket{model_name=\"m\",le=\"1\"} 9\n" +
				"sglang:queue_time_seconds_sum{model_name=\"m\"} 3\n" +
				"sglang:queue_time_seconds_count{model_name=\"m\"} 10\n",
			hists: map[sources.Signal]wantHist{
				sources.SigQueueTime: {bounds: []float64{0.1, 1, inf}, counts: []float64{4, 9, 10}, sum: 3, count: 10},
			},
		},
		{
			// dp ranks with different bucket layouts (overridden flags):
			// union of bounds, each series read as a step function.
			name: "different bounds merge over their union",
			body: "# TYPE sglang:queue_time_seconds histogram\n" +
				"sglang:queue_time_seconds_bucket{dp_rank=\"0\",le=\"1\"} 2\n" +
				"sglang:queue_time_seconds_bucket{dp_rank=\"0\",le=\"+Inf\"} 4\n" +
				"sglang:queue_time_seconds_sum{dp_rank=\"0\"} 5\n" +
				"sglang:queue_time_seconds_count{dp_rank=\"0\"} 4\n" +
				"sglang:queue_time_seconds_bucket{dp_rank=\"1\",le=\"0.5\"} 1\n" +
				"sglang:queue_time_seconds_bucket{dp_rank=\"1\",le=\"2\"} 3\n" +
				"sglang:queue_time_seconds_bucket{dp_rank=\"1\",le=\"+Inf\"} 3\n" +
				"sglang:queue_time_seconds_sum{dp_rank=\"1\"} 2\n" +
				"sglang:queue_time_seconds_count{dp_rank=\"1\"} 3\n",
			hists: map[sources.Signal]wantHist{
				sources.SigQueueTime: {bounds: []float64{0.5, 1, 2, inf}, counts: []float64{1, 3, 5, 7}, sum: 7, count: 7},
			},
		},
		{
			// No _count line: the +Inf bucket is the count.
			name: "missing _count read from +Inf",
			body: "# TYPE sglang:e2e_request_latency_seconds histogram\n" +
				"sglang:e2e_request_latency_seconds_bucket{le=\"1\"} 4\n" +
				"sglang:e2e_request_latency_seconds_bucket{le=\"+Inf\"} 6\n" +
				"sglang:e2e_request_latency_seconds_sum 5\n",
			hists: map[sources.Signal]wantHist{
				sources.SigE2E: {bounds: []float64{1, inf}, counts: []float64{4, 6}, sum: 5, count: 6},
			},
		},
		{
			// A lost _sum line is unknown, not 0: one such series makes the
			// merged histogram unusable for this scrape.
			name: "missing _sum makes the histogram absent",
			body: "# TYPE sglang:e2e_request_latency_seconds histogram\n" +
				"sglang:e2e_request_latency_seconds_bucket{is_streaming=\"true\",le=\"+Inf\"} 6\n" +
				"sglang:e2e_request_latency_seconds_count{is_streaming=\"true\"} 6\n" +
				"sglang:e2e_request_latency_seconds_bucket{is_streaming=\"false\",le=\"+Inf\"} 2\n" +
				"sglang:e2e_request_latency_seconds_sum{is_streaming=\"false\"} 1\n" +
				"sglang:e2e_request_latency_seconds_count{is_streaming=\"false\"} 2\n",
		},
		{
			name: "summary without _sum is absent",
			body: "# TYPE smg_router_tpot_seconds summary\n" +
				"smg_router_tpot_seconds{quantile=\"0.5\"} 0.02\nsmg_router_tpot_seconds_count 9\n",
		},
		{
			// Summaries from several label sets: Sum and Count add up, no Bounds.
			name: "summaries merge to sum and count",
			body: "# TYPE smg_router_ttft_seconds summary\n" +
				"smg_router_ttft_seconds{model=\"a\",quantile=\"0.5\"} 0.2\n" +
				"smg_router_ttft_seconds_sum{model=\"a\"} 10\nsmg_router_ttft_seconds_count{model=\"a\"} 50\n" +
				"smg_router_ttft_seconds{model=\"b\",quantile=\"0.5\"} 0.4\n" +
				"smg_router_ttft_seconds_sum{model=\"b\"} 4\nsmg_router_ttft_seconds_count{model=\"b\"} 10\n",
			hists: map[sources.Signal]wantHist{sources.SigGWTTFT: {sum: 14, count: 60}},
		},
		{
			// All dp ranks of a worker re-exported as −1: no point at all.
			name: "all-sentinel worker absent",
			body: "# TYPE smg_engine_cache_hit_rate gauge\n" +
				"smg_engine_cache_hit_rate{worker=\"http://a:1\",model=\"m\",dp_rank=\"0\"} -1\n" +
				"smg_engine_cache_hit_rate{worker=\"http://a:1\",model=\"m\",dp_rank=\"1\"} -1\n" +
				"smg_engine_cache_hit_rate{worker=\"http://b:1\",model=\"m\",dp_rank=\"0\"} 0.3\n",
			points: map[pk]float64{{sources.SigGWEngineHitLastBatch, "b:1"}: 0.3},
		},
		{
			// A gauge-histogram is TYPE gauge with le labels: not a histogram.
			name: "gauge-histogram is not a histogram",
			body: "# TYPE sglang:kv_transfer_latency_ms gauge\n" +
				"sglang:kv_transfer_latency_ms{le=\"10\",model_name=\"m\"} 4\n",
			points: map[pk]float64{{sources.SigKVXferLatencyGauge, ""}: 4},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			obs := mapBody(t, []byte(c.body))
			wantPoints(t, obs, c.points)
			wantHists(t, obs, c.hists)
			wantSources(t, obs, c.source)
			checkSourcesMatch(t, obs)
		})
	}
}

func TestWanted(t *testing.T) {
	for _, name := range []string{
		"sglang:num_running_reqs", "sglang_num_running_reqs", "sglang:num_prefill_infight_queue_reqs",
		"sglang:num_requests_running", "sglang:queue_req", "sglang:time_per_output_token_seconds",
		"sglang:prompt_tokens_total_created", "sglang:prompt_tokens_created", "sglang_prompt_tokens_created",
		"sglang:num_paused_reqs", "sglang:startup_time_seconds", "sglang:engine_startup_time",
		"smg_worker_health", "smg_http_inflight_request_age_count", "sgl_router_requests_total",
		"sgl_router_workers", "sgl_router_kv_block_size", "sgl_router_cb_state", "sgl_router_cache_hits_total",
	} {
		if !Wanted(name) {
			t.Errorf("Wanted(%q) = false", name)
		}
	}
	for _, name := range []string{
		"", "sglang:per_stage_req_latency_seconds", "sglang:kvcache_transfer_latency", "sglang:num_prefill_inflight_reqs",
		"sglang:prefill_queue_depth", "sglang:routing_key_running_req_count", "go_gc_duration_seconds",
		"smg_worker_retry_backoff_seconds", "sglang:NUM_RUNNING_REQS", "sglang-num_running_reqs",
	} {
		if Wanted(name) {
			t.Errorf("Wanted(%q) = true", name)
		}
	}
}

// Structural checks on the tables: scopes, kinds, keys and spellings agree.
func TestTablesConsistent(t *testing.T) {
	check := func(ad *adapter, scope sources.Scope) {
		seen := map[sources.Signal]bool{}
		for _, r := range ad.rules {
			info := r.sig.Info()
			if info.Scope != scope {
				t.Errorf("%s: %v has scope %v", ad.generation, r.sig, info.Scope)
			}
			if info.Keyed != (r.keyLabel != "") || (r.keyLabel != "") != (r.keyFn != nil) {
				t.Errorf("%s: %v keyed=%v but keyLabel=%q", ad.generation, r.sig, info.Keyed, r.keyLabel)
			}
			isHist := info.Kind == sources.Histogram
			if types := r.acceptedTypes(); isHist != (types&tHist != 0 && types&tScalar == 0) {
				t.Errorf("%s: %v kind %v accepts %b", ad.generation, r.sig, info.Kind, types)
			}
			if len(r.aliases) == 0 {
				t.Errorf("%s: %v has no aliases", ad.generation, r.sig)
			}
			for _, a := range r.aliases {
				for _, n := range a.names {
					if !Wanted(n) {
						t.Errorf("%s: %q not Wanted", ad.generation, n)
					}
					if scope == sources.ScopeWorker && !strings.HasPrefix(n, "sglang") {
						t.Errorf("worker alias %q", n)
					}
				}
				if scope == sources.ScopeWorker && (len(a.names) != 2 || a.names[1] != strings.Replace(a.names[0], ":", "_", 1)) {
					t.Errorf("worker alias %v lacks the sglang_ spelling", a.names)
				}
			}
			// A signal may appear twice only as the gauge/histogram branch
			// of one family; otherwise once per adapter.
			if seen[r.sig] {
				t.Errorf("%s: %v mapped twice", ad.generation, r.sig)
			}
			seen[r.sig] = true
		}
	}
	check(&workerAdapter, sources.ScopeWorker)
	check(&smgAdapter, sources.ScopeGateway)
	check(&legacyAdapter, sources.ScopeGateway)
	check(&router2026Adapter, sources.ScopeGateway)
}

// Map reads its input only and is safe to call from many goroutines.
func TestMapConcurrentAndPure(t *testing.T) {
	files := []string{"worker_2026_prefill.prom", "smg_full.prom", "g1_024_full.prom", "g3_2026.prom"}
	type in struct {
		file string
		want *sources.Observation
	}
	var ins []in
	for _, f := range files {
		ins = append(ins, in{f, mapFile(t, f)})
	}
	var wg sync.WaitGroup
	for _, x := range ins {
		fams, declared := load(t, x.file)
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 20 {
					if got := Map(fams, declared); !reflect.DeepEqual(got, x.want) {
						t.Errorf("%s: mapping changed between calls", x.file)
						return
					}
				}
			}()
		}
	}
	wg.Wait()
}
