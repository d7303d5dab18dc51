package panels

import (
	"github.com/pdtop/pdtop/sources"
)

// drawKV is the KV transfer panel: per prefill worker its in-flight
// transfer queue, per decode worker its transfer queue (both requests),
// then KV-transfer latency p50/p99 (histogram, or the old gauge form's
// last value marked "~"), mean speed (GB/s) and size (MB per request),
// transfer and bootstrap failures/s and timeouts/s, with a "stalled?" note
// when a queue holds requests but no transfer finished in the window.
func drawKV(c *drawCtx) []string {
	s, m := c.s, &c.m
	pre, ppool := prefillSide(s)
	dec, dpool := decodeSide(s)
	if len(pre)+len(dec) == 0 {
		return message(c, emptyFleet(c, "no workers"))
	}
	allPre, allDec := pre, dec // charts show the pools, not the filtered rows
	pre, dec = c.keep(pre), c.keep(dec)
	th := s.Thresholds.WithDefaults()
	t := &table{empty: c.noMatch("worker"), cols: []column{
		{name: "worker", left: true, max: 24},
		{name: "", left: true},
		{name: "role", left: true, prio: 6},
		{name: "queue", unit: "req"},
		{name: "latency", unit: "p50/p99", prio: 1},
		{name: "speed", unit: "GB/s", prio: 4},
		{name: "size", unit: "MB/req", prio: 5},
		{name: "fail", unit: "req/s", prio: 1},
		{name: "boot fail", unit: "req/s", prio: 5},
		{name: "timeouts", unit: "ev/s", prio: 4},
		{name: "", left: true, prio: 3},
		{name: "queue trend", unit: "last " + span(chartSpan(s)), left: true, prio: 7, nosort: true},
	}}
	trP := c.trend(sources.SigInflightQueue, pre, 0)
	trD := c.trend(sources.SigTransferQueue, dec, 0)
	if trP != nil && trD != nil {
		trP.hi = max(trP.hi, trD.hi) // one scale for both queues
		trD.hi = trP.hi
	}
	row := func(w *sources.WorkerView, queueSig sources.Signal, prefill bool, tr *trend) []cell {
		r := w.Readings
		lat := w.Dist(sources.SigKVXferLatency)
		cells := []cell{
			muted(w.Role.String()),
			m.queueCell(r.Get(queueSig), th),
			kvLatency(m, lat, prefill),
			kvDist(m, kvFallback(w, sources.SigKVXferSpeed, sources.SigKVXferSpeedGauge), mean, plain, prefill),
			kvDist(m, kvFallback(w, sources.SigKVXferSize, sources.SigKVXferSizeGauge), mean, plain, prefill),
			m.reading(r.Get(sources.SigTransferFailed), rate),
			m.reading(r.Get(sources.SigBootstrapFailed), rate),
			m.reading(r.Get(sources.SigKVXferTimeouts), rate),
			stallCell(r.Get(queueSig), lat),
			tr.cell(w),
		}
		if f := r.Get(sources.SigTransferFailed); f.Present && f.Value > 0 {
			cells[5].tone = toneWarn
		}
		return append([]cell{m.nameCell(&w.TargetStatus, w.Restarted), stateCell(&w.TargetStatus)},
			rowCells(&w.TargetStatus, cells, m)...)
	}
	for _, w := range pre {
		t.ids = append(t.ids, w.ID)
		t.rows = append(t.rows, row(w, sources.SigInflightQueue, true, trP))
	}
	for _, w := range dec {
		t.ids = append(t.ids, w.ID)
		t.rows = append(t.rows, row(w, sources.SigTransferQueue, false, trD))
	}
	foot := func(name string, p *sources.PoolView, queueSig sources.Signal) []cell {
		r := p.Readings
		lat := p.Dists[sources.SigKVXferLatency]
		return []cell{c.poolCell(name), poolState(p), {},
			m.reading(r.Get(queueSig), count),
			kvLatency(m, lat, false),
			{}, {},
			m.reading(r.Get(sources.SigTransferFailed), rate),
			m.reading(r.Get(sources.SigBootstrapFailed), rate),
			m.reading(r.Get(sources.SigKVXferTimeouts), rate),
			{}, {}}
	}
	if ppool.Workers > 0 {
		t.foot = append(t.foot, foot("prefill pool", ppool, sources.SigInflightQueue))
	}
	if dpool.Workers > 0 {
		t.foot = append(t.foot, foot("decode pool", dpool, sources.SigTransferQueue))
	}
	m.note("queue: prefill in-flight / decode transfer")
	parts := []part{selectablePart(c, t, 0)}
	if st := stallLines(s, "transfer stall"); len(st) > 0 {
		parts = append(parts, alertPart(c, st, 0))
	}
	inflight := poolHistory(allPre, sources.SigInflightQueue, false)
	transfer := poolHistory(allDec, sources.SigTransferQueue, false)
	if len(inflight)+len(transfer) > 0 && !c.print {
		ch := &chart{title: "KV transfer queues", unit: "req", format: num, window: chartSpan(s), slots: historySlots(s), marks: restartMarks(s),
			lines: []chartLine{
				{label: "prefill in-flight", short: "prefill", points: inflight, tone: series(0)},
				{label: "decode transfer", short: "decode", points: transfer, tone: series(1), dashed: true},
			}}
		parts = append(parts, part{min: 7, want: 14, prio: 3, gap: true,
			draw: func(h int) []string { return ch.render(c.st, c.w, h) }})
	}
	return stack(c.w, c.h, append(parts, legendPart(c, 1)))
}

