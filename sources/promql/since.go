package promql

import (
	"math"
	"sort"
	"strconv"
	"time"

	"github.com/pdtop/pdtop/sources"
)

// A worker restarted inside the window gets its row hit since the restart
// (the new process alone), as with direct scraping: WorkerView.Hit with
// Since set, and the whole-window figure in HitWindow. The restart times
// are the backend's restart events (runRestarts) known when the instant
// job starts — from the restart scans of earlier rounds, or of this round
// if it finished first — so a restart counts this way from the round
// after its event appears; until then the row keeps the window figure with
// Since zero (and the diagnosis reads the new process from the history).

// sinceName is the query name of the since-restart hits of the rows whose
// latest restart was at t: one query per distinct restart time (events sit
// on chart steps, so workers restarted together share one), named by the
// time so a failed query keeps the result counted from the same restart.
func sinceName(t time.Time) string {
	return "row_hit_since_" + strconv.FormatInt(t.UnixMilli(), 10)
}

// sinceQueries are the since-restart hit queries of the rows with a
// restart event within the rate window w before at (server time, like the
// events); since maps each such row's instance to its restart time, for
// the decoder.
func (b *Backend) sinceQueries(at time.Time, w time.Duration, rows []rowRef) (qs []query, since map[string]time.Time) {
	b.mu.Lock()
	latest := map[string]time.Time{}
	for _, r := range rows {
		if ts := b.restart[sanitizeName(r.inst)]; len(ts) > 0 {
			latest[r.inst] = ts[len(ts)-1]
		}
	}
	b.mu.Unlock()
	groups := map[time.Time][]string{}
	for inst, t := range latest {
		if t.Before(at.Add(-w)) || t.After(at) {
			continue
		}
		groups[t] = append(groups[t], inst)
	}
	if len(groups) == 0 {
		return nil, nil
	}
	scrape := b.scrapeInterval()
	since = map[string]time.Time{}
	for t, insts := range groups {
		sort.Strings(insts)
		for _, inst := range insts {
			since[inst] = t
		}
		d := at.Sub(t)
		if d < time.Millisecond {
			d = time.Millisecond
		}
		inc := time.Duration(math.Ceil(float64(d)/float64(scrape))) * scrape
		if inc < 2*scrape {
			inc = 2 * scrape // an increase needs two samples
		}
		hit, total := b.plan.sinceRestartHitTerms(d, inc, d+w, []Matcher{OneOf(b.plan.inst, insts)})
		qs = append(qs, query{sinceName(t), ors([]string{tag(hit, sigTag, cHit), tag(total, sigTag, cTotal)})})
	}
	sort.Slice(qs, func(i, j int) bool { return qs[i].name < qs[j].name })
	return qs, since
}

// sinceHit is a row's hit since its restart at t from the frame's
// since-restart query: Present only from sources.MinTokensSinceRestart
// prompt tokens, Since set either way (so it reads n/a, never the old
// process's figure). ok is false when the row has no such query.
func (d *decoder) sinceHit(inst string, memo map[string]map[string]sources.HitRatio) (sources.HitRatio, bool) {
	t, ok := d.f.since[inst]
	if !ok {
		return sources.HitRatio{}, false
	}
	name := sinceName(t)
	hs, ok := memo[name]
	if !ok {
		hs = d.hits(name, d.b.plan.inst)
		memo[name] = hs
	}
	h := hs[inst]
	out := sources.HitRatio{Unit: "tokens", Since: t, Source: "since the restart", Hit: h.Hit, Total: h.Total}
	if h.Source != "" {
		out.Source = h.Source + ", since the restart"
	}
	if h.Total >= sources.MinTokensSinceRestart {
		out.Present = true
		out.Ratio = h.Ratio
	}
	return out, true
}
