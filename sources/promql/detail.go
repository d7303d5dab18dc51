package promql

import (
	"context"
	"sync"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/pdtop/pdtop/sources"
)

var _ sources.DetailBackend = (*Backend)(nil)

// Detail is the drill-down's history of one worker, asked of the server
// on demand: every gauge at each chart step, every counter's rate and the
// p50/p99 of every histogram over each step, and the prefix-hit ratio per
// step, with the restarts pdtop has seen. nil when the worker has no row
// (only workers on screen can be drilled into) or the server fails.
func (b *Backend) Detail(targetID string, at time.Time, window time.Duration) *sources.WorkerDetail {
	b.mu.Lock()
	var inst string
	if b.now != nil {
		for _, r := range b.now.rows {
			if sanitizeName(r.inst) == targetID {
				inst = r.inst
				break
			}
		}
	}
	skew := b.server.skew
	restarts := append([]time.Time(nil), b.restart[targetID]...)
	var reasons []sources.Event
	for _, e := range b.events {
		if e.Kind == "restart" && e.TargetID == targetID {
			reasons = append(reasons, e)
		}
	}
	b.mu.Unlock()
	if inst == "" {
		return nil
	}
	spec := b.chartSpec(at.Add(skew), window)
	p := b.plan
	only := []Matcher{Eq(p.inst, inst)}
	series := func(s sources.Signal, f fn, suffix string, by ...string) string {
		return p.workerSeries(p.rules[s], f, spec.span, suffix, only, append([]string{p.inst}, by...)...)
	}
	var hists []string
	for _, s := range histSignals {
		bk := series(s, fnRate, "_bucket", "le")
		for _, q := range []string{"0.5", "0.99"} {
			hists = append(hists, tag(tag("histogram_quantile("+q+", "+bk+")", "pdtop_q", q), sigTag, sigValue(s)))
		}
	}
	hit, total := p.hitTerms(spec.span, only)
	qs := []query{
		{"detail_gauges", tagged(gaugeSignals, func(s sources.Signal) string { return series(s, fnNow, "") })},
		{"detail_counters", tagged(counterSignals, func(s sources.Signal) string { return series(s, fnRate, "") })},
		{"detail_quantiles", ors(hists)},
		{"detail_hit", ors([]string{tag("sum("+hit+")", sigTag, cHit), tag("sum("+total+")", sigTag, cTotal)})},
	}
	ctx, cancel := context.WithTimeout(context.Background(), b.opts.QueryTimeout)
	defer cancel()
	r := v1.Range{Start: spec.ends[0], End: spec.ends[len(spec.ends)-1], Step: spec.step}
	res := make([]model.Matrix, len(qs))
	var wg sync.WaitGroup
	failed := false
	var mu sync.Mutex
	for i, q := range qs {
		wg.Add(1)
		go func(i int, q query) {
			defer wg.Done()
			m, fail := b.c.series(ctx, q.name, q.q, r)
			mu.Lock()
			defer mu.Unlock()
			if fail != nil {
				failed = true
				return
			}
			res[i] = m
		}(i, q)
	}
	wg.Wait()
	if failed && res[0] == nil {
		return nil
	}
	align := aligner(spec)
	d := &sources.WorkerDetail{TargetID: targetID, Time: spec.ends[len(spec.ends)-1].Add(-skew), Step: spec.step,
		Span: time.Duration(len(spec.ends)) * spec.step, History: map[sources.Signal][]float64{},
		P50: map[sources.Signal][]float64{}, P99: map[sources.Signal][]float64{}, Sources: map[sources.Signal]string{}}
	if d.Span < window {
		d.Span = window
	}
	for _, m := range res[:2] {
		for _, s := range m {
			if sig := parseSig(string(s.Metric[sigTag])); sig != sources.SigInvalid {
				d.History[sig] = align(s)
				d.Sources[sig] = b.firstName(sig)
			}
		}
	}
	for _, s := range res[2] {
		sig := parseSig(string(s.Metric[sigTag]))
		if sig == sources.SigInvalid {
			continue
		}
		d.Sources[sig] = b.firstName(sig)
		if s.Metric["pdtop_q"] == "0.5" {
			d.P50[sig] = align(s)
		} else {
			d.P99[sig] = align(s)
		}
	}
	var hs, ts []float64
	for _, s := range res[3] {
		switch s.Metric[sigTag] {
		case cHit:
			hs = align(s)
		case cTotal:
			ts = align(s)
		}
	}
	if ts != nil {
		d.HitHistory = ratio(hs, ts)
	}
	for i, t := range restarts {
		reason := "restart"
		if i < len(reasons) {
			reason = reasons[i].Detail
		}
		d.Restarts = append(d.Restarts, sources.Restart{Time: t, Reason: reason})
	}
	return d
}

func (b *Backend) firstName(sig sources.Signal) string {
	if r, ok := b.plan.rules[sig]; ok && len(r.Aliases) > 0 && len(r.Aliases[0].Names) > 0 {
		return r.Aliases[0].Names[0]
	}
	return ""
}

// aligner places a range result's points on the chart steps (NaN where
// missing or not finite).
func aligner(spec chartSpec) func(*model.SampleStream) []float64 {
	idx := make(map[int64]int, len(spec.ends))
	for j, e := range spec.ends {
		idx[e.UnixMilli()] = j
	}
	return func(s *model.SampleStream) []float64 {
		out := nanSlice(len(spec.ends))
		for _, pt := range s.Values {
			if j, ok := idx[int64(pt.Timestamp)]; ok {
				if v := float64(pt.Value); sources.Finite(v) {
					out[j] = v
				}
			}
		}
		return out
	}
}
