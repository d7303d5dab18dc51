package promql

import (
	"context"
	"math"
	"net/url"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	"github.com/pdtop/pdtop/sources"
)

// probeUnselected is the query, run only when a round finds no worker,
// that counts the workers the server holds without the selector.
const probeUnselected = "probe_unselected"

// probeEmpty runs when the workers query answered with no worker at all:
// it asks how many workers (series of the running-requests gauge with a
// sample in the window, one per instance) the server has without the
// selector, so the panels can tell "the selector excludes them" from "the
// server has none". Without a selector the workers query already asked
// that: the answer is 0 with no query. The count lands in
// f.v[probeUnselected] (absent when the probe did not run or failed).
func (b *Backend) probeEmpty(ctx context.Context, f *frame, at time.Time) *queryFailure {
	v, ok := f.v["workers"]
	if !ok || f.carried["workers"] || len(v) > 0 {
		return nil
	}
	if len(b.plan.sel) == 0 {
		f.v[probeUnselected] = model.Vector{}
		return nil
	}
	q := "count(group by (" + b.plan.inst + ") (last_over_time(" + vs(runningNames(b.plan)) + "[" + dur(f.window) + "])))"
	r, fail := b.c.instant(ctx, probeUnselected, q, at)
	if fail != nil {
		return fail
	}
	f.v[probeUnselected] = r
	return nil
}

// queryServer describes the server for the panels' empty-fleet message.
func (b *Backend) queryServer(f *frame) *sources.QueryServer {
	qs := &sources.QueryServer{Target: "prometheus", Host: sources.DisplayURL(b.url),
		Selector: selectorText(b.opts.Selector)}
	if u, err := url.Parse(b.url); err == nil && u.Host != "" {
		qs.Host = sanitizeName(u.Host)
	}
	if names := runningNames(b.plan); len(names) > 0 {
		qs.Metric = names[0]
	}
	if f == nil {
		return qs
	}
	if v, ok := f.v[probeUnselected]; ok {
		qs.Probed = true
		if len(v) > 0 {
			if n, ok := value(v[0]); ok && n > 0 {
				qs.Unselected = int(n)
			}
		}
	}
	return qs
}

// selectorText is the selector as PromQL matchers, "{job=\"x\",ns=~\"a|b\"}";
// "" when none.
func selectorText(ms []Matcher) string {
	if len(ms) == 0 {
		return ""
	}
	parts := make([]string, len(ms))
	for i, m := range ms {
		parts[i] = m.String()
	}
	return sanitizeName("{" + strings.Join(parts, ",") + "}")
}

// dataSince is when the server's data for the fleet begins, on the local
// clock, read from the chart history at no extra query: the range queries
// ask for the whole chart span (at least the window), so a first present
// point after the span's start means the server holds nothing older — it,
// or the fleet, started less than a chart span ago. The start is placed
// one step before that point (a chart point needs two samples within its
// span, so the data began at most a step or two earlier). Zero when the
// data reaches back to the span's start, or nothing is charted yet.
func dataSince(h *history, skew time.Duration) time.Time {
	if h == nil || len(h.spec.ends) == 0 {
		return time.Time{}
	}
	first := -1
	for _, pts := range h.charts {
		for j, v := range pts {
			if first >= 0 && j >= first {
				break
			}
			if !math.IsNaN(v) && !math.IsInf(v, 0) {
				first = j
				break
			}
		}
	}
	if first <= 0 {
		return time.Time{}
	}
	return h.spec.ends[first].Add(-h.spec.step).Add(-skew)
}
