package sources

import (
	"math"
	"time"
)

// Health is a target's scrape state.
type Health uint8

// Target health states.
const (
	// Pending: not scraped successfully yet and no failure yet.
	Pending Health = iota
	// Up: the last scrape succeeded.
	Up
	// Stale: the last scrape failed; the last good values are still shown,
	// marked with their age.
	Stale
	// Down: failing and no good data was ever received (or it expired).
	Down
)

// String returns "pending", "up", "stale" or "down".
func (h Health) String() string {
	switch h {
	case Up:
		return "up"
	case Stale:
		return "stale"
	case Down:
		return "down"
	}
	return "pending"
}

// Reading is one derived figure. For gauges Value is the latest value; for
// counters it is the per-second rate over the window (reset-aware, never
// negative, absent until two samples from the same process exist).
// Present false means "not exposed by this target/version" or "not enough
// data yet" — never show it as 0.
type Reading struct {
	Present bool
	Value   float64
	// Increase is a counter's reset-aware increase over the window (in the
	// signal's unit); 0 for gauges.
	Increase float64
	// Source is the raw metric name that fed the figure.
	Source string
}

// Absent is the zero Reading.
var Absent = Reading{}

// Quantiles summarises a latency (or size/speed) distribution over the window.
type Quantiles struct {
	Present bool
	// P50, P90, P99 are linear-interpolated bucket quantiles of the bucket
	// deltas over the window (NaN when only a mean is known).
	P50, P90, P99 float64
	// P50Beyond, P90Beyond and P99Beyond are true when that quantile's
	// rank falls in the +Inf bucket: the quantile is only known to exceed
	// the highest finite bucket bound, which P50/P90/P99 then hold (shown
	// as ">5s"; Prometheus' histogram_quantile returns the same bound).
	P50Beyond, P90Beyond, P99Beyond bool
	// Mean is Δsum/Δcount over the window (or the gauge value for the old
	// gauge form of the KV-transfer family).
	Mean float64
	// Count is the number of observations in the window.
	Count float64
	// Form says where the figures came from: "histogram", "summary"
	// (mean only) or "gauge" (last value only).
	Form string
	// Unit of the values ("s", "ms", "GB/s", "MB").
	Unit string
	// Source is the raw metric name.
	Source string
	// Buckets are the window's cumulative bucket counts (histogram form
	// only; nil otherwise), for shares below a threshold (ShareAtMost).
	Buckets []Bucket
}

// Bucket is one cumulative histogram bucket over the window: Count
// observations were ≤ UpperBound (+Inf for the last).
type Bucket struct {
	UpperBound float64
	Count      float64
}

// HitRatio is a prefix-hit figure computed as a ratio of sums over the
// window: Hit ÷ Total, both increases of counters.
type HitRatio struct {
	Present bool
	Ratio   float64 // 0–1
	Hit     float64 // hits over the window, in Unit
	Total   float64 // lookups over the window, in Unit
	// Unit is what is counted: "tokens", "blocks", or "requests" (the legacy
	// router's per-request >threshold booleans: a different scale).
	Unit string
	// Source names the formula's metrics, e.g.
	// "cached_tokens_total / prompt_tokens_total".
	Source string
	// Since is zero for a figure over the whole window. For a worker that
	// restarted inside the window it is the restart's time (the restart
	// event's, TargetStatus.LastRestart): Hit and Total then count only
	// the new process, and Present is false while Total is under
	// MinTokensSinceRestart — too few tokens to say anything about a cold
	// cache (shown as "n/a").
	Since time.Time
}

// MinTokensSinceRestart is the fewest prompt tokens since a restart for
// which a worker's since-restart hit ratio is shown (HitRatio.Since).
const MinTokensSinceRestart = 30000

