package sim

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
)

// Label sets of an SGLang worker (reference/sglang-worker.md §2): S for the
// scheduler, T for the tokenizer, R for the radix cache.
var (
	labelsS = []string{"model_name", "engine_type", "tp_rank", "pp_rank", "moe_ep_rank"}
	labelsT = []string{"model_name"}
)

func withLabel(base []string, extra ...string) []string {
	return append(append([]string(nil), base...), extra...)
}

func desc(name, help string, labels []string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, labels, nil)
}

// Worker metric families, with SGLang's own HELP text.
var (
	dRunning     = desc("sglang:num_running_reqs", "The number of running requests.", labelsS)
	dQueue       = desc("sglang:num_queue_reqs", "The number of requests in the waiting queue.", labelsS)
	dBootQ       = desc("sglang:num_prefill_bootstrap_queue_reqs", "The number of requests in the prefill bootstrap queue.", labelsS)
	dInflightQ   = desc("sglang:num_prefill_inflight_queue_reqs", "The number of requests in the prefill inflight queue.", labelsS)
	dPreallocQ   = desc("sglang:num_decode_prealloc_queue_reqs", "The number of requests in the decode prealloc queue.", labelsS)
	dTransferQ   = desc("sglang:num_decode_transfer_queue_reqs", "The number of requests in the decode transfer queue.", labelsS)
	dTokenUsage  = desc("sglang:token_usage", "The token usage.", labelsS)
	dMaxTokens   = desc("sglang:max_total_num_tokens", "Maximum total number of tokens in the KV cache pool.", labelsS)
	dUsedTokens  = desc("sglang:num_used_tokens", "The number of used tokens.", labelsS)
	dKVAvail     = desc("sglang:kv_available_tokens", "Number of free token slots in the KV cache pool.", labelsS)
	dKVEvict     = desc("sglang:kv_evictable_tokens", "Number of evictable (radix-cached) token slots in the KV cache pool.", labelsS)
	dKVUsed      = desc("sglang:kv_used_tokens", "Number of actively used token slots in the KV cache pool.", labelsS)
	dPending     = desc("sglang:pending_prealloc_token_usage", "The token usage for pending preallocated tokens (not preallocated yet).", labelsS)
	dGenTput     = desc("sglang:gen_throughput", "The generation throughput (token/s).", labelsS)
	dHitRate     = desc("sglang:cache_hit_rate", "The prefix cache hit rate.", labelsS)
	dRetractedG  = desc("sglang:num_retracted_reqs", "The number of retracted requests.", withLabel(labelsS, "pid"))
	dRealtime    = desc("sglang:realtime_tokens_total", "Total number of tokens processed (updated on each log interval). mode: prefill_compute, prefill_cache, decode.", withLabel(labelsS, "mode"))
	dRetractedC  = desc("sglang:num_retracted_requests_total", "Total number of retracted requests.", labelsS)
	dXferFailed  = desc("sglang:num_transfer_failed_reqs_total", "The number of transfer failed requests.", labelsS)
	dBootFailed  = desc("sglang:num_bootstrap_failed_reqs_total", "The number of bootstrap failed requests.", labelsS)
	dTimeouts    = desc("sglang:kv_transfer_timeouts_total", "Number of KV transfer timeout observations by stage.", withLabel(labelsS, "stage"))
	dEvicted     = desc("sglang:evicted_tokens_total", "The number of device KV token slots freed by eviction, regardless of whether the data was backed up to host (see sglang:hicache_backup_tokens_total) or destroyed (see sglang:hicache_dropped_tokens_total).", []string{"cache_type"})
	dQueueTime   = desc("sglang:queue_time_seconds", "Histogram of queueing time in seconds.", labelsS)
	dKVLatency   = desc("sglang:kv_transfer_latency_ms", "Histogram of KV cache transfer latency in ms.", labelsS)
	dKVSpeed     = desc("sglang:kv_transfer_speed_gb_s", "Histogram of KV cache transfer speed in GB/s.", labelsS)
	dKVMB        = desc("sglang:kv_transfer_total_mb", "Histogram of KV cache transfer size in MB.", labelsS)
	dPromptTok   = desc("sglang:prompt_tokens_total", "Number of prefill tokens processed.", withLabel(labelsT, "is_streaming"))
	dGenTok      = desc("sglang:generation_tokens_total", "Number of generation tokens processed.", withLabel(labelsT, "is_streaming"))
	dCachedTok   = desc("sglang:cached_tokens_total", "Number of cached prompt tokens by source (device/host/storage).", withLabel(labelsT, "cache_source"))
	dNumReqs     = desc("sglang:num_requests_total", "Number of requests processed.", withLabel(labelsT, "is_streaming"))
	dAborted     = desc("sglang:num_aborted_requests_total", "Number of requests aborted.", labelsT)
	dTTFT        = desc("sglang:time_to_first_token_seconds", "Histogram of time to first token in seconds.", withLabel(labelsT, "is_streaming"))
	dITL         = desc("sglang:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", labelsT)
	dE2E         = desc("sglang:e2e_request_latency_seconds", "Histogram of End-to-end request latency in seconds", withLabel(labelsT, "is_streaming"))
	radixCacheTy = "RadixCache"
)

