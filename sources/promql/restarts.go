package promql

import (
	"context"
	"sort"
	"strconv"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/sources/schema"
)

// Restarts through a query server: Prometheus keeps no restart events, so
// pdtop derives them from two indicators per worker and step (see
// restartsQuery) and keeps the events itself, like the store does for
// direct scraping.

// runRestarts is the restart job: it scans the restart indicators from
// the last step it scanned to the newest, at chart-step resolution. The
// first scan covers one rate window back, so restarts are those seen since
// pdtop started plus those of the window before (a longer backfill would
// cost one evaluation of resets() over every worker's counters per step).
func (b *Backend) runRestarts(ctx context.Context) {
	defer b.recovered(keyRestarts, "the restart scan")
	b.mu.Lock()
	window, round := b.window, b.rounds
	st := b.charts
	b.mu.Unlock()
	at := b.evalTime()
	spec := b.chartSpec(at, window)
	w := effectiveWindow(window, b.scrapeInterval())
	end := spec.ends[len(spec.ends)-1]
	rid := spec.step.String() + "/" + spec.span.String() + "/" + w.String() + "/" + boolStr(b.usingRules())
	from := end.Add(-w).Truncate(spec.step)
	if st.restartsID == rid && !st.restartsEnd.IsZero() && !st.restartsEnd.Before(from) {
		from = st.restartsEnd
	} else {
		st.restarts, st.restartsID, st.restartsEnd = map[string]*restartScan{}, rid, time.Time{}
	}
	if st.restartsEnd.Equal(end) {
		return // no new step
	}
	q := b.restartsQuery(w, spec.span)
	if b.usingRules() {
		q = b.recordedRestarts(w)
	}
	m, fail := b.c.series(ctx, "restarts", q, v1.Range{Start: from, End: end, Step: spec.step})
	b.mu.Lock()
	defer b.mu.Unlock()
	if fail != nil {
		b.logFailures([]*queryFailure{fail}, nil)
		if ev := b.server.report(keyRestarts, b.opts.Clock(), fail.err, nil, round); ev != nil {
			b.addEvent(*ev)
		}
		return
	}
	if ev := b.server.report(keyRestarts, b.opts.Clock(), nil, nil, round); ev != nil {
		b.addEvent(*ev)
	}
	if b.charts.restartsID != st.restartsID {
		b.charts.restarts = map[string]*restartScan{}
	}
	c := &b.charts
	c.restarts, c.restartsID, c.restartsEnd = st.restarts, st.restartsID, st.restartsEnd
	for _, e := range b.restartEvents(c, m, from, spec) {
		if b.noteRestart(e) {
			b.addEvent(e)
		}
	}
	b.logFailures(nil, []string{"restarts"})
}

// restartsQuery is, per worker and step, two restart indicators, tagged
// pdtop_kind: "reset", the most resets() any restart counter saw within
// the rate window w ending at the step; "start", the number of scheduler
// pids first seen within the last span (not in the window before it) when
// older pids of the worker are in the window too — a young worker with
// several schedulers has only new pids, which is not a restart — or the
// changes of a startup constant. Only non-zero values are returned.
func (b *Backend) restartsQuery(w, span time.Duration) string {
	return restartIndicators(b.plan, w, span) + " > 0"
}

