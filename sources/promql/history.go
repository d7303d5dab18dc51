package promql

import (
	"context"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/sources/schema"
)

// chartSpec says where chart points fall, as the store places them: point
// j summarises (ends[j] − span, ends[j]]; ends are multiples of step so
// points do not wobble between refreshes; at most ChartPoints points.
type chartSpec struct {
	ends       []time.Time // server clock
	step, span time.Duration
}

func (b *Backend) chartSpec(at time.Time, window time.Duration) chartSpec {
	o := b.opts
	if window < o.ChartSpan {
		window = o.ChartSpan
	}
	step := window / time.Duration(o.ChartPoints)
	if step < o.Interval {
		step = o.Interval
	}
	if window > 2*time.Minute && step < 5*time.Second {
		step = 5 * time.Second // the store's coarse step beyond its fine span
	}
	step = step.Round(time.Second)
	if step <= 0 {
		step = time.Second
	}
	n := int(window / step)
	if n < 1 {
		n = 1
	}
	cs := chartSpec{step: step, span: step}
	if min := 5 * o.Interval; cs.span < min {
		cs.span = min
	}
	if min := 2 * b.scrapeInterval(); cs.span < min {
		cs.span = min // a rate needs two samples
	}
	end := at.Truncate(step)
	cs.ends = make([]time.Time, n)
	for j := range cs.ends {
		cs.ends[j] = end.Add(-time.Duration(n-1-j) * step)
	}
	return cs
}

// chartCache keeps fleet chart points between rounds so each round asks
// only for the newest steps (incremental backfill).
type chartCache struct {
	id      string // step, span and the queries' identity; a change resets
	pts     map[string]map[int64]float64
	lastEnd time.Time
	// rows identifies the row set whose sparklines were last fetched.
	rows string
	// restartsEnd is the last step scanned for restarts.
	restartsEnd time.Time
	restartsID  string
	restarts    map[string]*restartScan // per worker
}

// history is what the last range round found.
type history struct {
	spec chartSpec
	// charts by series name, one point per spec.ends (NaN = gap).
	charts map[string][]float64
	// predicted hit/total per gateway instance per point.
	predHit, predTotal map[string][]float64
	// rows: per worker per signal per point; hit and total per point.
	rows             map[string]map[sources.Signal][]float64
	rowHit, rowTotal map[string][]float64
}

// Series names kept in the chart cache.
const (
	cInput, cOutput               = "input_tps", "output_tps"
	cTTFT50, cTTFT99              = "ttft_p50", "ttft_p99"
	cITL50, cITL99                = "itl_p50", "itl_p99"
	cHit, cTotal                  = "hit", "total"
	rowHistoryLimit               = 200 // rows whose sparklines are fetched
	histGaugeQ, histCounterQ, hHQ = "row_history_gauges", "row_history_counters", "row_history_hit"
)

// historySignals get a per-step history on every row (as the store does).
var historySignals = []sources.Signal{
	sources.SigWaiting, sources.SigRunning, sources.SigKVUsage,
	sources.SigBootstrapQueue, sources.SigInflightQueue,
	sources.SigPreallocQueue, sources.SigTransferQueue,
	sources.SigPromptTokens, sources.SigGenerationTokens,
}

