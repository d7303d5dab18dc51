package panels

import (
	"math"
	"strings"

	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/themes"
)

// drawDecode is the Decode admission panel: per decode worker running,
// prealloc and transfer queues (requests), a KV usage bar with its
// percentage and retractions/s; then per gateway replica the offered
// req/s against what it answered by status class (2xx / 429 / 408 / 5xx)
// and the rejected share.
func drawDecode(c *drawCtx) []string {
	s, m := c.s, &c.m
	all, pool := decodeSide(s)
	ws := c.keep(all)
	th := s.Thresholds.WithDefaults()
	barW := 5
	switch {
	case c.w >= 100:
		barW = 16
	case c.w >= 70:
		barW = 10
	}
	t := &table{empty: c.noMatch("decode worker"), cols: []column{
		{name: "worker", left: true, max: 24},
		{name: "", left: true},
		{name: "running", unit: "req"},
		{name: "prealloc", unit: "req", prio: 1},
		{name: "xfer", unit: "req", prio: 3},
		{name: "KV usage", unit: "of pool", left: true},
		{name: "retract", unit: "req/s", prio: 2},
		{name: "output", unit: "tok/s", prio: 4},
		{name: "KV usage trend", unit: "last " + span(chartSpan(s)), left: true, prio: 5, nosort: true},
	}}
	tr := c.trend(sources.SigKVUsage, ws, 1)
	for _, w := range ws {
		r := w.Readings
		t.ids = append(t.ids, w.ID)
		t.rows = append(t.rows, append([]cell{m.nameCell(&w.TargetStatus, w.Restarted), stateCell(&w.TargetStatus)},
			rowCells(&w.TargetStatus, []cell{
				m.reading(r.Get(sources.SigRunning), count),
				m.queueCell(r.Get(sources.SigPreallocQueue), th),
				m.queueCell(r.Get(sources.SigTransferQueue), th),
				kvBar(c.st, m, r.Get(sources.SigKVUsage), barW, w.Health == sources.Stale, th.KVUsage),
				retractCell(m, r.Get(sources.SigRetractions)),
				m.reading(w.Output, rate),
				tr.cell(w),
			}, m)...))
	}
	pr := pool.Readings
	kvMax := m.reading(pr.Get(sources.SigKVUsage), ratioPct)
	if kvMax.tone == toneText {
		kvMax.text = "max " + kvMax.text
	}
	t.foot = [][]cell{{c.poolCell("pool"), poolState(pool),
		m.reading(pr.Get(sources.SigRunning), count),
		m.reading(pr.Get(sources.SigPreallocQueue), count),
		m.reading(pr.Get(sources.SigTransferQueue), count),
		kvMax,
		retractCell(m, pr.Get(sources.SigRetractions)),
		m.reading(pool.Output, rate),
	}}
	var parts []part
	if len(all) > 0 {
		parts = append(parts, selectablePart(c, t, 0))
	} else {
		var ls []string
		for _, l := range splitWords(emptyFleet(c, "no decode workers"), c.w) {
			ls = append(ls, paint(c.st, toneMuted, l))
		}
		parts = append(parts, linesPart(ls, 1, 0, false))
	}
	if len(s.Gateways) > 0 {
		p := fixedTablePart(c, admissionTable(s, m, th), 0)
		p.gap = true
		alt := linesPart([]string{admissionLine(c)}, 1, 0, false)
		p.alt = &alt
		parts = append(parts, p)
	}
	if g := goodputLine(s); g != "" {
		parts = append(parts, linesPart(wrapLines([]string{g}, c.w), 1, 1, false))
	}
	if st := stallLines(s, "decode collapse", "transfer stall"); len(st) > 0 {
		parts = append(parts, alertPart(c, st, 0))
	}
	if kv := poolHistory(all, sources.SigKVUsage, true); len(kv) > 0 && !c.print {
		ch := &chart{title: "KV usage", unit: "of pool", format: pct, fixed: true, lo: 0, hi: 1, marks: restartMarks(s),
			window: chartSpan(s), slots: historySlots(s),
			lines: []chartLine{{label: "highest worker", short: "max", points: kv, tone: series(0)}}}
		parts = append(parts, part{min: 7, want: 14, prio: 3, gap: true,
			draw: func(h int) []string { return ch.render(c.st, c.w, h) }})
	}
	return stack(c.w, c.h, append(parts, legendPart(c, 1)))
}

