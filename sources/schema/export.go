package schema

import (
	dto "github.com/prometheus/client_model/go"

	"github.com/pdtop/pdtop/sources"
)

// This file is the read-only, exported view of the adapter tables for
// backends that ask a server for the signals instead of parsing bodies
// (sources/promql builds PromQL from it). The tables themselves stay the
// single source of metric names.

// AliasSpec is one accepted metric name with every spelling it is exposed
// under, tried in order, and an optional series filter.
type AliasSpec struct {
	// Names are the spellings as exposed, e.g. "sglang:num_queue_reqs" and
	// "sglang_num_queue_reqs" (the gateway's /engine_metrics re-export).
	Names []string
	// Label and Values filter the series: only series whose Label is one
	// of Values are read; with Values nil the label only has to be present
	// and non-empty. Label "" reads every series.
	Label  string
	Values []string
}

// Combine says how the series of one signal combine into one figure
// (after replica copies are collapsed to one, see ReplicaLabels).
type Combine uint8

// Combinations.
const (
	CombineSum  Combine = iota // requests, queues, counters, capacities, histograms
	CombineMax                 // ratios, pid gauges, startup constants, breaker state
	CombineMin                 // health: any unhealthy copy wins
	CombineMean                // the old gauge form of KV-transfer latency/speed/size
)

// KeyKind says how a keyed signal's key is made from its key label.
type KeyKind uint8

// Key kinds.
const (
	KeyNone   KeyKind = iota // unkeyed signal
	KeyWorker                // sources.WorkerKey of the label (worker URL → host:port)
	KeyStatus                // StatusClass of an HTTP status code label
	KeyAsIs                  // the label value as exposed (error types)
)

// RuleSpec is how one canonical signal is read from raw series.
type RuleSpec struct {
	Signal sources.Signal
	// Aliases are tried in order; the first one with usable series wins,
	// unless All is set, in which case every present alias is summed.
	Aliases []AliasSpec
	All     bool
	Combine Combine
	// KeyLabel and Key make a keyed signal; series without the label are
	// skipped.
	KeyLabel string
	Key      KeyKind
	// DropNegative skips negative values (SMG's −1 "removed" sentinels).
	DropNegative bool
	// GaugeOnly reads only a gauge/untyped family (never the series of a
	// histogram or summary of the same name); HistogramOnly reads only a
	// histogram with buckets (never a summary, never the gauge form).
	GaugeOnly, HistogramOnly bool
	// PercentOnV03 divides by 100 on series that carry the v0.3 `name`
	// label instead of `model_name` (cache_hit_rate was a percentage then).
	PercentOnV03 bool
}

// Preference keeps only the series whose Label equals Total when a family
// has both total and breakdown series (a missing label reads as "").
type Preference struct {
	Label, Total string
}

// WorkerRules returns the SGLang worker adapter's rules, in table order.
func WorkerRules() []RuleSpec { return specs(&workerAdapter) }

// GatewayRules returns the rules of a gateway generation (GenSMG,
// GenRouterLegacy, GenRouter2026); nil for anything else.
func GatewayRules(generation string) []RuleSpec {
	if ad := gatewayAdapter(generation); ad != nil {
		return specs(ad)
	}
	return nil
}

// Preferences returns the total-versus-breakdown preferences of a
// generation (GenSGLangWorker or a gateway generation).
func Preferences(generation string) []Preference {
	ad := gatewayAdapter(generation)
	if generation == GenSGLangWorker {
		ad = &workerAdapter
	}
	if ad == nil {
		return nil
	}
	out := make([]Preference, len(ad.prefer))
	for i, p := range ad.prefer {
		out[i] = Preference{Label: p.label, Total: p.total}
	}
	return out
}

// ReplicaLabels lists the labels that only tell copies of one figure
// apart on an SGLang worker (tensor/pipeline/expert/context-parallel ranks
// and the process id): series differing only in them are collapsed to one,
// never summed.
func ReplicaLabels() []string {
	return []string{"tp_rank", "pp_rank", "moe_ep_rank", "attn_cp_rank", "pid"}
}

