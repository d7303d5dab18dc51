package ui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
)

// viewKeys are the keys that work in the current view: the application's
// (columns for the help overlay), the focused component's and the few for
// the footer. Everything listed here does something here, and nothing
// else does.
func (m *Model) baseViewKeys() (app bindings, own help.KeyMap, ownTitle string, short []key.Binding) {
	k := m.keys
	switch {
	case m.editing:
		enter := key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "keep filter"))
		esc := with(k.Close, "esc", "clear filter")
		return bindings{{enter, esc, key.NewBinding(key.WithKeys("ctrl+c"), key.WithHelp("ctrl+c", "quit"))}},
			nil, "", []key.Binding{enter, esc}
	case m.showHelp:
		c := key.NewBinding(key.WithKeys("esc", "?"), key.WithHelp("esc/?", "close help"))
		if m.helpMax > 0 {
			sk := m.helpScroll
			scroll := key.NewBinding(key.WithKeys(append(sk.Up.Keys(), sk.Down.Keys()...)...), key.WithHelp("↑/↓", "scroll"))
			return bindings{{c, scroll, sk.PageUp, sk.PageDown, k.Quit}}, nil, "", []key.Binding{c, scroll, k.Quit}
		}
		return bindings{{c, k.Quit}}, nil, "", []key.Binding{c, k.Quit}
	}
	common := []key.Binding{k.Narrower, k.Wider, m.pauseKey(), k.Theme, k.Capacity, k.Help, k.Quit}
	if m.drilling {
		back := with(k.Close, "esc", "back to the panels")
		short := []key.Binding{k.Help, with(back, "esc", "back")}
		if dk := m.drill.KeyMap().ShortHelp(); len(dk) > 0 && dk[0].Enabled() {
			short = append(short, with(k.Down, "↓", "scroll"))
		}
		return bindings{{back}, common}, m.drill.KeyMap(), "Worker details keys",
			append(short, m.shortPause(), k.Quit)
	}
	if m.showTargets {
		back := key.NewBinding(key.WithKeys("esc", "t"), key.WithHelp("esc/t", "back to the panels"))
		short := []key.Binding{k.Help, with(back, "esc", "back")}
		var own help.KeyMap
		title := ""
		if tk := m.targets.KeyMap(); anyEnabled(tk) {
			own, title = tk, "Targets keys"
			short = append(short, with(k.Down, "↓", "scroll"))
		}
		return bindings{{back, k.Next, k.Jump}, common}, own, title, append(short, m.shortPause(), k.Quit)
	}
	nav := []key.Binding{k.Next, k.Prev, k.Jump}
	zoom := k.Zoom
	if m.zoom {
		zoom = with(zoom, "z", "unzoom panel")
	}
	nav = append(nav, zoom)
	p := m.panels[m.focus]
	selectable := false
	if n, ok := p.(interface{ Selected() (string, bool) }); ok {
		_, selectable = n.Selected()
	}
	if selectable {
		nav = append(nav, k.Drill)
	}
	nav = append(nav, k.Filter, k.Targets)
	switch {
	case m.zoom:
		nav = append(nav, with(k.Close, "esc", "unzoom panel"))
	case !m.filter.Empty():
		nav = append(nav, with(k.Close, "esc", "clear filter"))
	}
	short = []key.Binding{k.Help, with(k.Next, "tab", "next")}
	if selectable {
		short = append(short, with(k.Drill, "enter", "details"))
	}
	short = append(short, with(k.Filter, "/", "filter"), with(zoom, "z", strings.Fields(zoom.Help().Desc)[0]),
		m.shortPause(), k.Quit)
	return bindings{nav, common}, p.KeyMap(), p.Title() + " keys", short
}

// pauseKey is p, described by what it does now.
func (m *Model) pauseKey() key.Binding {
	if p, ok := m.playbackPause(); ok {
		return p
	}
	if m.paused {
		return with(m.keys.Pause, "p", "resume view")
	}
	return m.keys.Pause
}

// shortPause is p for the footer.
func (m *Model) shortPause() key.Binding {
	if p, ok := m.playbackPause(); ok {
		return with(p, "p", p.Help().Desc[:len(p.Help().Desc)-len(" playback")])
	}
	if m.paused {
		return with(m.keys.Pause, "p", "resume")
	}
	return with(m.keys.Pause, "p", "pause")
}

// footer shows, ahead of the keys of the view: that the view is paused,
// a one-off note, and the snapshot's notice (the demo's scenario and
// clock, a replay's position).
func (m *Model) footer() string {
	st := m.cfg.Styles
	var lead string
	if m.paused {
		lead = st.Warn.Render("PAUSED — scraping continues; p resumes") + "  "
	}
	if m.note != "" {
		lead += st.Accent.Render(m.note) + "  "
	}
	_, _, _, short := m.viewKeys()
	if m.shown != nil && m.shown.Notice != "" {
		// The notice gives way to "? help": first its description (after
		// " — "), then its end, marked "…".
		hm := m.help
		hm.Width = 0
		room := m.width - ansi.StringWidth(lead) - 2 - ansi.StringWidth(hm.ShortHelpView(short[:1]))
		if len(short) > 1 {
			room -= 2 // " …" for the keys left out
		}
		n := m.shown.Notice
		if ansi.StringWidth(n) > room {
			n, _, _ = strings.Cut(n, " — ")
		}
		if ansi.StringWidth(n) > room {
			n = ansi.Truncate(n, max(0, room-1), "") + "…"
		}
		if room > 1 {
			lead += st.Accent.Render(n) + "  "
		}
	}
	return lead + m.shortHelp(short, max(0, m.width-ansi.StringWidth(lead)))
}

