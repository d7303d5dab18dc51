package panels

import (
	"github.com/pdtop/pdtop/sources"
)

// drawPrefill is the Prefill queueing panel: per prefill worker the three
// prefill queues (requests), the actual prefix hit beside them (cache
// affinity has a waiting-time price), queue-time p50/p99 and input tok/s,
// with pool totals pinned at the bottom; a chart of fleet input tok/s when
// there is room.
func drawPrefill(c *drawCtx) []string {
	s, m := c.s, &c.m
	ws, pool := prefillSide(s)
	if len(ws) == 0 {
		return message(c, emptyFleet(c, "no prefill workers"))
	}
	ws = c.keep(ws)
	th := s.Thresholds.WithDefaults()
	t := &table{empty: c.noMatch("prefill worker"), cols: []column{
		{name: "worker", left: true, max: 24},
		{name: "", left: true},
		{name: "wait", unit: "req"},
		{name: "hit", unit: "% tok", prio: 1},
		{name: "boot", unit: "req", prio: 2},
		{name: "xfer", unit: "req", prio: 3},
		{name: "q p50", prio: 5},
		{name: "q p99", prio: 2},
		{name: "KV", unit: "used/res", prio: 4},
		{name: "input", unit: "tok/s", prio: 4},
		{name: "run", unit: "req", prio: 6},
		{name: "waiting trend", unit: "last " + span(chartSpan(s)), left: true, prio: 7, nosort: true},
	}}
	tr := c.trend(sources.SigWaiting, ws, 0)
	for _, w := range ws {
		r := w.Readings
		q := w.Dist(sources.SigQueueTime)
		t.ids = append(t.ids, w.ID)
		t.rows = append(t.rows, append([]cell{m.nameCell(&w.TargetStatus, w.Restarted), stateCell(&w.TargetStatus)},
			rowCells(&w.TargetStatus, []cell{
				m.queueCell(r.Get(sources.SigWaiting), th),
				m.hitCell(w.Hit),
				m.queueCell(r.Get(sources.SigBootstrapQueue), th),
				m.queueCell(r.Get(sources.SigInflightQueue), th),
				m.dist(q, p50, latency),
				m.dist(q, p99, latency),
				kvUseResident(m, r),
				m.reading(r.Get(sources.SigPromptTokens), rate),
				m.reading(r.Get(sources.SigRunning), count),
				tr.cell(w),
			}, m)...))
	}
	pr := pool.Readings
	pq := pool.Dists[sources.SigQueueTime]
	t.foot = [][]cell{{
		c.poolCell("pool"), poolState(pool),
		m.reading(pr.Get(sources.SigWaiting), count),
		m.hitCell(pool.Hit),
		m.reading(pr.Get(sources.SigBootstrapQueue), count),
		m.reading(pr.Get(sources.SigInflightQueue), count),
		m.dist(pq, p50, latency),
		m.dist(pq, p99, latency),
		kvUseResident(m, pr),
		m.reading(pr.Get(sources.SigPromptTokens), rate),
		m.reading(pr.Get(sources.SigRunning), count),
	}}
	t.fitTo(c.w)
	if t.shows("boot") {
		m.note("boot = bootstrap queue")
	}
	if t.shows("xfer") {
		m.note("xfer = in-flight KV transfer queue")
	}
	m.note("hit = cached÷prompt tokens")
	parts := []part{selectablePart(c, t, 0),
		linesPart([]string{paint(c.st, toneMuted, rejectedText(s)+" · queue times count admitted requests only")}, 1, 2, false)}
	if pts := seriesPoints(s, "input_tps"); len(pts) > 0 && !c.print {
		ch := &chart{
			title: "input", unit: "tok/s", format: num, window: chartSpan(s),
			slots: chartSlots(s, "input_tps"), marks: restartMarks(s),
			lines: []chartLine{{label: "fleet", points: pts, tone: series(0)}},
		}
		parts = append(parts, part{min: 7, want: 16, prio: 3, gap: true,
			draw: func(h int) []string { return ch.render(c.st, c.w, h) }})
	}
	parts = append(parts, legendPart(c, 1))
	return stack(c.w, c.h, parts)
}

// kvUseResident is a prefill worker's KV pool as "used/resident": usage
// leaves out the radix cache's evictable tokens, so a worker whose pool
// is full of cached prefixes (and evicting them) reads "0%/99%", never a
// bare "0%". Sorted by residency.
func kvUseResident(m *marks, r sources.Readings) cell {
	u, res := r.Get(sources.SigKVUsage), r.Get(sources.SigKVResident)
	switch {
	case u.Present && res.Present && sources.Finite(u.Value) && sources.Finite(res.Value):
		m.note("KV used/res = in use / resident incl. evictable cache, of the pool")
		return txt(pct(u.Value) + "/" + pct(res.Value)).val(res.Value)
	case res.Present && sources.Finite(res.Value):
		m.note("KV used/res = in use / resident incl. evictable cache, of the pool")
		return txt(markAbsent + "/" + pct(res.Value)).val(res.Value)
	}
	return m.reading(u, ratioPct)
}

// legendPart is the panel's legend at the bottom, wrapped onto as many
// lines as it needs (it gives up lines before the table does).
func legendPart(c *drawCtx, prio int) part {
	lines := wrapItems(c.m.legend(), " · ", c.w)
	for i, l := range lines {
		lines[i] = paint(c.st, toneMuted, l)
	}
	return linesPart(lines, 1, prio, true)
}

// wrapItems joins items with sep into lines of at most w cells, never
// splitting an item (an item wider than w is cut).
func wrapItems(items []string, sep string, w int) []string {
	var lines []string
	for len(items) > 0 && w > 0 {
		l, n := joinLine(items, sep, w)
		if n == 0 {
			l, n = fit(items[0], w), 1
		}
		lines = append(lines, l)
		items = items[n:]
	}
	return lines
}
