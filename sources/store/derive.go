package store

import (
	"math"
	"time"

	"github.com/pdtop/pdtop/sources"
)

// val returns column col of frame fi, NaN when absent.
func (ts *targetState) val(fi, col int) float64 {
	if fi < 0 || fi >= ts.hist.len() {
		return math.NaN()
	}
	v := ts.hist.at(fi).v
	if col < 0 || col >= len(v) {
		return math.NaN()
	}
	return v[col]
}

// bounds returns the frame indexes [first, last] covering (from, to]:
// first is the oldest frame at or after from, last the newest at or
// before to. ok is false when fewer than two frames fall inside.
func (ts *targetState) bounds(from, to time.Time) (first, last int, ok bool) {
	first = ts.hist.firstAtOrAfter(from)
	last = ts.hist.lastAtOrBefore(to)
	return first, last, first < last && first >= 0
}

// counterDelta returns the reset-aware increase of a counter column
// between the oldest and newest frames in (from, to] where it is present,
// and the time between them. ok is false with fewer than two such frames:
// no rate from a single sample.
func (ts *targetState) counterDelta(col int, from, to time.Time) (delta float64, dt time.Duration, ok bool) {
	first, last, ok := ts.bounds(from, to)
	if !ok {
		return 0, 0, false
	}
	end := last
	for last > first && math.IsNaN(ts.val(last, col)) {
		last--
	}
	for first < last && math.IsNaN(ts.val(first, col)) {
		first++
	}
	if first >= last {
		return 0, 0, false
	}
	d := ts.val(last, col) - ts.val(first, col)
	if d < 0 { // cannot happen with corrected values; never show a negative rate
		d = 0
	}
	if ts.cols[col].restarted {
		// Absent since a restart: the fresh process has counted nothing
		// yet (counters appear once non-zero), so the counter is flat up to
		// the newest frame, not unknown after its last value.
		last = end
	}
	return d, ts.hist.at(last).t.Sub(ts.hist.at(first).t), true
}

// reading derives a scalar signal over (from, to]: the latest value for
// gauges (present only if in the newest frame), the per-second rate for
// counters.
func (ts *targetState) reading(sig sources.Signal, key string, from, to time.Time) sources.Reading {
	col, ok := ts.scalars[histID{sig, key}]
	if !ok {
		return sources.Absent
	}
	src := ts.sourceNames[sig]
	if !ts.cols[col].counter {
		last := ts.hist.lastAtOrBefore(to)
		v := ts.val(last, col)
		if math.IsNaN(v) {
			return sources.Absent
		}
		return sources.Reading{Present: true, Value: v, Source: src}
	}
	d, dt, ok := ts.counterDelta(col, from, to)
	if !ok || dt <= 0 {
		return sources.Reading{Source: src}
	}
	return sources.Reading{Present: true, Value: d / dt.Seconds(), Increase: d, Source: src}
}

// histDist returns the change of a histogram signal over (from, to].
func (ts *targetState) histDist(sig sources.Signal, key string, from, to time.Time) (*dist, bool) {
	hl := ts.hists[histID{sig, key}]
	if hl == nil {
		return nil, false
	}
	first, last, ok := ts.bounds(from, to)
	if !ok {
		return nil, false
	}
	for last > first && math.IsNaN(ts.val(last, hl.count)) {
		last--
	}
	for first < last && math.IsNaN(ts.val(first, hl.count)) {
		first++
	}
	if first >= last {
		return nil, false
	}
	return ts.distBetween(hl, first, last), true
}

func (ts *targetState) distBetween(hl *histLayout, first, last int) *dist {
	d := &dist{
		sum:   nonNeg(ts.val(last, hl.sum) - ts.val(first, hl.sum)),
		count: nonNeg(ts.val(last, hl.count) - ts.val(first, hl.count)),
	}
	if math.IsNaN(d.sum) {
		d.sum = 0
	}
	if math.IsNaN(d.count) {
		d.count = 0
	}
	for i, b := range hl.bounds {
		a, z := ts.val(first, hl.buckets[i]), ts.val(last, hl.buckets[i])
		if math.IsNaN(a) || math.IsNaN(z) {
			continue
		}
		d.bounds = append(d.bounds, b)
		d.counts = append(d.counts, nonNeg(z-a))
	}
	if n := len(d.bounds); n > 0 && !math.IsInf(d.bounds[n-1], 1) {
		// No +Inf bucket: _count is the implicit +Inf.
		d.bounds = append(d.bounds, math.Inf(1))
		d.counts = append(d.counts, math.Max(d.count, d.counts[n-1]))
	}
	return d
}

