package store

import (
	"math"
	"time"

	"github.com/pdtop/pdtop/sources"
)

// chartSpec says where chart points fall: point j summarises (ends[j] −
// span, ends[j]]. Ends are aligned to multiples of step so points do not
// wobble between ticks; span ≥ step smooths per-scrape noise.
type chartSpec struct {
	ends  []time.Time
	step  time.Duration
	span  time.Duration
	total time.Duration // the time all points cover
}

func (s *Store) chartBounds(now time.Time, window time.Duration) chartSpec {
	o := s.opts
	if window < o.ChartSpan {
		window = o.ChartSpan
	}
	step := window / time.Duration(o.ChartPoints)
	if step < o.Interval {
		step = o.Interval
	}
	if window > o.FineSpan && step < o.CoarseStep {
		step = o.CoarseStep
	}
	step = step.Round(time.Second)
	if step <= 0 {
		step = time.Second
	}
	n := int(window / step)
	if n < 1 {
		n = 1
	}
	end := now.Truncate(step)
	cs := chartSpec{step: step, span: step, total: time.Duration(n) * step}
	if min := 5 * o.Interval; cs.span < min {
		cs.span = min
	}
	cs.ends = make([]time.Time, n)
	for j := range cs.ends {
		cs.ends[j] = end.Add(-time.Duration(n-1-j) * step)
	}
	return cs
}

// stepIdx holds, for one chart point, the frames at its start and end.
type stepIdx struct{ a, b int }

func (ts *targetState) stepIndex(cs chartSpec) []stepIdx {
	out := make([]stepIdx, len(cs.ends))
	for j, e := range cs.ends {
		b := ts.hist.lastAtOrBefore(e)
		a := ts.hist.lastAtOrBefore(e.Add(-cs.span))
		if b >= 0 && ts.hist.at(b).t.Before(e.Add(-cs.span)) {
			b = -1 // nothing new in this point: a gap, not a flat line
		}
		if a < 0 {
			a = ts.hist.firstAtOrAfter(e.Add(-cs.span))
		}
		out[j] = stepIdx{a, b}
	}
	return out
}

// stepSeries returns a column per chart point: gauges as their value at the
// point's end, counters as the rate over the point's span.
func (ts *targetState) stepSeries(col int, idx []stepIdx) []float64 {
	out := make([]float64, len(idx))
	counter := ts.cols[col].counter
	for j, p := range idx {
		out[j] = math.NaN()
		if p.b < 0 {
			continue
		}
		if !counter {
			out[j] = ts.val(p.b, col)
			continue
		}
		if p.a >= p.b {
			continue
		}
		vb := ts.val(p.b, col)
		dt := ts.hist.at(p.b).t.Sub(ts.hist.at(p.a).t).Seconds()
		if !math.IsNaN(vb) && dt > 0 {
			out[j] = nonNeg(vb-ts.startValue(p.a, col)) / dt
		}
	}
	return out
}

// stepDelta returns the counter increase of a scalar signal per point (NaN
// where unknown), with counterDelta's rule for a series created inside the
// point (cached_tokens_total at the first hit).
func (ts *targetState) stepDelta(sig sources.Signal, idx []stepIdx) []float64 {
	out := make([]float64, len(idx))
	col, ok := ts.scalars[histID{sig, ""}]
	for j, p := range idx {
		out[j] = math.NaN()
		if !ok || p.b < 0 || p.a >= p.b {
			continue
		}
		if vb := ts.val(p.b, col); !math.IsNaN(vb) {
			out[j] = nonNeg(vb - ts.startValue(p.a, col))
		}
	}
	return out
}

