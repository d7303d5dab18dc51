package schema

import (
	"math"
	"sort"

	dto "github.com/prometheus/client_model/go"

	"github.com/pdtop/pdtop/sources"
)

// histTotals returns a histogram or summary series' sum and observation
// count, and whether the series is complete enough to use. The project
// parser leaves SampleSum / SampleCount nil when their line was lost, so a
// missing field is "unknown", never 0: a histogram needs its _sum and
// either its _count or a +Inf bucket; a summary needs _sum and _count (a
// summary cut off after its quantile lines, as in the May-2025 sgl-router
// capture, is unusable). A non-finite sum is unusable too.
func histTotals(s *dto.Metric) (sum, count float64, ok bool) {
	switch {
	case s.Histogram != nil:
		h := s.Histogram
		if h.SampleSum == nil {
			return 0, 0, false
		}
		sum = h.GetSampleSum()
		switch {
		case h.SampleCountFloat != nil:
			count = h.GetSampleCountFloat()
		case h.SampleCount != nil:
			count = float64(h.GetSampleCount())
		default:
			n := len(h.Bucket)
			if n == 0 || !math.IsInf(h.Bucket[n-1].GetUpperBound(), 1) {
				return 0, 0, false
			}
			count = bucketCount(h.Bucket[n-1])
		}
	case s.Summary != nil:
		q := s.Summary
		if q.SampleCount == nil || q.SampleSum == nil {
			return 0, 0, false
		}
		sum, count = q.GetSampleSum(), float64(q.GetSampleCount())
	default:
		return 0, 0, false
	}
	if math.IsNaN(sum) || math.IsInf(sum, 0) || math.IsNaN(count) {
		return 0, 0, false
	}
	return sum, count, true
}

func bucketCount(b *dto.Bucket) float64 {
	if b.CumulativeCountFloat != nil {
		return b.GetCumulativeCountFloat()
	}
	return float64(b.GetCumulativeCount())
}

// histBuilder merges series into one Hist: Sum and Count add up, and
// cumulative bucket counts add up bound by bound (bounds are the parsed
// `le` floats, so "1", "1.0" and "+inf"/"+Inf" spellings agree). A series
// without +Inf gets one at its _count. If some merged series has no buckets
// (a summary, or buckets dropped) the result has no Bounds: Sum/Count only.
type histBuilder struct {
	bounds, counts []float64 // accumulated
	sb, sc         []float64 // the series being added (scratch)
	tb, tc         []float64 // merge output (scratch)
	sum, count     float64
	n              int
	noBuckets      bool
}

func (b *histBuilder) reset() {
	b.bounds, b.counts = b.bounds[:0], b.counts[:0]
	b.sum, b.count, b.n, b.noBuckets = 0, 0, 0, false
}

// add merges one usable series (see histTotals).
func (b *histBuilder) add(s *dto.Metric) {
	sum, cnt, _ := histTotals(s)
	b.n++
	b.sum += sum
	b.count += cnt
	if s.Summary != nil {
		b.noBuckets = true
		return
	}
	h := s.Histogram
	if b.noBuckets {
		return
	}
	if len(h.Bucket) == 0 {
		b.noBuckets = true
		return
	}
	b.sb, b.sc = b.sb[:0], b.sc[:0]
	sorted := true
	for _, bk := range h.Bucket {
		ub := bk.GetUpperBound()
		if math.IsNaN(ub) {
			continue
		}
		if len(b.sb) > 0 && ub <= b.sb[len(b.sb)-1] {
			sorted = false
		}
		b.sb = append(b.sb, ub)
		b.sc = append(b.sc, bucketCount(bk))
	}
	if !sorted {
		b.sortSeries()
	}
	if n := len(b.sb); n == 0 || !math.IsInf(b.sb[n-1], 1) {
		last := 0.0
		if n > 0 {
			last = b.sc[n-1]
		}
		b.sb = append(b.sb, math.Inf(1))
		b.sc = append(b.sc, math.Max(cnt, last))
	}
	switch {
	case b.n == 1:
		b.bounds = append(b.bounds[:0], b.sb...)
		b.counts = append(b.counts[:0], b.sc...)
	case equalBounds(b.bounds, b.sb):
		for i := range b.counts {
			b.counts[i] += b.sc[i]
		}
	default:
		b.mergeUnion()
	}
}

// sortSeries orders the scratch series by bound and folds repeated bounds
// (the same `le` spelt twice) into one, keeping the larger count.
func (b *histBuilder) sortSeries() {
	sort.Sort(byBound{b.sb, b.sc})
	w := 0
	for r := range b.sb {
		if w > 0 && b.sb[r] == b.sb[w-1] {
			b.sc[w-1] = math.Max(b.sc[w-1], b.sc[r])
			continue
		}
		b.sb[w], b.sc[w] = b.sb[r], b.sc[r]
		w++
	}
	b.sb, b.sc = b.sb[:w], b.sc[:w]
}

// mergeUnion merges bucket sets with different bounds over the union of
// bounds. A cumulative count at a bound a series lacks is that series'
// count at its largest bound below (a lower estimate, never an invented
// observation).
func (b *histBuilder) mergeUnion() {
	b.tb, b.tc = b.tb[:0], b.tc[:0]
	i, j := 0, 0
	var ca, cs float64
	for i < len(b.bounds) || j < len(b.sb) {
		var x float64
		switch {
		case j >= len(b.sb) || (i < len(b.bounds) && b.bounds[i] < b.sb[j]):
			x, ca = b.bounds[i], b.counts[i]
			i++
		case i >= len(b.bounds) || b.sb[j] < b.bounds[i]:
			x, cs = b.sb[j], b.sc[j]
			j++
		default:
			x, ca, cs = b.bounds[i], b.counts[i], b.sc[j]
			i++
			j++
		}
		b.tb = append(b.tb, x)
		b.tc = append(b.tc, ca+cs)
	}
	b.bounds, b.tb = b.tb, b.bounds
	b.counts, b.tc = b.tc, b.counts
}

// emit returns the merged Hist with freshly allocated slices (one backing
// array), so the builder can be reused.
func (b *histBuilder) emit(sig sources.Signal) sources.Hist {
	out := sources.Hist{Signal: sig, Sum: b.sum, Count: b.count}
	if b.noBuckets || len(b.bounds) == 0 {
		return out
	}
	n := len(b.bounds)
	buf := make([]float64, 2*n)
	copy(buf, b.bounds)
	copy(buf[n:], b.counts)
	out.Bounds = buf[:n:n]
	out.Counts = buf[n:]
	return out
}

func equalBounds(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// byBound sorts parallel bound/count slices by bound.
type byBound struct{ b, c []float64 }

func (s byBound) Len() int           { return len(s.b) }
func (s byBound) Less(i, j int) bool { return s.b[i] < s.b[j] }
func (s byBound) Swap(i, j int) {
	s.b[i], s.b[j] = s.b[j], s.b[i]
	s.c[i], s.c[j] = s.c[j], s.c[i]
}
