package panels

import (
	"strconv"

	"github.com/pdtop/pdtop/sources"
)

// drawRestarts is the Restarts & retries panel: every target that is not
// up with its health, error class, message and how long ago it last
// answered; per gateway replica retries/s, retries exhausted/s, open
// circuit breakers and unhealthy workers; restarts per target; and the
// restart events, newest first (this list scrolls).
func drawRestarts(c *drawCtx) []string {
	s, m := c.s, &c.m
	var parts []part

	// Targets that are not up.
	et := &table{cols: []column{
		{name: "target", left: true, max: 24},
		{name: "role", left: true, prio: 3},
		{name: "health", left: true},
		{name: "error", left: true, prio: 1},
		{name: "last good", prio: 2},
		{name: "message", left: true, prio: 4, flex: true},
	}}
	for i := range s.Targets {
		t := &s.Targets[i]
		if t.Health == sources.Up || !c.nav.match.target(t.ID) {
			continue
		}
		class, msg := cell{}, cell{}
		if t.LastError != nil {
			class = toned(string(t.LastError.Class), toneWarn)
			if t.LastError.Status != 0 {
				class.text += " " + strconv.Itoa(t.LastError.Status)
			}
			msg = muted(clean(t.LastError.Message, 200))
		}
		last := muted("never")
		if !t.LastSuccess.IsZero() {
			last = txt(since(t.Age) + " ago").val(t.Age.Seconds())
		}
		et.rows = append(et.rows, []cell{txt(clean(t.Name, 40)), muted(t.Role.String()),
			stateCell(t), class, last, msg})
	}
	if len(et.rows) > 0 {
		parts = append(parts, fixedTablePart(c, et, 0))
	} else if c.nav.match != nil {
		parts = append(parts, linesPart([]string{paint(c.st, toneMuted, "no failing target matches the filter")}, 1, 0, false))
	} else {
		up := strconv.Itoa(len(s.Targets))
		parts = append(parts, linesPart([]string{paint(c.st, toneOK, "all "+up+" targets up")}, 1, 0, false))
	}

	// Gateway retries and breakers.
	if len(s.Gateways) > 0 {
		gt := &table{cols: []column{
			{name: "replica", left: true, max: 20},
			{name: "", left: true},
			{name: "retries", unit: "per s"},
			{name: "exhausted", unit: "req/s"},
			{name: "CB open", unit: "workers", prio: 1},
			{name: "unhealthy", unit: "workers", prio: 2},
		}}
		for i := range s.Gateways {
			g := &s.Gateways[i]
			open, unhealthy := routerCounts(s, g.Name)
			ex := m.reading(g.Readings.Get(sources.SigGWRetriesExhausted), rate)
			if r := g.Readings.Get(sources.SigGWRetriesExhausted); r.Present && r.Value > 0 {
				ex.tone = toneWarn
			}
			gt.rows = append(gt.rows, append([]cell{txt(clean(g.Name, 30)), stateCell(&g.TargetStatus)},
				rowCells(&g.TargetStatus, []cell{
					m.reading(g.Readings.Get(sources.SigGWRetries), rate), ex,
					countCell(open, toneCrit), countCell(unhealthy, toneWarn),
				}, m)...))
		}
		p := fixedTablePart(c, gt, 1)
		p.gap = true
		parts = append(parts, p)
	}

	// Workers the replicas disagree about.
	if dt := disagreeTable(c); len(dt.rows) > 0 {
		p := fixedTablePart(c, dt, 1)
		p.gap = true
		parts = append(parts, p)
	}

	// Restarts per target.
	rt := &table{cols: []column{
		{name: "restarted", left: true, max: 24},
		{name: "role", left: true, prio: 2},
		{name: "count"},
		{name: "last", prio: 1},
	}}
	for i := range s.Targets {
		t := &s.Targets[i]
		if t.Restarts == 0 || !c.nav.match.target(t.ID) {
			continue
		}
		rt.rows = append(rt.rows, []cell{txt(clean(t.Name, 40) + " " + markRestart), muted(t.Role.String()),
			toned(strconv.Itoa(t.Restarts), toneWarn), txt(ago(s.Time, t.LastRestart))})
	}
	if len(rt.rows) > 0 {
		p := fixedTablePart(c, rt, 2)
		p.gap = true
		parts = append(parts, p)
	} else if !restartsSeen(s) {
		parts = append(parts, linesPart([]string{paint(c.st, toneMuted, "no restarts seen since pdtop started")}, 1, 2, true))
	}

	// Restart events, newest first.
	ev := &table{empty: c.noMatch("restart"), cols: []column{
		{name: "time", left: true},
		{name: "ago", prio: 1},
		{name: "target", left: true, max: 24},
		{name: "event", left: true, prio: 2},
		{name: "detail", left: true, prio: 3, flex: true},
	}}
	for i := len(s.Events) - 1; i >= 0; i-- {
		e := &s.Events[i]
		if e.Kind != "restart" || !c.nav.match.target(e.TargetID) {
			continue
		}
		at := ""
		if !e.Time.IsZero() {
			at = e.Time.Format("15:04:05")
		}
		ev.ids = append(ev.ids, e.TargetID)
		ev.rows = append(ev.rows, []cell{muted(at), txt(ago(s.Time, e.Time)).val(float64(s.Time.Sub(e.Time))),
			txt(clean(e.Name, 40)), toned(markRestart+" restart", toneWarn), muted(clean(e.Detail, 200))})
	}
	if len(ev.rows) > 0 || ev.empty != "" && restartsSeen(s) {
		p := selectablePart(c, ev, 3)
		p.gap = true
		parts = append(parts, p)
	}
	return stack(c.w, c.h, append(parts, legendPart(c, 4)))
}

// routerCounts counts the workers a replica sees with an open circuit
// breaker and those it marks unhealthy.
func routerCounts(s *sources.Snapshot, replica string) (open, unhealthy int) {
	for i := range s.Workers {
		for _, r := range s.Workers[i].Router {
			if r.Replica != replica {
				continue
			}
			if r.CB.Present && r.CB.Value == 1 {
				open++
			}
			if r.Health.Present && r.Health.Value == 0 {
				unhealthy++
			}
		}
	}
	return open, unhealthy
}

// countCell is a count, toned t when non-zero.
func countCell(n int, t tone) cell {
	c := txt(strconv.Itoa(n))
	if n > 0 {
		c.tone = t
	}
	return c
}

// restartsSeen reports whether any restart event is in the snapshot.
func restartsSeen(s *sources.Snapshot) bool {
	for i := range s.Events {
		if s.Events[i].Kind == "restart" {
			return true
		}
	}
	return false
}

// disagreeTable lists the workers whose gateway replicas disagree about
// them (health, circuit, listing, in-flight skew: WorkerView.Disagree),
// those the filter lets through.
func disagreeTable(c *drawCtx) *table {
	t := &table{cols: []column{
		{name: "replicas disagree", left: true, max: 24},
		{name: "role", left: true, prio: 2},
		{name: "how", left: true, prio: 1, flex: true},
	}}
	for i := range c.s.Workers {
		w := &c.s.Workers[i]
		if w.Disagree == "" || !c.nav.match.target(w.ID) {
			continue
		}
		t.rows = append(t.rows, []cell{toned("⇄ "+clean(w.Name, 40), toneWarn), muted(w.Role.String()),
			txt(clean(w.Disagree, 300))})
	}
	return t
}
