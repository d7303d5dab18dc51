package ui

import (
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
	if m.shown != nil && m.shown.Notice != "" {
		lead += st.Accent.Render(m.shown.Notice) + "  "
	}
	_, _, _, short := m.viewKeys()
	m.help.Width = max(0, m.width-ansi.StringWidth(lead))
	return lead + m.help.ShortHelpView(short)
}

// helpView lists the keys that work in the view under the overlay, from
// the bubbles help component, stacked so they fit 80 columns.
func (m *Model) helpView(h int) string {
	st := m.cfg.Styles
	hm := m.help
	hm.ShowAll = true
	hm.Width = m.width - 4
	// The overlay describes the view it covers.
	m.showHelp = false
	app, own, title, _ := m.viewKeys()
	m.showHelp = true
	body := st.Header.Render("Keys") + "\n" + hm.FullHelpView(app.FullHelp())
	if own != nil && len(own.FullHelp()) > 0 {
		body += "\n\n" + st.Header.Render(title) + "\n" + hm.FullHelpView(own.FullHelp())
	}
	if m.cfg.Mouse {
		body += "\n\n" + st.Header.Render("Mouse") + "\n" + st.HelpDesc.Render("click focuses a panel or tab · wheel scrolls")
	}
	body += "\n\n" + strings.Join(helpLegend, "\n")
	body += "\n\n" + st.HelpSep.Render("esc or ? closes this help · q quits")
	box := lipgloss.NewStyle().Border(st.FrameBorder).BorderForeground(st.Theme.Border).Padding(0, 1).Render(body)
	return lipgloss.Place(m.width, h, lipgloss.Center, lipgloss.Center, box)
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
