package panels

import (
	"strconv"
	"strings"
	"time"

	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/themes"
)

// detailCtx is one drill-down render's inputs.
type detailCtx struct {
	st *themes.Styles
	s  *sources.Snapshot
	w  *sources.WorkerView
	d  *sources.WorkerDetail // may be nil
	iw int
	m  marks
}

// detailLines is the whole drill-down, section by section; the view
// scrolls through it.
func detailLines(c *detailCtx) []string {
	var out []string
	section := func(title string, lines []string) {
		if len(lines) == 0 {
			return
		}
		if len(out) > 0 {
			out = append(out, "")
		}
		out = append(out, paint(c.st, toneAccent, title))
		out = append(out, lines...)
	}
	section("Target", c.targetLines())
	trend := "trend over " + span(c.span())
	if c.d != nil {
		trend += " (latencies: p99 per step)"
	}
	section("Signals — window "+span(c.s.Window)+", "+trend+" · "+rejectedText(c.s)+" at the gateways", c.signalLines())
	section("Prefix hit: worker actual vs router predicted", c.hitLines())
	section("Verdict", c.verdictLines())
	section("Gateway replicas' view of this worker", c.routerLines())
	section("Restarts", c.restartLines())
	section("Events", c.eventLines())
	if l := c.m.legendLine(c.st, c.iw); l != "" {
		out = append(out, "", l)
	}
	return out
}

// span is the time the histories cover.
func (c *detailCtx) span() time.Duration {
	if c.d != nil && c.d.Span > 0 {
		return c.d.Span
	}
	return chartSpan(c.s)
}

func (c *detailCtx) targetLines() []string {
	w := c.w
	state := strings.ToUpper(w.Health.String())
	if w.Health == sources.Stale {
		state += " " + since(w.Age)
	}
	st := toneOK
	if w.Health != sources.Up {
		st = toneWarn
	}
	head := paint(c.st, toneText, clean(w.Name, 40)) + "  " + paint(c.st, st, state) + "  " +
		paint(c.st, toneMuted, clean(w.ID, 120))
	lines := []string{head}
	var facts []string
	if eng := w.Generation; eng != "" || w.Engine != "" {
		if !strings.Contains(strings.ToLower(eng), strings.ToLower(w.Engine)) {
			eng = strings.TrimSpace(w.Engine + " " + eng)
		}
		facts = append(facts, "engine "+clean(eng, 60))
	}
	facts = append(facts, "role "+w.Role.String()+" (from "+string(w.Origin)+")")
	if w.Restarts > 0 {
		n := strconv.Itoa(w.Restarts) + " restarts"
		if w.Restarts == 1 {
			n = "1 restart"
		}
		facts = append(facts, markRestart+" "+n+", last "+ago(c.s.Time, w.LastRestart))
	} else {
		facts = append(facts, "no restarts seen")
	}
	lines = append(lines, wrapItems(facts, " · ", c.iw)...)
	scrape := []string{"scrape health: never answered"}
	if !w.LastSuccess.IsZero() {
		scrape[0] = "scrape health: last good " + since(w.Age) + " ago"
	}
	if w.Duration > 0 {
		scrape = append(scrape, "took "+secs(w.Duration.Seconds()))
	}
	if w.BytesWire > 0 || w.BytesBody > 0 {
		scrape = append(scrape, bytesText(w.BytesWire)+" on the wire, "+bytesText(w.BytesBody)+" body")
	}
	if w.Series > 0 {
		scrape = append(scrape, strconv.Itoa(w.Series)+" series kept")
	}
	if w.Skipped == 1 {
		scrape = append(scrape, "1 family skipped (unused)")
	} else if w.Skipped > 0 {
		scrape = append(scrape, strconv.Itoa(w.Skipped)+" families skipped (unused)")
	}
	if w.Dropped > 0 {
		scrape = append(scrape, strconv.Itoa(w.Dropped)+" dropped")
	}
	if w.Problems > 0 {
		scrape = append(scrape, strconv.Itoa(w.Problems)+" parse problems")
	}
	if w.Slow {
		scrape = append(scrape, "SLOW: last tick skipped, previous scrape still running")
	}
	for _, l := range wrapItems(scrape, " · ", c.iw) {
		lines = append(lines, paint(c.st, toneText, l))
	}
	if e := w.LastError; e != nil {
		msg := "last error: " + string(e.Class)
		if e.Status != 0 {
			msg += " " + strconv.Itoa(e.Status)
		}
		msg += " — " + clean(e.Message, 300)
		for _, l := range wrapItems(strings.Fields(msg), " ", c.iw) {
			lines = append(lines, paint(c.st, toneWarn, l))
		}
	}
	return lines
}

// bytesText formats a byte count: "142 KB".
func bytesText(n int64) string {
	if n < 1000 {
		return strconv.FormatInt(n, 10) + " B"
	}
	v := num(float64(n))
	return v[:len(v)-1] + " " + strings.ToUpper(v[len(v)-1:]) + "B"
}