// TargetStatus is a target's scrape health, for the targets view and for
// stale markers on every row.
type TargetStatus struct {
	ID     string // redacted metrics URL
	Name   string // short display name
	Role   Role
	Origin Origin
	Health Health
	// LastError is the most recent failure (nil when the last scrape worked).
	LastError *ScrapeError
	// LastSuccess is when good data last arrived; Age = snapshot time − LastSuccess.
	LastSuccess time.Time
	Age         time.Duration
	// Duration and bytes of the last scrape.
	Duration   time.Duration
	BytesWire  int64
	BytesBody  int64
	Series     int
	Dropped    int
	Skipped    int // families skipped as not needed
	Problems   int // parse problems in the last scrape
	Generation string
	Engine     string
	// Restarts seen since pdtop started.
	Restarts    int
	LastRestart time.Time
	// Slow is true when the last tick was skipped because the previous
	// scrape was still running.
	Slow bool
	// FreshStart is true when the target's first successful scrape showed
	// no counted work (every counter zero or absent): its process had
	// just started when pdtop first saw it, so joining is a cold start.
	FreshStart bool
	// Gateway is the name of the gateway replica that listed this worker
	// (discovered targets only).
	Gateway string
	// Auth is Target.Auth: how pdtop authenticates ("" = nothing sent).
	Auth string
	// Via is "" when the figures come from scraping the target itself;
	// otherwise where they were read instead, e.g. "gateway-0
	// /engine_metrics" (the worker could not be reached directly), with
	// DirectError saying why.
	Via         string
	DirectError *ScrapeError
	// ProblemSamples are the first parse problems of the last successful
	// scrape (line number, message, sanitised excerpt); Problems counts
	// them all.
	ProblemSamples []ParseProblem
	// Warnings of the last successful scrape (e.g. a non-compliant
	// Content-Type), sanitised.
	Warnings []string
}

// DiscoveryStatus is the outcome of asking one gateway replica for its
// worker list (GET /workers, or /list_workers + /get_loads on old
// routers).
type DiscoveryStatus struct {
	// Gateway is the replica's target name.
	Gateway string
	// API is the worker-list URL that answered last (display form), or
	// "" when none did.
	API string
	// Shape names the response format understood: "smg /workers",
	// "legacy /workers", "/list_workers + /get_loads".
	Shape string
	// Workers is how many usable workers the replica listed; Rejected
	// counts entries pdtop will not scrape (gRPC, not http(s), userinfo,
	// unparsable), Capped those dropped over the discovery cap.
	Workers, Rejected, Capped int
	// Err is the last failure (nil when the last attempt worked); the
	// previous worker list is kept while it fails.
	Err *ScrapeError
	// Time is the last attempt, LastSuccess the last answer.
	Time, LastSuccess time.Time
	// Notes are sanitised one-line remarks, e.g. why an entry was rejected.
	Notes []string
}

// Readings maps signals to derived readings.
type Readings map[Signal]Reading

// Get returns the reading for sig, or Absent.
func (r Readings) Get(sig Signal) Reading {
	if r == nil {
		return Absent
	}
	return r[sig]
}

// RouterView is one gateway replica's view of one worker.
type RouterView struct {
	Replica string // gateway target name
	// InFlight is the replica's own in-flight count for the worker (req).
	InFlight Reading
	// Health: 1 healthy, 0 unhealthy (absent when not exposed or removed).
	Health Reading
	// CB: circuit breaker 0 closed, 1 open, 2 half-open.
	CB Reading
	// Picks is the replica's pick/dispatch rate for the worker (req/s).
	Picks Reading
	// KVBlocks is the 2026 router's KV-tree blocks for the worker.
	KVBlocks Reading
	// EngineHit is the worker's last-batch hit ratio as re-exported by smg.
	EngineHit Reading
}

