package store

import (
	"math"
	"sort"
)

// dist is a histogram's change over an interval: cumulative bucket deltas
// at ascending upper bounds (the last is +Inf), plus Δsum and Δcount.
// A dist with no bounds comes from a summary: a mean, no quantiles.
type dist struct {
	bounds []float64
	counts []float64
	sum    float64
	count  float64
}

func (d *dist) empty() bool { return d == nil || d.count <= 0 }

// quantile returns the q-quantile (0 ≤ q ≤ 1) by linear interpolation
// inside the bucket holding the rank, as Prometheus' histogram_quantile
// does: the lower edge of the first bucket is 0 (or its bound when that is
// ≤ 0), a rank in the +Inf bucket returns the highest finite bound.
// Non-monotonic buckets are clamped with a running max first. NaN when
// there are no observations or no buckets.
func (d *dist) quantile(q float64) float64 {
	v, _ := d.quantileBeyond(q)
	return v
}

// quantileBeyond is quantile, and whether the rank fell in the +Inf
// bucket: the value is then only known to exceed the returned highest
// finite bound.
func (d *dist) quantileBeyond(q float64) (float64, bool) {
	if d.empty() || len(d.bounds) == 0 {
		return math.NaN(), false
	}
	n := len(d.bounds)
	total := d.counts[n-1]
	if !math.IsInf(d.bounds[n-1], 1) || total <= 0 {
		total = math.Max(total, d.count)
	}
	if total <= 0 {
		return math.NaN(), false
	}
	rank := q * total
	prevBound, prevCount, run := 0.0, 0.0, 0.0
	for i, b := range d.bounds {
		c := math.Max(d.counts[i], run) // clamp non-monotonic buckets
		run = c
		if c >= rank && c > prevCount {
			if math.IsInf(b, 1) {
				return prevBound, i > 0
			}
			if i == 0 && b <= 0 {
				return b, false
			}
			return prevBound + (b-prevBound)*(rank-prevCount)/(c-prevCount), false
		}
		prevBound, prevCount = b, c
	}
	// Rank beyond the last finite bucket without a +Inf bucket.
	return prevBound, true
}

// mean is Δsum/Δcount, NaN without observations.
func (d *dist) mean() float64 {
	if d.empty() {
		return math.NaN()
	}
	return d.sum / d.count
}

// merge adds other into d bucket by bucket. Bounds present in only one of
// the two are dropped (cumulative counts at a bound one side lacks are
// unknown); +Inf is always kept via the counts.
func (d *dist) merge(o *dist) {
	if o == nil {
		return
	}
	d.sum += o.sum
	d.count += o.count
	if len(o.bounds) == 0 {
		return
	}
	if len(d.bounds) == 0 {
		d.bounds = append([]float64(nil), o.bounds...)
		d.counts = append([]float64(nil), o.counts...)
		return
	}
	if sameBounds(d.bounds, o.bounds) {
		for i := range d.counts {
			d.counts[i] += o.counts[i]
		}
		return
	}
	var nb, nc []float64
	for i, b := range d.bounds {
		j := sort.SearchFloat64s(o.bounds, b)
		if j < len(o.bounds) && (o.bounds[j] == b) {
			nb = append(nb, b)
			nc = append(nc, d.counts[i]+o.counts[j])
		}
	}
	d.bounds, d.counts = nb, nc
}
