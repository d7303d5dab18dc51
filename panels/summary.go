package panels

import (
	"strconv"
	"strings"
	"time"

	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/themes"
)

// SummaryState is what the summary line needs to know beyond the snapshot:
// whether the view is paused, the refresh interval and time window, the
// current time and when the last tick's data arrived (the ui owns the
// clock; panels never read it).
type SummaryState struct {
	// Paused is true while the view is frozen (scraping continues).
	Paused bool
	// Interval is the refresh interval; Window the rate/quantile window.
	Interval, Window time.Duration
	// Now is the current time; LastTick when the last snapshot arrived.
	Now, LastTick time.Time
	// NextWindow, when set and different from Window, is the window chosen
	// while paused: it applies on resume.
	NextWindow time.Duration
	// Label, when set, replaces the refresh state ("snapshot" for pdtop
	// snapshot, which does not refresh).
	Label string
	// More says where the whole list of findings is, after "+N more"
	// (the dashboard's "(c)": the capacity view lists them).
	More string
	// NoCharts says the output has no charts (pdtop snapshot's text), so
	// the window needs no "charts 5m" note.
	NoCharts bool
	// Recording, when set, is the file being recorded to: the line starts
	// with "● REC file".
	Recording string
}

// Summary renders the one-line fleet summary in exactly width cells:
// targets up/total, offered req/s, input and output tok/s, the fleet's
// actual prefix hit, the rejected share, the refresh state ("live 1s",
// "paused", "refreshing", "no data yet") and the window. Fields are dropped
// from the least important when the line is narrow; the refresh state and
// targets stay longest.
func Summary(s *sources.Snapshot, st *themes.Styles, w int, state SummaryState) (out string) {
	if w <= 0 {
		return ""
	}
	if st == nil {
		st = themes.Default()
	}
	defer func() {
		if r := recover(); r != nil {
			out = fit(paint(st, toneCrit, "summary error"), w)
		}
	}()
	label := func(l, v string, t tone) string {
		return paint(st, toneSummaryLabel, l) + paint(st, t, v)
	}
	type field struct {
		text string
		prio int
		full string // longer text, shown when there is room once every field is placed
		alt  string // shorter text, when text does not fit
	}
	var fields []field
	refresh, rt := refreshState(s, state)
	if state.Label != "" {
		refresh, rt = state.Label, toneText
	}
	win := state.Window
	if s != nil {
		f := &s.Fleet
		up := strconv.Itoa(f.TargetsUp) + "/" + strconv.Itoa(f.Targets) + " up"
		ut := toneOK
		if f.TargetsUp < f.Targets {
			ut = toneWarn
			if n := notUp(s); n != "" {
				up += " (" + n + ")"
			}
		}
		fields = append(fields,
			field{paint(st, ut, up), 0, "", ""},
			field{paint(st, toneText, readingText(f.ReqRate, rate)) + label(" req/s", "", toneText), 1, "", ""},
			field{label("in ", readingText(f.InputRate, rate), toneText) +
				label(" out ", readingText(f.OutputRate, rate), toneText) + paint(st, toneSummaryLabel, " tok/s"), 4, "", ""},
			field{label("hit ", hitSummary(f.Hit), toneText), 2, "", ""},
			field{label("rejected ", readingText(f.Rejected, pct), rejectedTone(f.Rejected, s.Thresholds)), 3, "", ""},
		)
		if over := crossingsField(st, s.Crossings(), w/2); over != "" {
			fields = append(fields[:1], append([]field{{over, 1, "", ""}}, fields[1:]...)...)
		}
		// The finding's cause ("cache gap: cold: restarted") only when
		// the line has room once input/output tok/s are placed.
		if short, full, t := findingForms(s, state.More); short != "" {
			f := field{paint(st, t, short), 1, "", ""}
			if full != short {
				f.full = paint(st, t, full)
			}
			fields = append(fields, f)
		}
		if win <= 0 {
			win = s.Window
		}
	}
	fields = append(fields, field{paint(st, rt, refresh), 0, "", ""})
	if win > 0 {
		wt := span(win)
		if state.NextWindow > 0 && state.NextWindow != win {
			wt += "→" + span(state.NextWindow) + " on resume"
		}
		short := label("window ", wt, toneText)
		full := ""
		if note := windowNote(s, win, !state.NoCharts); note != "" {
			full = short + paint(st, toneMuted, " ("+note+")")
		}
		fields = append(fields, field{short, 2, full, ""})
	}
	if state.Recording != "" {
		// Not by colour alone: the dot and the word.
		rec := paint(st, toneCrit, "● REC "+clean(state.Recording, 40))
		fields = append([]field{{rec, 0, "", paint(st, toneCrit, "● REC")}}, fields...)
	}
	// Keep fields by importance while they fit, shown in their order.
	sep := paint(st, toneSummaryLabel, " │ ")
	keep := make([]bool, len(fields))
	used, n := 1, 0
	for prio := 0; prio <= 6; prio++ {
		for i, f := range fields {
			if f.prio != prio {
				continue
			}
			add := width(f.text)
			if n > 0 {
				add += 3
			}
			if used+add > w && f.alt != "" {
				fields[i].text = f.alt
				add += width(f.alt) - width(f.text)
			}
			if used+add <= w {
				keep[i] = true
				used += add
				n++
			}
		}
	}
	// Then the longer forms, by importance, while they fit.
	for prio := 0; prio <= 6; prio++ {
		for i, f := range fields {
			if f.prio != prio || !keep[i] || f.full == "" {
				continue
			}
			if extra := width(f.full) - width(f.text); used+extra <= w {
				fields[i].text = f.full
				used += extra
			}
		}
	}
	if n == 0 && s != nil {
		// Very narrow: "5/6 up".
		up := 0
		if state.Recording != "" {
			up = 1 // after "● REC"
		}
		fields[up].text = paint(st, toneText, strconv.Itoa(s.Fleet.TargetsUp)+"/"+strconv.Itoa(s.Fleet.Targets)+" up")
		keep[up] = true
	}
	var parts []string
	for i, f := range fields {
		if keep[i] {
			parts = append(parts, f.text)
		}
	}
	line, _ := joinLine(parts, sep, w)
	return paint(st, toneSummary, fit(" "+line, w))
}

