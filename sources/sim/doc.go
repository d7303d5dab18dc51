// Package sim is pdtop's demo cluster: a deterministic simulation of a
// prefill/decode-disaggregated SGLang fleet behind SGLang gateway
// replicas, served as real Prometheus /metrics endpoints on loopback. pdtop
// scrapes it exactly like a real fleet; it is also the integration-test
// fixture, so everything it exposes uses only the metric names, types and
// labels real SGLang workers and gateways expose (see the reference
// documents), in the gateway generation chosen by Config.Gateway.
//
// # Wiring
//
//	f, err := sim.New(sim.Config{Seed: 1, Prefill: 4, Decode: 4, Scenario: "cycle"})
//	if err != nil { ... }                 // invalid configuration
//	eps, err := f.Serve("127.0.0.1")      // one listener per worker and replica
//	if err != nil { ... }
//	defer f.Close()
//	go f.Run(ctx, speed)                  // simulated time = wall time × speed
//	// eps[i].MetricsURL are the scrape targets; gateways list workers at
//	// BaseURL+"/workers" (smg, legacy). f.Endpoints() follows scale-out.
//
// Tests call Step instead of Run: simulated time advances only in Step, in
// whole ticks, and the same seed and total stepped time always give the
// same /metrics bodies.
//
// # Model
//
// Clients: Poisson arrivals (Workload.Rate, with exponential bursts) of a
// document assistant. A new conversation asks about a Zipf-popular
// document (thousands of tokens, behind a shared system prompt); a
// follow-up extends an open conversation with the previous answer and a
// new question, so its prompt reuses the whole conversation as a prefix.
// Prefixes are hash chains of segments (system prompt, document, turn),
// never token arrays. Outputs are log-normal, capped at max_tokens.
//
// Gateway replicas (1–8) sit behind a load balancer (random, or
// conversation affinity). Each replica admits up to MaxConcurrent requests,
// queues QueueSize more (408 after QueueTimeout), and rejects the rest (429;
// 503 on the 2026 router). It routes prefill with the documented
// cache_aware rule on its own approximate prefix tree and its own in-flight
// counts — imbalanced (max−min > 64 and max > 1.5×min) → least loaded;
// else match ratio > 0.3 → the worker holding the longest match; else
// least loaded — inserting the prompt for the chosen worker and LRU-trimming
// the tree on its own schedule, never learning about worker eviction,
// restarts or other replicas' routing. Decode goes by power of two choices.
// A failed attempt (refused connection, bootstrap or transfer timeout)
// is retried on a new pair with exponential backoff. Each replica runs its
// own health checks (smg, legacy) and circuit breakers.
//
// Both legs go out at once, as in SGLang PD. A decode worker preallocates
// KV for the prompt when its pool allows (SGLang's new_token_ratio
// estimate of what running requests will still generate); only then does
// the prefill side's bootstrap finish and the request enter the prefill
// waiting queue. Prefill batches (FCFS, up to the chunk size) cost time
// only for tokens not in the worker's radix cache, a finite cache with LRU
// eviction of unpinned leaves. The KV then crosses the prefill→decode path:
// bytes = prompt tokens × KVBytesPerToken, serialised per path at
// LinkGBps, failing after TransferTimeout. The decode worker runs a batch
// whose step time is a fixed cost plus per-request and per-context-token
// terms (DecodeTokensPerSec holds at RefContextTokens), so inter-token
// latency grows with batch size and context; when the pool runs out it
// retracts the requests with the least progress. Restarts empty caches,
// zero counters, change the scheduler pid (the pid label of
// sglang:num_retracted_reqs) and refuse connections while warming up.
//
// The clock is a fixed tick (default 50 ms); inside a tick, events
// (arrivals, retries, transfer completions) and worker passes keep exact
// timestamps, so latencies are not quantised to the tick. All randomness
// comes from seeded math/rand/v2 streams, one per concern.
//
// Scenarios script the conditions (see Scenarios for each one's expected
// signature); the default cycles through all of them.
package sim
