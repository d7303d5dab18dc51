package panels

import (
	"time"

	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/themes"
)

// cell is one table value: plain text plus its tone. The text carries the
// meaning on its own (a word or symbol), the tone only reinforces it.
type cell struct {
	text string
	tone tone
	raw  bool // text is already styled (bars); the table must not restyle it
	// v is the figure behind the text, for sorting (hasV false: sort by
	// text, after every figure).
	v    float64
	hasV bool
}

func txt(s string) cell { return cell{text: s} }

// val attaches the figure v to c for sorting.
func (c cell) val(v float64) cell {
	if sources.Finite(v) {
		c.v, c.hasV = v, true
	}
	return c
}

// over marks c when v is at or over thr: "!" after the value, the crit
// tone, and a legend entry naming the threshold ("! queue ≥ 10"). The mark
// carries the meaning without colour.
func (m *marks) over(c cell, v, thr float64, legend string) cell {
	if c.raw || !c.hasV || !sources.Finite(v) || !(thr > 0) || v < thr {
		return c
	}
	c.text += markOver
	c.tone = toneCrit
	m.note(markOver + " " + legend)
	return c
}
func muted(s string) cell         { return cell{text: s, tone: toneMuted} }
func toned(s string, t tone) cell { return cell{text: s, tone: t} }

// marks collects which special marks a panel drew, so its legend explains
// exactly those and no others.
type marks struct {
	absent, pending, restart, approx, stale bool
	extra                                   []string
}

// reading formats r with f, or the absent / pending mark.
func (m *marks) reading(r sources.Reading, f func(float64) string) cell {
	if r.Present && sources.Finite(r.Value) {
		return txt(f(r.Value)).val(r.Value)
	}
	return m.missing(r.Source)
}

// missing returns the mark for a value that is not there: "n/a" when the
// metric exists (source known) but has no figure yet, "—" otherwise.
func (m *marks) missing(source string) cell {
	if source != "" {
		m.pending = true
		return muted(markPending)
	}
	m.absent = true
	return muted(markAbsent)
}

// note adds a legend entry (once).
func (m *marks) note(s string) {
	for _, e := range m.extra {
		if e == s {
			return
		}
	}
	m.extra = append(m.extra, s)
}

// legend returns the legend entries for the marks used.
func (m *marks) legend() []string {
	var out []string
	if m.absent {
		out = append(out, markAbsent+" not exposed by this version")
	}
	if m.pending {
		out = append(out, markPending+" not enough samples yet")
	}
	if m.restart {
		out = append(out, markRestart+" restarted in window")
	}
	if m.approx {
		out = append(out, markApprox+" mean/last value, no quantiles")
	}
	return append(out, m.extra...)
}

// legendLine renders the legend in one muted line of at most w cells.
func (m *marks) legendLine(st *themes.Styles, w int) string {
	l := joinSome(m.legend(), " · ", w)
	if l == "" {
		return ""
	}
	return paint(st, toneMuted, l)
}

// stateCell is the word for a target's scrape health: empty when up,
// "STALE 12s", "DOWN", "NOT SGLANG" (it answers, but with no SGLang or
// gateway metrics) or "PENDING" otherwise.
func stateCell(ts *sources.TargetStatus) cell {
	if notSGLang(ts) {
		return toned("NOT SGLANG", toneCrit)
	}
	switch ts.Health {
	case sources.Up:
		if ts.Slow {
			return toned("SLOW", toneWarn)
		}
		return cell{}
	case sources.Stale:
		return toned("STALE "+since(ts.Age), toneWarn)
	case sources.Down:
		return toned("DOWN", toneCrit)
	}
	return toned("PENDING", toneMuted)
}

// notSGLang reports whether a target never gave data and its last scrape
// answered with another exporter's metrics (sources.ErrNoMetrics).
func notSGLang(ts *sources.TargetStatus) bool {
	return ts.Health == sources.Down && ts.LastError != nil && ts.LastError.Class == sources.ErrNoMetrics
}

// hasData reports whether a target's values can be shown (up, or stale with
// last good values).
func hasData(ts *sources.TargetStatus) bool {
	return ts.Health == sources.Up || ts.Health == sources.Stale
}