// restartIndicators is restartsQuery without the final filter (the
// recording rule keeps zeros out of it the same way).
func restartIndicators(p *plan, w, span time.Duration) string {
	r := "[" + dur(w) + "]"
	var resets []string
	for i, name := range schema.RestartCounters() {
		resets = append(resets, tag("max by ("+p.ids()+") (resets("+vs([]string{name}, p.sel...)+r+"))", "pdtop_c", strconv.Itoa(i)))
	}
	pids := vs(schema.PIDGauges(), concat(p.sel, []Matcher{Ne("pid", "")})...)
	byPid := func(rng string) string { return "group by (" + p.ids() + ", pid) (last_over_time(" + pids + rng + "))" }
	recent := byPid("[" + dur(span) + "]")
	before := byPid("[" + dur(w) + "] offset " + dur(span))
	all := byPid("[" + dur(w+span) + "]")
	fresh := "count by (" + p.ids() + ") (" + recent + " unless on (" + p.ids() + ", pid) " + before + ")"
	starts := []string{"(" + fresh + ") < (count by (" + p.ids() + ") (" + all + "))"}
	for i, name := range schema.StartupConstants() {
		starts = append(starts, tag("max by ("+p.ids()+") (changes("+vs([]string{name}, p.sel...)+r+"))", "pdtop_c", strconv.Itoa(i)))
	}
	return ors([]string{
		tag("(max by ("+p.ids()+") ("+ors(resets)+") > 0)", "pdtop_kind", "reset"),
		tag("(max by ("+p.ids()+") ("+ors(starts)+") > 0)", "pdtop_kind", "start"),
	})
}

// restartScan is the restart detector's state per worker between rounds.
type restartScan struct {
	reset, start float64 // indicator values at the last step scanned
	// absorb counts restarts seen by a new pid whose counters have not
	// come back yet: their resets() growth is the same restart (SGLang
	// exposes a counter only once it is non-zero), as in the store.
	absorb int
}

// restartEvents turns growing indicators into restart events, at the step
// where an indicator grew. m is the restarts query over steps of
// spec.step from 'from'.
func (b *Backend) restartEvents(c *chartCache, m model.Matrix, from time.Time, spec chartSpec) []sources.Event {
	if m == nil {
		return nil
	}
	type pts struct{ reset, start map[int64]float64 }
	byInst := map[string]*pts{}
	for _, s := range m {
		inst := string(s.Metric[model.LabelName(b.plan.inst)])
		p := byInst[inst]
		if p == nil {
			p = &pts{reset: map[int64]float64{}, start: map[int64]float64{}}
			byInst[inst] = p
		}
		dst := p.reset
		if s.Metric["pdtop_kind"] == "start" {
			dst = p.start
		}
		for _, v := range s.Values {
			dst[int64(v.Timestamp)] = float64(v.Value)
		}
	}
	for inst := range c.restarts {
		if byInst[inst] == nil {
			byInst[inst] = &pts{} // no indicator any more: back to zero
		}
	}
	end := spec.ends[len(spec.ends)-1]
	var out []sources.Event
	for inst, p := range byInst {
		st := c.restarts[inst]
		if st == nil {
			st = &restartScan{}
			c.restarts[inst] = st
		}
		for t := from; !t.After(end); t = t.Add(spec.step) {
			ms := t.UnixMilli()
			r, s := p.reset[ms], p.start[ms]
			switch {
			case s > st.start:
				out = append(out, sources.Event{Time: t, TargetID: sanitizeName(inst), Name: sanitizeName(inst), Kind: "restart",
					Detail: "new scheduler pid (or a changed start time)"})
				if r <= st.reset {
					st.absorb++
				}
			case r > st.reset && st.absorb > 0:
				st.absorb--
			case r > st.reset:
				out = append(out, sources.Event{Time: t, TargetID: sanitizeName(inst), Name: sanitizeName(inst), Kind: "restart",
					Detail: "counter went down (resets() within the window)"})
			}
			st.reset, st.start = r, s
		}
	}
	c.restartsEnd = end
	sort.Slice(out, func(i, j int) bool { return out[i].Time.Before(out[j].Time) })
	return out
}

// noteRestart records a restart event unless one for the same worker lies
// within two chart steps of it (a re-scan of the same restart).
func (b *Backend) noteRestart(e sources.Event) bool {
	slack := 2 * b.chartStepGuess()
	for _, t := range b.restart[e.TargetID] {
		if d := e.Time.Sub(t); d < slack && d > -slack {
			return false
		}
	}
	b.restart[e.TargetID] = append(b.restart[e.TargetID], e.Time)
	return true
}

func (b *Backend) chartStepGuess() time.Duration {
	if b.hist != nil {
		return b.hist.spec.step
	}
	return 5 * time.Second
}
