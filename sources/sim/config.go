package sim

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// Gateway generations the simulator can impersonate (see
// reference/gateway.md §1).
const (
	// GatewaySMG is the SGLang/Shepherd Model Gateway (smg_* metrics,
	// sglang-router ≥ 0.3.0 and smg v1.x), the default.
	GatewaySMG = "smg"
	// GatewayLegacy is sglang-router ≤ 0.2.4 (sgl_router_* with
	// cache_hits/cache_misses counters).
	GatewayLegacy = "legacy"
	// Gateway2026 is the experimental 2026 sgl-router (sgl_router_* with
	// overlap-block counters, metrics on the serving port, no /workers).
	Gateway2026 = "2026"
)

// Config describes one simulated fleet. The zero value of every nested
// struct (Workload, Capacity, Router) means "use the defaults"; a non-zero
// nested struct is taken as given, field by field, so that a zero field can
// mean zero (e.g. no follow-ups).
type Config struct {
	// Seed makes the fleet deterministic: the same Seed, Config and
	// sequence of Step calls give byte-identical /metrics bodies.
	Seed int64
	// Prefill is the number of prefill workers at start (default 4).
	Prefill int
	// Decode is the number of decode workers at start (default 4).
	Decode int
	// Replicas is the number of gateway replicas, 1..8 (default 2).
	Replicas int
	// Gateway is the gateway generation: GatewaySMG (default),
	// GatewayLegacy or Gateway2026.
	Gateway string
	// Scenario names a scripted scenario (see Scenarios); "" or "cycle"
	// cycles through all of them.
	Scenario string
	// Model is the served model name, used in model_name / model labels
	// (default "meta-llama/Llama-3.1-8B-Instruct").
	Model string
	// Tick is the simulation step, in simulated time (default 50 ms).
	// Step advances in whole ticks; smaller ticks cost more CPU.
	Tick time.Duration

	Workload Workload
	Capacity Capacity
	Router   Router
}

// Workload is the document-assistant traffic: users ask questions about
// long documents, and some come back with follow-ups in the same
// conversation.
type Workload struct {
	// Rate is the mean arrival rate in requests/s (Poisson). 0 sizes it to
	// the fleet: about half of the prefill and decode capacity.
	Rate float64
	// BurstEvery is the mean simulated time between bursts (exponential);
	// 0 disables bursts.
	BurstEvery time.Duration
	// BurstLength is how long a burst lasts.
	BurstLength time.Duration
	// BurstFactor multiplies Rate during a burst.
	BurstFactor float64
	// Documents is the number of distinct shared documents.
	Documents int
	// PrivateDocuments gives every new conversation its own document, so
	// no prefix is shared between conversations (no reuse at all when
	// FollowUp is 0).
	PrivateDocuments bool
	// DocTokens is the median document length in tokens.
	DocTokens int
	// DocSpread is the log-normal sigma of document lengths (0 = all
	// documents DocTokens long).
	DocSpread float64
	// ZipfS is the Zipf exponent of document popularity (> 0; larger
	// concentrates traffic on fewer documents).
	ZipfS float64
	// SystemPromptTokens is the shared system prompt in front of every
	// prompt (0 = none).
	SystemPromptTokens int
	// QuestionTokens is the mean question suffix in tokens (uniform in
	// ±50 %).
	QuestionTokens int
	// FollowUp is the probability that an arrival is a follow-up turn of an
	// open conversation (reusing the conversation so far as its prefix).
	FollowUp float64
	// MaxTurns closes a conversation after this many turns.
	MaxTurns int
	// OutputTokens is the median output length in tokens.
	OutputTokens int
	// OutputSpread is the log-normal sigma of output lengths (0 = fixed).
	OutputSpread float64
	// OutputCap caps output lengths (max_tokens), in tokens.
	OutputCap int
}

