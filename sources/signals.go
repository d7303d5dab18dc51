package sources

// Signal is a canonical figure pdtop understands, independent of the engine
// or gateway generation that exposed it. sources/schema maps raw metric
// names to signals; everything downstream speaks only signals.
type Signal uint16

// Kind says how a signal's samples combine over time.
type Kind uint8

// Kinds of signal.
const (
	// Gauge: the latest value is the figure.
	Gauge Kind = iota + 1
	// Counter: monotonic; figures are reset-aware increases and rates.
	Counter
	// Histogram: cumulative buckets (or only sum/count for summaries);
	// figures are quantiles of bucket deltas over the window.
	Histogram
)

// Scope says who exposes a signal.
type Scope uint8

// Scopes of signals.
const (
	ScopeWorker  Scope = iota + 1 // an engine worker's /metrics
	ScopeGateway                  // a gateway replica's /metrics
)

// Worker signals. Units are in each constant's comment; rates of counters
// are per second.
const (
	SigInvalid Signal = iota

	// Worker gauges.
	SigRunning            // requests in the running batch (req); sum over dp_rank
	SigWaiting            // requests in the waiting queue (req)
	SigBootstrapQueue     // prefill: requests waiting for the decode handshake / prealloc (req)
	SigInflightQueue      // prefill: requests whose KV transfer to decode is in flight (req)
	SigPreallocQueue      // decode: requests waiting for KV preallocation (req)
	SigTransferQueue      // decode: KV allocated, waiting for the transfer to finish (req)
	SigKVUsage            // KV pool usage, ratio 0–1 (excludes evictable radix tokens); max over dp_rank
	SigKVCapacity         // KV pool capacity (tokens); sum over dp_rank, dedup tp_rank
	SigKVUsedTokens       // used, non-evictable KV tokens (tokens)
	SigKVEvictableTokens  // radix-evictable cached KV tokens (tokens)
	SigPendingPrealloc    // decode: tokens queued for prealloc ÷ capacity (ratio 0–1)
	SigGenThroughputGauge // engine's own decode throughput estimate (tok/s; sticky when idle)
	SigCacheHitLastBatch  // last prefill batch's hit ratio (ratio 0–1); never a window figure
	SigKVXferLatencyGauge // KV-transfer latency, old gauge form (ms)
	SigKVXferSpeedGauge   // KV-transfer speed, old gauge form (GB/s)
	SigKVXferSizeGauge    // KV bytes per request, old gauge form (MB)
	SigMaxRunningRequests // admission limit (req), constant
	SigRetractedGauge     // retractions since the last decode log (req); per pid, never summed
	SigEngineStartupTime  // startup constant (s); a changed value marks a restart

	// Worker counters.
	SigPromptTokens           // prompt tokens of finished requests (tokens); Σ is_streaming
	SigGenerationTokens       // output tokens (tokens)
	SigCachedTokens           // prompt tokens served from the prefix cache (tokens); Σ cache_source; absent = 0 next to prompt tokens
	SigRequests               // finished requests (req)
	SigAborted                // aborted requests (req)
	SigRetractions            // retracted requests (req), KV pressure
	SigTransferFailed         // KV-transfer failures (req)
	SigBootstrapFailed        // bootstrap handshake failures (req)
	SigPrefillRetries         // prefill retries
	SigKVXferTimeouts         // KV-transfer timeout observations (events); Σ stage
	SigRealtimePrefillCompute // prefill tokens computed (tokens), realtime_tokens_total{mode=prefill_compute}
	SigRealtimePrefillCache   // prefill tokens served from cache (tokens), realtime_tokens_total{mode=prefill_cache}
	SigRealtimeDecode         // decode tokens (tokens), realtime_tokens_total{mode=decode}
	SigEffectiveInput         // prefill_effective_tokens_total{mode=input} (tokens)
	SigEffectiveDeviceHit     // prefill_effective_tokens_total{mode=device_hit} (tokens)
	SigEffectiveHostHit       // prefill_effective_tokens_total{mode=host_hit|storage_hit} (tokens)
	SigEvictedTokens          // device KV slots freed by eviction (tokens)

	// Worker histograms.
	SigTTFT          // time to first token at the worker (s)
	SigITL           // inter-token latency, token-weighted (s); or legacy TPOT
	SigQueueTime     // time in the waiting queue (s)
	SigE2E           // end-to-end request latency at the worker (s)
	SigKVXferLatency // KV-transfer latency, histogram form (ms)
	SigKVXferSpeed   // KV-transfer speed, histogram form (GB/s)
	SigKVXferSize    // KV bytes per request, histogram form (MB)

	// Gateway counters.
	SigGWOffered          // requests arriving at the gateway (req)
	SigGWResponses        // responses, keyed by status class "2xx" "429" "408" "4xx" "5xx" (req)
	SigGWRetries          // retry attempts (retries)
	SigGWRetriesExhausted // requests that ran out of retries (req)
	SigGWErrors           // router request errors, keyed by error type (req)
	SigGWCacheHits        // legacy router: requests whose prefix match ratio > threshold (req)
	SigGWCacheMisses      // legacy router: balanced-mode requests below the threshold (req)
	SigGWQueryBlocks      // 2026 router: prompt blocks looked up (blocks)
	SigGWMatchedBlocks    // 2026 router: best overlap blocks over all workers (blocks)
	SigGWSelectedBlocks   // 2026 router: overlap blocks on the selected worker (blocks)
	SigGWImbalanceEvents  // requests routed while load was imbalanced (req)
	SigGWRateLimited      // requests rejected by the gateway's rate limiter (req)
	SigGWWorkerPicks      // per worker (Key = WorkerKey): picks / dispatches / successful outcomes (req)

	// Gateway gauges.
	SigGWInFlight           // requests in flight at this replica (req)
	SigGWWorkerInFlight     // per worker (Key): this replica's own in-flight count (req)
	SigGWWorkerHealth       // per worker (Key): 1 healthy, 0 unhealthy; -1 sentinel = removed (absent)
	SigGWWorkerCB           // per worker (Key): circuit breaker 0 closed, 1 open, 2 half-open
	SigGWWorkerKVBlocks     // per worker (Key): router's KV-tree blocks (blocks), 2026 router
	SigGWEngineHitLastBatch // per worker (Key): worker's last-batch hit ratio re-exported by smg (ratio)
	SigGWTreeSize           // approximate prefix-tree size (chars or tokens)
	SigGWAdmissionQueue     // requests parked in the admission queue (req)

	// Gateway histograms.
	SigGWLatency // request duration at the gateway (s)
	SigGWTTFT    // TTFT at the gateway (s)
	SigGWTPOT    // per-request mean time per output token at the gateway (s)

	// Worker counters added after the first cut (appended so earlier values
	// keep their numbers).
	SigForwardSeconds // GPU time spent in forward passes (s); Σ category, Σ dp_rank; rate = busy GPUs

	// SigKVResident is derived by the store, not read from a metric: KV
	// cache residency, (SigKVUsedTokens + SigKVEvictableTokens) ÷
	// SigKVCapacity (ratio 0–1; max over a pool). KV usage leaves out the radix cache's evictable
	// tokens, so a prefill worker whose pool is full of cached prefixes,
	// and evicting them, reads "KV usage 0%"; residency shows it full.
	SigKVResident

	numSignals
)

