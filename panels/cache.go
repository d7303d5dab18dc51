package panels

import (
	"strings"

	"github.com/pdtop/pdtop/sources"
)

// drawCache is the Cache: router vs worker panel. The router's prediction
// exists only per gateway replica (engines.md §5, gateway.md §8), so the
// panel compares each replica's predicted hit — with its unit and form —
// to the prefill pool's actual hit (cached ÷ prompt tokens, ratio of sums),
// then lists per prefill worker the actual hit with its token counts, the
// last-batch gauge as a secondary figure, each replica's view of the
// worker (picks/s, in-flight, health, circuit) and its waiting queue.
// Likely causes of a gap and a predicted-vs-actual chart follow when there
// is room.
func drawCache(c *drawCtx) []string {
	s, m := c.s, &c.m
	ws, pool := prefillSide(s)
	if len(ws) == 0 && len(s.Gateways) == 0 {
		return message(c, emptyFleet(c, "no gateways or prefill workers"))
	}
	gt := gatewayHitTable(s, pool, m)
	causes := cacheCauses(s, ws, m)
	wt := workerHitTable(s, c.keep(ws), pool, m)
	wt.empty = c.noMatch("prefill worker")
	wt.foot[0][0] = c.poolCell("pool")
	if wt.fitTo(c.w).shows("last") {
		m.note("last batch = engine gauge")
	}
	parts := []part{fixedTablePart(c, gt, 0)}
	if len(s.Gateways) == 0 {
		parts[0] = linesPart([]string{paint(c.st, toneMuted, "no gateway replica scraped: no prediction to compare")}, 1, 0, false)
	}
	if len(ws) > 0 {
		p := selectablePart(c, wt, 0)
		p.gap = true
		parts = append(parts, p)
	}
	parts = append(parts, causesPart(c, causes))
	if act := seriesPoints(s, "hit_actual"); !c.print && (len(act) > 0 || len(seriesPoints(s, "hit_predicted")) > 0) {
		ch := &chart{
			title: "prefix hit", unit: "%", format: pct, fixed: true, lo: 0, hi: 1,
			window: chartSpan(s), slots: max(chartSlots(s, "hit_actual"), chartSlots(s, "hit_predicted")), marks: restartMarks(s),
			lines: []chartLine{
				{label: "predicted", short: "pred", points: seriesPoints(s, "hit_predicted"), tone: series(2), dashed: true},
				{label: "actual", points: act, tone: series(3)},
			},
		}
		parts = append(parts, part{min: 7, want: 16, prio: 3, gap: true,
			draw: func(h int) []string { return ch.render(c.st, c.w, h) }})
	}
	parts = append(parts, legendPart(c, 1))
	return stack(c.w, c.h, parts)
}

// causesPart shows the causes, wrapped as far as the room allows: each
// gets its first line before any gets a second (a cut one ends in "…"),
// and the first three are owed a line before the chart gets any, so every
// "!" verdict cell keeps its line below even in a short panel.
func causesPart(c *drawCtx, causes []string) part {
	if len(causes) == 0 {
		return part{}
	}
	each := make([][]string, len(causes))
	total := 0
	for i, l := range causes {
		each[i] = wrapLines([]string{l}, c.w)
		total += len(each[i])
	}
	return part{min: min(len(causes), 3), want: total, prio: 2, gap: true, draw: func(h int) []string {
		extra := h - len(causes)
		var out []string
		for _, ls := range each {
			take := min(len(ls), 1+max(extra, 0))
			extra -= take - 1
			for k := 0; k < take; k++ {
				l := ls[k]
				if k == take-1 && take < len(ls) {
					l += " " + strings.TrimSpace(ls[k+1]) // cut by fit, with "…"
				}
				out = append(out, paint(c.st, toneWarn, fit(l, c.w)))
			}
		}
		return out
	}}
}

// predictedForm names what a replica's predicted figure counts.
func predictedForm(g *sources.GatewayView) string {
	if !g.Predicted.Present {
		if strings.Contains(strings.ToLower(g.Generation+" "+g.Engine), "smg") {
			return "not exposed (smg)"
		}
		return "not exposed"
	}
	switch g.Predicted.Unit {
	case "requests":
		return "req >30% match"
	case "blocks":
		return "blocks sel÷query"
	}
	return unitShort(g.Predicted.Unit)
}

// gatewayHitTable compares each replica's prediction with the pool's
// actual hit.
func gatewayHitTable(s *sources.Snapshot, pool *sources.PoolView, m *marks) *table {
	t := &table{cols: []column{
		{name: "replica", left: true, max: 20},
		{name: "", left: true},
		{name: "predicted"},
		{name: "form", left: true, prio: 2},
		{name: "actual", prio: 0},
		{name: "gap", prio: 1},
		{name: "ceiling", prio: 5},
	}}
	th := s.Thresholds.WithDefaults()
	actual := m.hitCell(pool.Hit)
	if actual.tone == toneText {
		actual.text += " tok"
	}
	for i := range s.Gateways {
		g := &s.Gateways[i]
		pred, gap, ceil := cell{}, cell{}, cell{}
		if g.Predicted.Present {
			pred = m.hitCell(g.Predicted)
			if pred.tone == toneText {
				pred.text += " " + unitShort(g.Predicted.Unit)
			}
			if d, ok := sources.HitGap(g.Predicted, pool.Hit); ok {
				gap = txt(pp(d)).val(d)
				if gap.text != markAbsent && g.Predicted.Unit != pool.Hit.Unit {
					gap.text += "≠"
					m.note("≠ " + unitShort(g.Predicted.Unit) + " vs " + unitShort(pool.Hit.Unit) + ": different scales")
				}
				if d <= -th.HitGap {
					gap.tone = toneWarn // the workers beat the prediction: worth a look, not an alarm
				}
				gap = m.over(gap, d, th.HitGap, "gap ≥ "+pp(th.HitGap))
			}
		} else {
			m.absent = true
			pred = muted(markAbsent)
		}
		if g.Ceiling.Present {
			ceil = m.hitCell(g.Ceiling)
		}
		t.rows = append(t.rows, append([]cell{txt(clean(g.Name, 30)), stateCell(&g.TargetStatus)},
			rowCells(&g.TargetStatus, []cell{pred, muted(predictedForm(g)), actual, gap, ceil}, m)...))
	}
	return t
}

