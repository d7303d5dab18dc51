package promql

import (
	"context"
	"math"
	"sync"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/pdtop/pdtop/sources"
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
