// Package promql is the Prometheus-API backend: instead of scraping every
// worker, pdtop asks a server that already does (Prometheus, Thanos,
// Mimir, VictoriaMetrics — anything speaking the Prometheus HTTP API) for
// the same canonical signals, and derives the same sources.Snapshot the
// direct-scraping store derives, so the same panels draw it.
//
// The work is pushed to the server: rates, increases, histogram quantiles
// and per-pool sums are PromQL (see plan), the per-worker tables ask only
// for the rows that fit on screen (topk per role by queue depth or KV
// usage, plus every worker whose scrapes fail), and chart history is
// backfilled with range queries whose step keeps a chart at its width,
// incrementally. With the recording rules of Rules loaded into the server,
// pool figures, charts, the row ranking and the restart scan read
// recorded series and stay cheap at 10,000 workers.
//
// Workers are told apart by one label (Options.InstanceLabel, "instance"
// by default: what Prometheus sets from the scrape address, which is also
// what the gateway's worker label normalises to). Roles come from a label
// on the workers' scheduler series: SGLang's own engine_type
// (prefill/decode/unified), or any label the operator sets with
// relabelling (Options.RoleLabel). Gateway replicas and their generation
// (smg, legacy or 2026 sgl-router) are recognised from the series each
// instance exposes, with the schema's fingerprint rules.
//
// Server failures are shown like target failures, on a target named
// "prometheus": 400/422 (bad query: the query is shown), 503 or a server
// timeout (overloaded: pdtop backs off), timeouts, refused connections,
// and answers with warnings (partial data). Every label value placed into
// PromQL is escaped (Quote, OneOf).
//
// Figures differ from direct scraping by construction where Prometheus'
// semantics differ from the store's (measured in TestMatchesDirectScraping
// and listed in the README): rate() extrapolates each series to the
// window's edges (a series that starts or ends inside the window reads a
// little high, or low when younger than the window); pools drop a worker
// whose scrapes fail after three scrape intervals; restarts are counter
// resets or a new scheduler pid beside older ones, at chart-step
// resolution, looked for one window back at start (a restarted row's hit
// since the restart, HitRatio.Since, counts from that event from the
// round after it is found); only p50 and p99 are queried (Quantiles.P90
// is NaN).
package promql

import (
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/common/config"

	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/sources/diagnose"
	"github.com/pdtop/pdtop/sources/scrape"
)

// Options configure a Backend. The zero value works against a Prometheus
// scraping SGLang workers with their default labels.
type Options struct {
	// Selector narrows every series pdtop reads, e.g.
	// {namespace="serving"} (see ParseSelector).
	Selector []Matcher
	// InstanceLabel tells workers and gateway replicas apart (default
	// "instance").
	InstanceLabel string
	// RoleLabel carries a worker's role: prefill, decode, or
	// unified/regular/mixed (default "engine_type", set by SGLang itself).
	RoleLabel string
	// Rows is how many workers per role get a row with per-worker figures
	// (default 50): the top ones by waiting queue (prefill, unified) or KV
	// usage (decode), plus the ones whose scrapes fail. Pool and fleet
	// figures always cover every worker.
	Rows int
	// Interval is the dashboard's refresh interval (default 1s).
	Interval time.Duration
	// ScrapeInterval is how often the server scrapes the workers; 0 means
	// detect it from the samples. Rate windows are never shorter than
	// twice this.
	ScrapeInterval time.Duration
	// QueryTimeout is the server-side timeout of each query (default 10s).
	QueryTimeout time.Duration
	// Concurrency bounds queries in flight (default 8).
	Concurrency int
	// MaxResponseBytes caps one response body (default 64 MiB).
	MaxResponseBytes int64
	// ChartPoints is the most points a chart has (default 120: the chart
	// width of a 200-column layout); ChartSpan the shortest time a chart
	// covers (default 5m). Range-query steps follow from them.
	ChartPoints int
	ChartSpan   time.Duration
	// Window is the dashboard's window for rates, quantiles and hit ratios
	// until Snapshot asks for another (default 1m).
	Window time.Duration
	// MaxWindow is the longest window the dashboard may ask for (15m).
	MaxWindow time.Duration
	// Clock is the local wall clock (default time.Now).
	Clock func() time.Time
	// Thresholds are attached to every snapshot.
	Thresholds sources.Thresholds
	// AllowInsecureCredentials permits sending credentials over plain
	// http to a server that is not on loopback.
	AllowInsecureCredentials bool
	// IgnoreRules makes the backend compute every figure from the raw
	// series even when pdtop's recording rules exist on the server.
	IgnoreRules bool
	// Logger, when set, gets each failing query (with its full text) when
	// the set of failures changes, and the recovery.
	Logger *slog.Logger
}