func (c *detailCtx) hitLines() []string {
	w := c.w
	trendW := clamp(c.iw/3, 10, 60)
	var lines []string
	act := "actual    " + hitSummary(w.Hit)
	if w.Hit.Present && w.Hit.Total > 0 {
		act += " (" + num(w.Hit.Hit) + " of " + num(w.Hit.Total) + " " + unitShort(w.Hit.Unit) + ")"
	}
	if !w.Hit.Since.IsZero() {
		act += " since the restart " + ago(c.s.Time, w.Hit.Since)
		if !w.Hit.Present {
			act += ": too few tokens (" + num(w.Hit.Total) + ")"
		}
	}
	if w.Hit.Source != "" {
		act += " from " + clean(w.Hit.Source, 80)
	}
	lines = append(lines, fit(act, c.iw))
	if wh := w.HitWindow; !w.Hit.Since.IsZero() && wh.Present && wh.Total > 0 {
		lines = append(lines, fit("window    "+hitSummary(wh)+" spanning the restart (old and new process)", c.iw))
	}
	hist := w.HitHistory
	if c.d != nil && c.d.HitHistory != nil {
		hist = c.d.HitHistory
	}
	if len(hist) > 0 {
		lines = append(lines, "  "+paint(c.st, toneSeries3, c.spark(hist, trendW, 1))+paint(c.st, toneMuted, "  actual, 0–100%"))
	}
	any := false
	for i := range c.s.Gateways {
		g := &c.s.Gateways[i]
		if !g.Predicted.Present {
			continue
		}
		any = true
		l := "predicted " + hitSummary(g.Predicted) + " by " + clean(g.Name, 30)
		if gap, ok := sources.HitGap(g.Predicted, w.Hit); ok {
			l += ", gap " + pp(gap)
			if gap >= c.s.Thresholds.WithDefaults().HitGap {
				l += markOver
			}
		}
		if g.Predicted.Unit != w.Hit.Unit {
			l += " (" + unitShort(g.Predicted.Unit) + " vs " + unitShort(w.Hit.Unit) + ": different scales)"
		}
		lines = append(lines, fit(l, c.iw))
		if len(g.PredictedHistory) > 0 {
			lines = append(lines, "  "+paint(c.st, toneSeries2, c.spark(g.PredictedHistory, trendW, 1))+
				paint(c.st, toneMuted, "  predicted by "+clean(g.Name, 30)+", 0–100%"))
		}
	}
	if any {
		lines = append(lines, paint(c.st, toneMuted, fit("The prediction is replica-wide: no gateway generation predicts per worker.", c.iw)))
	} else {
		lines = append(lines, paint(c.st, toneMuted, fit("No scraped gateway exposes a predicted hit (smg exposes none).", c.iw)))
	}
	return lines
}

func (c *detailCtx) routerLines() []string {
	w, m := c.w, &c.m
	if len(w.Router) == 0 {
		if len(c.s.Gateways) == 0 {
			return []string{paint(c.st, toneMuted, "no gateway replica scraped")}
		}
		return []string{paint(c.st, toneWarn, "no scraped replica lists this worker")}
	}
	t := &table{cols: []column{
		{name: "replica", left: true, max: 30},
		{name: "in-flight", unit: "req"},
		{name: "picks", unit: "req/s"},
		{name: "health", left: true},
		{name: "circuit", left: true},
		{name: "KV-tree", unit: "blocks", prio: 1},
		{name: "engine hit", unit: "last batch", prio: 2},
	}}
	for i := range w.Router {
		r := &w.Router[i]
		health := m.reading(r.Health, num)
		if r.Health.Present {
			health = toned("healthy", toneOK)
			if r.Health.Value == 0 {
				health = toned("UNHEALTHY", toneCrit)
			}
		}
		cb := m.reading(r.CB, num)
		if r.CB.Present {
			switch r.CB.Value {
			case 0:
				cb = txt("closed")
			case 1:
				cb = toned("OPEN", toneCrit)
			case 2:
				cb = toned("half-open", toneWarn)
			}
		}
		t.rows = append(t.rows, []cell{txt(clean(r.Replica, 30)), m.reading(r.InFlight, count),
			m.reading(r.Picks, rate), health, cb, m.reading(r.KVBlocks, num), m.reading(r.EngineHit, pct)})
	}
	lines, _, _, _ := t.fitTo(c.iw).render(c.st, c.iw, t.fullHeight(), 0)
	return lines
}

func (c *detailCtx) restartLines() []string {
	var rs []sources.Restart
	if c.d != nil {
		rs = c.d.Restarts
	} else {
		for _, e := range c.s.Events {
			if e.Kind == "restart" && e.TargetID == c.w.ID {
				rs = append(rs, sources.Restart{Time: e.Time, Reason: e.Detail})
			}
		}
	}
	if len(rs) == 0 {
		return []string{paint(c.st, toneMuted, "none seen since pdtop started")}
	}
	t := &table{cols: []column{
		{name: "time", left: true},
		{name: "ago"},
		{name: "reason", left: true, flex: true},
	}}
	for i := len(rs) - 1; i >= 0; i-- {
		r := rs[i]
		t.rows = append(t.rows, []cell{muted(r.Time.Format("15:04:05")), txt(ago(c.s.Time, r.Time)),
			toned(markRestart+" "+clean(r.Reason, 200), toneWarn)})
	}
	c.m.restart = true
	lines, _, _, _ := t.fitTo(c.iw).render(c.st, c.iw, t.fullHeight(), 0)
	return lines
}

func (c *detailCtx) eventLines() []string {
	var lines []string
	for i := len(c.s.Events) - 1; i >= 0 && len(lines) < 20; i-- {
		e := &c.s.Events[i]
		if e.TargetID != c.w.ID || e.Kind == "restart" {
			continue
		}
		l := e.Time.Format("15:04:05") + "  " + e.Kind
		if e.Detail != "" {
			l += ": " + clean(e.Detail, 200)
		}
		lines = append(lines, fit(l, c.iw))
	}
	return lines
}
