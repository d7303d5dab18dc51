package sources

import "time"

// Diagnosis is what pdtop concludes from one snapshot: where a slow
// answer's fix goes. It is derived from the snapshot's own figures only
// (sources/diagnose), so every backend — direct scraping, a replay, a
// Prometheus server — reaches the same conclusions from the same data.
type Diagnosis struct {
	// Hits compares the router's predicted prefix hits with the workers'
	// actual hits: one verdict per gateway replica, then one per
	// prefill-side worker.
	Hits []HitVerdict
	// Capacity is the load of each pool in units of work.
	Capacity Capacity
	// Admission is offered → admitted → completed → goodput.
	Admission Admission
	// Stalls lists transfer stalls and decode collapses in progress.
	Stalls []Stall
	// Findings are the conclusions in one line each, most severe first,
	// for the summary line and the text snapshot.
	Findings []Finding
}

// CauseKind names a likely reason for a predicted-vs-actual hit gap.
type CauseKind string

// Causes of a hit gap, from the evidence pdtop has.
const (
	// CauseRestart: the worker restarted (or joined) recently, so its
	// cache is cold while the routers still believe it warm.
	CauseRestart CauseKind = "restart"
	// CauseKVPressure: the worker evicts a large share of what it caches,
	// runs near a full KV pool, or retracts requests.
	CauseKVPressure CauseKind = "kv-pressure"
	// CauseReplicasDisagree: gateway replicas see the worker differently
	// (health, circuit breaker, predicted hit) — independent prefix trees.
	CauseReplicasDisagree CauseKind = "replicas-disagree"
	// CauseSpilled: requests were routed for load, not locality
	// (imbalance events).
	CauseSpilled CauseKind = "spilled-for-load"
	// CauseTakesMisses: compared with its pool peers (no prediction
	// exposed), the worker carries clearly less load at the routers, so
	// cache-aware routing sends it the prompts no worker has cached (a
	// miss goes to the least-loaded worker): a lower hit than its peers is
	// the routing, not its cache. Shown, not alarmed on.
	CauseTakesMisses CauseKind = "takes-misses"
	// CauseNoCacheData: the worker publishes no prefix-cache counters.
	CauseNoCacheData CauseKind = "no-cache-data"
	// CauseLowTraffic: too few prompt tokens in the window to judge.
	CauseLowTraffic CauseKind = "too-little-traffic"
	// CauseUnexplained: the gap is large and no evidence fits.
	CauseUnexplained CauseKind = "unexplained"
)

// Cause is one likely reason with the evidence for it in words, e.g.
// "restarted 40s ago (counter went down)".
type Cause struct {
	Kind     CauseKind
	Evidence string
}

// HitVerdict compares one gateway replica's (Scope "replica") or one
// worker's (Scope "worker") expected prefix hit with the actual one, both
// ratios of sums over the snapshot window.
type HitVerdict struct {
	Scope string // "replica" or "worker"
	ID    string // target ID
	Name  string
	Role  Role
	// Expected is what the actual hit is compared with: the replica's own
	// prediction, the routers' prediction for a worker (no generation
	// labels predictions by worker, so it is the fleet-wide figure of the
	// replicas that pick the worker, weighted by their picks), or — where
	// no prediction is exposed (smg) — the worker's pool peers.
	Expected HitRatio
	// Basis says what Expected is, in words, with its unit.
	Basis string
	// SameScale is false when Expected counts something other than the
	// actual's tokens: the legacy router's per-request ">threshold"
	// booleans. The gap is then shown, but as a different scale.
	SameScale bool
	// Actual is the worker's (or, for a replica, the prefill pool's)
	// cached ÷ prompt tokens.
	Actual HitRatio
	// Gap is Expected − Actual (ratio points, −1…1); GapKnown is false when
	// either side has no traffic or no data.
	Gap      float64
	GapKnown bool
	// Large is true when Gap ≥ Thresholds.HitGap.
	Large bool
	// Causes lists the likely reasons, most likely first. A large gap
	// with no fitting evidence has one CauseUnexplained. Evidence is also
	// listed when the gap is small, so a disagreement or a restart shows
	// before it moves the numbers.
	Causes []Cause
	// Verdict is the reading in words, e.g. "gap 46 pts: restarted 40s ago
	// (cold cache)", "within 20 pts", "too little traffic to judge".
	Verdict string
}