// WorkerView is everything derived for one engine worker.
type WorkerView struct {
	TargetStatus
	// Readings holds every worker signal present (gauges latest, counters
	// per-second rates over the window).
	Readings Readings
	// Dists holds the histogram signals (TTFT, ITL, queue time, e2e, KV
	// transfer latency/speed/size); the KV-transfer entries fall back to the
	// old gauge form.
	Dists map[Signal]Quantiles
	// Hit is the actual prefix-hit ratio over the window (cached ÷ prompt
	// tokens, or the scheduler's token counters when those exist). After a
	// restart inside the window it counts only the new process: Hit.Since
	// is the restart's time, and Present is false while fewer than
	// MinTokensSinceRestart prompt tokens have been seen since. The table
	// row and the hit verdict (HitVerdict.Actual) show this one figure.
	Hit HitRatio
	// HitWindow is the hit over the whole window, spanning any restart
	// (equal to Hit without one): what the pool's ratio of sums adds up.
	HitWindow HitRatio
	// Output is the worker's output tokens/s over the window as every
	// panel, the fleet figure, the output_tps chart and the capacity view
	// count them: the scheduler's per-batch decode tokens
	// (realtime_tokens_total{mode="decode"}, which move while long
	// generations are still running) when the worker exposes them, else
	// the output tokens of finished requests (generation_tokens_total,
	// counted when a request finishes). Source says which, e.g.
	// `sglang:realtime_tokens_total{mode="decode"} (per batch)`.
	Output Reading
	// Router is each gateway replica's view of this worker.
	Router []RouterView
	// History holds per-tick points for sparklines, oldest first, NaN for
	// gaps: gauges as values, counters as per-tick rates, and for
	// histogram signals (the KV-transfer latency) the observations per
	// second.
	History map[Signal][]float64
	// HitHistory is the actual hit ratio per chart step (NaN = no traffic).
	HitHistory []float64
	// Restarted is true when a restart was seen inside the window.
	Restarted bool
	// Disagree is "" when the gateway replicas that report on this worker
	// agree; otherwise a one-line reason: their health or circuit-breaker
	// views differ ("gateway-0 ok, gateway-1 unhealthy CB open"), a
	// replica that lists other workers does not list it, or their
	// in-flight views are wildly skewed (the worker's share of each
	// replica's in-flight requests to its pool differs by 50 points or
	// more, on replicas carrying at least 8). Computed by the store from
	// Router.
	Disagree string
}

// Dist returns the distribution for sig (zero when absent).
func (w *WorkerView) Dist(sig Signal) Quantiles {
	if w == nil || w.Dists == nil {
		return Quantiles{}
	}
	return w.Dists[sig]
}

// GatewayView is everything derived for one gateway replica.
type GatewayView struct {
	TargetStatus
	Readings Readings
	// Responses by status class ("2xx", "429", "408", "4xx", "5xx"), req/s.
	Responses map[string]Reading
	// Errors by error type, req/s.
	Errors map[string]Reading
	// Predicted is the replica's predicted prefix-hit figure, when the
	// generation exposes one (legacy: requests; 2026: blocks). Not present
	// for smg, which exposes none.
	Predicted HitRatio
	// Ceiling is the 2026 router's matched ÷ query blocks: the best any
	// worker could have done.
	Ceiling HitRatio
	// PredictedHistory is Predicted.Ratio per chart step.
	PredictedHistory []float64
	// Latency, TTFT and TPOT at the gateway where exposed.
	Dists map[Signal]Quantiles
	// Workers lists the worker keys this replica reports on.
	Workers []string
}

// PoolView aggregates the workers of one role.
type PoolView struct {
	Role    Role
	Workers int // targets with this role
	Up      int // of which up
	// Sums of per-worker readings over workers that have them (gauges
	// summed, rates summed); KVUsage is the max.
	Readings Readings
	// Hit is the pool's actual hit ratio (ratio of sums over workers).
	Hit HitRatio
	// Output is the sum of the workers' Output (output tokens/s); Source
	// names the counter, or both when the workers differ.
	Output Reading
	// Dists merges the workers' histogram deltas bucket by bucket.
	Dists map[Signal]Quantiles
}

// Series is a fleet-level time series for charts: one point per chart step
// (Step apart), oldest first, ending at the snapshot time; NaN = gap.
type Series struct {
	Name   string
	Unit   string
	Step   time.Duration
	Points []float64
	// Beyond, when set (quantile series only), marks the points whose
	// quantile fell in the +Inf bucket: the point is the highest finite
	// bucket bound and the true value lies above it.
	Beyond []bool
}