// Capacity is what each worker and each KV-transfer path can do.
type Capacity struct {
	// PrefillTokensPerSec is one prefill worker's throughput for uncached
	// prompt tokens (cached tokens cost nothing).
	PrefillTokensPerSec float64
	// PrefillChunkTokens caps the uncached tokens in one prefill batch
	// (chunked prefill size).
	PrefillChunkTokens int
	// PrefillBatchOverhead is the fixed cost of one prefill forward pass.
	PrefillBatchOverhead time.Duration
	// PrefillKVTokens is a prefill worker's KV pool in tokens; its radix
	// prefix cache lives in whatever running requests do not pin.
	PrefillKVTokens int
	// DecodeTokensPerSec is one decode worker's output tokens/s at a large
	// batch with RefContextTokens of context per request.
	DecodeTokensPerSec float64
	// DecodeStepBase is the fixed cost of one decode step, so that
	// inter-token latency = DecodeStepBase + per-request and per-context
	// terms that grow with batch size and context.
	DecodeStepBase time.Duration
	// RefContextTokens is the context length at which DecodeTokensPerSec
	// holds; longer contexts decode more slowly.
	RefContextTokens int
	// DecodeKVTokens is a decode worker's KV pool in tokens.
	DecodeKVTokens int
	// MaxRunningRequests caps a decode worker's running batch.
	MaxRunningRequests int
	// KVBytesPerToken is the KV-cache size of one token (bytes); it sets
	// the bytes moved per request (131072 ≈ Llama-3.1-8B in bf16).
	KVBytesPerToken float64
	// LinkGBps is the bandwidth of one prefill→decode path in GB/s (1e9
	// bytes/s).
	LinkGBps float64
	// LinkLatency is the fixed latency of one KV transfer.
	LinkLatency time.Duration
	// BootstrapLatency is the handshake time between decode preallocation
	// and the prefill side learning about it.
	BootstrapLatency time.Duration
	// BootstrapTimeout fails a request that waits longer than this in the
	// prefill bootstrap queue (SGLang's default is 300 s; the demo uses
	// 120 s).
	BootstrapTimeout time.Duration
	// TransferTimeout fails a KV transfer that would take longer than this
	// (queueing on its path included; SGLang waits up to 300 s, the demo
	// 30 s so a congested path shows failures within minutes).
	TransferTimeout time.Duration
	// Warmup is how long a restarted or new worker refuses connections
	// before it serves.
	Warmup time.Duration
}

// Router holds the gateway replicas' policy knobs (reference/gateway.md §7).
type Router struct {
	// CacheThreshold is the prefix match ratio above which cache-aware
	// routing sends a request to the matched worker (CLI default 0.3).
	CacheThreshold float64
	// BalanceAbsThreshold and BalanceRelThreshold define "imbalanced":
	// max−min in-flight > abs and max > rel × min (CLI defaults 64, 1.5).
	BalanceAbsThreshold int
	BalanceRelThreshold float64
	// TreeEvictionInterval is how often a replica LRU-trims its own
	// approximate prefix tree.
	TreeEvictionInterval time.Duration
	// MaxTreeTokens is the per-worker size limit of a replica's tree, in
	// tokens (the real default is 2^26 characters; the demo uses less so a
	// long demo's memory stays bounded — still several times what a worker
	// caches, so the router keeps predicting hits the worker evicted).
	MaxTreeTokens int
	// CharsPerToken converts tokens to the characters smg's string tree
	// counts (smg_cache_tree_chars).
	CharsPerToken int
	// BlockSize is the 2026 router's KV block size in tokens.
	BlockSize int
	// MaxConcurrent is a replica's admission limit (requests in flight).
	MaxConcurrent int
	// QueueSize is how many requests may wait for admission; beyond it a
	// replica answers 429 (503 on the 2026 router).
	QueueSize int
	// QueueTimeout answers 408 to a request that waited this long.
	QueueTimeout time.Duration
	// MaxRetries is the number of retries after a failed attempt.
	MaxRetries int
	// RetryBackoff is the first retry delay; each retry multiplies it by
	// 1.5 (±20 % jitter), capped at 5 s.
	RetryBackoff time.Duration
	// HealthInterval is the period of each replica's health checks
	// (smg and legacy; the 2026 router has none).
	HealthInterval time.Duration
	// HealthFailures / HealthSuccesses are the consecutive results that
	// flip a worker unhealthy / healthy.
	HealthFailures  int
	HealthSuccesses int
	// CBFailures consecutive failures open a worker's circuit breaker; it
	// half-opens after CBTimeout and closes after CBSuccesses successes.
	CBFailures  int
	CBTimeout   time.Duration
	CBSuccesses int
	// SessionAffinity makes the load balancer in front of the replicas
	// hash conversations to replicas (the documented HA recommendation);
	// off by default, so follow-ups land on any replica.
	SessionAffinity bool
}

// DefaultWorkload is the document-assistant workload used when
// Config.Workload is zero.
func DefaultWorkload() Workload {
	return Workload{
		BurstEvery:         3 * time.Minute,
		BurstLength:        15 * time.Second,
		BurstFactor:        2,
		Documents:          240,
		DocTokens:          5000,
		DocSpread:          0.5,
		ZipfS:              1.05,
		SystemPromptTokens: 400,
		QuestionTokens:     80,
		FollowUp:           0.45,
		MaxTurns:           8,
		OutputTokens:       250,
		OutputSpread:       0.7,
		OutputCap:          2048,
	}
}

