package panels

import (
	"sort"

	"github.com/pdtop/pdtop/sources"
)

// signalLines is the table of every signal the worker exposes.
func (c *detailCtx) signalLines() []string {
	w, m := c.w, &c.m
	th := c.s.Thresholds.WithDefaults()
	trendW := clamp(c.iw/5, 8, 40)
	// Wide: the source metric is a column. Narrow: it goes on a line of
	// its own under each signal, so it is never the part that is cut.
	inline := c.iw >= 110
	t := &table{cols: []column{
		{name: "signal", left: true},
		{name: "value"},
		{name: "unit", left: true},
		{name: "in window", prio: 3},
		{name: "trend", left: true, prio: 1},
		{name: "source metric", left: true, prio: 2, flex: true},
	}}
	if !inline {
		t.cols[5].name = "" // left out: drawn under each row
	}
	var srcs []string
	var sigs []sources.Signal
	for sig := range w.Readings {
		sigs = append(sigs, sig)
	}
	sort.Slice(sigs, func(a, b int) bool { return sigs[a] < sigs[b] })
	for _, sig := range sigs {
		r := w.Readings[sig]
		info := sig.Info()
		unit := info.Unit
		v := m.reading(r, num)
		inc := cell{}
		if info.Kind == sources.Counter {
			unit += "/s"
			if r.Present {
				inc = muted("+" + num(r.Increase))
			}
		}
		if info.Unit == "ratio" && r.Present {
			v, unit = txt(pct(r.Value)).val(r.Value), ""
		}
		switch sig {
		case sources.SigWaiting, sources.SigBootstrapQueue, sources.SigInflightQueue, sources.SigPreallocQueue, sources.SigTransferQueue:
			v = m.queueCell(r, th)
		case sources.SigKVUsage:
			v = m.over(v, r.Value, th.KVUsage, "KV usage ≥ "+pct(th.KVUsage))
		}
		srcs = append(srcs, c.source(sig, r.Source))
		t.rows = append(t.rows, []cell{txt(info.Name), v, muted(unit), inc,
			muted(c.spark(c.history(sig), trendW, 0)), c.srcCell(inline, srcs)})
	}
	var dsigs []sources.Signal
	for sig := range w.Dists {
		dsigs = append(dsigs, sig)
	}
	sort.Slice(dsigs, func(a, b int) bool { return dsigs[a] < dsigs[b] })
	for _, sig := range dsigs {
		q := w.Dists[sig]
		if !q.Present && q.Source == "" {
			continue
		}
		name := sig.Info().Name + " p50/p99"
		v := m.dist(q, p50, latency)
		if q.Present && q.Form == "histogram" && sources.Finite(q.P50) && sources.Finite(q.P99) {
			v = txt(inUnit(q.P50, q.Unit) + " / " + inUnit(q.P99, q.Unit))
			if q.Unit != "s" && q.Unit != "ms" {
				v = txt(num(q.P50) + " / " + num(q.P99))
			}
			switch sig {
			case sources.SigITL:
				v = m.over(v.val(q.P99), q.P99, th.ITLP99, "ITL p99 ≥ "+secs(th.ITLP99))
			case sources.SigTTFT:
				v = m.over(v.val(q.P99), q.P99, th.TTFTP99, "TTFT p99 ≥ "+secs(th.TTFTP99))
			}
		}
		unit := q.Unit
		if unit == "s" || unit == "ms" {
			unit = "" // the values carry it
		}
		if q.Form != "" && q.Form != "histogram" {
			unit += " (" + q.Form + ")"
		}
		cnt := cell{}
		if q.Present {
			cnt = muted(num(q.Count) + " obs")
		}
		var hist []float64
		if c.d != nil {
			hist = c.d.P99[sig]
		}
		srcs = append(srcs, c.source(sig, q.Source))
		t.rows = append(t.rows, []cell{txt(name), v, muted(unit), cnt,
			muted(c.spark(hist, trendW, 0)), c.srcCell(inline, srcs)})
	}
	if len(t.rows) == 0 {
		return []string{paint(c.st, toneMuted, "no signals yet")}
	}
	lines, _, _, _ := t.fitTo(c.iw).render(c.st, c.iw, t.fullHeight(), 0)
	if !inline {
		hl := t.headerLines()
		out := append([]string(nil), lines[:hl]...)
		for i, l := range lines[hl:] {
			out = append(out, l)
			if i < len(srcs) {
				out = append(out, paint(c.st, toneMuted, fit("  ← "+srcs[i], c.iw)))
			}
		}
		lines = out
	}
	if c.d == nil {
		lines = append(lines, paint(c.st, toneMuted, "(this backend keeps history for a few signals only)"))
	} else {
		lines = append(lines, paint(c.st, toneMuted, "trend of latency rows: p99 per step"))
	}
	return lines
}

// srcCell is the source column's cell for the row just added (empty when
// the source goes on its own line).
func (c *detailCtx) srcCell(inline bool, srcs []string) cell {
	if !inline {
		return cell{}
	}
	return muted(srcs[len(srcs)-1])
}

// history is a scalar signal's per-step history: the backend's, else the
// snapshot's (which carries only a few signals).
func (c *detailCtx) history(sig sources.Signal) []float64 {
	if c.d != nil {
		if h, ok := c.d.History[sig]; ok {
			return h
		}
	}
	return c.w.History[sig]
}

// source is the raw metric name behind sig.
func (c *detailCtx) source(sig sources.Signal, src string) string {
	if src == "" && c.d != nil {
		src = c.d.Sources[sig]
	}
	if src == "" {
		return markAbsent
	}
	return clean(src, 120)
}

// spark draws pts in w cells scaled to [0, hi] (hi 0: the largest point).
func (c *detailCtx) spark(pts []float64, w int, hi float64) string {
	if len(pts) == 0 {
		return ""
	}
	if hi == 0 {
		for _, v := range pts {
			if sources.Finite(v) && v > hi {
				hi = v
			}
		}
	}
	return sparkline(pts, len(pts), w, hi)
}
