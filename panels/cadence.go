package panels

import (
	"github.com/pdtop/pdtop/sources"
)

// drawCadence is the Token cadence panel: the window's ITL and TTFT
// p50/p99 and output tok/s in one line, charts of ITL and TTFT p50/p99 and
// of output tok/s over the window, and per decode worker ITL and TTFT
// p50/p99 and output tok/s when there is room. Small sizes keep the
// figures and drop the charts.
func drawCadence(c *drawCtx) []string {
	s, m := c.s, &c.m
	itl, ttft := poolDist(s, sources.SigITL), poolDist(s, sources.SigTTFT)
	th := s.Thresholds.WithDefaults()
	now := []string{
		"ITL p50 " + distText(itl, p50) + " p99 " + m.p99Cell(itl, th.ITLP99, "ITL p99").text,
		"TTFT p50 " + distText(ttft, p50) + " p99 " + m.p99Cell(ttft, th.TTFTP99, "TTFT p99").text,
		"output " + readingText(s.Fleet.OutputRate, rate) + " tok/s",
		rejectedText(s),
	}
	if g := goodputText(s); g != "" {
		now = append(now, g)
	}
	nowLines := wrapItems(now, "  ·  ", c.w)
	parts := []part{linesPart(nowLines, len(nowLines), 0, false)}
	if st := stallLines(s, "decode collapse"); len(st) > 0 {
		parts = append(parts, alertPart(c, st, 0))
	}
	if c.print {
		return cadenceTable(c, parts, th)
	}

	lat := func(title, p50Name, p99Name string) *chart {
		return &chart{title: title, format: secs, window: chartSpan(s), marks: restartMarks(s),
			slots: max(chartSlots(s, p50Name), chartSlots(s, p99Name)),
			lines: []chartLine{
				{label: "p99", points: seriesPoints(s, p99Name), tone: series(1)},
				{label: "p50", points: seriesPoints(s, p50Name), tone: series(0)},
			}}
	}
	itlChart := lat("ITL", "itl_p50", "itl_p99")
	ttftChart := lat("TTFT", "ttft_p50", "ttft_p99")
	out := &chart{title: "output", unit: "tok/s", format: num, window: chartSpan(s), marks: restartMarks(s),
		slots: chartSlots(s, "output_tps"),
		lines: []chartLine{{label: "fleet", points: seriesPoints(s, "output_tps"), tone: series(3)}}}
	chartPart := func(ch *chart, prio int) part {
		return part{min: 6, want: 12, prio: prio, gap: true,
			draw: func(h int) []string { return ch.render(c.st, c.w, h) }}
	}
	if c.w >= 70 {
		parts = append(parts, part{min: 6, want: 14, prio: 1, gap: true, draw: func(h int) []string {
			lw := (c.w - 2) / 2
			a, b := itlChart.render(c.st, lw, h), ttftChart.render(c.st, c.w-2-lw, h)
			rows := make([]string, h)
			for i := range rows {
				rows[i] = a[i] + "  " + b[i]
			}
			return rows
		}})
	} else {
		parts = append(parts, chartPart(itlChart, 1), chartPart(ttftChart, 2))
	}
	parts = append(parts, chartPart(out, 3))
	return cadenceTable(c, parts, th)
}

// cadenceTable adds the per-decode-worker ITL / TTFT table and the legend.
func cadenceTable(c *drawCtx, parts []part, th sources.Thresholds) []string {
	s, m := c.s, &c.m
	all, pool := decodeSide(s)
	ws := c.keep(all)
	if len(all) > 0 {
		t := &table{empty: c.noMatch("decode worker"), cols: []column{
			{name: "worker", left: true, max: 24},
			{name: "", left: true},
			{name: "ITL p50", prio: 1},
			{name: "ITL p99"},
			{name: "TTFT p50", prio: 4},
			{name: "TTFT p99", prio: 3},
			{name: "output", unit: "tok/s", prio: 2},
		}}
		for _, w := range ws {
			i, f := w.Dist(sources.SigITL), w.Dist(sources.SigTTFT)
			t.ids = append(t.ids, w.ID)
			t.rows = append(t.rows, append([]cell{m.nameCell(&w.TargetStatus, w.Restarted), stateCell(&w.TargetStatus)},
				rowCells(&w.TargetStatus, []cell{
					m.dist(i, p50, latency), m.p99Cell(i, th.ITLP99, "ITL p99"),
					m.dist(f, p50, latency), m.p99Cell(f, th.TTFTP99, "TTFT p99"),
					m.reading(w.Readings.Get(sources.SigGenerationTokens), rate),
				}, m)...))
		}
		i, f := pool.Dists[sources.SigITL], pool.Dists[sources.SigTTFT]
		t.foot = [][]cell{{toned("pool", toneAccent), poolState(pool),
			m.dist(i, p50, latency), m.p99Cell(i, th.ITLP99, "ITL p99"),
			m.dist(f, p50, latency), m.p99Cell(f, th.TTFTP99, "TTFT p99"),
			m.reading(pool.Readings.Get(sources.SigGenerationTokens), rate)}}
		p := selectablePart(c, t, 4)
		p.gap = true
		parts = append(parts, p)
	}
	return stack(c.w, c.h, append(parts, legendPart(c, 5)))
}

// poolDist is the fleet's distribution of sig over the window: the decode
// pool's, else the unified or prefill pool's.
func poolDist(s *sources.Snapshot, sig sources.Signal) sources.Quantiles {
	for _, p := range []*sources.PoolView{&s.Decode, &s.Unified, &s.Prefill} {
		if q, ok := p.Dists[sig]; ok && q.Present {
			return q
		}
	}
	return sources.Quantiles{}
}

// distText formats one quantile of q for running text ("36ms", "—",
// "~40ms" for a mean-only distribution).
func distText(q sources.Quantiles, pick func(sources.Quantiles) float64) string {
	var m marks
	return m.dist(q, pick, latency).text
}