// DefaultCapacity is the per-worker capacity used when Config.Capacity is
// zero: roughly an 8B model in bf16, one modern GPU per prefill worker and
// a little more KV memory per decode worker.
func DefaultCapacity() Capacity {
	return Capacity{
		PrefillTokensPerSec:  20000,
		PrefillChunkTokens:   8192,
		PrefillBatchOverhead: 8 * time.Millisecond,
		PrefillKVTokens:      400000,
		DecodeTokensPerSec:   2000,
		DecodeStepBase:       12 * time.Millisecond,
		RefContextTokens:     8192,
		DecodeKVTokens:       600000,
		MaxRunningRequests:   256,
		KVBytesPerToken:      131072,
		LinkGBps:             25,
		LinkLatency:          2 * time.Millisecond,
		BootstrapLatency:     5 * time.Millisecond,
		BootstrapTimeout:     120 * time.Second,
		TransferTimeout:      30 * time.Second,
		Warmup:               20 * time.Second,
	}
}

// DefaultRouter is the gateway policy used when Config.Router is zero: the
// documented CLI defaults, with demo-friendly timers.
func DefaultRouter() Router {
	return Router{
		CacheThreshold:       0.3,
		BalanceAbsThreshold:  64,
		BalanceRelThreshold:  1.5,
		TreeEvictionInterval: 60 * time.Second,
		MaxTreeTokens:        2 << 20,
		CharsPerToken:        4,
		BlockSize:            16,
		MaxConcurrent:        256,
		QueueSize:            128,
		QueueTimeout:         60 * time.Second,
		MaxRetries:           3,
		RetryBackoff:         50 * time.Millisecond,
		HealthInterval:       10 * time.Second,
		HealthFailures:       3,
		HealthSuccesses:      2,
		CBFailures:           5,
		CBTimeout:            30 * time.Second,
		CBSuccesses:          3,
	}
}

// resolve fills defaults and validates; it never mutates the caller's
// value.
func (c Config) resolve() (Config, error) {
	if c.Prefill == 0 {
		c.Prefill = 4
	}
	if c.Decode == 0 {
		c.Decode = 4
	}
	if c.Replicas == 0 {
		c.Replicas = 2
	}
	if c.Gateway == "" {
		c.Gateway = GatewaySMG
	}
	if c.Scenario == "" {
		c.Scenario = ScenarioCycle
	}
	if c.Model == "" {
		c.Model = "meta-llama/Llama-3.1-8B-Instruct"
	}
	if c.Tick == 0 {
		c.Tick = 50 * time.Millisecond
	}
	if c.Workload == (Workload{}) {
		c.Workload = DefaultWorkload()
	}
	if c.Capacity == (Capacity{}) {
		c.Capacity = DefaultCapacity()
	}
	if c.Router == (Router{}) {
		c.Router = DefaultRouter()
	}
	switch {
	case c.Prefill < 1 || c.Prefill > 512:
		return c, fmt.Errorf("sim: Prefill = %d, want 1..512", c.Prefill)
	case c.Decode < 1 || c.Decode > 512:
		return c, fmt.Errorf("sim: Decode = %d, want 1..512", c.Decode)
	case c.Replicas < 1 || c.Replicas > 8:
		return c, fmt.Errorf("sim: Replicas = %d, want 1..8", c.Replicas)
	case c.Gateway != GatewaySMG && c.Gateway != GatewayLegacy && c.Gateway != Gateway2026:
		return c, fmt.Errorf("sim: unknown gateway generation %q (want %q, %q or %q)",
			c.Gateway, GatewaySMG, GatewayLegacy, Gateway2026)
	case c.Tick < time.Millisecond || c.Tick > time.Second:
		return c, fmt.Errorf("sim: Tick = %v, want 1ms..1s", c.Tick)
	}
	if _, ok := scenarioByName(c.Scenario); !ok {
		names := []string{ScenarioCycle}
		for _, s := range scenarios {
			names = append(names, s.info.Name)
		}
		return c, fmt.Errorf("sim: unknown scenario %q (have %s)", c.Scenario, strings.Join(names, ", "))
	}
	if err := c.Workload.validate(); err != nil {
		return c, err
	}
	if err := c.Capacity.validate(); err != nil {
		return c, err
	}
	return c, c.Router.validate()
}

// autoRate sizes the arrival rate to about half of the fleet's capacity
// for the configured workload, so the default demo runs warm but healthy.
func autoRate(c Config) float64 {
	w, k := c.Workload, c.Capacity
	prompt := float64(w.SystemPromptTokens + w.DocTokens + w.QuestionTokens)
	// Roughly: new conversations pay the document unless it is cached;
	// follow-ups pay the previous answer and the question.
	uncached := prompt
	if !w.PrivateDocuments {
		uncached = 0.35*prompt + float64(w.OutputTokens)
	}
	// Mean of the log-normal output length, capped.
	out := min(float64(w.OutputTokens)*math.Exp(w.OutputSpread*w.OutputSpread/2), float64(w.OutputCap))
	prefillRate := 0.5 * float64(c.Prefill) * k.PrefillTokensPerSec / uncached
	decodeRate := 0.4 * float64(c.Decode) * k.DecodeTokensPerSec / out
	return min(prefillRate, decodeRate)
}