// shortHelp is the footer's keys in at most w cells: as many as fit whole,
// then "…" when some are left out. (bubbles' help overflows its width
// when its own ellipsis does not fit.)
func (m *Model) shortHelp(keys []key.Binding, w int) string {
	hm := m.help
	hm.Width = 0
	var enabled []key.Binding
	for _, k := range keys {
		if k.Enabled() {
			enabled = append(enabled, k)
		}
	}
	for n := len(enabled); n > 0; n-- {
		s := hm.ShortHelpView(enabled[:n])
		if n < len(enabled) {
			s += " " + hm.Styles.Ellipsis.Render(hm.Ellipsis)
		}
		if ansi.StringWidth(s) <= w {
			return s
		}
	}
	return ""
}

// helpView lists the keys that work in the view under the overlay, from
// the bubbles help component, in columns when they fit the width and one
// group under another when not. A help taller than the screen scrolls
// (↑/↓, pgup/pgdn, home/end) and says how much is hidden.
func (m *Model) helpView(h int) string {
	st := m.cfg.Styles
	lines := m.helpLines(max(10, m.width-4))
	// Every line as wide as the widest of the whole help, so the box
	// keeps its size while it scrolls.
	lw := 0
	for _, l := range lines {
		lw = max(lw, ansi.StringWidth(l))
	}
	inner := max(1, h-2) // the box's border
	m.helpMax = max(0, len(lines)-inner)
	if m.helpMax > 0 {
		// Room for the line that says what is hidden.
		m.helpMax = max(0, len(lines)-(inner-1))
	}
	m.helpOff = clamp(m.helpOff, 0, m.helpMax)
	if m.helpMax > 0 {
		end := min(len(lines), m.helpOff+inner-1)
		shown := append([]string(nil), lines[m.helpOff:end]...)
		var more []string
		if m.helpOff > 0 {
			more = append(more, fmt.Sprintf("↑ %d above", m.helpOff))
		}
		if below := len(lines) - end; below > 0 {
			more = append(more, fmt.Sprintf("↓ %d more", below))
		}
		lines = append(shown, st.HelpSep.Render(strings.Join(more, " · ")+" · ↑/↓ scroll"))
	}
	box := lipgloss.NewStyle().Border(st.FrameBorder).BorderForeground(st.Theme.Border).Padding(0, 1).
		Width(lw + 2).MaxWidth(m.width).Render(strings.Join(lines, "\n"))
	return lipgloss.Place(m.width, h, lipgloss.Center, lipgloss.Center, box)
}

// helpLines is the help's text, one line each, at most w cells wide.
func (m *Model) helpLines(w int) []string {
	st := m.cfg.Styles
	// The overlay describes the view it covers.
	m.showHelp = false
	app, own, title, _ := m.viewKeys()
	m.showHelp = true
	var lines []string
	add := func(text string) { lines = append(lines, strings.Split(text, "\n")...) }
	section := func(heading string, groups [][]key.Binding) {
		if len(lines) > 0 {
			lines = append(lines, "")
		}
		add(st.Header.Render(heading))
		add(m.helpColumns(groups, w))
	}
	section("Keys", app.FullHelp())
	if own != nil && anyEnabled(own) {
		section(title, own.FullHelp())
	}
	if m.cfg.Mouse {
		lines = append(lines, "", st.Header.Render("Mouse"))
		add(wrap(st.HelpDesc.Render("click focuses a panel or tab · wheel scrolls"), w))
	}
	if m.cfg.Help != nil {
		if heading, text := m.cfg.Help(); text != "" {
			lines = append(lines, "")
			add(st.Header.Render(wrap(heading, w)))
			add(wrap(text, w))
		}
	}
	lines = append(lines, "")
	for _, l := range helpLegend {
		add(wrap(l, w))
	}
	lines = append(lines, "", st.HelpSep.Render(wrap("esc or ? closes this help · q quits", w)))
	return lines
}

// helpColumns renders key groups side by side, or one under another
// when side by side is wider than w (never cut: bubbles' help drops the
// columns that do not fit).
func (m *Model) helpColumns(groups [][]key.Binding, w int) string {
	hm := m.help
	hm.ShowAll = true
	hm.Width = 0
	if s := hm.FullHelpView(groups); lipgloss.Width(s) <= w {
		return s
	}
	var parts []string
	for _, g := range groups {
		if s := hm.FullHelpView([][]key.Binding{g}); s != "" {
			parts = append(parts, wrap(s, w))
		}
	}
	return strings.Join(parts, "\n")
}

// wrap breaks s at spaces into lines of at most w cells (hard-breaking a
// word longer than that; a hyphen is not a break: "--scenario" stays
// whole).
func wrap(s string, w int) string {
	if w <= 0 {
		return s
	}
	var out []string
	for _, para := range strings.Split(s, "\n") {
		line := ""
		for _, word := range strings.Split(para, " ") {
			switch {
			case line == "":
				line = word
			case ansi.StringWidth(line)+1+ansi.StringWidth(word) <= w:
				line += " " + word
			default:
				out = append(out, line)
				line = word
			}
			for ansi.StringWidth(line) > w {
				out = append(out, ansi.Truncate(line, w, ""))
				line = ansi.TruncateLeft(line, w, "")
			}
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

// anyEnabled reports whether a key map has a key that works now.
func anyEnabled(km help.KeyMap) bool {
	for _, col := range km.FullHelp() {
		for _, b := range col {
			if b.Enabled() {
				return true
			}
		}
	}
	return false
}
