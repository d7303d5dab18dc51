package collect

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/sources/expo"
	"github.com/pdtop/pdtop/sources/schema"
)

// ReexportMode says when a gateway's /engine_metrics is read.
type ReexportMode uint8

// Re-export modes.
const (
	// ReexportAuto reads a worker through the re-export only while its
	// direct scrape fails: direct scrapes win.
	ReexportAuto ReexportMode = iota + 1
	// ReexportOnly reads the workers this gateway listed only through it
	// (they are on a network pdtop cannot reach). Workers configured
	// explicitly are still scraped directly first.
	ReexportOnly
)

// Reexport reads workers through their gateway's /engine_metrics: every
// worker's metrics merged by the gateway, ':' rewritten to '_', with a
// worker_addr label (gateway.md §10, smg and sglang-router 0.2.x). A
// worker seen both directly and through the re-export is one worker:
// its direct scrape is tried first and wins; the re-export's figures are
// used only while the direct scrape fails, and the result says so
// (ScrapeResult.Via, DirectErr). One gateway body serves every worker for
// MaxAge, so a fleet of unreachable workers costs one fetch per gateway
// per refresh. It is safe for concurrent use.
type Reexport struct {
	// Scraper fetches the bodies with each gateway's own client.
	Scraper *Scraper
	// MaxAge is how long one fetched body serves lookups (default 1s;
	// set it to the refresh interval).
	MaxAge time.Duration
	// Clock is the receive clock (default time.Now).
	Clock func() time.Time

	mu      sync.Mutex
	gws     []*reexportGW
	rescued map[string]bool      // targets whose last data came through a re-export
	missed  map[string]time.Time // targets no re-export had, until when not to look again
}

// missBackoff is how long a worker no re-export had is not looked up
// again (at least; 15 refreshes otherwise): a dead worker is in no
// gateway's re-export, and /engine_metrics can be large.
const missBackoff = 10 * time.Second

type reexportGW struct {
	id, name string
	bases    []string // API bases to try, e.g. http://gw:29000, http://gw:30000
	mode     ReexportMode
	base     string // the base that answered last

	fetching chan struct{} // closed when the fetch in flight ends
	at       time.Time
	workers  map[string]*sources.Observation
	err      *sources.ScrapeError
}

// AddGateway registers a gateway replica whose /engine_metrics may be
// read: id and name are its target's, bases the API bases to try in
// order (discovery.APICandidates).
func (e *Reexport) AddGateway(id, name string, bases []string, mode ReexportMode) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.gws = append(e.gws, &reexportGW{id: id, name: name, bases: bases, mode: mode})
}

