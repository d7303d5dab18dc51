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
	// failures are the failed queries of the last round, for the log.
	failures []*queryFailure
	warnings []string
}

// ok records a round whose queries all worked (warnings aside).
func (s *serverState) ok(now time.Time, warnings []string) (ev *sources.Event) {
	prev := s.health
	s.backoff = 0
	s.lastSuccess = now
	if len(warnings) > 0 {
		s.health = sources.Stale
		s.lastErr = &sources.ScrapeError{Class: ErrPartial, Message: "partial data: " + warnings[0] + more(len(warnings)-1)}
	} else {
		s.health = sources.Up
		s.lastErr = nil
	}
	if prev != sources.Up && prev != sources.Pending && s.health == sources.Up {
		return &sources.Event{Time: now, TargetID: s.id, Name: "prometheus", Kind: "recovered"}
	}
	return nil
}

// fail records a round in which some queries failed; err is the one to
// show. A 503 (overloaded) starts or doubles the back-off, once per round
// whichever of the round's jobs saw it.
func (s *serverState) fail(now time.Time, err *sources.ScrapeError, round int) (ev *sources.Event) {
	prev := s.health
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
	s.lastErr = err
	if s.lastSuccess.IsZero() {
		s.health = sources.Down
	} else {
		s.health = sources.Stale
	}
	if prev == sources.Up {
		return &sources.Event{Time: now, TargetID: s.id, Name: "prometheus", Kind: "stale", Detail: err.Error()}
	}
	return nil
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
