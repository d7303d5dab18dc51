package promql

import (
	"context"
	"math"
	"sort"
	"sync"
	"time"

	"github.com/prometheus/common/model"

	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/sources/sanitize"
	"github.com/pdtop/pdtop/sources/schema"
)

// frame is what one instant round found: each query's result by name. A
// query that failed keeps the previous round's result (carried), so one
// failing query leaves its figures stale instead of blanking the rest.
type frame struct {
	at      time.Time     // evaluation time, local clock
	window  time.Duration // the window the rates cover
	v       map[string]model.Vector
	carried map[string]bool
	rows    []rowRef
	gens    map[string]string    // gateway instance → generation
	gwSeen  map[string]time.Time // gateway instance → last fresh samples
	// since is each row restarted inside the window (instance) → the
	// restart its since-restart hit query counts from (see since.go).
	since map[string]time.Time
}

// rowRef is a worker that has a row.
type rowRef struct {
	inst string
	role sources.Role
}

// runAll runs queries concurrently into f; a failed query keeps prev's
// result and is returned.
func (b *Backend) runAll(ctx context.Context, f, prev *frame, at time.Time, qs []query) []*queryFailure {
	var mu sync.Mutex
	var wg sync.WaitGroup
	var fails []*queryFailure
	for _, q := range qs {
		wg.Add(1)
		go func(q query) {
			defer wg.Done()
			v, fail := b.c.instant(ctx, q.name, q.q, at)
			mu.Lock()
			defer mu.Unlock()
			if fail != nil {
				fails = append(fails, fail)
				if prev != nil && prev.v[q.name] != nil {
					f.v[q.name] = prev.v[q.name]
					f.carried[q.name] = true
				}
				return
			}
			f.v[q.name] = v
		}(q)
	}
	wg.Wait()
	return fails
}

// effectiveWindow is the rate window: the dashboard's, but never shorter
// than two scrape intervals (a rate needs two samples).
func effectiveWindow(w, scrape time.Duration) time.Duration {
	if min := 2 * scrape; w < min {
		return min
	}
	return w
}

