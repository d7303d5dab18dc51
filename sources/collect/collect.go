// Package collect turns one target into one sources.ScrapeResult: an HTTP
// fetch (sources/scrape), a lenient parse that skips families no panel
// reads (sources/expo), and the mapping to canonical signals
// (sources/schema). It also schedules rounds of scrapes for headless use
// with the same rules the TUI follows: bounded concurrency, a stable
// per-target offset, and a tick skipped (not queued) while the previous
// scrape of that target is still running.
package collect

import (
	"bytes"
	"context"
	"fmt"
	"hash/fnv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/sources/expo"
	"github.com/pdtop/pdtop/sources/schema"
	"github.com/pdtop/pdtop/sources/scrape"
)

// Options configure a Scraper.
type Options struct {
	// Timeout is the deadline for one scrape (connect, headers, body).
	Timeout time.Duration
	// MaxBodyBytes caps a body after decompression (0 = scrape's default).
	MaxBodyBytes int64
	// Concurrency bounds scrapes in flight across all targets (default 32).
	Concurrency int
	// Clock returns the receive time stamped on results (default time.Now).
	Clock func() time.Time
}

// Scraper scrapes targets. It is safe for concurrent use.
type Scraper struct {
	keep     atomic.Bool // results carry their raw body
	opts     Options
	sem      chan struct{}
	mu       sync.Mutex
	clients  map[string]*scrape.Client
	fallback *scrape.Client
}

// New returns a Scraper whose targets all use def, unless SetClient gives
// one its own.
func New(def *scrape.Client, opts Options) *Scraper {
	if opts.Concurrency <= 0 {
		opts.Concurrency = 32
	}
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	return &Scraper{opts: opts, sem: make(chan struct{}, opts.Concurrency),
		clients: map[string]*scrape.Client{}, fallback: def}
}

// SetClient gives one target its own HTTP client (credentials, TLS); nil
// returns it to the default client.
func (s *Scraper) SetClient(targetID string, c *scrape.Client) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c == nil {
		delete(s.clients, targetID)
		return
	}
	s.clients[targetID] = c
}

func (s *Scraper) client(id string) *scrape.Client {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.clients[id]; c != nil {
		return c
	}
	return s.fallback
}

// Offset returns a stable per-target delay in [0, spread) so that many
// targets do not all hit the network in the same millisecond.
func Offset(targetID string, spread time.Duration) time.Duration {
	if spread <= 0 {
		return 0
	}
	h := fnv.New32a()
	h.Write([]byte(targetID))
	return time.Duration(uint64(h.Sum32()) % uint64(spread))
}

// Scrape fetches, parses and maps one target. It waits for a concurrency
// slot first; ctx bounds the wait and the scrape.
func (s *Scraper) Scrape(ctx context.Context, t sources.Target) sources.ScrapeResult {
	select {
	case s.sem <- struct{}{}:
	case <-ctx.Done():
		return sources.ScrapeResult{TargetID: t.ID, Time: s.opts.Clock(),
			Err: &sources.ScrapeError{Class: sources.ErrTimeout, Message: "no scrape slot before the deadline (too many slow targets)"}}
	}
	defer func() { <-s.sem }()
	if s.opts.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.opts.Timeout)
		defer cancel()
	}
	c := s.client(t.ID)
	if c == nil {
		return sources.ScrapeResult{TargetID: t.ID, Time: s.opts.Clock(),
			Err: &sources.ScrapeError{Class: sources.ErrConfig, Message: "no HTTP client configured"}}
	}
	resp := c.Fetch(ctx, t.URL)
	res := sources.ScrapeResult{TargetID: t.ID, Time: s.opts.Clock(), Duration: resp.Duration,
		BytesWire: resp.BytesWire, BytesBody: resp.BytesBody}
	if resp.Err != nil {
		res.Err = resp.Err
		return res
	}
	if s.keep.Load() {
		// A hostile target can echo the credentials it was sent: they are
		// scrubbed from the body before it is kept.
		res.Raw = &sources.RawBody{Body: c.ScrubBody(resp.Body, t.URL), Warnings: resp.Warnings}
	}
	return FromBody(res, resp.Body, resp.Warnings, func(m string) string { return c.Scrub(m, t.URL) })
}

// KeepBodies makes every successful scrape's result carry its raw body
// (ScrapeResult.Raw), for a recording.
func (s *Scraper) KeepBodies(on bool) { s.keep.Store(on) }

// FromBody completes a successful fetch's result (TargetID, Time,
// Duration and byte counts set) from its raw body and the fetch's
// warnings: Process, the warnings added to the parse statistics, and
// scrub (when set) applied to every parse message and excerpt, which
// quote the body. It is the one path from a body to a result for live
// scrapes and replays (whose recorded bodies were scrubbed when written).
func FromBody(res sources.ScrapeResult, body []byte, warnings []string, scrub func(string) string) sources.ScrapeResult {
	obs, err := Process(body)
	if err != nil {
		if scrub != nil {
			err.Message = scrub(err.Message)
		}
		res.Err = err
		return res
	}
	obs.Stats.Warnings = append(obs.Stats.Warnings, warnings...)
	if scrub != nil {
		for i := range obs.Stats.Problems {
			p := &obs.Stats.Problems[i]
			p.Message, p.Excerpt = scrub(p.Message), scrub(p.Excerpt)
		}
	}
	res.Obs = obs
	return res
}

// Process parses a raw /metrics body and maps it to an Observation. It is
// the path shared by live scrapes, recordings and replays. A body with no
// usable family at all is a parse error naming the first problem; a
// non-empty body with no SGLang worker or gateway family (another
// exporter's metrics) is an ErrNoMetrics error; an empty body is an
// observation with no figures and a warning.
func Process(body []byte) (*sources.Observation, *sources.ScrapeError) {
	r := expo.Parse(body, expo.Options{Keep: schema.Wanted})
	if len(r.Families) == 0 && r.Stats.ProblemCount > 0 {
		msg := fmt.Sprintf("%d unparsable lines", r.Stats.ProblemCount)
		if len(r.Stats.Problems) > 0 {
			p := r.Stats.Problems[0]
			msg = fmt.Sprintf("line %d: %s", p.Line, p.Message)
			if p.Excerpt != "" {
				msg += " near " + quoteExcerpt(p.Excerpt)
			}
		}
		return nil, &sources.ScrapeError{Class: sources.ErrParse, Message: msg}
	}
	obs := schema.Map(r.Families, r.Declared)
	obs.Stats = r.Stats
	if obs.Engine == "" {
		if len(bytes.TrimSpace(body)) > 0 {
			// Another exporter (node_exporter, an app's own /metrics):
			// nothing pdtop shows can come from it, so it is not up.
			return nil, &sources.ScrapeError{Class: sources.ErrNoMetrics, Message: NoMetricsMessage}
		}
		// An empty body: a freshly started SGLang worker in multiprocess
		// mode that has served nothing may expose no family at all yet.
		obs.Stats.Warnings = append(obs.Stats.Warnings, "empty body: no SGLang or gateway metrics yet (an idle worker that has served nothing exposes none)")
	}
	return obs, nil
}

// NoMetricsMessage is the ErrNoMetrics error's message.
const NoMetricsMessage = "no known SGLang or gateway metrics at this URL — wrong port or path?"

func quoteExcerpt(s string) string {
	return "«" + strings.TrimSpace(s) + "»"
}
