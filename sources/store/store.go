// Package store keeps a bounded history per target and derives, once per
// tick, everything panels show: reset-aware counter rates, histogram
// quantiles from bucket deltas over the window, ratio-of-sums hit ratios,
// restarts (counter decrease, new scheduler pid, changed start marker),
// staleness, pool and fleet aggregates, and chart series. It emits an
// immutable sources.Snapshot.
//
// Times are the receive times carried by each ScrapeResult, never the wall
// clock, so replayed scrapes derive the same figures as live ones.
package store

import (
	"sort"
	"sync"
	"time"

	"github.com/pdtop/pdtop/sources"
)

// Options size the history and charts.
type Options struct {
	// Interval is the expected scrape interval (default 1s).
	Interval time.Duration
	// MaxWindow is the longest window a Snapshot may ask for (default 15m).
	MaxWindow time.Duration
	// FineSpan is how long every frame is kept (default 2m); older frames
	// are thinned to one per CoarseStep (default 5s).
	FineSpan   time.Duration
	CoarseStep time.Duration
	// ChartPoints is the most points a chart series has (default 120).
	ChartPoints int
	// ChartSpan is the shortest time a chart covers (default 5m); a longer
	// window widens the charts with it.
	ChartSpan time.Duration
	// MaxEvents is how many events are kept (default 500).
	MaxEvents int
}

func (o *Options) defaults() {
	if o.Interval <= 0 {
		o.Interval = time.Second
	}
	if o.MaxWindow <= 0 {
		o.MaxWindow = 15 * time.Minute
	}
	if o.FineSpan <= 0 {
		o.FineSpan = 2 * time.Minute
	}
	if o.CoarseStep <= 0 {
		o.CoarseStep = 5 * time.Second
	}
	if o.ChartPoints <= 0 {
		o.ChartPoints = 120
	}
	if o.ChartSpan <= 0 {
		o.ChartSpan = 5 * time.Minute
	}
	if o.ChartSpan > o.MaxWindow {
		o.ChartSpan = o.MaxWindow
	}
	if o.MaxEvents <= 0 {
		o.MaxEvents = 500
	}
}

func (o Options) fineCap() int {
	return int(o.FineSpan/o.Interval) + 2
}

func (o Options) coarseCap() int {
	return int(o.MaxWindow/o.CoarseStep) + 2
}

// Store is the fleet's history. It is safe for concurrent use.
type Store struct {
	mu      sync.Mutex
	opts    Options
	targets map[string]*targetState
	events  []sources.Event
	// started is the time of the first SetTargets: joins within
	// sources.InitialDiscovery of it are the initial discovery.
	started   time.Time
	discovery []sources.DiscoveryStatus
}

// SetDiscovery replaces the gateways' worker-list statuses shown in the
// targets view (sources.Snapshot.Discovery).
func (s *Store) SetDiscovery(ds []sources.DiscoveryStatus) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.discovery = append([]sources.DiscoveryStatus(nil), ds...)
}

// New returns an empty store.
func New(opts Options) *Store {
	opts.defaults()
	return &Store{opts: opts, targets: map[string]*targetState{}}
}

// Options returns the effective options.
func (s *Store) Options() Options { return s.opts }

// SetTargets replaces the target list. New targets start Pending; targets
// no longer listed are dropped with a "left" event, new ones after the
// first call get a "joined" event (marked Initial within
// sources.InitialDiscovery of the first call: discovery finding the
// workers that were already there). Role and name updates of known
// targets are applied in place, keeping their history.
func (s *Store) SetTargets(now time.Time, ts []sources.Target) {
	s.mu.Lock()
	defer s.mu.Unlock()
	first := len(s.targets) == 0
	if s.started.IsZero() {
		s.started = now
	}
	initial := now.Sub(s.started) < sources.InitialDiscovery
	keep := map[string]bool{}
	for _, t := range ts {
		keep[t.ID] = true
		if st, ok := s.targets[t.ID]; ok {
			st.t = t
			continue
		}
		s.targets[t.ID] = newTargetState(t, s.opts)
		if !first {
			d := t.Role.String() + " from " + string(t.Origin)
			if initial {
				d += " (initial discovery)"
			}
			s.event(sources.Event{Time: now, TargetID: t.ID, Name: t.Name, Kind: "joined", Detail: d, Initial: initial})
		}
	}
	for id, st := range s.targets {
		if !keep[id] {
			s.event(sources.Event{Time: now, TargetID: id, Name: st.t.Name, Kind: "left", Detail: st.t.Role.String()})
			delete(s.targets, id)
		}
	}
}