// Range is an estimate with bounds, e.g. a share read from histogram
// buckets: the true value lies in [Lo, Hi]; Est is the interpolated
// point estimate.
type Range struct {
	Present     bool
	Lo, Est, Hi float64
}

// Capacity is the load of each pool in units of work, kept as separate
// accounts so a good hit rate cannot hide a decode or network bottleneck.
type Capacity struct {
	// Prefill counts uncached prompt tokens/s (what prefill computes).
	Prefill PoolLoad
	// Decode counts output tokens/s.
	Decode PoolLoad
	// Transfer is the KV moved from prefill to decode (bytes/s).
	Transfer TransferLoad
	// TargetUtil is the utilisation WorkersNeeded sizes for (0–1).
	TargetUtil float64
	// ColdStarts lists the first minute after a restart, a join or a
	// burst, against the steady state.
	ColdStarts []ColdStart
}

// PoolLoad is one pool's offered work against its measured sustained
// rate.
type PoolLoad struct {
	Role    Role
	Present bool
	// Unit of Offered, Served, PerWorker, Capacity and Headroom, e.g.
	// "uncached tok/s" or "output tok/s".
	Unit string
	// Offered is the work arriving: the gateways' offered requests/s times
	// the pool's mean work per finished request (or Served when no
	// gateway is scraped, noted in Note).
	Offered Reading
	// OfferedTotal is, for prefill, the offered prompt tokens/s cached
	// and uncached together.
	OfferedTotal Reading
	// Served is the work the pool did over the window.
	Served Reading
	// PerWorker is one worker's measured sustained rate (see Method).
	PerWorker Reading
	// Capacity is the pool's sustained rate: PerWorker × workers up.
	Capacity Reading
	// LowerBound is true when no worker was saturated in the span, so
	// Capacity is only the peak seen: the real capacity is at least that.
	LowerBound bool
	// Method says how PerWorker was measured and from how many samples.
	Method string
	// Utilisation is Offered ÷ Capacity (ratio; > 1 = overloaded).
	Utilisation Reading
	// Headroom is Capacity − Offered; negative = over capacity by that
	// much.
	Headroom Reading
	// Workers is the number of workers up; WorkersNeeded how many keep
	// Utilisation at TargetUtil (0 = unknown).
	Workers, WorkersNeeded int
	// ITL is the pool's inter-token latency over the window (decode: the
	// latency at which Capacity was measured).
	ITL Quantiles
	// Note qualifies the figures ("no gateway: offered = served").
	Note string
}

// TransferLoad is the KV-transfer account: bytes/s moved against the
// bandwidth transfers actually achieved.
type TransferLoad struct {
	Present bool
	// Rate is KV bytes/s leaving the prefill pool.
	Rate Reading
	// Links lists each prefill worker's outgoing transfers.
	Links []LinkLoad
	// Busiest is the Busy of the link with the most transfers in flight
	// (Source names the link).
	Busiest Reading
}

// LinkLoad is one prefill worker's KV-transfer load.
type LinkLoad struct {
	Name string
	// Rate is KV bytes/s sent (Δsum of the transfer-size histogram).
	Rate Reading
	// Bandwidth is the speed one transfer achieved (bytes/s): Σ bytes ÷ Σ
	// transfer time, queueing included, else the median per-transfer
	// speed.
	Bandwidth Reading
	// InFlight is Rate ÷ Bandwidth: the mean number of transfers in
	// flight (Little's law), queued ones included. Above 1 transfers
	// overlap: they queue behind each other.
	InFlight Reading
	// Busy is the share of time a transfer is in flight (ratio 0–1):
	// InFlight while transfers do not overlap, capped at 1 when they do
	// (Queued).
	Busy Reading
	// Queued is true when InFlight ≥ 1: the path is full and transfers
	// wait for each other, so Bandwidth is one transfer's share of the
	// path, not the path's capacity.
	Queued bool
	// Headroom is Bandwidth − Rate while transfers do not overlap, 0 when
	// Queued (bytes/s; never negative).
	Headroom Reading
}

