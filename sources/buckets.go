package sources

import "math"

// ShareAtMost returns the share (0–1) of the window's observations that
// were ≤ x, read from the cumulative buckets: Lo counts only buckets whose
// upper bound is ≤ x, Hi also the bucket x falls in, Est interpolates
// linearly inside that bucket (Prometheus' histogram_quantile assumption).
// So the interpolation error is at most Hi − Lo. Present is false without
// buckets or observations.
func (q Quantiles) ShareAtMost(x float64) Range {
	bs := q.Buckets
	if len(bs) == 0 || math.IsNaN(x) {
		return Range{}
	}
	total := bs[len(bs)-1].Count
	if !math.IsInf(bs[len(bs)-1].UpperBound, 1) {
		total = math.Max(total, q.Count)
	}
	if !(total > 0) {
		return Range{}
	}
	prevBound, prevCount := 0.0, 0.0
	if bs[0].UpperBound < 0 {
		prevBound = math.Inf(-1)
	}
	run := 0.0
	for _, b := range bs {
		c := math.Max(b.Count, run) // clamp non-monotonic buckets
		run = c
		if b.UpperBound <= x {
			prevBound, prevCount = b.UpperBound, c
			continue
		}
		// x falls inside (prevBound, b.UpperBound]; on prevBound itself the
		// share is exact.
		lo, hi := prevCount/total, c/total
		if x == prevBound {
			hi = lo
		}
		est := lo
		if !math.IsInf(b.UpperBound, 1) && !math.IsInf(prevBound, -1) && b.UpperBound > prevBound {
			est = lo + (hi-lo)*(x-prevBound)/(b.UpperBound-prevBound)
		}
		return Range{Present: true, Lo: clamp01(lo), Est: clamp01(est), Hi: clamp01(hi)}
	}
	// x is at or beyond the last bound.
	r := math.Min(1, prevCount/total)
	if !math.IsInf(bs[len(bs)-1].UpperBound, 1) {
		// No +Inf bucket: what lies beyond the last bound is unknown.
		return Range{Present: true, Lo: clamp01(r), Est: clamp01(r), Hi: 1}
	}
	return Range{Present: true, Lo: clamp01(r), Est: clamp01(r), Hi: clamp01(r)}
}

func clamp01(v float64) float64 { return math.Max(0, math.Min(1, v)) }

// BucketAround returns the bucket bounds either side of x — the bounds at
// which ShareAtMost(x)'s Lo and Hi are exact shares: Lo is the highest
// bound ≤ x (0 below the first bucket), Hi the lowest bound above x
// (+Inf when x lies beyond the highest finite bound). Lo = Hi = x when x
// is itself a bound. Present is false without buckets.
func (q Quantiles) BucketAround(x float64) SLOBucket {
	bs := q.Buckets
	if len(bs) == 0 || math.IsNaN(x) {
		return SLOBucket{}
	}
	prev := 0.0
	if bs[0].UpperBound < 0 {
		prev = math.Inf(-1)
	}
	for _, b := range bs {
		if b.UpperBound == x {
			return SLOBucket{Present: true, Lo: x, Hi: x}
		}
		if b.UpperBound > x {
			return SLOBucket{Present: true, Lo: prev, Hi: b.UpperBound}
		}
		prev = b.UpperBound
	}
	return SLOBucket{Present: true, Lo: prev, Hi: math.Inf(1)}
}