// workerHitTable lists each prefill worker's actual hit beside the
// routers' view of it.
func workerHitTable(s *sources.Snapshot, ws []*sources.WorkerView, pool *sources.PoolView, m *marks) *table {
	t := &table{cols: []column{
		{name: "worker", left: true, max: 24},
		{name: "", left: true},
		{name: "hit", unit: "% tok"},
		{name: "verdict", left: true, prio: 1},
		{name: "cached of prompt", unit: "window", prio: 3},
		{name: "last", unit: "batch %", prio: 5},
		{name: "wait", unit: "req", prio: 1},
	}}
	th := s.Thresholds.WithDefaults()
	for i := range s.Gateways {
		// Every part of the cell has a heading: the 2026 router adds its
		// KV-tree blocks for the worker.
		unit := "pick/s in-fl"
		for _, w := range ws {
			for _, r := range w.Router {
				if r.Replica == s.Gateways[i].Name && r.KVBlocks.Present {
					unit = "pick/s in-fl tree"
				}
			}
		}
		if unit != "pick/s in-fl" {
			m.note("tree = the router's KV-tree blocks (blk) for the worker")
		}
		t.cols = append(t.cols, column{name: clean(s.Gateways[i].Name, 16), unit: unit, prio: 2 + 2*i, left: true})
	}
	for _, w := range ws {
		lb := m.reading(w.Readings.Get(sources.SigCacheHitLastBatch), ratioPct)
		if lb.tone == toneText {
			lb.tone = toneMuted
		}
		cells := []cell{m.hitCell(w.Hit), workerVerdictCell(w, verdictFor(s, w.ID), m), hitOf(w.Hit), lb, m.queueCell(w.Readings.Get(sources.SigWaiting), th)}
		for i := range s.Gateways {
			cells = append(cells, routerCell(w, s.Gateways[i].Name, m))
		}
		t.ids = append(t.ids, w.ID)
		t.rows = append(t.rows, append([]cell{m.nameCell(&w.TargetStatus, w.Restarted), stateCell(&w.TargetStatus)},
			rowCells(&w.TargetStatus, cells, m)...))
	}
	foot := []cell{toned("pool", toneAccent), poolState(pool), m.hitCell(pool.Hit), {}, hitOf(pool.Hit), {},
		m.reading(pool.Readings.Get(sources.SigWaiting), count)}
	t.foot = [][]cell{foot}
	m.note("hit = cached÷prompt tokens over the window")
	return t
}

// routerCell is one replica's view of a worker: "9.8/s 3" (picks/s and
// in-flight requests), the 2026 router's KV-tree blocks when exposed
// ("1.2k blk"), plus "UNHEALTHY", "CB open" or "CB half" when so.
func routerCell(w *sources.WorkerView, replica string, m *marks) cell {
	for i := range w.Router {
		r := &w.Router[i]
		if r.Replica != replica {
			continue
		}
		picks, inf := "—", "—"
		if r.Picks.Present {
			picks = rate(r.Picks.Value) + "/s"
		}
		if r.InFlight.Present {
			inf = count(r.InFlight.Value)
		}
		c := txt(picks + " " + inf)
		if r.Picks.Present {
			c = c.val(r.Picks.Value)
		}
		if r.KVBlocks.Present && sources.Finite(r.KVBlocks.Value) {
			c.text += " " + num(r.KVBlocks.Value) + " blk"
		}
		if !r.Picks.Present && !r.InFlight.Present {
			m.absent = true
			c = muted(markAbsent)
		}
		if r.Health.Present && r.Health.Value == 0 {
			c.text += " UNHEALTHY"
			c.tone = toneCrit
		}
		if r.CB.Present {
			switch r.CB.Value {
			case 1:
				c.text += " CB open"
				c.tone = toneCrit
			case 2:
				c.text += " CB half"
				if c.tone != toneCrit {
					c.tone = toneWarn
				}
			}
		}
		return c
	}
	return muted("not listed")
}

// cacheCauses lists the likely reasons the prediction and the actual hit
// differ: the snapshot's verdicts (sources/diagnose) when it carries
// them; otherwise the evidence at hand — restarts (cold cache), replicas
// disagreeing about a worker, evictions.
func cacheCauses(s *sources.Snapshot, ws []*sources.WorkerView, m *marks) []string {
	if len(s.Diagnosis.Hits) > 0 {
		for _, w := range ws {
			if w.Restarted {
				m.restart = true
			}
		}
		return verdictLines(s, m)
	}
	var out []string
	for _, w := range ws {
		if w.Restarted {
			m.restart = true
			out = append(out, markRestart+" "+clean(w.Name, 30)+" restarted: cold cache")
		}
		if w.Disagree != "" {
			out = append(out, "⇄ replicas disagree on "+clean(w.Name, 30)+": "+clean(w.Disagree, 200))
		}
		if ev := w.Readings.Get(sources.SigEvictedTokens); ev.Present && ev.Value > 0 {
			out = append(out, clean(w.Name, 30)+" evicting "+num(ev.Value)+" tok/s: KV pressure")
		}
	}
	return out
}