// nameCell is a worker's display name with its restart marker.
func (m *marks) nameCell(ts *sources.TargetStatus, restarted bool) cell {
	name := clean(ts.Name, 40)
	if name == "" {
		name = clean(ts.ID, 40)
	}
	if restarted {
		m.restart = true
		name += " " + markRestart
	}
	return txt(name)
}

// rowCells applies a target's health to its value cells: stale values are
// muted (they are the last good ones), a target with no data shows blanks.
func rowCells(ts *sources.TargetStatus, cells []cell, m *marks) []cell {
	switch {
	case ts.Health == sources.Stale:
		m.stale = true
		for i := range cells {
			if cells[i].tone == toneText {
				cells[i].tone = toneMuted
			}
		}
	case !hasData(ts):
		for i := range cells {
			cells[i] = cell{}
		}
	}
	return cells
}

// dist picks a quantile from q for display: the quantile when the window
// has a histogram, else the mean marked "~" (summary or old gauge form).
func (m *marks) dist(q sources.Quantiles, pick pickFn, f func(float64, string) string) cell {
	if !q.Present {
		return m.missing(q.Source)
	}
	if q.Form != "" && q.Form != "histogram" {
		// Summary or old gauge form: a mean or last value, never quantiles.
		if sources.Finite(q.Mean) {
			m.approx = true
			return txt(markApprox + f(q.Mean, q.Unit)).val(q.Mean)
		}
		return m.missing(q.Source)
	}
	v, beyond := pick(q)
	if sources.Finite(v) && beyond {
		return m.beyond(f(v, q.Unit)).val(v)
	}
	if sources.Finite(v) {
		return txt(f(v, q.Unit)).val(v)
	}
	if q.Form != "histogram" && sources.Finite(q.Mean) {
		m.approx = true
		return txt(markApprox + f(q.Mean, q.Unit))
	}
	if q.Count == 0 {
		return muted("idle")
	}
	return m.missing(q.Source)
}

// pickFn picks one figure of a distribution, and whether it is only a
// lower bound (a quantile whose rank fell in the +Inf bucket).
type pickFn func(sources.Quantiles) (float64, bool)

func p50(q sources.Quantiles) (float64, bool) { return q.P50, q.P50Beyond }
func p99(q sources.Quantiles) (float64, bool) { return q.P99, q.P99Beyond }

// markBeyond prefixes a quantile that lies above the highest finite
// bucket bound: ">5.00s".
const markBeyond = ">"

// beyond is a quantile known only to exceed the bound text, with its
// legend entry.
func (m *marks) beyond(bound string) cell {
	m.note(markBeyond + " above the top bucket: only a lower bound")
	return txt(markBeyond + bound)
}

// quantileText formats a quantile with f, as ">bound" when it lies above
// the top bucket.
func (m *marks) quantileText(v float64, beyond bool, unit string, f func(float64, string) string) string {
	if beyond && sources.Finite(v) {
		return m.beyond(f(v, unit)).text
	}
	return f(v, unit)
}

// latency formats a latency quantile in its unit.
func latency(v float64, unit string) string { return inUnit(v, unit) }

// ago formats how long before now an event at t was ("43s ago", "3m05s
// ago"), or "" for a zero time: exact to the second, as the verdicts say
// it (sources.FormatAge), so one restart never shows two ages.
func ago(now, t time.Time) string {
	if t.IsZero() {
		return ""
	}
	if now.IsZero() || now.Before(t) {
		return t.Format("15:04:05")
	}
	return age(now.Sub(t)) + " ago"
}

// queueCell is a queue length (requests), marked at or over the queue
// depth threshold.
func (m *marks) queueCell(r sources.Reading, th sources.Thresholds) cell {
	return m.over(m.reading(r, count), r.Value, th.QueueDepth, "queue ≥ "+num(th.QueueDepth))
}

// p99Cell is a latency p99 marked at or over thr (seconds).
func (m *marks) p99Cell(q sources.Quantiles, thr float64, what string) cell {
	c := m.dist(q, p99, latency)
	if !c.hasV || q.Form != "histogram" {
		return c
	}
	v := q.P99
	if q.Unit == "ms" {
		v /= 1000
	}
	return m.over(c, v, thr, what+" ≥ "+secs(thr))
}