// windowNote says how the window differs from what is on screen: how much
// data it really holds when pdtop (or the recording) started less than a
// window ago — "1m30s of data" — and how long the charts span when that is
// longer than the window ("charts 5m"). "" when neither applies.
func windowNote(s *sources.Snapshot, win time.Duration, charts bool) string {
	if s == nil {
		return ""
	}
	var notes []string
	if !s.DataSince.IsZero() && !s.Time.IsZero() {
		if have := s.Time.Sub(s.DataSince); have < win {
			notes = append(notes, age(have.Truncate(time.Second))+" of data")
		}
	}
	if charts && s.ChartSpan > win {
		notes = append(notes, "charts "+span(s.ChartSpan))
	}
	return strings.Join(notes, ", ")
}

// refreshState is "no data yet", "paused 12s" (age of the frozen data),
// "refreshing" (data is later than two intervals) or "live 1s".
func refreshState(s *sources.Snapshot, st SummaryState) (string, tone) {
	switch {
	case s == nil:
		return "no data yet", toneMuted
	case st.Paused:
		if !st.Now.IsZero() && !s.Time.IsZero() && st.Now.After(s.Time) {
			return "paused " + since(st.Now.Sub(s.Time)), toneWarn
		}
		return "paused", toneWarn
	}
	iv := st.Interval
	if iv <= 0 {
		iv = s.Interval
	}
	if !st.LastTick.IsZero() && !st.Now.IsZero() && iv > 0 && st.Now.Sub(st.LastTick) > 2*iv {
		return "refreshing… " + age(st.Now.Sub(st.LastTick)), toneWarn
	}
	if iv <= 0 {
		return "live", toneOK
	}
	return "live " + span(iv), toneOK
}

// notUp summarises targets that are not up: "1 STALE", "2 DOWN, 1 STALE",
// "1 NOT SGLANG" (answers with another exporter's metrics).
func notUp(s *sources.Snapshot) string {
	var stale, down, notSG, pending int
	for i := range s.Targets {
		if notSGLang(&s.Targets[i]) {
			notSG++
			continue
		}
		switch s.Targets[i].Health {
		case sources.Stale:
			stale++
		case sources.Down:
			down++
		case sources.Pending:
			pending++
		}
	}
	var out string
	add := func(n int, w string) {
		if n == 0 {
			return
		}
		if out != "" {
			out += ", "
		}
		out += strconv.Itoa(n) + " " + w
	}
	add(down, "DOWN")
	add(notSG, "NOT SGLANG")
	add(stale, "STALE")
	add(pending, "PENDING")
	return out
}

// hitSummary is the fleet hit with its unit: "40% tok", "idle" or "—".
func hitSummary(h sources.HitRatio) string {
	var m marks
	c := m.hitCell(h)
	if c.tone == toneText {
		return c.text + " " + unitShort(h.Unit)
	}
	return c.text
}

func rejectedTone(r sources.Reading, th sources.Thresholds) tone {
	if r.Present && r.Value >= th.WithDefaults().ErrorRate {
		return toneCrit
	}
	return toneText
}

// crossingsField lists the threshold crossings in at most w cells:
// "! 3 over: decode-1 KV 95%! · prefill-0 queue 14!" — as many as fit,
// the count saying how many there are.
func crossingsField(st *themes.Styles, cs []sources.Crossing, w int) string {
	if len(cs) == 0 {
		return ""
	}
	head := markOver + " " + strconv.Itoa(len(cs)) + " over"
	items := make([]string, len(cs))
	for i, c := range cs {
		items[i] = CrossingText(c)
	}
	line, n := joinLine(items, " · ", max(0, w-width(head)-2))
	if n == 0 || line == "" {
		return paint(st, toneCrit, head)
	}
	if n < len(items) {
		line += " …"
	}
	return paint(st, toneCrit, head+": "+line)
}

// CrossingText is one crossing in a few words with its value:
// "decode-1 KV 95%", "prefill-0 queue 14", "gw-a gap +31pp",
// "decode-0 ITL p99 120ms", "gw-a rejected 7.5%".
func CrossingText(c sources.Crossing) string {
	name := clean(c.Name, 24)
	switch c.What {
	case "queue":
		what := "queue"
		switch c.Signal {
		case sources.SigBootstrapQueue:
			what = "bootstrap queue"
		case sources.SigInflightQueue:
			what = "in-flight queue"
		case sources.SigPreallocQueue:
			what = "prealloc queue"
		case sources.SigTransferQueue:
			what = "transfer queue"
		case sources.SigWaiting:
			what = "waiting"
		}
		return name + " " + what + " " + num(c.Value)
	case "KV usage":
		return name + " KV " + pct(c.Value)
	case "hit gap":
		return name + " gap " + pp(c.Value)
	case "error rate":
		return name + " rejected " + pct(c.Value)
	}
	if c.Unit == "s" {
		v := secs(c.Value)
		if c.Beyond {
			v = markBeyond + v
		}
		return name + " " + c.What + " " + v
	}
	return name + " " + c.What + " " + num(c.Value)
}