// kvBar is "████████░░ 78%": the bar in the theme's bar styles, the
// percentage as text, and "!" at or above the KV usage threshold high so
// pressure never depends on colour.
func kvBar(st *themes.Styles, m *marks, r sources.Reading, w int, stale bool, high float64) cell {
	if !r.Present || !sources.Finite(r.Value) {
		return m.missing(r.Source)
	}
	v := math.Max(0, math.Min(1, r.Value))
	filled := int(math.Round(v * float64(w)))
	label := " " + pct(r.Value)
	t := toneText
	switch {
	case r.Value >= high:
		label += markOver
		t = toneCrit
		m.note(markOver + " KV usage ≥ " + pct(high))
	case r.Value >= high-0.15:
		t = toneWarn
	}
	if stale {
		t = toneMuted
	}
	fill := toneBarFill
	if t != toneText {
		fill = t
	}
	text := paint(st, fill, strings.Repeat("█", filled)) + paint(st, toneBarEmpty, strings.Repeat("░", w-filled)) +
		paint(st, t, label)
	return cell{text: text, raw: true}.val(r.Value)
}

// retractCell is retractions/s, warn-toned when any happen (KV pressure).
func retractCell(m *marks, r sources.Reading) cell {
	c := m.reading(r, rate)
	if r.Present && r.Value > 0 && c.tone == toneText {
		c.tone = toneWarn
	}
	return c
}

// admissionTable is offered vs answered by status class per replica.
func admissionTable(s *sources.Snapshot, m *marks, th sources.Thresholds) *table {
	t := &table{cols: []column{
		{name: "replica", left: true, max: 20},
		{name: "", left: true},
		{name: "offered", unit: "req/s"},
		{name: "2xx", unit: "req/s"},
		{name: "429", unit: "req/s", prio: 1},
		{name: "408", unit: "req/s", prio: 3},
		{name: "5xx", unit: "req/s", prio: 2},
		{name: "4xx", unit: "req/s", prio: 5},
		{name: "rejected", unit: "share"},
	}}
	classes := []string{"2xx", "429", "408", "5xx", "4xx"}
	for i := range s.Gateways {
		g := &s.Gateways[i]
		cells := []cell{m.reading(g.Readings.Get(sources.SigGWOffered), rate)}
		any := false
		for _, k := range classes {
			r, ok := g.Responses[k]
			if !ok {
				cells = append(cells, cell{})
				continue
			}
			cells = append(cells, m.reading(r, rate))
			any = any || r.Present
		}
		if len(g.Responses) == 0 {
			cells[1] = m.missing("")
		}
		rej := cell{}
		switch share, ok := g.RejectedShare(); {
		case ok:
			rej = m.over(txt(pct(share)).val(share), share, th.ErrorRate, "rejected ≥ "+pct(th.ErrorRate))
		case any:
			rej = muted("idle")
		default:
			rej = m.missing("")
		}
		cells = append(cells, rej)
		t.rows = append(t.rows, append([]cell{txt(clean(g.Name, 30)), stateCell(&g.TargetStatus)},
			rowCells(&g.TargetStatus, cells, m)...))
	}
	if r := s.Fleet.Rejected; len(s.Gateways) > 1 {
		rej := m.over(m.reading(r, pct), r.Value, th.ErrorRate, "rejected ≥ "+pct(th.ErrorRate))
		t.foot = [][]cell{{toned("fleet", toneAccent), {},
			m.reading(s.Fleet.ReqRate, rate), {}, {}, {}, {}, {}, rej}}
	}
	m.note("rejected = (429+408+5xx) ÷ all responses in the window")
	return t
}

// admissionLine is the fleet's admission in one line, for when the
// per-replica table does not fit: "gw 77 req/s · rejected 2.7% · 2xx 75 ·
// 429 1.5 · 5xx 0.5" (req/s by status class).
func admissionLine(c *drawCtx) string {
	sum := map[string]float64{}
	seen := map[string]bool{}
	for i := range c.s.Gateways {
		for k, r := range c.s.Gateways[i].Responses {
			if r.Present && sources.Finite(r.Value) {
				sum[k] += r.Value
				seen[k] = true
			}
		}
	}
	parts := []string{"gw " + readingText(c.s.Fleet.ReqRate, rate) + " req/s",
		"rejected " + readingText(c.s.Fleet.Rejected, pct)}
	for _, k := range []string{"2xx", "429", "408", "5xx"} {
		if seen[k] {
			parts = append(parts, k+" "+rate(sum[k]))
		}
	}
	return joinSome(parts, " · ", c.w)
}

// readingText is a reading's value or "—".
func readingText(r sources.Reading, f func(float64) string) string {
	if r.Present && sources.Finite(r.Value) {
		return f(r.Value)
	}
	return markAbsent
}