// runHistory is the range job.
func (b *Backend) runHistory(ctx context.Context) {
	defer b.recovered(keyHistory, "the range queries")
	b.mu.Lock()
	window, now, round := b.window, b.now, b.rounds
	cache := b.charts
	b.mu.Unlock()
	at := b.evalTime()
	spec := b.chartSpec(at, window)
	pd := false
	var rows []rowRef
	var gens map[string]string
	if now != nil {
		rows, gens = now.rows, now.gens
		for _, s := range now.v["workers"] {
			r := sources.ParseRole(label(s.Metric, b.plan.role))
			if r == sources.RolePrefill || r == sources.RoleDecode {
				pd = true
			}
		}
	}
	p := b.plan
	id := spec.step.String() + "/" + spec.span.String() + "/" + boolStr(pd) + "/" + boolStr(b.usingRules())
	if cache.id != id {
		cache = chartCache{id: id, pts: map[string]map[int64]float64{}}
	}
	rowKey := ""
	for _, r := range rows {
		rowKey += r.inst + "\x00"
	}
	if end := spec.ends[len(spec.ends)-1]; end.Equal(cache.lastEnd) && rowKey == cache.rows {
		return // no chart step has completed since the last round: nothing new to ask
	}
	from := spec.ends[0]
	if !cache.lastEnd.IsZero() && cache.lastEnd.After(from) {
		from = cache.lastEnd.Add(-spec.step) // the newest point may have grown
	}
	end := spec.ends[len(spec.ends)-1]
	full := v1.Range{Start: spec.ends[0], End: end, Step: spec.step}
	tail := v1.Range{Start: from, End: end, Step: spec.step}

	b.mu.Lock()
	recorded := b.server.rules
	b.mu.Unlock()
	charts := b.chartQueries(spec, pd, gens, recorded)
	res := map[string]model.Matrix{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	var fails []*queryFailure
	run := func(name, q string, r v1.Range) {
		defer wg.Done()
		m, fail := b.c.series(ctx, name, q, r)
		mu.Lock()
		defer mu.Unlock()
		if fail != nil {
			fails = append(fails, fail)
			return
		}
		res[name] = m
	}
	for _, q := range charts {
		wg.Add(1)
		go run(q.name, q.q, tail)
	}
	for _, q := range b.rowHistoryQueries(spec, rows) {
		wg.Add(1)
		go run(q.name, q.q, full)
	}
	wg.Wait()

	h := &history{spec: spec, charts: map[string][]float64{}}
	for name, m := range res {
		switch name {
		case cInput, cOutput:
			cache.merge(name, m, "")
		case "ttft", "itl":
			for _, s := range m {
				cache.merge(name+"_p"+map[string]string{"0.5": "50", "0.99": "99"}[string(s.Metric["pdtop_q"])], model.Matrix{s}, "")
			}
		case "hit":
			for _, s := range m {
				cache.merge(string(s.Metric[sigTag]), model.Matrix{s}, "")
			}
		case "predicted":
			for _, s := range m {
				cache.merge("pred_"+string(s.Metric[sigTag])+"/"+label(s.Metric, p.inst), model.Matrix{s}, "")
			}
		}
	}
	if len(res) > 0 {
		cache.lastEnd = end
	}
	if _, ok := res[histGaugeQ]; ok || len(rows) == 0 {
		cache.rows = rowKey
	}
	cache.prune(spec.ends[0])
	h.fill(&cache, spec, res, p)

	b.mu.Lock()
	defer b.mu.Unlock()
	cache.restarts, cache.restartsEnd, cache.restartsID = b.charts.restarts, b.charts.restartsEnd, b.charts.restartsID
	b.charts = cache
	b.hist = h
	names := make([]string, 0, len(res))
	for n := range res {
		names = append(names, n)
	}
	b.logFailures(fails, names)
	// Charts keep their cached points; a failure shows on the server
	// target like any other.
	var worstErr *sources.ScrapeError
	if len(fails) > 0 {
		worstErr = worst(fails)
	}
	if ev := b.server.report(keyHistory, b.opts.Clock(), worstErr, nil, round); ev != nil {
		b.addEvent(*ev)
	}
}

func boolStr(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

func (b *Backend) usingRules() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.server.rules
}

// chartQueries are the fleet chart series as range queries: from the raw
// series, or from the recorded pool series when the rules exist (their
// points are then averages over the rules' window, not over one step).
func (b *Backend) chartQueries(spec chartSpec, pd bool, gens map[string]string, recorded bool) []query {
	p := b.plan
	quant := func(buckets string) string {
		return ors([]string{tag("histogram_quantile(0.5, "+buckets+")", "pdtop_q", "0.5"), tag("histogram_quantile(0.99, "+buckets+")", "pdtop_q", "0.99")})
	}
	var qs []query
	if recorded {
		w := b.effectiveWindowNow()
		m := append(append([]Matcher(nil), p.sel...), Eq(windowLabel, dur(w)))
		in, out := m, m
		if pd {
			in = append(append([]Matcher(nil), m...), Ne(p.role, "decode"))
			out = append(append([]Matcher(nil), m...), Ne(p.role, "prefill"))
		}
		rec := func(name string, ms []Matcher, by ...string) string {
			return "sum by (" + strings.Join(by, ", ") + ") (" + vs([]string{name}, ms...) + ")"
		}
		qs = []query{
			{cInput, rec(poolRule(sources.SigPromptTokens, ""), in)},
			{cOutput, "(" + rec(poolRule(sources.SigRealtimeDecode, ""), out) + ") or (" + rec(poolRule(sources.SigGenerationTokens, ""), out) + ")"},
			{"ttft", quant(rec(poolRule(sources.SigTTFT, "_bucket"), out, "le"))},
			{"itl", quant(rec(poolRule(sources.SigITL, "_bucket"), out, "le"))},
			{"hit", rec(ruleHit, in, sigTag)},
		}
	} else {
		members := func(exclude string) string {
			if !pd {
				return p.roleVec(spec.span)
			}
			return p.roleVec(spec.span, Ne(p.role, exclude))
		}
		inputs, outputs := members("decode"), members("prefill")
		perInst := func(s sources.Signal, f fn, suffix string, by ...string) string {
			return p.workerSeries(p.rules[s], f, spec.span, suffix, nil, append([]string{p.inst}, by...)...)
		}
		join := func(x, roles string) string { return "(" + x + ") * on (" + p.inst + ") group_left () " + roles }
		hit, total := p.hitTerms(spec.span, nil)
		output := "(" + perInst(sources.SigRealtimeDecode, fnRate, "") + ") or (" + perInst(sources.SigGenerationTokens, fnRate, "") + ")"
		qs = []query{
			{cInput, "sum(" + join(perInst(sources.SigPromptTokens, fnRate, ""), inputs) + ")"},
			{cOutput, "sum(" + join(output, outputs) + ")"},
			{"ttft", quant("sum by (le) (" + join(perInst(sources.SigTTFT, fnRate, "_bucket", "le"), outputs) + ")")},
			{"itl", quant("sum by (le) (" + join(perInst(sources.SigITL, fnRate, "_bucket", "le"), outputs) + ")")},
			{"hit", ors([]string{
				tag("sum("+join(hit, inputs)+")", sigTag, cHit),
				tag("sum("+join(total, inputs)+")", sigTag, cTotal),
			})},
		}
	}
	if pq := b.predictedQuery(spec.span, gens); pq != "" {
		qs = append(qs, query{"predicted", pq})
	}
	return qs
}

// effectiveWindowNow is the rate window of the next round.
func (b *Backend) effectiveWindowNow() time.Duration {
	b.mu.Lock()
	w := b.window
	b.mu.Unlock()
	return effectiveWindow(w, b.scrapeInterval())
}

// merge stores a matrix's points under name (one series expected).
func (c *chartCache) merge(name string, m model.Matrix, _ string) {
	pts := c.pts[name]
	if pts == nil {
		pts = map[int64]float64{}
		c.pts[name] = pts
	}
	for _, s := range m {
		for _, p := range s.Values {
			v := float64(p.Value)
			if math.IsInf(v, 0) {
				v = math.NaN()
			}
			pts[int64(p.Timestamp)] = v
		}
	}
}

// prune drops points older than the chart's first step.
func (c *chartCache) prune(first time.Time) {
	cut := first.UnixMilli()
	for _, pts := range c.pts {
		for t := range pts {
			if t < cut {
				delete(pts, t)
			}
		}
	}
}

// points returns a cached series aligned to spec (NaN where missing).
func (c *chartCache) points(name string, spec chartSpec) []float64 {
	out := make([]float64, len(spec.ends))
	pts := c.pts[name]
	for j, e := range spec.ends {
		v, ok := pts[e.UnixMilli()]
		if !ok {
			v = math.NaN()
		}
		out[j] = v
	}
	return out
}

// fill builds the history from the cache and the row queries.
func (h *history) fill(c *chartCache, spec chartSpec, res map[string]model.Matrix, p *plan) {
	for _, n := range []string{cInput, cOutput, cTTFT50, cTTFT99, cITL50, cITL99} {
		h.charts[n] = c.points(n, spec)
	}
	h.charts["hit_actual"] = ratio(c.points(cHit, spec), c.points(cTotal, spec))
	h.predHit, h.predTotal = map[string][]float64{}, map[string][]float64{}
	for name := range c.pts {
		if inst, ok := cutPrefix(name, "pred_"+cHit+"/"); ok {
			h.predHit[inst] = c.points(name, spec)
		} else if inst, ok := cutPrefix(name, "pred_"+cTotal+"/"); ok {
			h.predTotal[inst] = c.points(name, spec)
		}
	}
	var ph, pt []float64
	for inst, t := range h.predTotal {
		ph, pt = addInto(ph, h.predHit[inst]), addInto(pt, t)
	}
	if pt != nil {
		h.charts["hit_predicted"] = ratio(ph, pt)
	} else {
		h.charts["hit_predicted"] = nanSlice(len(spec.ends))
	}
	h.rows = map[string]map[sources.Signal][]float64{}
	h.rowHit, h.rowTotal = map[string][]float64{}, map[string][]float64{}
	align := func(s *model.SampleStream) []float64 {
		out := nanSlice(len(spec.ends))
		idx := map[int64]int{}
		for j, e := range spec.ends {
			idx[e.UnixMilli()] = j
		}
		for _, pt := range s.Values {
			if j, ok := idx[int64(pt.Timestamp)]; ok {
				if v := float64(pt.Value); !math.IsInf(v, 0) {
					out[j] = v
				}
			}
		}
		return out
	}
	for _, name := range []string{histGaugeQ, histCounterQ, hHQ} {
		for _, s := range res[name] {
			inst := string(s.Metric[model.LabelName(p.inst)])
			tagv := string(s.Metric[sigTag])
			switch tagv {
			case cHit:
				h.rowHit[inst] = align(s)
			case cTotal:
				h.rowTotal[inst] = align(s)
			default:
				sig := parseSig(tagv)
				if sig == sources.SigInvalid {
					continue
				}
				if h.rows[inst] == nil {
					h.rows[inst] = map[sources.Signal][]float64{}
				}
				h.rows[inst][sig] = align(s)
			}
		}
	}
}

func cutPrefix(s, p string) (string, bool) {
	if len(s) >= len(p) && s[:len(p)] == p {
		return s[len(p):], true
	}
	return "", false
}

func addInto(acc, v []float64) []float64 {
	if acc == nil {
		acc = nanSlice(len(v))
	}
	for i := range acc {
		if i < len(v) && !math.IsNaN(v[i]) {
			if math.IsNaN(acc[i]) {
				acc[i] = 0
			}
			acc[i] += v[i]
		}
	}
	return acc
}

// ratio is hit ÷ total per point, NaN where total is not positive.
func ratio(hit, total []float64) []float64 {
	out := nanSlice(len(total))
	for i := range out {
		if i < len(hit) && total[i] > 0 && !math.IsNaN(hit[i]) {
			out[i] = math.Min(1, math.Max(0, hit[i]/total[i]))
		}
	}
	return out
}

func nanSlice(n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = math.NaN()
	}
	return out
}

