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

// counterDelta returns the reset-aware increase of a counter column over
// (from, to] and the time it covers: from the window's first frame of the
// target to the newest frame where the series is present. A series absent
// at that first frame (created at its first increment: Python's labelled
// counters, SGLang's failure counters, cached_tokens_total) counts from
// its last value before the window, else from 0 (startValue), over that
// whole span — as Prometheus' increase() would if the series had been
// exposed as 0. ok is false when the window holds fewer than two frames of
// the target or the series is in none after the first: no rate from a
// single scrape.
func (ts *targetState) counterDelta(col int, from, to time.Time) (delta float64, dt time.Duration, ok bool) {
	first, last, ok := ts.bounds(from, to)
	if !ok {
		return 0, 0, false
	}
	end := last
	for last > first && math.IsNaN(ts.val(last, col)) {
		last--
	}
	if last <= first {
		return 0, 0, false
	}
	// Corrected values never decrease; never show a negative rate anyway.
	d := nonNeg(ts.val(last, col) - ts.startValue(first, col))
	if ts.cols[col].restarted {
		// Absent since a restart: the fresh process has counted nothing
		// yet (counters appear once non-zero), so the counter is flat up to
		// the newest frame, not unknown after its last value.
		last = end
	}
	return d, ts.hist.at(last).t.Sub(ts.hist.at(first).t), true
}

// startValue is what a counter column counts from at frame fi (the first
// frame of a window or chart step): its value there; when the series is
// absent there, its last value before fi (a series that vanished and came
// back, e.g. after a restart: values are reset-corrected), else 0 (a
// series created since).
func (ts *targetState) startValue(fi, col int) float64 {
	for i := fi; i >= 0; i-- {
		if v := ts.val(i, col); !math.IsNaN(v) {
			return v
		}
	}
	return 0
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

// histDist returns the change of a histogram signal over (from, to],
// with counterDelta's rule for series created inside the window.
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
	if last <= first {
		return nil, false
	}
	return ts.distBetween(hl, first, last), true
}

// distBetween is the histogram's change from frame first to frame last
// (where its count is present); every column counts from startValue.
// Bounds missing at last (an older bucket layout) are left out.
func (ts *targetState) distBetween(hl *histLayout, first, last int) *dist {
	d := &dist{
		sum:   nonNeg(ts.val(last, hl.sum) - ts.startValue(first, hl.sum)),
		count: nonNeg(ts.val(last, hl.count) - ts.startValue(first, hl.count)),
	}
	if math.IsNaN(d.sum) {
		d.sum = 0
	}
	if math.IsNaN(d.count) {
		d.count = 0
	}
	for i, b := range hl.bounds {
		z := ts.val(last, hl.buckets[i])
		if math.IsNaN(z) {
			continue
		}
		d.bounds = append(d.bounds, b)
		d.counts = append(d.counts, nonNeg(z-ts.startValue(first, hl.buckets[i])))
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
	q.P50, q.P50Beyond = d.quantileBeyond(0.5)
	q.P90, q.P90Beyond = d.quantileBeyond(0.9)
	q.P99, q.P99Beyond = d.quantileBeyond(0.99)
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
		// cached_tokens_total appears only after the first hit: absent = 0
		// (counterDelta counts one created inside the window from 0).
		cached, _ := inc(sources.SigCachedTokens)
		return cached, prompt, "cached_tokens_total / prompt_tokens_total", true
	}
	return 0, 0, "", false
}

func hitRatio(hit, total float64, unit, src string) sources.HitRatio {
	h := sources.HitRatio{Hit: hit, Total: total, Unit: unit, Source: src}
	if total > 0 {
		h.Present = true
		h.Ratio = math.Min(1, math.Max(0, hit/total))
	}
	return h
}