// Event is something that happened to a target: a restart, a worker joining
// or leaving, a target going stale or recovering.
type Event struct {
	Time     time.Time
	TargetID string
	Name     string
	Kind     string // "restart", "joined", "left", "stale", "recovered"
	Detail   string // e.g. "counter went down", "new pid 4242"
	// Initial is true for a "joined" seen during pdtop's first minute
	// (InitialDiscovery): the worker was already there when pdtop started
	// and discovery listed it — not a cold start, not a mark on charts.
	Initial bool
}

// InitialDiscovery is how long after pdtop starts joining workers are
// taken as found, not as joining: the first discovery passes, and the
// first target list of a replay.
const InitialDiscovery = time.Minute

// ColdStart reports whether e marks a process whose cache starts cold: a
// restart, or a worker that joined after pdtop's initial discovery and had
// counted no work when first scraped (fresh: TargetStatus.FreshStart).
func (e *Event) ColdStart(fresh bool) bool {
	return e.Kind == "restart" || e.Kind == "joined" && !e.Initial && fresh
}

// Fleet holds the headline figures for the summary line.
type Fleet struct {
	TargetsUp, Targets int
	// ReqRate is offered requests/s at the gateways (sum over replicas),
	// or finished requests/s at the workers when no gateway is scraped.
	ReqRate Reading
	// InputRate / OutputRate are prompt / output tokens per second over all
	// workers (prefill pool for input, decode pool for output, in PD).
	// OutputRate is the sum of the pools' Output (see WorkerView.Output).
	InputRate  Reading
	OutputRate Reading
	// Hit is the fleet's actual prefix-hit ratio (prefill pool in PD).
	Hit HitRatio
	// Rejected is the share of gateway responses that were 429/408/5xx
	// over the window (ratio 0–1; sources.RejectedShareOf).
	Rejected Reading
}

// Snapshot is an immutable view of the whole fleet at one tick. Panels
// draw only from it. Slices are sorted for stable display: gateways by
// name; workers by role (prefill, decode, unified) then name.
type Snapshot struct {
	Time     time.Time
	Window   time.Duration // for rates, quantiles and hit ratios
	Interval time.Duration
	// ChartSpan is the time the chart series and worker histories cover
	// (at least Window; the store's minimum chart span otherwise).
	ChartSpan time.Duration
	// DataSince is the time of the oldest sample any target's history
	// holds (zero when none): a window reaching further back than this is
	// partly empty — pdtop, or the recording, started less than a window
	// ago. The Prometheus backend sets it from the first charted point
	// when the server holds less than the chart span.
	DataSince time.Time

	Targets  []TargetStatus
	Workers  []WorkerView
	Gateways []GatewayView
	Prefill  PoolView
	Decode   PoolView
	Unified  PoolView
	Fleet    Fleet

	// Charts holds fleet time series keyed by name: "ttft_p50", "ttft_p99",
	// "itl_p50", "itl_p99", "input_tps", "output_tps", "hit_actual",
	// "hit_predicted".
	Charts map[string]Series

	// Events, oldest first, at most a few hundred.
	Events []Event

	// Thresholds in force (defaults filled in): panels flag figures that
	// cross them.
	Thresholds Thresholds

	// Diagnosis is what the figures above mean: hit-gap verdicts with
	// causes, capacity in units of work, goodput, stalls.
	Diagnosis Diagnosis

	// Discovery is each gateway replica's worker-list status, by gateway
	// name; empty when discovery is off.
	Discovery []DiscoveryStatus

	// QueryServer is the Prometheus-API server the snapshot was read
	// from; nil when pdtop scrapes the targets itself.
	QueryServer *QueryServer

	// Since says when the history behind the snapshot began, to end
	// "no restarts seen since …": "" means pdtop started (live); a replay
	// says "the recording started" (or where its history was rebuilt
	// from after a seek).
	Since string

	// Notice is one line from the data source for the footer: the demo
	// scenario playing, a replay's position. Empty when there is none.
	Notice string
}

// WorkersByRole returns the workers with role r, in display order.
func (s *Snapshot) WorkersByRole(r Role) []WorkerView {
	var out []WorkerView
	for _, w := range s.Workers {
		if w.Role == r {
			out = append(out, w)
		}
	}
	return out
}

// Finite reports whether v is neither NaN nor ±Inf.
func Finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
