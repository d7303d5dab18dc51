package schema

import (
	"math"
	"sort"
	"strings"

	dto "github.com/prometheus/client_model/go"

	"github.com/pdtop/pdtop/sources"
)

// The SGLang worker adapter: every name from sglang-worker.md §3–§7 and
// engines.md §6 that feeds a canonical signal, newest name first. Every name
// is accepted as "sglang:x" and "sglang_x" (gateway /engine_metrics).
//
// Label rules (sglang-worker.md §2), applied by the table walker:
//   - series differing only in tp_rank / pp_rank / moe_ep_rank /
//     attn_cp_rank / pid are copies: one is kept (the max; for histograms the
//     copy with the most observations), never summed;
//   - what remains (dp_rank, is_streaming, cache_source, stage, category…)
//     is summed, except ratios (max over dp_rank) and the old KV-transfer
//     gauges (mean over dp_rank);
//   - where `priority` exists only priority="" (the total) is used; where
//     cached_tokens_total carries cache_source="total" next to a breakdown,
//     only the total is used.
var workerAdapter = adapter{
	generation:  GenSGLangWorker,
	engine:      EngineSGLang,
	role:        sources.RoleUnknown,
	dedupeRanks: true,
	prefer:      []prefer{{label: "priority", total: ""}, {label: "cache_source", total: "total"}},
	rules: []rule{
		// Scheduler gauges: requests and queues, summed over dp_rank.
		{sig: sources.SigRunning, aliases: sgl("num_running_reqs", "num_requests_running")},
		{sig: sources.SigWaiting, aliases: sgl("num_queue_reqs", "num_requests_waiting", "queue_req")},
		{sig: sources.SigBootstrapQueue, aliases: sgl("num_prefill_bootstrap_queue_reqs", "num_prefill_prealloc_queue_reqs")},
		{sig: sources.SigInflightQueue, aliases: sgl("num_prefill_inflight_queue_reqs", "num_prefill_infight_queue_reqs")},
		{sig: sources.SigPreallocQueue, aliases: sgl("num_decode_prealloc_queue_reqs")},
		{sig: sources.SigTransferQueue, aliases: sgl("num_decode_transfer_queue_reqs")},
		// KV pool: ratios take the max over dp_rank; token counts and
		// capacities are one value per dp_rank, summed.
		{sig: sources.SigKVUsage, aliases: sgl("token_usage", "kv_cache_usage_perc"), agg: aggMax},
		{sig: sources.SigKVCapacity, aliases: sgl("max_total_num_tokens")},
		{sig: sources.SigKVUsedTokens, aliases: sgl("num_used_tokens", "kv_used_tokens")},
		{sig: sources.SigKVEvictableTokens, aliases: sgl("kv_evictable_tokens")},
		{sig: sources.SigPendingPrealloc, aliases: sgl("pending_prealloc_token_usage"), agg: aggMax},
		// Per-scheduler decode tok/s (sticky when idle), summed over dp_rank.
		{sig: sources.SigGenThroughputGauge, aliases: sgl("gen_throughput")},
		{sig: sources.SigCacheHitLastBatch, aliases: sgl("cache_hit_rate"), agg: aggMax, v03Percent: true},
		// KV transfer, old gauge form (before PR #19009): only a TYPE gauge
		// family feeds these; the histogram form feeds SigKVXfer* below.
		{sig: sources.SigKVXferLatencyGauge, aliases: sgl("kv_transfer_latency_ms"), types: tGaugeOnly, agg: aggMean},
		{sig: sources.SigKVXferSpeedGauge, aliases: sgl("kv_transfer_speed_gb_s"), types: tGaugeOnly, agg: aggMean},
		{sig: sources.SigKVXferSizeGauge, aliases: sgl("kv_transfer_total_mb"), types: tGaugeOnly, agg: aggMean},
		{sig: sources.SigMaxRunningRequests, aliases: sgl("max_running_requests")},
		// pid gauge (one series per process, dead ones kept): never summed.
		{sig: sources.SigRetractedGauge, aliases: sgl("num_retracted_reqs"), agg: aggMax},
		{sig: sources.SigEngineStartupTime, aliases: sgl("engine_startup_time"), agg: aggMax},

		// Counters. Tokenizer counters have no rank labels; their
		// is_streaming / cache_source / stage / category series are summed.
		{sig: sources.SigPromptTokens, aliases: sgl("prompt_tokens_total")},
		{sig: sources.SigGenerationTokens, aliases: sgl("generation_tokens_total")},
		// Absent until the first hit; the store counts a missing
		// cached_tokens_total next to a present prompt_tokens_total as 0.
		{sig: sources.SigCachedTokens, aliases: sgl("cached_tokens_total")},
		{sig: sources.SigRequests, aliases: sgl("num_requests_total")},
		{sig: sources.SigAborted, aliases: sgl("num_aborted_requests_total")},
		// total_retracted_reqs (≈Oct 2025) is a cumulative count exposed as
		// a gauge; it feeds the counter signal only when the counter is absent.
		{sig: sources.SigRetractions, aliases: sgl("num_retracted_requests_total", "total_retracted_reqs")},
		{sig: sources.SigTransferFailed, aliases: sgl("num_transfer_failed_reqs_total")},
		{sig: sources.SigBootstrapFailed, aliases: sgl("num_bootstrap_failed_reqs_total")},
		{sig: sources.SigPrefillRetries, aliases: sgl("num_prefill_retries_total")},
		{sig: sources.SigKVXferTimeouts, aliases: sgl("kv_transfer_timeouts_total")},
		{sig: sources.SigRealtimePrefillCompute, aliases: where(sgl("realtime_tokens_total"), "mode", "prefill_compute")},
		{sig: sources.SigRealtimePrefillCache, aliases: where(sgl("realtime_tokens_total"), "mode", "prefill_cache")},
		{sig: sources.SigRealtimeDecode, aliases: where(sgl("realtime_tokens_total"), "mode", "decode")},
		{sig: sources.SigEffectiveInput, aliases: where(sgl("prefill_effective_tokens_total"), "mode", "input")},
		{sig: sources.SigEffectiveDeviceHit, aliases: where(sgl("prefill_effective_tokens_total"), "mode", "device_hit")},
		{sig: sources.SigEffectiveHostHit, aliases: where(sgl("prefill_effective_tokens_total"), "mode", "host_hit", "storage_hit")},
		{sig: sources.SigEvictedTokens, aliases: sgl("evicted_tokens_total")},
		{sig: sources.SigForwardSeconds, aliases: sgl("forward_execution_seconds_total", "gpu_execution_seconds_total")},

		// Histograms: buckets with equal `le` are summed over is_streaming
		// and dp_rank; TPOT (removed ≈Apr 2025) stands in for ITL.
		{sig: sources.SigTTFT, aliases: sgl("time_to_first_token_seconds")},
		{sig: sources.SigITL, aliases: sgl("inter_token_latency_seconds", "time_per_output_token_seconds")},
		{sig: sources.SigQueueTime, aliases: sgl("queue_time_seconds")},
		{sig: sources.SigE2E, aliases: sgl("e2e_request_latency_seconds")},
		{sig: sources.SigKVXferLatency, aliases: sgl("kv_transfer_latency_ms"), types: tHistogram},
		{sig: sources.SigKVXferSpeed, aliases: sgl("kv_transfer_speed_gb_s"), types: tHistogram},
		{sig: sources.SigKVXferSize, aliases: sgl("kv_transfer_total_mb"), types: tHistogram},
	},
}