// hitTermsSteps returns hit and total increases per point with the same
// formula choice as hitTerms.
func (ts *targetState) hitTermsSteps(idx []stepIdx) (hit, total []float64) {
	has := func(sig sources.Signal) bool { _, ok := ts.scalars[histID{sig, ""}]; return ok }
	add := func(a, b []float64) []float64 {
		for i := range a {
			if math.IsNaN(a[i]) {
				a[i] = 0
			}
			if !math.IsNaN(b[i]) {
				a[i] += b[i]
			}
		}
		return a
	}
	switch {
	case has(sources.SigEffectiveInput):
		in := ts.stepDelta(sources.SigEffectiveInput, idx)
		hit = add(ts.stepDelta(sources.SigEffectiveDeviceHit, idx), ts.stepDelta(sources.SigEffectiveHostHit, idx))
		total = make([]float64, len(idx))
		for i := range total {
			total[i] = in[i] + hit[i]
		}
	case has(sources.SigRealtimePrefillCompute):
		comp := ts.stepDelta(sources.SigRealtimePrefillCompute, idx)
		hit = add(ts.stepDelta(sources.SigRealtimePrefillCache, idx), make([]float64, len(idx)))
		total = make([]float64, len(idx))
		for i := range total {
			total[i] = comp[i] + hit[i]
		}
	case has(sources.SigPromptTokens):
		total = ts.stepDelta(sources.SigPromptTokens, idx)
		hit = ts.stepDelta(sources.SigCachedTokens, idx)
		for i := range hit {
			if math.IsNaN(hit[i]) && !math.IsNaN(total[i]) {
				hit[i] = 0
			}
		}
	}
	return hit, total
}

func ratioSeries(hit, total []float64) []float64 {
	out := make([]float64, len(total))
	for i := range out {
		out[i] = math.NaN()
		if i < len(hit) && total[i] > 0 && !math.IsNaN(hit[i]) {
			out[i] = math.Min(1, math.Max(0, hit[i]/total[i]))
		}
	}
	return out
}

func (ts *targetState) hitHistory(idx []stepIdx) []float64 {
	hit, total := ts.hitTermsSteps(idx)
	if total == nil {
		return nil
	}
	return ratioSeries(hit, total)
}

func (ts *targetState) predictedTerms(idx []stepIdx) (hit, total []float64) {
	if _, ok := ts.scalars[histID{sources.SigGWQueryBlocks, ""}]; ok {
		return ts.stepDelta(sources.SigGWSelectedBlocks, idx), ts.stepDelta(sources.SigGWQueryBlocks, idx)
	}
	_, okh := ts.scalars[histID{sources.SigGWCacheHits, ""}]
	_, okm := ts.scalars[histID{sources.SigGWCacheMisses, ""}]
	if !okh && !okm {
		return nil, nil
	}
	h, m := ts.stepDelta(sources.SigGWCacheHits, idx), ts.stepDelta(sources.SigGWCacheMisses, idx)
	total = make([]float64, len(idx))
	for i := range total {
		hv, mv := h[i], m[i]
		if math.IsNaN(hv) && math.IsNaN(mv) {
			total[i] = math.NaN()
			continue
		}
		if math.IsNaN(hv) {
			hv, h[i] = 0, 0
		}
		if math.IsNaN(mv) {
			mv = 0
		}
		total[i] = hv + mv
	}
	return h, total
}

func (ts *targetState) predictedHistory(idx []stepIdx) []float64 {
	hit, total := ts.predictedTerms(idx)
	if total == nil {
		return nil
	}
	return ratioSeries(hit, total)
}

// stepDists returns a histogram signal's change per point.
func (ts *targetState) stepDists(sig sources.Signal, idx []stepIdx) []*dist {
	hl := ts.hists[histID{sig, ""}]
	if hl == nil {
		return nil
	}
	out := make([]*dist, len(idx))
	for j, p := range idx {
		if p.b < 0 || p.a >= p.b || math.IsNaN(ts.val(p.b, hl.count)) {
			continue
		}
		out[j] = ts.distBetween(hl, p.a, p.b)
	}
	return out
}

