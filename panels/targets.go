package panels

import (
	"strconv"
	"strings"

	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/themes"
)

// TargetsView is the ID of the targets view: a full-screen panel (key t),
// not one of the six in the grid.
const TargetsView ID = NumPanels + 1

var targetsSpec = spec{title: "Targets", minW: 30, minH: 5, draw: drawTargets}

// NewTargets returns the targets view: every target with its role,
// origin, engine and generation, scrape state, last error class and
// message, scrape duration, bytes on the wire and after decompression,
// series kept and dropped, families skipped, parse problems and restarts
// seen; each gateway replica's worker-list status above it; and, below,
// one line per target with something to say (the error in full, the
// first parse problem with its line number and excerpt, figures read
// through a gateway's /engine_metrics, warnings). The list scrolls.
func NewTargets(st *themes.Styles) Panel {
	if st == nil {
		st = themes.Default()
	}
	return &panel{id: TargetsView, st: st, keys: DefaultKeyMap(), page: 1, spec: targetsSpec}
}

func drawTargets(c *drawCtx) []string {
	s := c.s
	if len(s.Targets) == 0 {
		return message(c, "no targets")
	}
	var parts []part
	if lines := discoveryLines(c); len(lines) > 0 {
		parts = append(parts, linesPart(lines, min(2, len(lines)), 1, false))
	}
	t := &table{cols: []column{
		{name: "target", left: true, max: 28},
		{name: "role", left: true, prio: 1},
		{name: "origin", left: true, prio: 3, max: 16},
		{name: "state", left: true},
		{name: "error", left: true, prio: 1},
		{name: "generation", left: true, prio: 2, max: 20},
		{name: "scrape", unit: "time", prio: 3},
		{name: "bytes", unit: "wire/body", prio: 5},
		{name: "series", unit: "kept", prio: 3},
		{name: "dropped", unit: "series", prio: 6},
		{name: "skipped", unit: "families", prio: 7},
		{name: "problems", unit: "lines", prio: 4},
		{name: "restarts", prio: 4},
		{name: "auth", left: true, prio: 5},
	}}
	var details []string
	for i := range s.Targets {
		ts := &s.Targets[i]
		name := clean(ts.Name, 40)
		if name == "" {
			name = clean(ts.ID, 40)
		}
		row := []cell{txt(name), muted(ts.Role.String()), muted(originText(ts)), targetState(ts),
			errorClass(ts), generation(ts, &c.m)}
		if ts.Duration > 0 {
			row = append(row, txt(secs(ts.Duration.Seconds())))
		} else {
			row = append(row, cell{})
		}
		row = append(row, bytesCell(ts))
		if ts.Health == sources.Up || ts.Health == sources.Stale {
			row = append(row, txt(strconv.Itoa(ts.Series)), countCell(ts.Dropped, toneWarn),
				muted(strconv.Itoa(ts.Skipped)), countCell(ts.Problems, toneWarn))
		} else {
			row = append(row, cell{}, cell{}, cell{}, cell{})
		}
		row = append(row, countCell(ts.Restarts, toneWarn), muted(clean(ts.Auth, 24)))
		t.rows = append(t.rows, row)
		if d := detail(ts); d != "" {
			details = append(details, d)
		}
	}
	parts = append(parts, tablePart(c, t, 0))
	if et := targetEvents(s, 8); len(et.rows) > 0 {
		p := fixedTablePart(c, et, 4)
		p.gap = true
		parts = append(parts, p)
	}
	if len(details) > 0 {
		p := linesPart(wrapDetails(c, details), 1, 2, true)
		parts = append(parts, p)
	}
	c.m.note("bytes wire/body: compressed/decompressed")
	c.m.note("skipped: families no panel reads")
	c.m.note("t or esc: back")
	return stack(c.w, c.h, append(parts, legendPart(c, 3)))
}

