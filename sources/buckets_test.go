package sources

import (
	"math"
	"testing"
)

// TestBucketAround: the bounds either side of a threshold are where
// ShareAtMost's Lo and Hi are exact shares.
func TestBucketAround(t *testing.T) {
	q := Quantiles{Present: true, Count: 100, Buckets: []Bucket{
		{UpperBound: 0.01, Count: 10}, {UpperBound: 0.04, Count: 20}, {UpperBound: 0.06, Count: 80}, {UpperBound: math.Inf(1), Count: 100}}}
	for _, c := range []struct {
		x, lo, hi      float64
		shareLo, share float64 // ShareAtMost(x).Lo and .Hi
	}{
		{0.05, 0.04, 0.06, 0.2, 0.8},
		{0.04, 0.04, 0.04, 0.2, 0.2},
		{0.005, 0, 0.01, 0, 0.1},
		{1, 0.06, math.Inf(1), 0.8, 1},
	} {
		b, r := q.BucketAround(c.x), q.ShareAtMost(c.x)
		if !b.Present || b.Lo != c.lo || b.Hi != c.hi {
			t.Errorf("BucketAround(%v) = %+v, want %v–%v", c.x, b, c.lo, c.hi)
		}
		if math.Abs(r.Lo-c.shareLo) > 1e-9 || math.Abs(r.Hi-c.share) > 1e-9 {
			t.Errorf("ShareAtMost(%v) = %+v, want %v–%v", c.x, r, c.shareLo, c.share)
		}
	}
	if b := (Quantiles{Present: true, Form: "summary"}).BucketAround(1); b.Present {
		t.Errorf("no buckets: %+v", b)
	}
}