// RestartCounters lists the SGLang worker counters whose decrease marks a
// restart when only stored samples are available (Prometheus' resets()):
// finished requests, prompt and output tokens, in every spelling.
func RestartCounters() []string {
	var out []string
	for _, sig := range []sources.Signal{sources.SigRequests, sources.SigPromptTokens, sources.SigGenerationTokens} {
		for _, r := range workerAdapter.rules {
			if r.sig == sig {
				for _, a := range r.aliases {
					out = append(out, a.names...)
				}
			}
		}
	}
	return out
}

// PIDGauges lists the SGLang worker gauges labelled with the scheduler's
// `pid` (one series per process, dead ones kept in multiprocess mode): a
// pid not seen before means the worker restarted.
func PIDGauges() []string {
	var out []string
	for _, a := range pidFamilies {
		out = append(out, a.names...)
	}
	return out
}

// StartupConstants lists the SGLang worker gauges whose value changes
// only when the process restarts, in every spelling.
func StartupConstants() []string {
	var out []string
	for _, a := range startupConst {
		out = append(out, a.names...)
	}
	return out
}

// Recognise names the generation of a gateway from the metric names it
// exposes and the label sets of its sgl_router_requests_total series, by
// the same rules as Map (any smg_ family → smg; a 2026 marker or a
// requests_total labelled {route,method} / {worker_url,…} → 2026 router;
// requests_total labelled {route} only or a legacy marker → legacy). An
// SGLang worker's names give GenSGLangWorker; nothing known gives "".
func Recognise(names []string, requestsTotal []map[string]string) string {
	var fams map[string]*dto.MetricFamily
	if len(requestsTotal) > 0 {
		mf := &dto.MetricFamily{}
		for _, ls := range requestsTotal {
			m := &dto.Metric{}
			for n, v := range ls {
				n, v := n, v
				m.Label = append(m.Label, &dto.LabelPair{Name: &n, Value: &v})
			}
			mf.Metric = append(mf.Metric, m)
		}
		fams = map[string]*dto.MetricFamily{"sgl_router_requests_total": mf}
	}
	switch fingerprint(fams, names) {
	case kindWorker:
		return GenSGLangWorker
	case kindSMG:
		return GenSMG
	case kindLegacy:
		return GenRouterLegacy
	case kind2026:
		return GenRouter2026
	}
	return ""
}

func gatewayAdapter(generation string) *adapter {
	switch generation {
	case GenSMG:
		return &smgAdapter
	case GenRouterLegacy:
		return &legacyAdapter
	case GenRouter2026:
		return &router2026Adapter
	}
	return nil
}

func specs(ad *adapter) []RuleSpec {
	out := make([]RuleSpec, 0, len(ad.rules))
	for i := range ad.rules {
		r := &ad.rules[i]
		s := RuleSpec{
			Signal:        r.sig,
			All:           r.all,
			Combine:       Combine(r.agg),
			KeyLabel:      r.keyLabel,
			DropNegative:  r.dropNeg,
			PercentOnV03:  r.v03Percent,
			GaugeOnly:     r.types == tGaugeOnly,
			HistogramOnly: r.types == tHistogram,
		}
		if r.keyLabel != "" {
			switch {
			case r.sig == sources.SigGWResponses:
				s.Key = KeyStatus
			case r.sig.Info().Keyed && r.sig != sources.SigGWErrors:
				s.Key = KeyWorker
			default:
				s.Key = KeyAsIs
			}
		}
		for _, a := range r.aliases {
			mt := a.match
			if mt.label == "" {
				mt = r.match
			}
			s.Aliases = append(s.Aliases, AliasSpec{
				Names:  append([]string(nil), a.names...),
				Label:  mt.label,
				Values: append([]string(nil), mt.values...),
			})
		}
		out = append(out, s)
	}
	return out
}
