package sim

import (
	"sort"

	"github.com/prometheus/client_golang/prometheus"
)

// Default bucket bounds of the real exporters (reference/sglang-worker.md §4–5,
// reference/gateway.md §2–4).
var (
	ttftBuckets      = []float64{0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400}
	itlBuckets       = []float64{0.002, 0.004, 0.006, 0.008, 0.010, 0.015, 0.020, 0.025, 0.030, 0.035, 0.040, 0.060, 0.080, 0.100, 0.200, 0.400, 0.600, 0.800, 1, 2, 4, 6, 8}
	e2eBuckets       = []float64{0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400, 600, 1200, 1800, 2400}
	queueTimeBuckets = []float64{0, 0.001, 0.005, 0.010, 0.050, 0.100, 0.200, 0.500, 1, 2, 3, 4, 5, 10, 15, 20, 30, 40, 50, 60, 70, 80, 90, 100, 200, 300, 400, 500, 600, 700, 800, 900, 1000, 1200, 1400, 1600, 1800, 2000, 2500, 3000}
	kvLatencyBuckets = []float64{1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000}
	kvSpeedBuckets   = []float64{0.1, 0.5, 1, 5, 10, 25, 50, 100, 200, 400}
	kvMBBuckets      = []float64{1, 5, 10, 50, 100, 500, 1000, 5000, 10000}

	// smg v1.4.0+ request-duration buckets (29 bounds, 0.001 … 7200 s);
	// legacy sgl-router used the first 20 (0.001 … 240 s).
	smgDurationBuckets    = []float64{0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 30, 45, 60, 90, 120, 180, 240, 300, 480, 900, 1200, 1800, 2700, 3600, 5400, 7200}
	legacyDurationBuckets = smgDurationBuckets[:20]
	// 2026 sgl-router: request duration 5 ms … 30 s; TTFT adds four
	// sub-100 ms bounds to the engine's TTFT bounds.
	g3DurationBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}
	g3TTFTBuckets     = append([]float64{0.005, 0.01, 0.025, 0.05}, ttftBuckets...)
)

// hist is a histogram kept as plain numbers and exposed as a const metric at
// scrape time. It supports the token-weighted observation SGLang uses for
// inter-token latency (n counts in one bucket, an arbitrary sum).
type hist struct {
	bounds []float64
	counts []uint64 // per bucket, non-cumulative; last is +Inf
	sum    float64
}

func newHist(bounds []float64) hist {
	return hist{bounds: bounds, counts: make([]uint64, len(bounds)+1)}
}

func (h *hist) observe(v float64) { h.observeN(v, 1, v) }

// observeN adds n observations of value v and adds sum to the sum.
func (h *hist) observeN(v float64, n uint64, sum float64) {
	if h.counts == nil || n == 0 {
		return
	}
	h.counts[sort.SearchFloat64s(h.bounds, v)] += n
	h.sum += sum
}

func (h *hist) count() uint64 {
	var c uint64
	for _, n := range h.counts {
		c += n
	}
	return c
}

func (h *hist) metric(d *prometheus.Desc, labels ...string) prometheus.Metric {
	buckets := make(map[float64]uint64, len(h.bounds))
	var cum uint64
	for i, b := range h.bounds {
		cum += h.counts[i]
		buckets[b] = cum
	}
	cum += h.counts[len(h.bounds)]
	return prometheus.MustNewConstHistogram(d, cum, h.sum, buckets, labels...)
}