func (b *Backend) scrapeInterval() time.Duration {
	if b.opts.ScrapeInterval > 0 {
		return b.opts.ScrapeInterval
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.server.scrapeInterval > 0 {
		return b.server.scrapeInterval
	}
	return 15 * time.Second // Prometheus' default until detected
}

// runNow is the instant job: discovery, rows, pools and gateways at now.
func (b *Backend) runNow(ctx context.Context) {
	defer b.recovered(keyNow, "the instant queries")
	start := b.opts.Clock()
	b.mu.Lock()
	window, prev, rounds := b.window, b.now, b.rounds
	gens := make(map[string]string, len(b.gens))
	for k, v := range b.gens {
		gens[k] = v
	}
	b.mu.Unlock()
	b.c.takeWarnings()

	var fails []*queryFailure
	if rounds%30 == 1 || b.needsCalibration() {
		fails = append(fails, b.calibrate(ctx)...)
	}
	at := b.evalTime()
	w := effectiveWindow(window, b.scrapeInterval())
	f := &frame{at: at.Add(-b.skew()), window: w, v: map[string]model.Vector{}, carried: map[string]bool{}}

	b.mu.Lock()
	recorded := b.server.ruleWindows[dur(w)] && !b.opts.IgnoreRules
	b.server.rules = recorded
	b.mu.Unlock()
	fails = append(fails, b.runAll(ctx, f, prev, at, b.phase1(w, gens, b.opts.Rows, recorded))...)
	f.rows = decodeRows(f.v["rows"], b.plan)
	f.gens = b.recognise(f, gens)
	if fail := b.probeEmpty(ctx, f, at); fail != nil {
		fails = append(fails, fail)
	}

	var qs []query
	insts := make([]string, len(f.rows))
	for i, r := range f.rows {
		insts[i] = r.inst
	}
	qs = append(qs, b.rowQueries(w, insts)...)
	sq, since := b.sinceQueries(at, w, f.rows)
	qs = append(qs, sq...)
	f.since = since
	byGen := map[string][]string{}
	for inst, g := range f.gens {
		byGen[g] = append(byGen[g], inst)
	}
	for g, gis := range byGen {
		sort.Strings(gis)
		qs = append(qs, b.gatewayQueries(w, g, gis, insts)...)
	}
	fails = append(fails, b.runAll(ctx, f, prev, at, qs)...)
	warnings := b.c.takeWarnings()

	end := b.opts.Clock()
	b.mu.Lock()
	defer b.mu.Unlock()
	b.now = f
	b.gens = f.gens
	if !f.carried["gw_names"] {
		if b.gwSeen == nil {
			b.gwSeen = map[string]time.Time{}
		}
		for _, s := range f.v["gw_names"] {
			b.gwSeen[string(s.Metric[model.LabelName(b.plan.inst)])] = f.at
		}
	}
	f.gwSeen = make(map[string]time.Time, len(b.gwSeen))
	for k, v := range b.gwSeen {
		if _, ok := f.gens[k]; ok {
			f.gwSeen[k] = v
		} else {
			delete(b.gwSeen, k)
		}
	}
	b.server.duration = end.Sub(start)
	b.server.slow = false
	b.server.failures = fails
	b.server.warnings = warnings
	names := make([]string, 0, len(f.v))
	for n := range f.v {
		names = append(names, n)
	}
	b.logFailures(fails, names)
	b.server.series = 0
	for _, v := range f.v {
		b.server.series += len(v)
	}
	var worstErr *sources.ScrapeError
	if len(fails) > 0 {
		worstErr = worst(fails)
	}
	if ev := b.server.report(keyNow, end, worstErr, warnings, rounds); ev != nil {
		b.addEvent(*ev)
	}
}

// worst picks the failure to show (see rankErr).
func worst(fails []*queryFailure) *sources.ScrapeError {
	best := fails[0].err
	for _, f := range fails[1:] {
		if rankErr(f.err) < rankErr(best) {
			best = f.err
		}
	}
	return best
}

func (b *Backend) skew() time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.server.skew
}

func (b *Backend) needsCalibration() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return !b.server.skewSeen || (b.opts.ScrapeInterval == 0 && b.server.scrapeInterval == 0)
}

// calibrate measures the server's clock against ours, the scrape interval
// of the workers (median samples per minute) and whether pdtop's recording
// rules are loaded.
func (b *Backend) calibrate(ctx context.Context) []*queryFailure {
	var fails []*queryFailure
	t0 := b.opts.Clock()
	v, fail := b.c.instant(ctx, "server_time", "time()", time.Time{})
	t1 := b.opts.Clock()
	if fail != nil {
		return []*queryFailure{fail}
	}
	if len(v) == 1 {
		server := time.UnixMilli(int64(float64(v[0].Value) * 1000))
		local := t0.Add(t1.Sub(t0) / 2)
		b.mu.Lock()
		b.server.skew = server.Sub(local).Round(10 * time.Millisecond)
		if d := b.server.skew; d > -250*time.Millisecond && d < 250*time.Millisecond {
			b.server.skew = 0 // within the round trip: not a skew
		}
		b.server.skewSeen = true
		b.mu.Unlock()
	}
	at := b.evalTime()
	if b.opts.ScrapeInterval == 0 {
		if si, fail := b.measureScrapeInterval(ctx, at); fail != nil {
			fails = append(fails, fail)
		} else if si > 0 {
			b.mu.Lock()
			b.server.scrapeInterval = si
			b.mu.Unlock()
		}
	}
	v, fail = b.c.instant(ctx, "recording_rules", "count by ("+windowLabel+") ("+vs([]string{ruleWorkers}, b.plan.sel...)+")", at)
	if fail == nil {
		windows := map[string]bool{}
		for _, s := range v {
			windows[string(s.Metric[windowLabel])] = true
		}
		b.mu.Lock()
		b.server.ruleWindows = windows
		b.mu.Unlock()
	}
	return fails
}

