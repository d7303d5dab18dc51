package promql

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v2"

	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/sources/store"
)

// Recording rules. Every pool figure the dashboard shows is a sum (or max)
// over all the workers of a role, which at 10,000 workers means reading
// 10,000 series — hundreds of thousands for histograms — on every
// refresh. The rules of Rules precompute those sums on the server, one
// series per role (and per value of the selector's labels), and the
// backend reads them instead whenever they exist for its window.
// Per-worker rows never need rules: they read only the rows on screen.

// windowLabel says which rate window a recorded series covers; the
// backend uses recorded series only when it equals its own window.
const windowLabel = "pdtop_window"

// Recorded series names.
const (
	ruleWorkers = "pdtop:workers:count"
	ruleHit     = "pdtop:pool:hit:increase"
	// Per worker: the role of every worker seen within the window, the
	// workers whose last scrape worked, the row ranking, and the restart
	// indicators (see restartsQuery) — what the dashboard would otherwise
	// read every worker's raw series for on every refresh.
	ruleRole     = "pdtop:worker:role"
	ruleLive     = "pdtop:worker:live"
	ruleRank     = "pdtop:worker:rank"
	ruleRestarts = "pdtop:worker:restarts"
)

// slug turns a signal name into a metric-name part ("KV usage" → "kv_usage").
func slug(s sources.Signal) string {
	var b strings.Builder
	under := false
	for _, r := range strings.ToLower(s.String()) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
			under = false
		} else if !under && b.Len() > 0 {
			b.WriteByte('_')
			under = true
		}
	}
	return strings.TrimSuffix(b.String(), "_")
}

// poolRule names the recorded pool series of a signal; part is "" for
// gauges and counters, or "_bucket", "_count", "_sum" for histograms.
func poolRule(s sources.Signal, part string) string {
	switch {
	case part == "_bucket":
		return "pdtop:pool:" + slug(s) + "_bucket:rate"
	case part != "":
		return "pdtop:pool:" + slug(s) + part + ":increase"
	case s.Info().Kind == sources.Counter:
		return "pdtop:pool:" + slug(s) + ":rate"
	}
	return "pdtop:pool:" + slug(s) + ":last"
}

// RulesOptions configure Rules.
type RulesOptions struct {
	// Selector is the dashboard's selector: the rules read the series it
	// selects and keep its label names, so one rule set serves every
	// value of them (every namespace, every cluster).
	Selector []Matcher
	// InstanceLabel and RoleLabel as in Options.
	InstanceLabel, RoleLabel string
	// Window is the rate window; it must equal the dashboard's --window
	// (default 1m).
	Window time.Duration
	// Interval is the group's evaluation interval; 0 leaves it to the
	// server's global evaluation_interval.
	Interval time.Duration
}

type ruleFile struct {
	Groups []ruleGroup `yaml:"groups"`
}

type ruleGroup struct {
	Name     string       `yaml:"name"`
	Interval string       `yaml:"interval,omitempty"`
	Rules    []recordRule `yaml:"rules"`
}

type recordRule struct {
	Record string            `yaml:"record"`
	Expr   string            `yaml:"expr"`
	Labels map[string]string `yaml:"labels,omitempty"`
}

// Rules returns a Prometheus rule file (YAML) recording every pool figure
// the dashboard queries: worker counts per role, each queue and KV gauge,
// each token and failure rate, the prefix-hit terms and each latency
// histogram's bucket rates, all per role. Load it with rule_files in
// prometheus.yml (or the Thanos/Mimir ruler) and run pdtop with the same
// --window and --selector.
func Rules(o RulesOptions) ([]byte, error) {
	opts := Options{InstanceLabel: o.InstanceLabel, RoleLabel: o.RoleLabel}
	opts.defaults()
	if o.Window <= 0 {
		o.Window = time.Minute
	}
	p := newPlan(nil, opts.InstanceLabel, opts.RoleLabel)
	p.sel = o.Selector
	seen := map[string]bool{}
	for _, m := range o.Selector {
		if !seen[m.Name] && m.Name != opts.InstanceLabel && m.Name != opts.RoleLabel {
			seen[m.Name] = true
			p.keep = append(p.keep, m.Name)
		}
	}
	sort.Strings(p.keep)
	w := o.Window
	labels := map[string]string{windowLabel: dur(w)}
	roles := p.roleVec(w)
	live := "group by (" + p.ids() + ") (" + vs(runningNames(p), p.sel...) + ")"
	keepBy := strings.Join(append([]string{p.role}, p.keep...), ", ")
	var rules []recordRule
	add := func(name, expr string) {
		rules = append(rules, recordRule{Record: name, Expr: expr, Labels: labels})
	}
	add(ruleWorkers, ors([]string{
		tag("count by ("+keepBy+") ("+roles+")", sigTag, "all"),
		tag("count by ("+keepBy+") ("+roles+" and on ("+p.ids()+") "+live+")", sigTag, "live"),
	}))
	add(ruleRole, roles)
	add(ruleLive, live)
	add(ruleRank, rankExpr(p, w))
	// The restart indicators over the window; a pid counts as new for a
	// whole window, so any evaluation interval up to the window sees it.
	add(ruleRestarts, restartIndicators(p, w, w))
	for _, s := range gaugeSignals {
		agg := "sum"
		if store.PoolMax(s) {
			agg = "max"
		}
		// Gauges at the evaluation time: a worker whose scrapes fail drops
		// out at its staleness marker.
		add(poolRule(s, ""), p.byRole(p.workerSeries(p.rules[s], fnNow, w, "", nil, p.ids()), agg, roles))
	}
	for _, s := range counterSignals {
		add(poolRule(s, ""), p.byRole(p.workerSeries(p.rules[s], fnRate, w, "", nil, p.ids()), "sum", roles))
	}
	hit, total := p.hitTerms(w, nil)
	add(ruleHit, ors([]string{
		tag(p.byRole(hit, "sum", roles, "pdtop_src"), sigTag, cHit),
		tag(p.byRole(total, "sum", roles, "pdtop_src"), sigTag, cTotal),
	}))
	for _, s := range histSignals {
		r := p.rules[s]
		add(poolRule(s, "_bucket"), p.byRole(p.workerSeries(r, fnRate, w, "_bucket", nil, p.ids(), "le"), "sum", roles, "le"))
		add(poolRule(s, "_count"), p.byRole(p.workerSeries(r, fnIncrease, w, "_count", nil, p.ids()), "sum", roles))
		add(poolRule(s, "_sum"), p.byRole(p.workerSeries(r, fnIncrease, w, "_sum", nil, p.ids()), "sum", roles))
	}
	g := ruleGroup{Name: "pdtop_" + dur(w), Rules: rules}
	if o.Interval > 0 {
		g.Interval = dur(o.Interval)
	}
	out, err := yaml.Marshal(ruleFile{Groups: []ruleGroup{g}})
	if err != nil {
		return nil, fmt.Errorf("rules: %v", err)
	}
	head := "# Recording rules for pdtop's Prometheus backend (pdtop --prometheus URL --window " + dur(w) + ").\n" +
		"# They precompute every pool figure per role so the dashboard stays cheap at 10,000 workers;\n" +
		"# pdtop uses them when they exist for its --window. Load with rule_files: in prometheus.yml.\n"
	return append([]byte(head), out...), nil
}