func mean(q sources.Quantiles) (float64, bool) { return q.Mean, false }

// plain formats a value that carries its unit in the column header.
func plain(v float64, _ string) string { return num(v) }

// kvDist formats a KV-transfer figure. On decode workers, which usually do
// not time transfers, a missing figure is left blank rather than "—".
func kvDist(m *marks, q sources.Quantiles, pick pickFn, f func(float64, string) string, required bool) cell {
	if !q.Present && !required {
		return cell{}
	}
	if q.Form == "gauge" && sources.Finite(q.Mean) {
		// The old gauge form has no quantiles, only the last value.
		m.approx = true
		return txt(markApprox + f(q.Mean, q.Unit))
	}
	return m.dist(q, pick, f)
}

// kvLatency is "12ms/48ms" (p50/p99), or the old gauge form's last value
// "~31ms", or a mean "~15ms" when the window has no buckets.
func kvLatency(m *marks, q sources.Quantiles, required bool) cell {
	if !q.Present && !required {
		return cell{}
	}
	if q.Present && q.Form == "histogram" && sources.Finite(q.P50) && sources.Finite(q.P99) {
		return txt(m.quantileText(q.P50, q.P50Beyond, q.Unit, latency) + "/" + m.quantileText(q.P99, q.P99Beyond, q.Unit, latency))
	}
	return kvDist(m, q, p50, latency, required)
}

// kvFallback returns the histogram form of a KV-transfer signal, or its
// old gauge form from the worker's readings.
func kvFallback(w *sources.WorkerView, hist, gauge sources.Signal) sources.Quantiles {
	if q := w.Dist(hist); q.Present {
		return q
	}
	if r := w.Readings.Get(gauge); r.Present {
		return sources.Quantiles{Present: true, P50: r.Value, P99: r.Value, Mean: r.Value,
			Form: "gauge", Unit: gauge.Info().Unit, Source: r.Source}
	}
	return sources.Quantiles{}
}

// stallCell flags a transfer queue that holds requests while no transfer
// finished in the window.
func stallCell(q sources.Reading, lat sources.Quantiles) cell {
	if q.Present && q.Value > 0 && lat.Present && lat.Form == "histogram" && lat.Count == 0 {
		return toned("stalled?", toneWarn)
	}
	return cell{}
}
