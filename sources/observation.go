package sources

import "time"

// Point is one scalar sample of a canonical signal, already aggregated over
// the engine's rank labels per the signal's rules (sum over dp_rank, never
// over tp_rank, latest over pid). Key is empty unless the signal is Keyed.
type Point struct {
	Signal Signal
	Key    string
	Value  float64
}

// Hist is one histogram sample of a canonical signal: cumulative bucket
// counts at upper bounds (ascending, +Inf last when present), plus sum and
// count. A summary (or a histogram whose buckets were dropped) has no
// Bounds: only Sum and Count, good for a mean, not for quantiles.
type Hist struct {
	Signal Signal
	Key    string
	Bounds []float64 // upper bounds (le), ascending; may end with +Inf
	Counts []float64 // cumulative counts, one per bound
	Sum    float64
	Count  float64
}

// Observation is what one successful scrape of one target says, in
// canonical signals. Signals the target does not expose are simply absent
// (never zero).
type Observation struct {
	// Generation names the adapter that recognised the body, e.g.
	// "sglang worker", "smg gateway", "sgl-router (legacy)",
	// "sgl-router (2026)"; "" when nothing known was found.
	Generation string
	// Engine is a short engine name ("sglang", "smg", ...).
	Engine string
	// EngineRole is the role the target claims in its labels (engine_type),
	// a hint only; RoleUnknown when it says nothing useful.
	EngineRole RoleHint

	Points []Point
	Hists  []Hist

	// Sources maps each signal present to the raw metric name that fed it
	// (the first name in the adapter's alias list that was found).
	Sources map[Signal]string

	// PIDs are the scheduler process ids seen on pid-labelled gauges; a pid
	// not seen before means the worker restarted.
	PIDs []string
	// StartMarkers are values that change only when the process restarts:
	// `_created` timestamps and startup constants, by raw series name.
	StartMarkers map[string]float64

	// Stats describe the parse that produced this observation.
	Stats ParseStats
}

// RoleHint is a role claimed by the target's own labels.
type RoleHint = Role

// ParseStats counts what the parser kept, dropped and choked on.
type ParseStats struct {
	Families     int            // families kept
	Series       int            // series kept
	Skipped      int            // families skipped before parsing because no panel needs them
	Dropped      int            // series dropped (duplicates, over the cap, unusable)
	Problems     []ParseProblem // the first few problems, each with a line number
	ProblemCount int            // all problems, including ones not kept
	Warnings     []string       // e.g. "target ignores Accept (OpenMetrics body)"
}

// ParseProblem is one line the parser could not use.
type ParseProblem struct {
	Line    int    // 1-based line number in the body
	Message string // sanitised
	Excerpt string // sanitised, at most 80 cells
}

// ErrorClass classifies why a scrape failed.
type ErrorClass string

// Error classes shown on screen.
const (
	ErrNone     ErrorClass = ""
	ErrDNS      ErrorClass = "dns"
	ErrRefused  ErrorClass = "refused"
	ErrTimeout  ErrorClass = "timeout"
	ErrTLS      ErrorClass = "tls"
	ErrAuth     ErrorClass = "auth"     // 401 / 403
	ErrHTTP4xx  ErrorClass = "http-4xx" // other 4xx (404 wrong path, 429 back off)
	ErrHTTP5xx  ErrorClass = "http-5xx"
	ErrHTML     ErrorClass = "html"     // an HTML page instead of metrics
	ErrOversize ErrorClass = "oversize" // body over the cap after decompression
	ErrParse    ErrorClass = "parse"    // nothing usable parsed
	ErrNetwork  ErrorClass = "network"  // other transport errors (reset, unreachable)
	ErrConfig   ErrorClass = "config"   // bad URL, unsupported scheme, blocked address
	ErrOther    ErrorClass = "other"
	// ErrNoMetrics: a well-formed body with none of an SGLang worker's or
	// gateway's families (another exporter's: wrong port or path).
	ErrNoMetrics ErrorClass = "no-metrics"
)

// ScrapeError is a classified scrape failure. Message is sanitised and
// carries no credentials or query strings.
type ScrapeError struct {
	Class   ErrorClass
	Status  int    // HTTP status, 0 when none
	Message string // one line, sanitised, redacted
}

// Error implements error.
func (e *ScrapeError) Error() string {
	if e == nil {
		return ""
	}
	return string(e.Class) + ": " + e.Message
}

// ScrapeResult is the outcome of one scrape of one target: a parsed
// Observation or an error, with transport facts for the targets view.
type ScrapeResult struct {
	TargetID string
	// Time is when the body was received (local clock), used for rates.
	Time     time.Time
	Duration time.Duration
	// BytesWire is what came over the network; BytesBody after decompression.
	BytesWire int64
	BytesBody int64
	// Obs is nil when Err is set.
	Obs *Observation
	Err *ScrapeError
	// Skipped is true when the tick was skipped because the previous
	// scrape of this target was still running.
	Skipped bool
	// Via is "" for a direct scrape. When the worker could not be scraped
	// directly and its figures were read from a gateway's /engine_metrics
	// re-export instead, Via names that source, e.g.
	// "gateway-0 /engine_metrics", and DirectErr says why the direct
	// scrape failed.
	Via       string
	DirectErr *ScrapeError
	// Raw is the fetched body as received (decompressed, with the
	// target's credentials scrubbed) and the fetch's warnings, for a
	// recording; set only when the scraper keeps bodies
	// (collect.Scraper.KeepBodies), nil otherwise.
	Raw *RawBody
}

// RawBody is one fetched /metrics body and the warnings of its fetch
// (e.g. a non-compliant Content-Type), before parsing.
type RawBody struct {
	Body     []byte
	Warnings []string
}
