package collect

import (
	"context"
	"time"

	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/sources/store"
)

// Live is the direct-scraping Backend: one job per target per round, each
// scraping the target and ingesting the result into the store.
type Live struct {
	Store   *store.Store
	Scraper *Scraper
	// Spread is the longest stable per-target start offset (default 200ms)
	// so that many targets do not hit the network in the same millisecond.
	Spread time.Duration
	// Clock is the wall clock (default time.Now).
	Clock func() time.Time
	// Thresholds are attached to every snapshot.
	Thresholds sources.Thresholds
	// Observe, when set, sees every result after it is ingested (logging,
	// recording).
	Observe func(sources.Target, sources.ScrapeResult)
	// Reexport, when set, reads workers through their gateway's
	// /engine_metrics when they cannot be scraped directly.
	Reexport *Reexport
}

func (l *Live) now() time.Time {
	if l.Clock != nil {
		return l.Clock()
	}
	return time.Now()
}

// Round returns one scrape job per current target.
func (l *Live) Round() []sources.Job {
	spread := l.Spread
	if spread == 0 {
		spread = 200 * time.Millisecond
	}
	targets := l.Store.Targets()
	jobs := make([]sources.Job, 0, len(targets))
	for _, t := range targets {
		t := t
		offset := Offset(t.ID, spread)
		jobs = append(jobs, sources.Job{Key: t.ID, Run: func(ctx context.Context) {
			if offset > 0 {
				select {
				case <-time.After(offset):
				case <-ctx.Done():
				}
			}
			res := l.scrape(ctx, t)
			l.Store.Ingest(res)
			if l.Observe != nil {
				l.Observe(t, res)
			}
		}})
	}
	return jobs
}

// scrape turns a panic anywhere in the scrape path into a classified
// error, so one hostile target can never take the dashboard down.
func (l *Live) scrape(ctx context.Context, t sources.Target) (res sources.ScrapeResult) {
	defer func() {
		if r := recover(); r != nil {
			res = sources.ScrapeResult{TargetID: t.ID, Time: l.now(),
				Err: &sources.ScrapeError{Class: sources.ErrOther, Message: "internal error while scraping (recovered)"}}
		}
	}()
	if l.Reexport != nil {
		return l.Reexport.Scrape(ctx, t)
	}
	return l.Scraper.Scrape(ctx, t)
}

// Busy marks a target whose previous scrape is still running as slow
// (Observe sees it as a Skipped result).
func (l *Live) Busy(key string) {
	res := sources.ScrapeResult{TargetID: key, Time: l.now(), Skipped: true}
	l.Store.Ingest(res)
	if l.Observe != nil {
		l.Observe(sources.Target{ID: key}, res)
	}
}

// Now is the wall clock.
func (l *Live) Now() time.Time { return l.now() }

// Snapshot derives the fleet view now.
func (l *Live) Snapshot(window time.Duration) *sources.Snapshot {
	return l.Store.SnapshotWith(l.now(), window, l.Thresholds)
}

// Detail returns one target's full history for the drill-down
// (sources.DetailBackend).
func (l *Live) Detail(targetID string, at time.Time, window time.Duration) *sources.WorkerDetail {
	if at.IsZero() {
		at = l.now()
	}
	return l.Store.Detail(at, targetID, window)
}

var _ sources.DetailBackend = (*Live)(nil)
