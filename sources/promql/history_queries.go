package promql

import (
	"sort"
	"strings"
	"time"

	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/sources/schema"
)

// The range queries of the history job: fleet charts, per-row sparklines
// and each gateway replica's predicted hit over time.

// chartQueries are the fleet chart series as range queries: from the raw
// series, or from the recorded pool series when the rules exist (their
// points are then averages over the rules' window, not over one step).
func (b *Backend) chartQueries(spec chartSpec, pd bool, gens map[string]string, recorded bool) []query {
	p := b.plan
	quant := func(buckets string) string {
		return ors([]string{tag("histogram_quantile(0.5, "+buckets+")", "pdtop_q", "0.5"), tag("histogram_quantile(0.99, "+buckets+")", "pdtop_q", "0.99")})
	}
	var qs []query
	if recorded {
		w := b.effectiveWindowNow()
		m := append(append([]Matcher(nil), p.sel...), Eq(windowLabel, dur(w)))
		in, out := m, m
		if pd {
			in = append(append([]Matcher(nil), m...), Ne(p.role, "decode"))
			out = append(append([]Matcher(nil), m...), Ne(p.role, "prefill"))
		}
		rec := func(name string, ms []Matcher, by ...string) string {
			return "sum by (" + strings.Join(by, ", ") + ") (" + vs([]string{name}, ms...) + ")"
		}
		qs = []query{
			{cInput, rec(poolRule(sources.SigPromptTokens, ""), in)},
			{cOutput, "(" + rec(poolRule(sources.SigRealtimeDecode, ""), out) + ") or (" + rec(poolRule(sources.SigGenerationTokens, ""), out) + ")"},
			{"ttft", quant(rec(poolRule(sources.SigTTFT, "_bucket"), out, "le"))},
			{"itl", quant(rec(poolRule(sources.SigITL, "_bucket"), out, "le"))},
			{"hit", rec(ruleHit, in, sigTag)},
		}
	} else {
		members := func(exclude string) string {
			if !pd {
				return p.roleVec(spec.span)
			}
			return p.roleVec(spec.span, Ne(p.role, exclude))
		}
		inputs, outputs := members("decode"), members("prefill")
		perInst := func(s sources.Signal, f fn, suffix string, by ...string) string {
			return p.workerSeries(p.rules[s], f, spec.span, suffix, nil, append([]string{p.inst}, by...)...)
		}
		join := func(x, roles string) string { return "(" + x + ") * on (" + p.inst + ") group_left () " + roles }
		hit, total := p.hitTerms(spec.span, nil)
		output := "(" + perInst(sources.SigRealtimeDecode, fnRate, "") + ") or (" + perInst(sources.SigGenerationTokens, fnRate, "") + ")"
		qs = []query{
			{cInput, "sum(" + join(perInst(sources.SigPromptTokens, fnRate, ""), inputs) + ")"},
			{cOutput, "sum(" + join(output, outputs) + ")"},
			{"ttft", quant("sum by (le) (" + join(perInst(sources.SigTTFT, fnRate, "_bucket", "le"), outputs) + ")")},
			{"itl", quant("sum by (le) (" + join(perInst(sources.SigITL, fnRate, "_bucket", "le"), outputs) + ")")},
			{"hit", ors([]string{
				tag("sum("+join(hit, inputs)+")", sigTag, cHit),
				tag("sum("+join(total, inputs)+")", sigTag, cTotal),
			})},
		}
	}
	if pq := b.predictedQuery(spec.span, gens); pq != "" {
		qs = append(qs, query{"predicted", pq})
	}
	return qs
}

// rowHistoryQueries fetch the sparklines of the rows: gauges at each
// step, token rates and the hit ratio over each point's span.
func (b *Backend) rowHistoryQueries(spec chartSpec, rows []rowRef) []query {
	if len(rows) == 0 {
		return nil
	}
	if len(rows) > rowHistoryLimit {
		rows = rows[:rowHistoryLimit]
	}
	p := b.plan
	insts := make([]string, len(rows))
	for i, r := range rows {
		insts[i] = r.inst
	}
	only := []Matcher{OneOf(p.inst, insts)}
	var gauges, counters []sources.Signal
	for _, s := range historySignals {
		if s.Info().Kind == sources.Counter {
			counters = append(counters, s)
		} else {
			gauges = append(gauges, s)
		}
	}
	hit, total := p.hitTerms(spec.span, only)
	return []query{
		{histGaugeQ, tagged(gauges, func(s sources.Signal) string {
			return p.workerSeries(p.rules[s], fnNow, spec.span, "", only, p.inst)
		})},
		{histCounterQ, tagged(counters, func(s sources.Signal) string {
			return p.workerSeries(p.rules[s], fnRate, spec.span, "", only, p.inst)
		})},
		{hHQ, ors([]string{tag("sum by ("+p.inst+") ("+hit+")", sigTag, cHit), tag("sum by ("+p.inst+") ("+total+")", sigTag, cTotal)})},
	}
}

// predictedQuery is each gateway replica's predicted-hit numerator and
// denominator (increase over span), tagged hit/total, for the
// generations that expose one: 2026 selected ÷ query blocks, legacy
// hits ÷ (hits + misses). "" when no replica exposes any.
func (b *Backend) predictedQuery(span time.Duration, gens map[string]string) string {
	p := b.plan
	var alts []string
	for _, gen := range distinctGens(gens) {
		var insts []string
		for inst, g := range gens {
			if g == gen {
				insts = append(insts, inst)
			}
		}
		sort.Strings(insts)
		pg := &plan{sel: concat(p.sel, []Matcher{OneOf(p.inst, insts)}), inst: p.inst}
		rules := map[sources.Signal]schema.RuleSpec{}
		for _, r := range schema.GatewayRules(gen) {
			rules[r.Signal] = r
		}
		inc := func(s sources.Signal) string {
			return "(" + pg.series(family{}, rules[s], fnIncrease, span, "", nil, p.inst) + ")"
		}
		switch {
		case len(rules[sources.SigGWQueryBlocks].Aliases) > 0:
			alts = append(alts, tag(inc(sources.SigGWSelectedBlocks), sigTag, cHit), tag(inc(sources.SigGWQueryBlocks), sigTag, cTotal))
		case len(rules[sources.SigGWCacheHits].Aliases) > 0:
			h, m := inc(sources.SigGWCacheHits), inc(sources.SigGWCacheMisses)
			alts = append(alts, tag(h+" or "+m+" * 0", sigTag, cHit),
				tag("("+h+" + "+m+") or "+h+" or "+m, sigTag, cTotal))
		}
	}
	if len(alts) == 0 {
		return ""
	}
	return ors(alts)
}