// charts fills the fleet chart series.
func (s *Store) charts(snap *sources.Snapshot, workers, gateways []*targetState, cs chartSpec) {
	n := len(cs.ends)
	series := func(name, unit string, pts []float64) {
		snap.Charts[name] = sources.Series{Name: name, Unit: unit, Step: cs.step, Points: pts}
	}
	in, out, cadence, hitters := poolMembers(workers)
	sumRate := func(ws []*targetState, sig sources.Signal) []float64 {
		acc := nanSlice(n)
		for _, ts := range ws {
			if col, ok := ts.scalars[histID{sig, ""}]; ok {
				accumulate(acc, ts.stepSeries(col, ts.idx))
			}
		}
		return acc
	}
	series("input_tps", "tok/s", sumRate(in, sources.SigPromptTokens))
	acc := nanSlice(n)
	for _, ts := range out {
		if col, ok := ts.scalars[histID{outputSignal(ts), ""}]; ok {
			accumulate(acc, ts.stepSeries(col, ts.idx))
		}
	}
	series("output_tps", "tok/s", acc)

	for _, h := range []struct {
		sig  sources.Signal
		name string
	}{{sources.SigTTFT, "ttft"}, {sources.SigITL, "itl"}} {
		merged := make([]*dist, n)
		for _, ts := range cadence {
			for j, d := range ts.stepDists(h.sig, ts.idx) {
				if d == nil {
					continue
				}
				if merged[j] == nil {
					merged[j] = &dist{}
				}
				merged[j].merge(d)
			}
		}
		p50, p99 := nanSlice(n), nanSlice(n)
		b50, b99 := make([]bool, n), make([]bool, n)
		for j, d := range merged {
			if d != nil && !d.empty() {
				p50[j], b50[j] = d.quantileBeyond(0.5)
				p99[j], b99[j] = d.quantileBeyond(0.99)
			}
		}
		series(h.name+"_p50", "s", p50)
		series(h.name+"_p99", "s", p99)
		markBeyond(snap.Charts, h.name+"_p50", b50)
		markBeyond(snap.Charts, h.name+"_p99", b99)
	}

	hitAcc, totAcc := nanSlice(n), nanSlice(n)
	for _, ts := range hitters {
		h, t := ts.hitTermsSteps(ts.idx)
		accumulate(hitAcc, h)
		accumulate(totAcc, t)
	}
	series("hit_actual", "ratio", ratioSeries(hitAcc, totAcc))
	hitAcc, totAcc = nanSlice(n), nanSlice(n)
	for _, ts := range gateways {
		h, t := ts.predictedTerms(ts.idx)
		accumulate(hitAcc, h)
		accumulate(totAcc, t)
	}
	series("hit_predicted", "ratio", ratioSeries(hitAcc, totAcc))
}

// markBeyond attaches the beyond-the-top-bucket flags to a series when any
// is set.
func markBeyond(charts map[string]sources.Series, name string, beyond []bool) {
	for _, b := range beyond {
		if b {
			ser := charts[name]
			ser.Beyond = beyond
			charts[name] = ser
			return
		}
	}
}

func accumulate(acc, v []float64) {
	for j := range acc {
		if j < len(v) && !math.IsNaN(v[j]) {
			if math.IsNaN(acc[j]) {
				acc[j] = 0
			}
			acc[j] += v[j]
		}
	}
}

func nanSlice(n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = math.NaN()
	}
	return out
}

// outputSignal is the counter a worker's output tokens/s comes from
// (sources.WorkerView.Output): the scheduler's per-batch decode tokens when
// exposed (they move while long generations are still running), else
// output tokens of finished requests.
func outputSignal(ts *targetState) sources.Signal {
	if _, ok := ts.scalars[histID{sources.SigRealtimeDecode, ""}]; ok {
		return sources.SigRealtimeDecode
	}
	return sources.SigGenerationTokens
}

// outputReading is the worker's Output: its outputSignal's reading, the
// source saying which counter and how it counts.
func (ts *targetState) outputReading(rs sources.Readings) sources.Reading {
	return outputFrom(outputSignal(ts), rs)
}

// OutputOf is the output tokens/s of a worker or pool (WorkerView.Output,
// PoolView.Output) for backends without the store's history (the
// Prometheus backend): the per-batch decode tokens when rs holds them
// (present or not yet rated), else the output tokens of finished requests,
// the Source saying which and how it counts. Absent when rs has neither.
func OutputOf(rs sources.Readings) sources.Reading {
	sig := sources.SigGenerationTokens
	if _, ok := rs[sources.SigRealtimeDecode]; ok {
		sig = sources.SigRealtimeDecode
	}
	return outputFrom(sig, rs)
}

func outputFrom(sig sources.Signal, rs sources.Readings) sources.Reading {
	r, ok := rs[sig]
	if !ok {
		return sources.Absent
	}
	if sig == sources.SigRealtimeDecode {
		r.Source = orName(r.Source, "realtime_tokens_total") + `{mode="decode"} (per batch)`
	} else {
		r.Source = orName(r.Source, "generation_tokens_total") + " (finished requests)"
	}
	return r
}

func orName(name, def string) string {
	if name == "" {
		return def
	}
	return name
}
