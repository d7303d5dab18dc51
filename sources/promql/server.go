package promql

import (
	"strconv"
	"time"

	"github.com/pdtop/pdtop/sources"
)

// Back-off after the server said it is overloaded (503, or a query that
// timed out on the server): doubling from minBackoff up to maxBackoff.
const (
	minBackoff = time.Second
	maxBackoff = 30 * time.Second
)

// serverState is the query server seen as a target: its health, its last
// failure, and the facts the targets view shows about it.
type serverState struct {
	id          string
	health      sources.Health
	lastErr     *sources.ScrapeError
	lastSuccess time.Time
	duration    time.Duration // of the last instant round
	slow        bool          // a job was still running at a tick
	series      int           // series received in the last instant round

	backoff      time.Duration
	backoffUntil time.Time
	backoffRound int // the round that last doubled the back-off

	// skew is the server's clock minus the local clock (queries are
	// evaluated on the server's clock).
	skew     time.Duration
	skewSeen bool
	version  string
	// scrapeInterval is the server's scrape interval for the workers,
	// detected from sample counts when not configured.
	scrapeInterval time.Duration
	// ruleWindows are the windows pdtop's recording rules were found for;
	// rules is true when the last round read them.
	ruleWindows map[string]bool
	rules       bool
	// failures are the failed queries of the last instant round (tests
	// and diagnostics read them).
	failures []*queryFailure
	warnings []string
	// jobs holds each job's latest failure (absent: it worked).
	jobs map[string]*sources.ScrapeError
}

// report records one job's outcome (err nil: its queries all worked;
// warnings: they answered with warnings) and re-derives the server's
// health from the latest outcome of every job, so a job that keeps failing
// keeps the server stale while the others succeed. A 503 (overloaded)
// starts or doubles the back-off, once per round whichever job saw it.
// It returns the event of a health transition, if any.
func (s *serverState) report(job string, now time.Time, err *sources.ScrapeError, warnings []string, round int) *sources.Event {
	if s.jobs == nil {
		s.jobs = map[string]*sources.ScrapeError{}
	}
	prev := s.health
	if err == nil {
		delete(s.jobs, job)
		s.lastSuccess = now
		if len(s.jobs) == 0 {
			s.backoff = 0
		}
	} else {
		if err.Class == sources.ErrHTTP5xx && err.Status == 503 && s.backoffRound != round {
			s.backoffRound = round
			s.backoff *= 2
			if s.backoff < minBackoff {
				s.backoff = minBackoff
			}
			if s.backoff > maxBackoff {
				s.backoff = maxBackoff
			}
			s.backoffUntil = now.Add(s.backoff)
		}
		if err.Class == sources.ErrHTTP5xx && err.Status == 503 && s.backoff > 0 {
			e := *err
			e.Message += " " + s.backoff.String()
			err = &e
		}
		s.jobs[job] = err
	}
	if job == keyNow {
		s.warnings = warnings
	}
	var worstErr *sources.ScrapeError
	for _, k := range []string{keyNow, keyHistory, keyRestarts} {
		if e := s.jobs[k]; e != nil && (worstErr == nil || rankErr(e) < rankErr(worstErr)) {
			worstErr = e
		}
	}
	switch {
	case worstErr != nil && s.lastSuccess.IsZero():
		s.health, s.lastErr = sources.Down, worstErr
	case worstErr != nil:
		s.health, s.lastErr = sources.Stale, worstErr
	case len(s.warnings) > 0:
		s.health = sources.Stale
		s.lastErr = &sources.ScrapeError{Class: ErrPartial, Message: "partial data: " + s.warnings[0] + more(len(s.warnings)-1)}
	default:
		s.health, s.lastErr = sources.Up, nil
	}
	switch {
	case prev == sources.Up && s.health != sources.Up:
		return &sources.Event{Time: now, TargetID: s.id, Name: "prometheus", Kind: "stale", Detail: s.lastErr.Error()}
	case prev != sources.Up && prev != sources.Pending && s.health == sources.Up:
		return &sources.Event{Time: now, TargetID: s.id, Name: "prometheus", Kind: "recovered"}
	}
	return nil
}

// rankErr orders failures for display: an overload first (it changes what
// pdtop does), then a bad query, then anything else.
func rankErr(e *sources.ScrapeError) int {
	switch {
	case e.Status == 503:
		return 0
	case e.Class == ErrQuery:
		return 1
	}
	return 2
}

func more(n int) string {
	if n <= 0 {
		return ""
	}
	return " (+" + strconv.Itoa(n) + " more)"
}

// status is the server as a target row.
func (s *serverState) status(now time.Time) sources.TargetStatus {
	st := sources.TargetStatus{
		ID: s.id, Name: "prometheus", Role: sources.RoleUnknown, Origin: sources.OriginFlag,
		Health: s.health, LastError: s.lastErr, LastSuccess: s.lastSuccess,
		Duration: s.duration, Series: s.series, Slow: s.slow,
		Engine: "prometheus", Generation: s.generation(),
	}
	if !s.lastSuccess.IsZero() {
		st.Age = now.Sub(s.lastSuccess)
	}
	return st
}

// generation describes the server: API, version, clock skew, rules.
func (s *serverState) generation() string {
	g := "Prometheus API"
	if s.version != "" {
		g += " " + s.version
	}
	if s.skewSeen && (s.skew > time.Second || s.skew < -time.Second) {
		sign := "+"
		if s.skew < 0 {
			sign = ""
		}
		g += ", clock skew " + sign + s.skew.Round(100*time.Millisecond).String()
	}
	if s.rules {
		g += ", recording rules"
	}
	return g
}
