package promql

import (
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/sources/schema"
)

// plan builds the PromQL of every query from the schema's rule tables, so
// that the metric names, aliases, label filters and combination rules stay
// those of sources/schema. Every figure is computed by the server: the
// dashboard receives one number per worker, pool or chart point.
//
// The worker label rules become PromQL as follows:
//   - replica copies (tp_rank, pp_rank, … , pid): `max without (…)`;
//   - the rest combined per the rule: `sum|max|min|avg by (<instance>)`;
//   - aliases, first present wins per worker: `A or B or …` (every
//     spelling of one alias is one `__name__=~` selector);
//   - `priority=""` is always required (the total is exposed whenever the
//     breakdown is); `cache_source="total"` is preferred per worker with
//     `A{cache_source="total"} or A`;
//   - gauges are read with last_over_time over the window, so a worker
//     whose scrapes fail keeps its last values, as with direct scraping;
//   - counters are rate() / increase() over the window.
type plan struct {
	sel     []Matcher
	inst    string // label telling workers apart ("instance")
	role    string // label carrying the worker role ("engine_type")
	rules   map[sources.Signal]schema.RuleSpec
	workers family
	// keep are labels every pool figure keeps besides the role (the
	// recording rules keep the selector's labels so one rule set serves
	// every namespace); empty for live queries.
	keep []string
}

// ids is the grouping that identifies one worker: the instance label and
// the kept labels.
func (p *plan) ids() string { return strings.Join(append([]string{p.inst}, p.keep...), ", ") }

// family is how one adapter's series are read.
type family struct {
	plain    []Matcher           // preferences whose total is "" (always applied)
	fallback []schema.Preference // preferences applied as `total or all`
	replicas string              // "tp_rank, pp_rank, …": copies collapsed; "" for none
	// names tags each series with the alias that fed it (label
	// pdtop_name), for Reading.Source.
	names bool
}

// named returns fam with alias tagging on.
func (f family) named() family { f.names = true; return f }

func newPlan(sel []Matcher, inst, role string) *plan {
	p := &plan{sel: sel, inst: inst, role: role, rules: map[sources.Signal]schema.RuleSpec{},
		workers: familyOf(schema.GenSGLangWorker)}
	p.workers.replicas = strings.Join(schema.ReplicaLabels(), ", ")
	for _, r := range schema.WorkerRules() {
		p.rules[r.Signal] = r
	}
	return p
}

// familyOf returns the preferences of a generation.
func familyOf(generation string) family {
	var f family
	for _, pr := range schema.Preferences(generation) {
		if pr.Total == "" {
			f.plain = append(f.plain, Eq(pr.Label, ""))
		} else {
			f.fallback = append(f.fallback, pr)
		}
	}
	return f
}

// dur renders a duration as PromQL ("1m", "2500ms").
func dur(d time.Duration) string {
	if d < time.Millisecond {
		d = time.Millisecond
	}
	return model.Duration(d).String()
}