// rowHistoryQueries fetch the sparklines of the rows: gauges at each
// step, token rates and the hit ratio over each point's span.
func (b *Backend) rowHistoryQueries(spec chartSpec, rows []rowRef) []query {
	if len(rows) == 0 {
		return nil
	}
	if len(rows) > rowHistoryLimit {
		rows = rows[:rowHistoryLimit]
	}
	p := b.plan
	insts := make([]string, len(rows))
	for i, r := range rows {
		insts[i] = r.inst
	}
	only := []Matcher{OneOf(p.inst, insts)}
	var gauges, counters []sources.Signal
	for _, s := range historySignals {
		if s.Info().Kind == sources.Counter {
			counters = append(counters, s)
		} else {
			gauges = append(gauges, s)
		}
	}
	hit, total := p.hitTerms(spec.span, only)
	return []query{
		{histGaugeQ, tagged(gauges, func(s sources.Signal) string {
			return p.workerSeries(p.rules[s], fnNow, spec.span, "", only, p.inst)
		})},
		{histCounterQ, tagged(counters, func(s sources.Signal) string {
			return p.workerSeries(p.rules[s], fnRate, spec.span, "", only, p.inst)
		})},
		{hHQ, ors([]string{tag("sum by ("+p.inst+") ("+hit+")", sigTag, cHit), tag("sum by ("+p.inst+") ("+total+")", sigTag, cTotal)})},
	}
}

