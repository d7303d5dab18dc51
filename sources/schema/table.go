package schema

import (
	dto "github.com/prometheus/client_model/go"

	"github.com/pdtop/pdtop/sources"
)

// This file holds the shapes of the adapter tables. Each adapter is data: a
// list of rules, one per canonical signal, each with an ordered list of
// accepted metric names (first present wins), the metric types it accepts
// and how its series combine. The code that walks the tables lives in
// aggregate.go; the tables themselves in worker.go and gateway_*.go.

// typeMask is a set of exposition types (the family's `# TYPE`).
type typeMask uint8

const (
	tCounter typeMask = 1 << iota
	tGauge
	tUntyped
	tHistogram
	tSummary

	// tScalar is what a counter or gauge signal accepts by default. Untyped
	// is accepted because some real bodies carry no TYPE lines at all (the
	// sgl-router 0.2.4 capture in gateway.md §11).
	tScalar = tCounter | tGauge | tUntyped
	// tGaugeOnly is for families whose TYPE decides what they mean: the old
	// gauge form of kv_transfer_*, or a gauge-histogram with `le` labels.
	tGaugeOnly = tGauge | tUntyped
	// tHist accepts histograms and summaries (summaries give Sum/Count only).
	tHist = tHistogram | tSummary
)

// maskOf maps a dto type to its typeMask bit. GAUGE_HISTOGRAM never comes
// out of the text format (gauge-histograms are TYPE gauge there) and is not
// a cumulative histogram, so it matches nothing.
func maskOf(t dto.MetricType) typeMask {
	switch t {
	case dto.MetricType_COUNTER:
		return tCounter
	case dto.MetricType_GAUGE:
		return tGauge
	case dto.MetricType_UNTYPED:
		return tUntyped
	case dto.MetricType_HISTOGRAM:
		return tHistogram
	case dto.MetricType_SUMMARY:
		return tSummary
	}
	return 0
}

// match selects series by one label. The zero match selects every series.
// With values nil the label only has to be present and non-empty.
type match struct {
	label  string
	values []string
}

// alias is one accepted metric name with its spellings as exposed (for
// SGLang: "sglang:x" then "sglang_x"), tried in order.
type alias struct {
	names []string
	match match // overrides the rule's match when set
}

// agg says how a rule combines the series it keeps. Series that differ only
// in replica labels (tp_rank, pp_rank, moe_ep_rank, attn_cp_rank, pid) are
// copies of one figure and are first collapsed to one (the max, or the min
// for aggMin; for histograms the copy with the most observations). What
// remains is then combined per key as below.
type agg uint8

const (
	aggSum  agg = iota // sum (requests, queues, counters, capacities, histograms)
	aggMax             // max (ratios, pid gauges, startup constants, breaker state)
	aggMin             // min (health: any unhealthy copy wins)
	aggMean            // mean (old gauge form of KV-transfer latency/speed/size)
)

// rule maps one canonical signal.
type rule struct {
	sig     sources.Signal
	aliases []alias // first present wins (unless all)
	// types accepted; 0 means tScalar for counters and gauges, tHist for
	// histogram signals.
	types typeMask
	match match // series filter applied to every alias without its own
	agg   agg
	// keyLabel and keyFn make a keyed signal: the key is keyFn(value of
	// keyLabel); series without the label are skipped.
	keyLabel string
	keyFn    func(string) string
	// dropNeg skips negative values: SMG's −1 "removed / unknown" sentinels.
	dropNeg bool
	// all sums every present alias instead of taking the first; Sources then
	// names them joined with "+".
	all bool
	// v03Percent divides by 100 on series that carry the v0.3 `name` label
	// instead of `model_name` (cache_hit_rate was a percentage then).
	v03Percent bool
}

// prefer keeps only the series whose label equals total when a family has
// both total and breakdown series (a missing label reads as ""). With no
// total series the breakdown is summed.
type prefer struct {
	label string
	total string
}

// adapter is one engine or gateway generation.
type adapter struct {
	generation string
	engine     string
	role       sources.Role
	rules      []rule
	prefer     []prefer
	// dedupeRanks collapses series that differ only in replica labels.
	dedupeRanks bool
}

// names builds aliases with a single spelling each.
func names(ns ...string) []alias {
	out := make([]alias, len(ns))
	for i, n := range ns {
		out[i] = alias{names: []string{n}}
	}
	return out
}

// sgl builds SGLang aliases: each suffix as "sglang:"+suffix (the worker's
// own /metrics) and "sglang_"+suffix (the gateway's /engine_metrics
// re-export and reports from it); both are the same key.
func sgl(suffixes ...string) []alias {
	out := make([]alias, len(suffixes))
	for i, s := range suffixes {
		out[i] = alias{names: []string{"sglang:" + s, "sglang_" + s}}
	}
	return out
}

// where returns the aliases with a match set on each.
func where(as []alias, label string, values ...string) []alias {
	for i := range as {
		as[i].match = match{label: label, values: values}
	}
	return as
}

// identity is the key function for keys used as exposed (error types).
func identity(s string) string { return s }

// acceptedTypes returns the types a rule accepts.
func (r *rule) acceptedTypes() typeMask {
	if r.types != 0 {
		return r.types
	}
	if r.sig.Info().Kind == sources.Histogram {
		return tHist
	}
	return tScalar
}