// targetEvents lists the latest targets joining, leaving, going stale
// and recovering, newest first.
func targetEvents(s *sources.Snapshot, n int) *table {
	t := &table{cols: []column{
		{name: "changes", left: true},
		{name: "ago", prio: 1},
		{name: "target", left: true, max: 28},
		{name: "event", left: true},
		{name: "detail", left: true, prio: 2, flex: true},
	}}
	for i := len(s.Events) - 1; i >= 0 && len(t.rows) < n; i-- {
		e := &s.Events[i]
		tn := toneText
		switch e.Kind {
		case "joined", "recovered":
			tn = toneOK
		case "left", "stale":
			tn = toneWarn
		default:
			continue
		}
		at := ""
		if !e.Time.IsZero() {
			at = e.Time.Format("15:04:05")
		}
		t.rows = append(t.rows, []cell{muted(at), txt(ago(s.Time, e.Time)), txt(clean(e.Name, 40)),
			toned(e.Kind, tn), muted(clean(e.Detail, 200))})
	}
	return t
}

// discoveryLines are one line per gateway replica's worker-list status,
// plus its rejection notes.
func discoveryLines(c *drawCtx) []string {
	var out []string
	for _, d := range c.s.Discovery {
		name := clean(d.Gateway, 30)
		var line string
		tn := toneMuted
		switch {
		case d.Err != nil && d.LastSuccess.IsZero():
			line, tn = name+": "+string(d.Err.Class)+" — "+clean(d.Err.Message, 300), toneWarn
		default:
			line = name + ": " + strconv.Itoa(d.Workers) + " workers (" + clean(d.Shape, 40) + ")"
			if d.Rejected > 0 {
				line += ", " + strconv.Itoa(d.Rejected) + " rejected"
				tn = toneWarn
			}
			if d.Capped > 0 {
				line += ", " + strconv.Itoa(d.Capped) + " over the discovery cap"
				tn = toneWarn
			}
			if d.Err != nil {
				line += "; last refresh failed: " + string(d.Err.Class) + " — " + clean(d.Err.Message, 200)
				tn = toneWarn
			}
			line += " from " + clean(d.API, 80)
		}
		for i, l := range wrapWords("worker list "+line, c.w, 2) {
			if i > 0 {
				l = "    " + l
			}
			out = append(out, paint(c.st, tn, fit(l, c.w)))
		}
		for _, n := range d.Notes {
			out = append(out, paint(c.st, toneMuted, fit("  "+clean(n, 200), c.w)))
		}
	}
	return out
}

// originText says where a target came from: "flag", "config", "demo", or
// the gateway replica that listed it.
func originText(ts *sources.TargetStatus) string {
	if ts.Origin == sources.OriginGateway && ts.Gateway != "" {
		return "gw " + clean(ts.Gateway, 24)
	}
	if ts.Origin == "" {
		return "—"
	}
	return string(ts.Origin)
}

// targetState is "up", "slow", "STALE 12s", "DOWN" or "pending", with the
// re-export marked "up (via gw)".
func targetState(ts *sources.TargetStatus) cell {
	if ts.Health == sources.Up {
		switch {
		case ts.Slow:
			return toned("SLOW", toneWarn)
		case ts.Via != "":
			return toned("up via gw", toneWarn)
		}
		return toned("up", toneOK)
	}
	if ts.Health == sources.Pending {
		if ts.Slow {
			return toned("SLOW", toneWarn)
		}
		return muted("pending")
	}
	return stateCell(ts)
}

// errorClass is the last error's class (with its HTTP status), or the
// direct error when the figures came through a gateway.
func errorClass(ts *sources.TargetStatus) cell {
	e := ts.LastError
	if e == nil {
		e = ts.DirectError
	}
	if e == nil {
		return cell{}
	}
	s := string(e.Class)
	if e.Status != 0 && !strings.Contains(s, strconv.Itoa(e.Status)) {
		s += " " + strconv.Itoa(e.Status)
	}
	tn := toneCrit
	if ts.LastError == nil {
		tn = toneWarn
	}
	return toned(s, tn)
}