// predictedQuery is each gateway replica's predicted-hit numerator and
// denominator (increase over span), tagged hit/total, for the
// generations that expose one: 2026 selected ÷ query blocks, legacy
// hits ÷ (hits + misses). "" when no replica exposes any.
func (b *Backend) predictedQuery(span time.Duration, gens map[string]string) string {
	p := b.plan
	var alts []string
	for _, gen := range distinctGens(gens) {
		var insts []string
		for inst, g := range gens {
			if g == gen {
				insts = append(insts, inst)
			}
		}
		sort.Strings(insts)
		pg := &plan{sel: concat(p.sel, []Matcher{OneOf(p.inst, insts)}), inst: p.inst}
		rules := map[sources.Signal]schema.RuleSpec{}
		for _, r := range schema.GatewayRules(gen) {
			rules[r.Signal] = r
		}
		inc := func(s sources.Signal) string {
			return "(" + pg.series(family{}, rules[s], fnIncrease, span, "", nil, p.inst) + ")"
		}
		switch {
		case len(rules[sources.SigGWQueryBlocks].Aliases) > 0:
			alts = append(alts, tag(inc(sources.SigGWSelectedBlocks), sigTag, cHit), tag(inc(sources.SigGWQueryBlocks), sigTag, cTotal))
		case len(rules[sources.SigGWCacheHits].Aliases) > 0:
			h, m := inc(sources.SigGWCacheHits), inc(sources.SigGWCacheMisses)
			alts = append(alts, tag(h+" or "+m+" * 0", sigTag, cHit),
				tag("("+h+" + "+m+") or "+h+" or "+m, sigTag, cTotal))
		}
	}
	if len(alts) == 0 {
		return ""
	}
	return ors(alts)
}

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