func (o *Options) defaults() {
	if o.InstanceLabel == "" {
		o.InstanceLabel = "instance"
	}
	if o.RoleLabel == "" {
		o.RoleLabel = "engine_type"
	}
	if o.Rows <= 0 {
		o.Rows = 50
	}
	if o.Interval <= 0 {
		o.Interval = time.Second
	}
	if o.QueryTimeout <= 0 {
		o.QueryTimeout = 10 * time.Second
	}
	if o.ChartPoints <= 0 {
		o.ChartPoints = 120
	}
	if o.ChartSpan <= 0 {
		o.ChartSpan = 5 * time.Minute
	}
	if o.MaxWindow <= 0 {
		o.MaxWindow = 15 * time.Minute
	}
	if o.Window <= 0 {
		o.Window = time.Minute
	}
	if o.Window > o.MaxWindow {
		o.Window = o.MaxWindow
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
}

// Backend reads the fleet from a Prometheus-compatible server. It is safe
// for concurrent use.
type Backend struct {
	opts Options
	url  string
	c    *client
	plan *plan

	mu      sync.Mutex
	window  time.Duration // the window the dashboard last asked for
	now     *frame        // latest instant results
	hist    *history      // latest range results
	server  serverState
	charts  chartCache
	events  []sources.Event
	restart map[string][]time.Time // worker → restart times seen
	gens    map[string]string      // gateway instance → generation, as last recognised
	gwSeen  map[string]time.Time   // gateway instance → when it last had fresh samples
	rounds  int
	logged  map[string]sources.ErrorClass // failing queries last logged
}

// New returns a backend for the server at rawURL (e.g.
// http://prometheus:9090, or a Thanos/Mimir query front-end with its path
// prefix). HTTP settings — auth, TLS, proxy — come from cfg, as for a
// Prometheus scrape config; credentials are never sent over plain http to
// a host that is not loopback. The error names what is wrong.
func New(rawURL string, cfg config.HTTPClientConfig, opts Options) (*Backend, error) {
	opts.defaults()
	if err := ValidateURL(rawURL); err != nil {
		return nil, err
	}
	u, _ := url.Parse(strings.TrimSpace(rawURL))
	for _, l := range []string{opts.InstanceLabel, opts.RoleLabel} {
		if !ValidLabelName(l) {
			return nil, fmt.Errorf("%q is not a label name", l)
		}
	}
	if opts.InstanceLabel == opts.RoleLabel {
		return nil, fmt.Errorf("the instance label and the role label must differ (both %q)", opts.RoleLabel)
	}
	sc, err := scrape.NewClient(cfg, scrape.Options{Timeout: opts.QueryTimeout + 5*time.Second, TargetURL: u.String(),
		AllowInsecureCredentials: opts.AllowInsecureCredentials})
	if err != nil {
		return nil, err
	}
	c, err := newClient(strings.TrimSuffix(u.String(), "/"), sc.HTTPClient(), opts.MaxResponseBytes, opts.QueryTimeout, opts.Concurrency)
	if err != nil {
		return nil, fmt.Errorf("--prometheus: %v", err)
	}
	b := &Backend{opts: opts, url: u.String(), c: c, plan: newPlan(opts.Selector, opts.InstanceLabel, opts.RoleLabel),
		window: opts.Window, restart: map[string][]time.Time{}, gens: map[string]string{}}
	b.server.id = sources.DisplayURL(u.String())
	return b, nil
}

// ValidateURL checks a server URL as New does, without building anything:
// http or https, a host, no query string or fragment. The error names the
// flag (--prometheus) and never echoes a query string.
func ValidateURL(rawURL string) error {
	u, err := url.Parse(strings.TrimSpace(rawURL))
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return fmt.Errorf("--prometheus %s: want an http or https URL such as http://prometheus:9090", sources.DisplayURL(rawURL))
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("--prometheus %s: no query string or fragment, please (tokens belong in the HTTP config)", sources.DisplayURL(rawURL))
	}
	return nil
}

// Job keys.
const (
	keyNow      = "promql:now"
	keyHistory  = "promql:history"
	keyRestarts = "promql:restarts"
)