// Targets returns the current targets sorted by display order.
func (s *Store) Targets() []sources.Target {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]sources.Target, 0, len(s.targets))
	for _, st := range s.sorted() {
		out = append(out, st.t)
	}
	return out
}

// Ingest records one scrape result. Results for unknown targets are ignored.
func (s *Store) Ingest(r sources.ScrapeResult) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.targets[r.TargetID]
	if st == nil {
		return
	}
	if r.Skipped {
		st.slow = true
		return
	}
	st.slow = false
	st.lastAttempt = r.Time
	st.duration = r.Duration
	st.bytesWire, st.bytesBody = r.BytesWire, r.BytesBody
	if r.Err != nil || r.Obs == nil {
		err := r.Err
		if err == nil {
			err = &sources.ScrapeError{Class: sources.ErrOther, Message: "no data"}
		}
		prev := st.health
		st.lastErr = err
		if st.hist.len() > 0 {
			st.health = sources.Stale
		} else {
			st.health = sources.Down
		}
		if prev == sources.Up {
			s.event(sources.Event{Time: r.Time, TargetID: st.t.ID, Name: st.t.Name, Kind: "stale", Detail: err.Error()})
		}
		return
	}
	if st.health == sources.Stale || st.health == sources.Down && st.hist.len() > 0 {
		s.event(sources.Event{Time: r.Time, TargetID: st.t.ID, Name: st.t.Name, Kind: "recovered"})
	}
	obs := r.Obs
	st.health = sources.Up
	st.lastErr = nil
	st.via, st.directErr = r.Via, r.DirectErr
	st.lastSuccess = r.Time
	st.stats = obs.Stats
	st.generation, st.engine, st.engineRole = obs.Generation, obs.Engine, obs.EngineRole
	for sig, name := range obs.Sources {
		st.sourceNames[sig] = name
	}
	if st.samples == 0 {
		st.fresh = freshProcess(obs)
	}
	if why := st.ingest(r.Time, obs); why != "" {
		st.restarts = append(st.restarts, r.Time)
		st.restartWhy = append(st.restartWhy, why)
		s.event(sources.Event{Time: r.Time, TargetID: st.t.ID, Name: st.t.Name, Kind: "restart", Detail: why})
	}
}

func (s *Store) event(e sources.Event) {
	s.events = append(s.events, e)
	if over := len(s.events) - s.opts.MaxEvents; over > 0 {
		s.events = append(s.events[:0:0], s.events[over:]...)
	}
}

func (s *Store) sorted() []*targetState {
	out := make([]*targetState, 0, len(s.targets))
	for _, st := range s.targets {
		out = append(out, st)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if ra, rb := a.role().Order(), b.role().Order(); ra != rb {
			return ra < rb
		}
		if a.t.Name != b.t.Name {
			return a.t.Name < b.t.Name
		}
		return a.t.ID < b.t.ID
	})
	return out
}

// role is the configured role, or the engine's own hint when none was
// configured.
func (ts *targetState) role() sources.Role {
	if ts.t.Role != sources.RoleUnknown {
		return ts.t.Role
	}
	if ts.engine != "" && ts.engine != "sglang" && ts.engineRole == sources.RoleUnknown {
		return sources.RoleGateway
	}
	return ts.engineRole
}

// freshProcess reports whether an observation shows a process that has
// counted no work yet: every counter and histogram count zero or absent.
func freshProcess(obs *sources.Observation) bool {
	for _, p := range obs.Points {
		if p.Signal.Info().Kind == sources.Counter && p.Value > 0 {
			return false
		}
	}
	for _, h := range obs.Hists {
		if h.Count > 0 {
			return false
		}
	}
	return true
}