// Families read for restart detection rather than for signals.
var (
	// pidFamilies carry a `pid` label (multiprocess mode "all").
	pidFamilies = sgl("num_retracted_reqs", "num_paused_reqs", "prefetch_occupied_ratio")
	// startupConst is a startup constant keyed by its exposed name.
	startupConst = sgl("engine_startup_time")
	// startupPhases is a startup constant per `phase`, keyed name{phase="…"}.
	startupPhases = sgl("startup_time_seconds")
)

// mapWorker maps an SGLang worker body (or one worker's share of a
// gateway's /engine_metrics).
func mapWorker(fams map[string]*dto.MetricFamily) *sources.Observation {
	m := newMapper(&workerAdapter, fams)
	m.probeRole = true
	m.run()
	switch {
	case m.sawPrefill && !m.sawDecode:
		m.obs.EngineRole = sources.RolePrefill
	case m.sawDecode && !m.sawPrefill:
		m.obs.EngineRole = sources.RoleDecode
	}
	m.obs.PIDs = workerPIDs(fams)
	m.obs.StartMarkers = workerStartMarkers(fams)
	return m.obs
}

// workerPIDs returns the distinct scheduler pids on pid-labelled gauges,
// sorted; nil when there are none.
func workerPIDs(fams map[string]*dto.MetricFamily) []string {
	var out []string
	for _, a := range pidFamilies {
		for _, name := range a.names {
			mf := fams[name]
			if mf == nil {
				continue
			}
			for _, s := range mf.Metric {
				if p := labelValue(s, "pid"); p != "" && !contains(out, p) {
					out = append(out, p)
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

// workerStartMarkers collects values that change only when the process
// restarts: `<name>_created` families (min over series, keyed by family
// name), engine_startup_time (max over ranks, keyed by name) and
// startup_time_seconds per phase (max over ranks, keyed name{phase="…"}).
// nil when there are none.
func workerStartMarkers(fams map[string]*dto.MetricFamily) map[string]float64 {
	var out map[string]float64
	set := func(k string, v float64, keepMin bool) {
		if out == nil {
			out = make(map[string]float64, 4)
		}
		old, ok := out[k]
		switch {
		case !ok, keepMin && v < old, !keepMin && v > old:
			out[k] = v
		}
	}
	for name, mf := range fams {
		if !strings.HasSuffix(name, "_created") || !wanted[name] {
			continue
		}
		for _, s := range mf.Metric {
			if v, ok := scalarValue(s); ok && !math.IsNaN(v) {
				set(name, v, true)
			}
		}
	}
	for _, a := range startupConst {
		for _, name := range a.names {
			if mf := fams[name]; mf != nil {
				for _, s := range mf.Metric {
					if v, ok := scalarValue(s); ok && !math.IsNaN(v) {
						set(name, v, false)
					}
				}
			}
		}
	}
	for _, a := range startupPhases {
		for _, name := range a.names {
			if mf := fams[name]; mf != nil {
				for _, s := range mf.Metric {
					if v, ok := scalarValue(s); ok && !math.IsNaN(v) {
						set(name+`{phase="`+labelValue(s, "phase")+`"}`, v, false)
					}
				}
			}
		}
	}
	return out
}
