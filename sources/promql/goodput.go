package promql

import (
	"math"
	"sort"
	"strconv"

	"github.com/prometheus/common/model"

	"github.com/pdtop/pdtop/sources"
)

// bucketSignals are the histograms whose per-pool bucket counts are read
// (Quantiles.Buckets): TTFT and ITL, what goodput is read from
// (diagnose's shares under the SLOs). The other histograms keep their
// quantiles only, so the server evaluates no more than it must.
var bucketSignals = []sources.Signal{sources.SigTTFT, sources.SigITL}

// poolBucketsQuery is the per-pool bucket rates of bucketSignals, by role
// and le, each series tagged with its signal; bucket picks the raw or the
// recorded expression of one signal.
func poolBucketsQuery(bucket func(sources.Signal) string) query {
	return query{"pool_buckets", tagged(bucketSignals, bucket)}
}

// poolBuckets fills the pools' TTFT and ITL Dists with their cumulative
// bucket counts over the window (rate × window seconds, sorted by bound),
// as the store fills them, so goodput reads the same buckets in both
// modes. A pool whose Dist is absent gets none.
func (d *decoder) poolBuckets(pools map[sources.Role]*sources.PoolView) {
	type key struct {
		role sources.Role
		sig  sources.Signal
	}
	acc := map[key]map[float64]float64{}
	for _, s := range d.f.v["pool_buckets"] {
		sig := parseSig(string(s.Metric[sigTag]))
		v, ok := value(s)
		if sig == sources.SigInvalid || !ok {
			continue
		}
		le, err := strconv.ParseFloat(string(s.Metric["le"]), 64)
		if err != nil || math.IsNaN(le) {
			continue
		}
		k := key{poolRole(string(s.Metric[model.LabelName(d.b.plan.role)])), sig}
		if acc[k] == nil {
			acc[k] = map[float64]float64{}
		}
		acc[k][le] += v * d.secs // unknown and unified roles share a pool
	}
	for k, byLe := range acc {
		pv := pools[k.role]
		q, ok := pv.Dists[k.sig]
		if !ok || !q.Present {
			continue
		}
		bs := make([]sources.Bucket, 0, len(byLe))
		for le, c := range byLe {
			bs = append(bs, sources.Bucket{UpperBound: le, Count: c})
		}
		sort.Slice(bs, func(i, j int) bool { return bs[i].UpperBound < bs[j].UpperBound })
		q.Buckets = bs
		pv.Dists[k.sig] = q
	}
}