var plainName = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*$`)

// vs renders a vector selector for a metric spelled any of names.
func vs(names []string, ms ...Matcher) string {
	parts := make([]string, 0, len(ms)+1)
	head := ""
	switch {
	case len(names) == 1 && plainName.MatchString(names[0]):
		head = names[0]
	case len(names) > 0:
		parts = append(parts, (Matcher{Name: "__name__", Op: "=~", Value: literalAlternation(names)}).String())
	}
	for _, m := range ms {
		parts = append(parts, m.String())
	}
	if head != "" && len(parts) == 0 {
		return head
	}
	return head + "{" + strings.Join(parts, ", ") + "}"
}

// aliasMatchers returns the alias's series filter as matchers.
func aliasMatchers(a schema.AliasSpec) []Matcher {
	switch {
	case a.Label == "":
		return nil
	case a.Values == nil:
		return []Matcher{Ne(a.Label, "")}
	}
	return []Matcher{OneOf(a.Label, a.Values)}
}

func suffixed(names []string, suffix string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = n + suffix
	}
	return out
}

func concat(ms ...[]Matcher) []Matcher {
	var out []Matcher
	for _, m := range ms {
		out = append(out, m...)
	}
	return out
}

// fn is how raw samples become one value per series.
type fn uint8

const (
	fnLast     fn = iota // last_over_time(s[r]): latest value, kept while a target is down
	fnNow                // s: the value at the evaluation time (gone once stale)
	fnRate               // rate(s[r]) per second
	fnIncrease           // increase(s[r])
	fnResets             // resets(s[r]): how often a counter went down
)

func apply(f fn, sel string, rng time.Duration) string {
	switch f {
	case fnNow:
		return sel
	case fnRate:
		return "rate(" + sel + "[" + dur(rng) + "])"
	case fnIncrease:
		return "increase(" + sel + "[" + dur(rng) + "])"
	case fnResets:
		return "resets(" + sel + "[" + dur(rng) + "])"
	}
	return "last_over_time(" + sel + "[" + dur(rng) + "])"
}

func aggName(c schema.Combine) string {
	switch c {
	case schema.CombineMax:
		return "max"
	case schema.CombineMin:
		return "min"
	case schema.CombineMean:
		return "avg"
	}
	return "sum"
}

// ors joins alternatives with `or`, each parenthesised.
func ors(xs []string) string {
	if len(xs) == 1 {
		return xs[0]
	}
	return "(" + strings.Join(xs, ") or (") + ")"
}

// workerSeries is a worker rule's value per group of by-labels, before any
// pool join: aliases chained with `or`, preferences applied, replica copies
// collapsed. suffix selects a histogram part ("_bucket", "_count",
// "_sum"); "" reads the rule's own series.
func (p *plan) workerSeries(r schema.RuleSpec, f fn, rng time.Duration, suffix string, extra []Matcher, by ...string) string {
	return p.series(p.workers, r, f, rng, suffix, extra, by...)
}

// series is workerSeries for any family of series.
func (p *plan) series(fam family, r schema.RuleSpec, f fn, rng time.Duration, suffix string, extra []Matcher, by ...string) string {
	dedupe := "max"
	if r.Combine == schema.CombineMin {
		dedupe = "min"
	}
	agg := aggName(r.Combine)
	if suffix != "" {
		agg = "sum" // histogram parts always add up
	}
	byList := strings.Join(by, ", ")
	var alts []string
	for _, a := range r.Aliases {
		names := a.Names
		if suffix != "" {
			names = suffixed(names, suffix)
		}
		base := concat(p.sel, fam.plain, extra, aliasMatchers(a))
		if r.GaugeOnly {
			base = append(base, Eq("quantile", "")) // not a summary's quantile series
		}
		one := func(ms []Matcher) string {
			inner := apply(f, vs(names, ms...), rng)
			if r.PercentOnV03 {
				v03 := apply(f, vs(names, append(ms[:len(ms):len(ms)], Ne("name", ""), Eq("model_name", ""))...), rng)
				inner = "(" + v03 + " / 100) or " + inner
			}
			if fam.replicas != "" {
				inner = dedupe + " without (" + fam.replicas + ") (" + inner + ")"
			}
			if r.DropNegative {
				inner = "(" + inner + " >= 0)"
			}
			return agg + " by (" + byList + ") (" + inner + ")"
		}
		x := one(base)
		for _, pr := range fam.fallback {
			x = "(" + one(append(base[:len(base):len(base)], Eq(pr.Label, pr.Total))) + ") or (" + x + ")"
		}
		if fam.names && !r.All {
			x = tag(x, nameTag, a.Names[0])
		}
		alts = append(alts, x)
	}
	if fam.names && !r.All {
		return orsOn(byList, alts) // the tags differ: match on the grouping only
	}
	if r.All && len(alts) > 1 {
		// Sum every present alias: tag each so `or` keeps all, then add.
		for i := range alts {
			alts[i] = tag(alts[i], "pdtop_alias", strconv.Itoa(i))
		}
		return "sum by (" + byList + ") (" + ors(alts) + ")"
	}
	return ors(alts)
}

// orsOn joins alternatives with `or on (label)`: per value of label, the
// first alternative that has it wins.
func orsOn(label string, xs []string) string {
	if len(xs) == 1 {
		return xs[0]
	}
	return "(" + strings.Join(xs, ") or on ("+label+") (") + ")"
}

// nameTag labels a series with the metric name that fed it.
const nameTag = "pdtop_name"

// tag adds a constant label to every series of x.
func tag(x, label, value string) string {
	return "label_replace(" + x + ", " + Quote(label) + ", " + Quote(value) + ", \"\", \"\")"
}

// roleVec is one series per worker, {<instance>, <role>} = 1, for workers
// that exposed the running-requests gauge within rng (one role per worker
// even if its label changed inside the window).
func (p *plan) roleVec(rng time.Duration, extra ...Matcher) string {
	running := p.rules[sources.SigRunning]
	var names []string
	for _, a := range running.Aliases {
		names = append(names, a.Names...)
	}
	return "topk by (" + p.ids() + ") (1, group by (" + p.ids() + ", " + p.role + ") (last_over_time(" +
		vs(names, concat(p.sel, extra)...) + "[" + dur(rng) + "])))"
}

// liveVec is one series per worker that has a current (not stale)
// running-requests sample: the workers whose last scrape worked.
func (p *plan) liveVec(extra ...Matcher) string {
	running := p.rules[sources.SigRunning]
	var names []string
	for _, a := range running.Aliases {
		names = append(names, a.Names...)
	}
	return "group by (" + p.inst + ") (" + vs(names, concat(p.sel, extra)...) + ")"
}

// byRole folds a per-worker expression (by <instance>[, extra]) into one
// series per role: agg by (<role>[, extra]) (x * on(<instance>) group_left(<role>) roles).
func (p *plan) byRole(x, agg string, roles string, extraBy ...string) string {
	by := append(append([]string{p.role}, p.keep...), extraBy...)
	return agg + " by (" + strings.Join(by, ", ") + ") ((" + x + ") * on (" + p.ids() + ") group_left (" + p.role + ") " + roles + ")"
}

// hitTerms returns the per-worker prefix-hit numerator and denominator
// (increase over rng, tokens), each tagged pdtop_src with the formula
// used, chosen per worker as the store does: prefill_effective_tokens_total,
// else realtime_tokens_total, else cached ÷ prompt tokens.
func (p *plan) hitTerms(rng time.Duration, extra []Matcher) (hit, total string) {
	return p.hitTermsOf(func(sig sources.Signal) string {
		return "(" + p.workerSeries(p.rules[sig], fnIncrease, rng, "", extra, p.ids()) + ")"
	})
}

// sinceRestartHitTerms are hitTerms counting only what a worker's new
// process counted after a restart `since` before the evaluation time, as
// the store's since-restart hit does (reset-corrected increases from the
// old process's last sample). Each counter's count is, per worker:
//   - when the counter went down within ext (since plus the rate window:
//     how far the restart scan looks for a reset): its latest value over
//     the last `since` — the new process counts from zero, so that is all
//     it counted, including before its first scrape, with no
//     extrapolation;
//   - otherwise (a new scheduler pid whose counters carry on, as in
//     multiprocess mode with old pid files kept): its increase over inc
//     (since rounded up to the scrape interval);
//
// and nothing for a counter without a sample in the last `since` (the new
// process has not exposed it yet: zero, via hitTerms' anchors).
func (p *plan) sinceRestartHitTerms(since, inc, ext time.Duration, extra []Matcher) (hit, total string) {
	return p.hitTermsOf(func(sig sources.Signal) string {
		r := p.rules[sig]
		last := p.workerSeries(r, fnLast, since, "", extra, p.ids())
		resets := p.workerSeries(r, fnResets, ext, "", extra, p.ids())
		grew := p.workerSeries(r, fnIncrease, inc, "", extra, p.ids())
		return "(((" + last + ") and on (" + p.ids() + ") ((" + resets + ") > 0)) or ((" + grew + ") and on (" + p.ids() + ") (" + last + ")))"
	})
}

// hitTermsOf is hitTerms with count giving a counter's per-worker count
// (tokens, by p.ids()).
func (p *plan) hitTermsOf(inc func(sources.Signal) string) (hit, total string) {
	or0 := func(x, anchor string) string { return "(" + x + " or " + anchor + " * 0)" }
	a1, a2, a3 := inc(sources.SigEffectiveInput), inc(sources.SigRealtimePrefillCompute), inc(sources.SigPromptTokens)
	hit1 := "((" + or0(inc(sources.SigEffectiveDeviceHit), a1) + " + " + or0(inc(sources.SigEffectiveHostHit), a1) + ") and " + a1 + ")"
	hit2 := "(" + or0(inc(sources.SigRealtimePrefillCache), a2) + " and " + a2 + ")"
	hit3 := "(" + or0(inc(sources.SigCachedTokens), a3) + " and " + a3 + ")"
	// `or on (instance)`: the first formula a worker has wins, whatever
	// the tags say.
	hit = orsOn(p.ids(), []string{tag(hit1, "pdtop_src", "1"), tag(hit2, "pdtop_src", "2"), tag(hit3, "pdtop_src", "3")})
	total = orsOn(p.ids(), []string{tag(a1+" + "+hit1, "pdtop_src", "1"), tag(a2+" + "+hit2, "pdtop_src", "2"), tag(a3, "pdtop_src", "3")})
	return hit, total
}

// hitSources names the formulas tagged by hitTerms, as the store names them.
var hitSources = map[string]string{
	"1": "prefill_effective_tokens_total{*_hit} / Σ modes",
	"2": "realtime_tokens_total{prefill_cache} / {prefill_cache+prefill_compute}",
	"3": "cached_tokens_total / prompt_tokens_total",
}

// quantileSet tags histogram_quantile at 0.5 and 0.99 plus the
// observation count and sum increases, one query for one histogram. Each
// quantile evaluates the bucket rates again (PromQL shares no
// subexpressions), so only the two the panels draw are asked for:
// Quantiles.P90 stays NaN with this backend.
// buckets are per-second bucket rates by (group…, le); count and sum are
// increases by (group…).
func quantileSet(buckets, count, sum string) string {
	var alts []string
	for _, q := range []string{"0.5", "0.99"} {
		alts = append(alts, tag("histogram_quantile("+q+", "+buckets+")", "pdtop_q", q))
	}
	alts = append(alts, tag(count, "pdtop_q", "count"), tag(sum, "pdtop_q", "sum"))
	return ors(alts)
}

// workerKeyRegex matches a gateway's worker label (a URL such as
// http://10.0.0.1:30001, or host:port) for any of the given worker
// addresses (host:port, as in the instance label), case-insensitively, as
// sources.WorkerKey normalises them.
func workerKeyRegex(addrs []string) string {
	return `(?i)(?:[a-z][a-z0-9+.-]*://)?(?:[^/@]*@)?(?:` + literalAlternation(addrs) + `)(?:[/?#].*)?`
}