// recordedPoolQueries are poolQueries reading the recorded series.
func (b *Backend) recordedPoolQueries(w time.Duration) []query {
	p := b.plan
	m := append(append([]Matcher(nil), p.sel...), Eq(windowLabel, dur(w)))
	rec := func(name, agg string, by ...string) string {
		return agg + " by (" + strings.Join(append([]string{p.role}, by...), ", ") + ") (" + vs([]string{name}, m...) + ")"
	}
	qs := []query{
		{"pool_gauges", tagged(gaugeSignals, func(s sources.Signal) string {
			agg := "sum"
			if store.PoolMax(s) {
				agg = "max"
			}
			return rec(poolRule(s, ""), agg)
		})},
		{"pool_counters", tagged(counterSignals, func(s sources.Signal) string { return rec(poolRule(s, ""), "sum") })},
		{"pool_hit", rec(ruleHit, "sum", sigTag, "pdtop_src")},
	}
	for _, s := range histSignals {
		qs = append(qs, query{"pool_" + histName(s), quantileSet(
			rec(poolRule(s, "_bucket"), "sum", "le"), rec(poolRule(s, "_count"), "sum"), rec(poolRule(s, "_sum"), "sum"))})
	}
	qs = append(qs, poolBucketsQuery(func(s sources.Signal) string { return rec(poolRule(s, "_bucket"), "sum", "le") }))
	return qs
}

// recordedRows is rowsQuery over the recorded per-worker series.
func (b *Backend) recordedRows(w time.Duration, gens map[string]string, rows int) string {
	p := b.plan
	n := strconv.Itoa(rows)
	m := append(append([]Matcher(nil), p.sel...), Eq(windowLabel, dur(w)))
	roles := "group by (" + p.inst + ", " + p.role + ") (" + vs([]string{ruleRole}, m...) + ")"
	alts := []string{
		tag("topk by ("+p.role+") ("+n+", sum by ("+p.inst+", "+p.role+") ("+vs([]string{ruleRank}, m...)+"))", sigTag, "rank"),
		tag("topk("+n+", "+roles+" unless on ("+p.inst+") group by ("+p.inst+") ("+vs([]string{ruleLive}, m...)+"))", sigTag, "stale"),
	}
	if bad := b.troubledWorkers(w, gens); bad != "" {
		alts = append(alts, tag("topk("+n+", "+roles+" and on ("+p.inst+") "+bad+")", sigTag, "router"))
	}
	return ors(alts)
}

// recordedRestarts is restartsQuery over the recorded indicators.
func (b *Backend) recordedRestarts(w time.Duration) string {
	p := b.plan
	m := append(append([]Matcher(nil), p.sel...), Eq(windowLabel, dur(w)))
	return "max by (" + p.inst + ", pdtop_kind) (" + vs([]string{ruleRestarts}, m...) + ") > 0"
}

// recordedWorkers is the workers query over the recorded counts.
func (b *Backend) recordedWorkers(w time.Duration) string {
	m := append(append([]Matcher(nil), b.plan.sel...), Eq(windowLabel, dur(w)))
	return "sum by (" + b.plan.role + ", " + sigTag + ") (" + vs([]string{ruleWorkers}, m...) + ")"
}