// Round returns the three jobs of a refresh: the instant queries (every
// figure at now), the range queries (chart history, per-row sparklines)
// and the restart scan, each skipped at a tick while its previous run is
// still going. While the server is being backed off (after a
// 503 or a server-side timeout) it returns none.
func (b *Backend) Round() []sources.Job {
	b.mu.Lock()
	defer b.mu.Unlock()
	if now := b.opts.Clock(); now.Before(b.server.backoffUntil) {
		return nil
	}
	b.rounds++
	return []sources.Job{
		{Key: keyNow, Run: b.runNow},
		{Key: keyHistory, Run: b.runHistory},
		{Key: keyRestarts, Run: b.runRestarts},
	}
}

// Busy notes that a job was still running at a tick: the server is slow.
func (b *Backend) Busy(key string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.server.slow = true
}

// QueryTimes returns how long each query took the last time it ran, by
// query name ("pool_gauges", "row_ttft", "restarts", …): where a slow
// server spends its time.
func (b *Backend) QueryTimes() map[string]time.Duration { return b.c.durations() }

// Now is the local wall clock.
func (b *Backend) Now() time.Time { return b.opts.Clock() }

// Snapshot derives the fleet view at Now over window (clamped to
// Options.MaxWindow) from the latest query results. The next round's
// queries use this window. Never nil.
func (b *Backend) Snapshot(window time.Duration) *sources.Snapshot {
	if window <= 0 {
		window = time.Minute
	}
	if window > b.opts.MaxWindow {
		window = b.opts.MaxWindow
	}
	b.mu.Lock()
	b.window = window
	now, hist, srv := b.now, b.hist, b.server
	events := append([]sources.Event(nil), b.events...)
	restarts := make(map[string][]time.Time, len(b.restart))
	for k, v := range b.restart {
		restarts[k] = v
	}
	b.mu.Unlock()
	s := b.safeBuild(now, hist, srv, events, restarts, window)
	s.Thresholds = b.opts.Thresholds.WithDefaults()
	s.QueryServer = b.queryServer(now)
	s.DataSince = dataSince(hist, srv.skew)
	diagnose.Run(s) // the same diagnoses as direct scraping, from the same figures
	return s
}

// safeBuild is build, turning a panic (a malformed answer that slipped
// through) into a snapshot that shows only the server, with the reason.
func (b *Backend) safeBuild(now *frame, hist *history, srv serverState, events []sources.Event,
	restarts map[string][]time.Time, window time.Duration) (s *sources.Snapshot) {
	defer func() {
		if r := recover(); r != nil {
			srv.health = sources.Stale
			srv.lastErr = &sources.ScrapeError{Class: sources.ErrOther, Message: "internal error while deriving the snapshot (recovered)"}
			s = build(b, nil, nil, srv, events, nil, b.opts.Clock(), window)
		}
	}()
	return build(b, now, hist, srv, events, restarts, b.opts.Clock(), window)
}

// recovered turns a panic in a job into a failure of that job on the
// server target, so a malformed answer can never take the dashboard down.
func (b *Backend) recovered(job, what string) {
	if r := recover(); r != nil {
		b.mu.Lock()
		defer b.mu.Unlock()
		if ev := b.server.report(job, b.opts.Clock(), &sources.ScrapeError{Class: sources.ErrOther,
			Message: "internal error while reading " + what + " (recovered)"}, nil, -1); ev != nil {
			b.addEvent(*ev)
		}
	}
}

// logFailures logs failing queries whose failure is new, and recoveries.
// Called with b.mu held.
func (b *Backend) logFailures(fails []*queryFailure, names []string) {
	l := b.opts.Logger
	if l == nil {
		return
	}
	if b.logged == nil {
		b.logged = map[string]sources.ErrorClass{}
	}
	failed := map[string]bool{}
	for _, f := range fails {
		failed[f.name] = true
		if b.logged[f.name] != f.err.Class {
			b.logged[f.name] = f.err.Class
			args := []any{"query_name", f.name, "class", string(f.err.Class), "status", f.err.Status, "error", f.err.Message}
			if f.err.Class == ErrQuery {
				args = append(args, "query", f.query) // the server rejected this text
			}
			l.Warn("prometheus query failed", args...)
		}
	}
	for _, n := range names {
		if _, was := b.logged[n]; was && !failed[n] {
			delete(b.logged, n)
			l.Info("prometheus query recovered", "query_name", n)
		}
	}
}

// evalTime is the local clock moved onto the server's clock.
func (b *Backend) evalTime() time.Time {
	b.mu.Lock()
	skew := b.server.skew
	b.mu.Unlock()
	return b.opts.Clock().Add(skew).Truncate(time.Millisecond)
}

var _ sources.Backend = (*Backend)(nil)