// NumSignals is the number of defined signals (for sizing arrays).
const NumSignals = int(numSignals)

// SignalInfo describes a signal: how it combines, its unit and a short name.
type SignalInfo struct {
	Name  string // short display name, e.g. "running"
	Kind  Kind
	Scope Scope
	Unit  string // "req", "tokens", "s", "ms", "GB/s", "MB", "ratio", "blocks", ...
	Keyed bool   // samples carry a Key (worker address, status class, error type)
}

var signalInfo = [numSignals]SignalInfo{
	SigRunning:            {"running", Gauge, ScopeWorker, "req", false},
	SigWaiting:            {"waiting", Gauge, ScopeWorker, "req", false},
	SigBootstrapQueue:     {"bootstrap queue", Gauge, ScopeWorker, "req", false},
	SigInflightQueue:      {"in-flight (transfer) queue", Gauge, ScopeWorker, "req", false},
	SigPreallocQueue:      {"prealloc queue", Gauge, ScopeWorker, "req", false},
	SigTransferQueue:      {"transfer queue", Gauge, ScopeWorker, "req", false},
	SigKVUsage:            {"KV usage", Gauge, ScopeWorker, "ratio", false},
	SigKVCapacity:         {"KV capacity", Gauge, ScopeWorker, "tokens", false},
	SigKVUsedTokens:       {"KV used", Gauge, ScopeWorker, "tokens", false},
	SigKVEvictableTokens:  {"KV evictable", Gauge, ScopeWorker, "tokens", false},
	SigPendingPrealloc:    {"pending prealloc", Gauge, ScopeWorker, "ratio", false},
	SigGenThroughputGauge: {"gen throughput (engine)", Gauge, ScopeWorker, "tok/s", false},
	SigCacheHitLastBatch:  {"hit (last batch)", Gauge, ScopeWorker, "ratio", false},
	SigKVXferLatencyGauge: {"KV xfer latency", Gauge, ScopeWorker, "ms", false},
	SigKVXferSpeedGauge:   {"KV xfer speed", Gauge, ScopeWorker, "GB/s", false},
	SigKVXferSizeGauge:    {"KV xfer size", Gauge, ScopeWorker, "MB", false},
	SigMaxRunningRequests: {"max running", Gauge, ScopeWorker, "req", false},
	SigRetractedGauge:     {"retracted (last log)", Gauge, ScopeWorker, "req", false},
	SigEngineStartupTime:  {"engine startup time", Gauge, ScopeWorker, "s", false},

	SigPromptTokens:           {"prompt tokens", Counter, ScopeWorker, "tokens", false},
	SigGenerationTokens:       {"output tokens", Counter, ScopeWorker, "tokens", false},
	SigCachedTokens:           {"cached tokens", Counter, ScopeWorker, "tokens", false},
	SigRequests:               {"finished requests", Counter, ScopeWorker, "req", false},
	SigAborted:                {"aborted", Counter, ScopeWorker, "req", false},
	SigRetractions:            {"retractions", Counter, ScopeWorker, "req", false},
	SigTransferFailed:         {"transfer failures", Counter, ScopeWorker, "req", false},
	SigBootstrapFailed:        {"bootstrap failures", Counter, ScopeWorker, "req", false},
	SigPrefillRetries:         {"prefill retries", Counter, ScopeWorker, "retries", false},
	SigKVXferTimeouts:         {"KV xfer timeouts", Counter, ScopeWorker, "events", false},
	SigRealtimePrefillCompute: {"prefill computed", Counter, ScopeWorker, "tokens", false},
	SigRealtimePrefillCache:   {"prefill from cache", Counter, ScopeWorker, "tokens", false},
	SigRealtimeDecode:         {"decode tokens", Counter, ScopeWorker, "tokens", false},
	SigEffectiveInput:         {"effective input", Counter, ScopeWorker, "tokens", false},
	SigEffectiveDeviceHit:     {"device hit", Counter, ScopeWorker, "tokens", false},
	SigEffectiveHostHit:       {"host/storage hit", Counter, ScopeWorker, "tokens", false},
	SigEvictedTokens:          {"evicted", Counter, ScopeWorker, "tokens", false},

	SigTTFT:          {"TTFT", Histogram, ScopeWorker, "s", false},
	SigITL:           {"ITL", Histogram, ScopeWorker, "s", false},
	SigQueueTime:     {"queue time", Histogram, ScopeWorker, "s", false},
	SigE2E:           {"e2e latency", Histogram, ScopeWorker, "s", false},
	SigKVXferLatency: {"KV xfer latency", Histogram, ScopeWorker, "ms", false},
	SigKVXferSpeed:   {"KV xfer speed", Histogram, ScopeWorker, "GB/s", false},
	SigKVXferSize:    {"KV xfer size", Histogram, ScopeWorker, "MB", false},

	SigGWOffered:          {"offered", Counter, ScopeGateway, "req", false},
	SigGWResponses:        {"responses", Counter, ScopeGateway, "req", true},
	SigGWRetries:          {"retries", Counter, ScopeGateway, "retries", false},
	SigGWRetriesExhausted: {"retries exhausted", Counter, ScopeGateway, "req", false},
	SigGWErrors:           {"errors", Counter, ScopeGateway, "req", true},
	SigGWCacheHits:        {"predicted hits", Counter, ScopeGateway, "req", false},
	SigGWCacheMisses:      {"predicted misses", Counter, ScopeGateway, "req", false},
	SigGWQueryBlocks:      {"query blocks", Counter, ScopeGateway, "blocks", false},
	SigGWMatchedBlocks:    {"matched blocks", Counter, ScopeGateway, "blocks", false},
	SigGWSelectedBlocks:   {"selected blocks", Counter, ScopeGateway, "blocks", false},
	SigGWImbalanceEvents:  {"imbalance events", Counter, ScopeGateway, "req", false},
	SigGWRateLimited:      {"rate limited", Counter, ScopeGateway, "req", false},
	SigGWWorkerPicks:      {"picks", Counter, ScopeGateway, "req", true},

	SigGWInFlight:           {"in flight", Gauge, ScopeGateway, "req", false},
	SigGWWorkerInFlight:     {"router in-flight", Gauge, ScopeGateway, "req", true},
	SigGWWorkerHealth:       {"health", Gauge, ScopeGateway, "state", true},
	SigGWWorkerCB:           {"circuit", Gauge, ScopeGateway, "state", true},
	SigGWWorkerKVBlocks:     {"router KV-tree blocks", Gauge, ScopeGateway, "blocks", true},
	SigGWEngineHitLastBatch: {"engine hit (last batch)", Gauge, ScopeGateway, "ratio", true},
	SigGWTreeSize:           {"tree size", Gauge, ScopeGateway, "entries", false},
	SigGWAdmissionQueue:     {"admission queue", Gauge, ScopeGateway, "req", false},

	SigGWLatency: {"gateway latency", Histogram, ScopeGateway, "s", false},
	SigGWTTFT:    {"gateway TTFT", Histogram, ScopeGateway, "s", false},
	SigGWTPOT:    {"gateway TPOT", Histogram, ScopeGateway, "s", false},

	SigForwardSeconds: {"GPU forward time", Counter, ScopeWorker, "s", false},

	SigKVResident: {"KV resident", Gauge, ScopeWorker, "ratio", false},
}

// Info returns the signal's description; the zero SignalInfo for an
// unknown signal.
func (s Signal) Info() SignalInfo {
	if int(s) >= len(signalInfo) {
		return SignalInfo{}
	}
	return signalInfo[s]
}

// String returns the signal's short display name.
func (s Signal) String() string {
	if n := s.Info().Name; n != "" {
		return n
	}
	return "invalid"
}

// AllSignals lists every defined signal in declaration order.
func AllSignals() []Signal {
	out := make([]Signal, 0, NumSignals-1)
	for s := Signal(1); s < numSignals; s++ {
		out = append(out, s)
	}
	return out
}