// workerCollector exposes one worker incarnation's state at scrape time.
type workerCollector struct {
	w     *worker
	stats *workerStats
}

// Describe sends nothing: the collector is unchecked, its families depend
// on what has happened so far (as with prometheus_client's labelled
// children, a counter appears once first incremented).
func (c *workerCollector) Describe(chan<- *prometheus.Desc) {}

func (c *workerCollector) Collect(ch chan<- prometheus.Metric) {
	w, s := c.w, c.stats
	w.f.mu.RLock()
	defer w.f.mu.RUnlock()
	cfg := w.f.cfg
	sl := []string{cfg.Model, w.engineType(), "0", "0", "0"}
	gauge := func(d *prometheus.Desc, v float64, extra ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, append(sl, extra...)...)
	}
	counter := func(d *prometheus.Desc, v float64, labels ...string) {
		if v > 0 {
			ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
		}
	}
	histo := func(d *prometheus.Desc, h *hist, labels ...string) {
		if h.count() > 0 {
			ch <- h.metric(d, labels...)
		}
	}

	g := c.gauges()
	gauge(dRunning, g.running)
	gauge(dQueue, g.queue)
	gauge(dBootQ, g.boot)
	gauge(dInflightQ, g.inflight)
	gauge(dPreallocQ, g.prealloc)
	gauge(dTransferQ, g.transfer)
	gauge(dTokenUsage, g.used/g.pool)
	gauge(dMaxTokens, g.pool)
	gauge(dUsedTokens, g.used)
	gauge(dKVAvail, g.pool-g.used-g.evictable)
	gauge(dKVEvict, g.evictable)
	gauge(dKVUsed, g.used)
	gauge(dPending, g.pending/g.pool)
	gauge(dGenTput, s.genThroughput)
	gauge(dHitRate, s.cacheHitRate)
	gauge(dRetractedG, s.retractedGauge, strconv.Itoa(w.pid))

	counter(dRealtime, s.rtPrefillCompute, append(sl, "prefill_compute")...)
	counter(dRealtime, s.rtPrefillCache, append(sl, "prefill_cache")...)
	counter(dRealtime, s.rtDecode, append(sl, "decode")...)
	counter(dRetractedC, s.retracted, sl...)
	counter(dXferFailed, s.transferFailed, sl...)
	counter(dBootFailed, s.bootstrapFailed, sl...)
	// Pre-seeded at 0 for both stages, as SGLang does.
	ch <- prometheus.MustNewConstMetric(dTimeouts, prometheus.CounterValue, s.timeoutBootstrap, append(sl, "bootstrap")...)
	ch <- prometheus.MustNewConstMetric(dTimeouts, prometheus.CounterValue, s.timeoutTransfer, append(sl, "transfer")...)
	counter(dEvicted, s.evicted, radixCacheTy)
	histo(dQueueTime, &s.queueTime, sl...)
	histo(dKVLatency, &s.kvLatency, sl...)
	histo(dKVSpeed, &s.kvSpeed, sl...)
	histo(dKVMB, &s.kvMB, sl...)

	// Tokenizer metrics: every simulated request streams.
	counter(dPromptTok, s.promptTokens, cfg.Model, "true")
	counter(dGenTok, s.genTokens, cfg.Model, "true")
	counter(dCachedTok, s.cachedTokens, cfg.Model, "device")
	counter(dNumReqs, s.requests, cfg.Model, "true")
	counter(dAborted, s.aborted, cfg.Model)
	histo(dTTFT, &s.ttft, cfg.Model, "true")
	histo(dITL, &s.itl, cfg.Model)
	histo(dE2E, &s.e2e, cfg.Model, "true")
}

// workerGauges are the scheduler gauges, read from the live queues (as if
// the scheduler had just logged).
type workerGauges struct {
	running, queue, boot, inflight, prealloc, transfer float64
	pool, used, evictable, pending                     float64
}

func (c *workerCollector) gauges() workerGauges {
	var g workerGauges
	if p := c.w.p; p != nil {
		g.running = float64(len(p.batch))
		g.queue = float64(len(p.waitQ))
		g.boot = float64(len(p.bootQ))
		g.inflight = float64(len(p.inflight))
		g.pool = float64(p.cache.capacity)
		g.used = float64(p.cache.locked)
		g.evictable = float64(p.cache.evictable())
	}
	if d := c.w.d; d != nil {
		g.running = float64(len(d.running))
		g.queue = float64(len(d.waitQ) + len(d.retractQ))
		g.prealloc = float64(len(d.preallocQ))
		g.transfer = float64(len(d.transferQ))
		g.pool = float64(d.pool)
		g.used = float64(d.kvUsed)
		for _, r := range d.preallocQ {
			g.pending += float64(r.prompt)
		}
	}
	return g
}