// generation is "sglang worker", "smg gateway", … or the absent mark.
func generation(ts *sources.TargetStatus, m *marks) cell {
	if ts.Generation != "" {
		return muted(clean(ts.Generation, 30))
	}
	if ts.Health == sources.Up || ts.Health == sources.Stale {
		m.note("? no SGLang or gateway metrics yet (empty body)")
		return toned("?", toneWarn)
	}
	return cell{}
}

// bytesCell is "142k" when nothing was compressed, else "18k/142k"
// (wire/body).
func bytesCell(ts *sources.TargetStatus) cell {
	if ts.BytesWire == 0 && ts.BytesBody == 0 {
		return cell{}
	}
	switch {
	case ts.BytesWire == ts.BytesBody || ts.BytesWire == 0:
		return txt(num(float64(ts.BytesBody)))
	case ts.BytesBody == 0: // an error response: its body is not decoded
		return txt(num(float64(ts.BytesWire)))
	}
	return txt(num(float64(ts.BytesWire)) + "/" + num(float64(ts.BytesBody)))
}

// detail is the one line a target has to say, or "".
func detail(ts *sources.TargetStatus) string {
	name := clean(ts.Name, 40)
	var parts []string
	if e := ts.LastError; e != nil {
		parts = append(parts, clean(e.Message, 300))
	}
	if ts.Via != "" {
		s := "figures read through " + clean(ts.Via, 60)
		if e := ts.DirectError; e != nil {
			s += " (direct scrape: " + string(e.Class) + ": " + clean(e.Message, 200) + ")"
		}
		parts = append(parts, s)
	}
	if len(ts.ProblemSamples) > 0 {
		p := ts.ProblemSamples[0]
		s := strconv.Itoa(ts.Problems) + " unusable line"
		if ts.Problems != 1 {
			s += "s"
		}
		s += ", first at line " + strconv.Itoa(p.Line) + ": " + clean(p.Message, 120)
		if p.Excerpt != "" {
			s += " «" + clean(p.Excerpt, 80) + "»"
		}
		parts = append(parts, s)
	}
	for _, w := range ts.Warnings {
		if strings.Contains(w, "/engine_metrics") && ts.Via != "" {
			continue
		}
		parts = append(parts, clean(w, 120))
	}
	if len(parts) == 0 {
		return ""
	}
	return name + ": " + strings.Join(parts, "; ")
}

// wrapDetails paints the detail lines, each wrapped at spaces onto at
// most three lines (continuations indented), the last one cut.
func wrapDetails(c *drawCtx, details []string) []string {
	out := make([]string, 0, len(details))
	for _, d := range details {
		for i, l := range wrapWords(d, c.w, 3) {
			if i > 0 {
				l = "    " + l
			}
			out = append(out, paint(c.st, toneMuted, fit(l, c.w)))
		}
	}
	return out
}

// wrapWords splits s at spaces into at most n lines: the first w cells
// wide, the others w-4 (they are indented); a word wider than a line is
// cut by the caller's fit.
func wrapWords(s string, w, n int) []string {
	var out []string
	words := strings.Fields(s)
	lw := w
	var cur strings.Builder
	for len(words) > 0 {
		wd := words[0]
		switch {
		case cur.Len() == 0:
			cur.WriteString(wd)
			words = words[1:]
		case width(cur.String())+1+width(wd) <= lw:
			cur.WriteByte(' ')
			cur.WriteString(wd)
			words = words[1:]
		default:
			if len(out) == n-1 {
				cur.WriteByte(' ')
				cur.WriteString(strings.Join(words, " "))
				words = nil
				continue
			}
			out = append(out, cur.String())
			cur.Reset()
			lw = w - 4
		}
	}
	if cur.Len() > 0 {
		out = append(out, cur.String())
	}
	return out
}