// measureScrapeInterval is the median spacing of the raw samples of one
// worker's running-requests gauge over the last two minutes; 0 when no
// worker is known yet or it has too few samples.
func (b *Backend) measureScrapeInterval(ctx context.Context, at time.Time) (time.Duration, *queryFailure) {
	b.mu.Lock()
	var inst string
	if b.now != nil {
		for _, r := range b.now.rows {
			inst = r.inst
			break
		}
	}
	b.mu.Unlock()
	if inst == "" { // no rows yet (the first round): any one worker will do
		v, fail := b.c.instant(ctx, "scrape_interval", "topk(1, "+b.plan.liveVec()+")", at)
		if fail != nil {
			return 0, fail
		}
		if len(v) == 0 {
			return 0, nil
		}
		inst = string(v[0].Metric[model.LabelName(b.plan.inst)])
	}
	q := vs(runningNames(b.plan), concat(b.plan.sel, []Matcher{Eq(b.plan.inst, inst)})...) + "[2m]"
	m, fail := b.c.samples(ctx, "scrape_interval", q, at)
	if fail != nil {
		return 0, fail
	}
	var gaps []float64
	for _, s := range m {
		for i := 1; i < len(s.Values); i++ {
			gaps = append(gaps, float64(s.Values[i].Timestamp-s.Values[i-1].Timestamp))
		}
	}
	if len(gaps) < 3 {
		return 0, nil
	}
	sort.Float64s(gaps)
	return (time.Duration(gaps[len(gaps)/2]) * time.Millisecond).Round(100 * time.Millisecond), nil
}

// decodeRows turns the rows query into the row list: per role in
// display order, each worker once.
func decodeRows(v model.Vector, p *plan) []rowRef {
	seen := map[string]bool{}
	var out []rowRef
	for _, s := range v {
		inst := string(s.Metric[model.LabelName(p.inst)])
		if inst == "" || seen[inst] {
			continue
		}
		seen[inst] = true
		out = append(out, rowRef{inst: inst, role: sources.ParseRole(string(s.Metric[model.LabelName(p.role)]))})
	}
	sort.Slice(out, func(i, j int) bool {
		if a, b := out[i].role.Order(), out[j].role.Order(); a != b {
			return a < b
		}
		return out[i].inst < out[j].inst
	})
	return out
}

// recognise names each gateway instance's generation from the metric
// names it exposes now; an instance seen before but silent now keeps its
// last generation (it is shown stale).
func (b *Backend) recognise(f *frame, prev map[string]string) map[string]string {
	names := map[string][]string{}
	for _, s := range f.v["gw_names"] {
		inst := string(s.Metric[model.LabelName(b.plan.inst)])
		names[inst] = append(names[inst], string(s.Metric[model.MetricNameLabel]))
	}
	reqs := map[string][]map[string]string{}
	for _, s := range f.v["gw_requests"] {
		inst := string(s.Metric[model.LabelName(b.plan.inst)])
		ls := map[string]string{}
		for _, l := range []string{"route", "method", "worker_url"} {
			if v := s.Metric[model.LabelName(l)]; v != "" {
				ls[l] = string(v)
			}
		}
		reqs[inst] = append(reqs[inst], ls)
	}
	out := map[string]string{}
	for inst, ns := range names {
		if inst == "" {
			continue
		}
		if g := schema.Recognise(ns, reqs[inst]); g != "" && g != schema.GenSGLangWorker {
			out[inst] = g
		}
	}
	for inst, g := range prev {
		if _, ok := out[inst]; !ok && len(out) < 64 {
			out[inst] = g
		}
	}
	return out
}

// value reads a sample as a finite float.
func value(s *model.Sample) (float64, bool) {
	v := float64(s.Value)
	return v, !math.IsNaN(v) && !math.IsInf(v, 0)
}

// label reads a label value from the server, made terminal-safe.
func label(m model.Metric, name string) string {
	return sanitize.Text(string(m[model.LabelName(name)]))
}

func (b *Backend) addEvent(e sources.Event) {
	b.events = append(b.events, e)
	if over := len(b.events) - 500; over > 0 {
		b.events = append(b.events[:0:0], b.events[over:]...)
	}
}