// only reports whether t must not be scraped directly.
func (e *Reexport) only(t sources.Target) bool {
	if t.Origin != sources.OriginGateway {
		return false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, g := range e.gws {
		if g.id == t.Gateway {
			return g.mode == ReexportOnly
		}
	}
	return false
}

// wasRescued reports whether t's last data came through a re-export.
func (e *Reexport) wasRescued(id string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.rescued[id]
}

func (e *Reexport) setRescued(id string, v bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.rescued == nil {
		e.rescued = map[string]bool{}
	}
	if v {
		e.rescued[id] = true
	} else {
		delete(e.rescued, id)
	}
}

// Scrape is Scraper.Scrape with the re-export as a fallback for worker
// targets: in ReexportOnly mode the re-export alone; otherwise the direct
// scrape, and the re-export when that fails. A target rescued last time
// runs both at once, so a direct scrape that times out does not use up
// the deadline the fallback needs.
func (e *Reexport) Scrape(ctx context.Context, t sources.Target) sources.ScrapeResult {
	if t.Role == sources.RoleGateway {
		return e.Scraper.Scrape(ctx, t)
	}
	if e.only(t) {
		res, _ := e.lookup(ctx, t, nil)
		return res
	}
	if !e.wasRescued(t.ID) {
		res := e.Scraper.Scrape(ctx, t)
		if res.Err == nil || ctx.Err() != nil {
			e.setRescued(t.ID, false)
			return res
		}
		if e.backingOff(t.ID) {
			return res
		}
		if alt, ok := e.lookup(ctx, t, res.Err); ok {
			alt.Duration += res.Duration
			e.setRescued(t.ID, true)
			return alt
		}
		e.miss(t.ID)
		return res
	}
	direct := make(chan sources.ScrapeResult, 1)
	go func() { direct <- e.Scraper.Scrape(ctx, t) }()
	alt, ok := e.lookup(ctx, t, nil)
	res := <-direct
	if res.Err == nil || !ok {
		e.setRescued(t.ID, false)
		return res
	}
	alt.DirectErr = res.Err
	alt.Duration = max(alt.Duration, res.Duration) // they ran side by side
	return alt
}

// backingOff reports whether t was missing from every re-export recently.
func (e *Reexport) backingOff(id string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.now().Before(e.missed[id])
}

// miss records that no re-export had t.
func (e *Reexport) miss(id string) {
	wait := max(missBackoff, 15*e.MaxAge)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.missed == nil {
		e.missed = map[string]time.Time{}
	}
	e.missed[id] = e.now().Add(wait)
}

// lookup finds t's figures in a gateway's re-export: t's own gateway
// first, then the others. ok is false when no re-export has it; the
// result then carries direct (or, without one, the re-export's error).
func (e *Reexport) lookup(ctx context.Context, t sources.Target, direct *sources.ScrapeError) (sources.ScrapeResult, bool) {
	key := t.Key()
	e.mu.Lock()
	gws := append([]*reexportGW(nil), e.gws...)
	e.mu.Unlock()
	for i, g := range gws {
		if g.id == t.Gateway && i > 0 {
			gws[0], gws[i] = gws[i], gws[0]
		}
	}
	start := e.now()
	var lastErr *sources.ScrapeError
	for _, g := range gws {
		workers, err := e.fetch(ctx, g)
		if err != nil {
			lastErr = err
			continue
		}
		if obs := workers[key]; obs != nil {
			return sources.ScrapeResult{TargetID: t.ID, Time: e.now(), Duration: e.now().Sub(start), Obs: obs,
				Via: g.name + " /engine_metrics", DirectErr: direct}, true
		}
	}
	res := sources.ScrapeResult{TargetID: t.ID, Time: e.now(), Err: direct}
	if res.Err == nil {
		res.Err = &sources.ScrapeError{Class: sources.ErrOther, Message: "not in any gateway's /engine_metrics"}
		if lastErr != nil {
			res.Err = &sources.ScrapeError{Class: lastErr.Class, Status: lastErr.Status,
				Message: "/engine_metrics: " + lastErr.Message}
		}
	}
	return res, false
}

func (e *Reexport) now() time.Time {
	if e.Clock != nil {
		return e.Clock()
	}
	return time.Now()
}

// fetch returns g's re-export split by worker, fetching it when the last
// one is older than MaxAge; concurrent callers share one fetch.
func (e *Reexport) fetch(ctx context.Context, g *reexportGW) (map[string]*sources.Observation, *sources.ScrapeError) {
	maxAge := e.MaxAge
	if maxAge <= 0 {
		maxAge = time.Second
	}
	for {
		e.mu.Lock()
		if !g.at.IsZero() && e.now().Sub(g.at) < maxAge {
			w, err := g.workers, g.err
			e.mu.Unlock()
			return w, err
		}
		if wait := g.fetching; wait != nil {
			e.mu.Unlock()
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				return nil, &sources.ScrapeError{Class: sources.ErrTimeout, Message: "deadline passed waiting for /engine_metrics"}
			}
		}
		done := make(chan struct{})
		g.fetching = done
		bases := g.bases
		if g.base != "" {
			bases = append([]string{g.base}, bases...)
		}
		e.mu.Unlock()

		workers, base, err := e.get(ctx, g.id, bases)
		e.mu.Lock()
		g.at, g.workers, g.err, g.fetching = e.now(), workers, err, nil
		if base != "" {
			g.base = base
		}
		e.mu.Unlock()
		close(done)
		return workers, err
	}
}

// get fetches and splits the first base's /engine_metrics that answers.
func (e *Reexport) get(ctx context.Context, gatewayID string, bases []string) (map[string]*sources.Observation, string, *sources.ScrapeError) {
	c := e.Scraper.client(gatewayID)
	if c == nil {
		return nil, "", &sources.ScrapeError{Class: sources.ErrConfig, Message: "no HTTP client for the gateway"}
	}
	var first *sources.ScrapeError
	for _, b := range bases {
		resp := c.Fetch(ctx, strings.TrimRight(b, "/")+"/engine_metrics")
		if resp.Err != nil {
			if first == nil {
				first = resp.Err
			}
			continue
		}
		r := expo.Parse(resp.Body, expo.Options{Keep: schema.Wanted})
		workers := schema.MapEngineMetrics(r.Families, r.Declared)
		for _, obs := range workers {
			obs.Stats.Series = len(obs.Points) + len(obs.Hists)
			obs.Stats.Warnings = append(obs.Stats.Warnings, "figures read through the gateway's /engine_metrics")
		}
		return workers, b, nil
	}
	return nil, "", first
}