func nonNeg(v float64) float64 {
	if v < 0 {
		return 0
	}
	return v
}

// quantiles turns a window dist into on-screen figures.
func quantiles(d *dist, unit, src string) sources.Quantiles {
	if d == nil {
		return sources.Quantiles{}
	}
	q := sources.Quantiles{Present: true, Count: d.count, Unit: unit, Source: src, Mean: d.mean(),
		P50: math.NaN(), P90: math.NaN(), P99: math.NaN()}
	if len(d.bounds) == 0 {
		q.Form = "summary"
		return q
	}
	q.Form = "histogram"
	q.P50, q.P90, q.P99 = d.quantile(0.5), d.quantile(0.9), d.quantile(0.99)
	q.Buckets = make([]sources.Bucket, len(d.bounds))
	for i, b := range d.bounds {
		q.Buckets[i] = sources.Bucket{UpperBound: b, Count: d.counts[i]}
	}
	return q
}

// hitTerms returns a worker's prefix-hit numerator and denominator over
// (from, to] from the best counters it exposes, in tokens:
//  1. prefill_effective_tokens_total: (device_hit + host_hit) / all modes
//  2. realtime_tokens_total: prefill_cache / (prefill_cache + prefill_compute)
//  3. cached_tokens_total / prompt_tokens_total (cached absent = 0)
func (ts *targetState) hitTerms(from, to time.Time) (hit, total float64, source string, ok bool) {
	inc := func(sig sources.Signal) (float64, bool) {
		col, ok := ts.scalars[histID{sig, ""}]
		if !ok {
			return 0, false
		}
		d, _, ok := ts.counterDelta(col, from, to)
		return d, ok
	}
	if in, ok := inc(sources.SigEffectiveInput); ok {
		dev, _ := inc(sources.SigEffectiveDeviceHit)
		host, _ := inc(sources.SigEffectiveHostHit)
		return dev + host, in + dev + host, "prefill_effective_tokens_total{*_hit} / Σ modes", true
	}
	if comp, ok := inc(sources.SigRealtimePrefillCompute); ok {
		cache, _ := inc(sources.SigRealtimePrefillCache)
		return cache, cache + comp, "realtime_tokens_total{prefill_cache} / {prefill_cache+prefill_compute}", true
	}
	if prompt, ok := inc(sources.SigPromptTokens); ok {
		cached, ok := inc(sources.SigCachedTokens)
		if !ok {
			// cached_tokens_total appears only after the first hit: count
			// from 0 when it appeared inside the window.
			cached = ts.appearedIncrease(sources.SigCachedTokens, from, to)
		}
		return cached, prompt, "cached_tokens_total / prompt_tokens_total", true
	}
	return 0, 0, "", false
}

// appearedIncrease is the increase of a counter that is absent at the
// start of (from, to] but present at its end: measured from its last value
// before the window when it had one, else from 0 (cached_tokens_total is
// only created at the first hit).
func (ts *targetState) appearedIncrease(sig sources.Signal, from, to time.Time) float64 {
	col, ok := ts.scalars[histID{sig, ""}]
	if !ok {
		return 0
	}
	first, last, ok := ts.bounds(from, to)
	if !ok {
		return 0
	}
	end := math.NaN()
	for i := last; i >= first && math.IsNaN(end); i-- {
		end = ts.val(i, col)
	}
	if math.IsNaN(end) {
		return 0
	}
	for i := first - 1; i >= 0; i-- {
		if v := ts.val(i, col); !math.IsNaN(v) {
			return nonNeg(end - v)
		}
	}
	return nonNeg(end)
}

func hitRatio(hit, total float64, unit, src string) sources.HitRatio {
	h := sources.HitRatio{Hit: hit, Total: total, Unit: unit, Source: src}
	if total > 0 {
		h.Present = true
		h.Ratio = math.Min(1, math.Max(0, hit/total))
	}
	return h
}
