package store

import (
	"time"

	"github.com/pdtop/pdtop/sources"
)

// Detail returns the full history of one target for the drill-down: every
// unkeyed scalar signal per chart step (gauges as values, counters as
// rates), p50/p99 per step of every histogram signal, the actual hit per
// step, the restarts with their reasons and the raw metric names. The
// steps are those of Snapshot(now, window)'s charts, so the two line up.
// It returns nil for an unknown target.
func (s *Store) Detail(now time.Time, targetID string, window time.Duration) *sources.WorkerDetail {
	s.mu.Lock()
	defer s.mu.Unlock()
	ts := s.targets[targetID]
	if ts == nil {
		return nil
	}
	if window <= 0 {
		window = time.Minute
	}
	if window > s.opts.MaxWindow {
		window = s.opts.MaxWindow
	}
	cs := s.chartBounds(now, window)
	idx := ts.stepIndex(cs)
	d := &sources.WorkerDetail{
		TargetID: targetID,
		Time:     now,
		Step:     cs.step,
		Span:     cs.total,
		History:  map[sources.Signal][]float64{},
		P50:      map[sources.Signal][]float64{},
		P99:      map[sources.Signal][]float64{},
		Sources:  map[sources.Signal]string{},
	}
	for id, col := range ts.scalars {
		if id.key != "" {
			continue
		}
		d.History[id.sig] = ts.stepSeries(col, idx)
	}
	for id := range ts.hists {
		if id.key != "" {
			continue
		}
		dists := ts.stepDists(id.sig, idx)
		p50, p99 := nanSlice(len(idx)), nanSlice(len(idx))
		for j, dd := range dists {
			if dd != nil && !dd.empty() {
				p50[j], p99[j] = dd.quantile(0.5), dd.quantile(0.99)
			}
		}
		d.P50[id.sig], d.P99[id.sig] = p50, p99
	}
	d.HitHistory = ts.hitHistory(idx)
	for i, t := range ts.restarts {
		why := ""
		if i < len(ts.restartWhy) {
			why = ts.restartWhy[i]
		}
		d.Restarts = append(d.Restarts, sources.Restart{Time: t, Reason: why})
	}
	for sig, name := range ts.sourceNames {
		d.Sources[sig] = name
	}
	return d
}