// ColdStart is the first minute after a restart, a worker joining or a
// traffic burst, against the steady state.
type ColdStart struct {
	Kind string // "restart", "joined" or "burst"
	Name string // worker name, or "fleet" for a burst
	At   time.Time
	// Metric names the figure compared, e.g. "hit", "TTFT p99".
	Metric string
	Unit   string // "ratio", "s"
	// First is the figure over the first minute after At; Steady is the
	// steady state it is compared with (pool peers now, or the minute
	// before a burst). NaN when unknown.
	First, Steady float64
	// Cold is true when the cache started cold: a restart or a join (a
	// fresh process), or a burst whose hit ratio fell in its first minute.
	// A burst whose hit held or rose is more traffic, not a cold cache.
	Cold bool
	// Explained names, for a burst whose TTFT rose, the other diagnoses
	// over the same span that account for it (a KV path whose transfers
	// queue, a pool near or over capacity, a stall); "" when none.
	Explained string
	Text      string
}

// Admission is the gateways' offered → admitted → completed → goodput,
// summed over replicas; rates per second over the window.
type Admission struct {
	Present bool
	// Offered is requests arriving at the gateways.
	Offered Reading
	// Admitted is the requests that passed admission and were answered:
	// every answer but 429 (rejected at the door) and 408 (timed out in
	// the admission queue). With a queue filling up, it trails Offered.
	Admitted Reading
	// Rejected is by reason: "429", "408", "5xx", "no workers".
	Rejected map[string]Reading
	// RejectedShare is (429 + 408 + 5xx) ÷ all responses over the window
	// (ratio 0–1; sources.RejectedShareOf).
	RejectedShare Reading
	// Retried is retry attempts/s; RetriesExhausted requests/s that ran
	// out of retries.
	Retried, RetriesExhausted Reading
	// Completed is successful answers/s (2xx; worker finished requests
	// when no gateway is scraped).
	Completed Reading
	// Goodput is the completions meeting the SLO.
	Goodput Goodput
}

// Goodput is the share of completions meeting the TTFT and ITL SLOs,
// read from histogram bucket deltas over the window. Each SLO's share is
// bounded by the buckets either side of the threshold; the joint share is
// bounded by Fréchet's inequalities (TTFT and ITL come from separate
// histograms), with the product of the two as the point estimate.
type Goodput struct {
	Present bool
	// Share of completions meeting both SLOs (ratio 0–1).
	Share Range
	// Rate is Share × completed requests/s.
	Rate Range
	// TTFT and ITL are the shares meeting each SLO alone (ITL is
	// token-weighted: each inter-token gap counts once).
	TTFT, ITL Range
	// SLOTTFT and SLOITL are the thresholds (seconds).
	SLOTTFT, SLOITL float64
	// TTFTBucket and ITLBucket are the histogram bucket bounds either side
	// of each threshold (seconds): TTFT.Lo is the share at TTFT ≤
	// TTFTBucket.Lo, TTFT.Hi the share at TTFT ≤ TTFTBucket.Hi, and so for
	// ITL. A threshold between two far-apart bounds is what widens Share.
	TTFTBucket, ITLBucket SLOBucket
	// Method names the histograms used.
	Method string
}

// SLOBucket is the histogram bucket a threshold falls in (seconds): Lo is
// the highest bucket bound at or below it (0 below the first bucket), Hi
// the lowest above it (+Inf beyond the highest finite bound); Lo = Hi
// when the threshold is a bound, so the share is exact.
type SLOBucket struct {
	Present bool
	Lo, Hi  float64
}

// Stall is a transfer stall (work waiting in a transfer or prealloc queue
// with no progress while health checks stay green) or a decode collapse
// (output tokens/s at zero with work queued).
type Stall struct {
	Kind string // "transfer stall" or "decode collapse"
	ID   string
	Name string
	Role Role
	// Since is the first history step of the stall; For its length.
	Since time.Time
	For   time.Duration
	// Queued is the requests waiting now.
	Queued float64
	Detail string
}

// Severity orders findings.
type Severity uint8

// Severities, least to most severe.
const (
	SevInfo Severity = iota
	SevWarn
	SevCrit
)

// Finding is one conclusion in words, e.g. "prefill-0: hit 23% vs
// predicted 79% — restarted 40s ago (cold cache)".
type Finding struct {
	Severity Severity
	// Kind is "cache-gap", "kv-pressure" (a worker's hit fell against its
	// own earlier level while it evicts from a full KV pool, where no
	// gateway exposes a prediction), "transfer-stall", "decode-collapse",
	// "capacity", "rejections", "replicas-disagree" or "cold-start".
	Kind string
	Name string // target name, or "" for the fleet
	Text string
}
