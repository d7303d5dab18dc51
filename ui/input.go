package ui

import (
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/pdtop/pdtop/panels"
	"github.com/pdtop/pdtop/themes"
)

// keyBurst handles a key message. Keys typed faster than the terminal is
// read (a held j, fast typing, SSH bundling keystrokes) arrive as one
// message with several runes ("jj"), which no binding matches: each rune
// is handled as its own key, in order, so "/" then "dec" still types into
// the filter. A paste stays one message (only the filter takes text).
func (m *Model) keyBurst(msg tea.KeyMsg) tea.Cmd {
	if msg.Type != tea.KeyRunes || len(msg.Runes) < 2 || msg.Paste || m.editing {
		return m.handleKey(msg)
	}
	var cmds []tea.Cmd
	for i, r := range msg.Runes {
		if m.editing { // the rest is the filter's text
			cmds = append(cmds, m.handleKey(tea.KeyMsg{Type: tea.KeyRunes, Runes: msg.Runes[i:], Alt: msg.Alt}))
			break
		}
		cmds = append(cmds, m.handleKey(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}, Alt: msg.Alt}))
	}
	return tea.Batch(cmds...)
}

// handleKey routes a key by view: the filter being typed takes every key;
// the help overlay only closes; the drill-down and the dashboard have
// their own keys, the app's first and then the focused panel's.
func (m *Model) handleKey(msg tea.KeyMsg) tea.Cmd {
	k := m.keys
	switch {
	case m.editing:
		return m.filterKey(msg)
	case key.Matches(msg, k.Quit):
		return tea.Quit
	case m.showHelp:
		m.helpKey(msg)
		return nil
	case key.Matches(msg, k.Help):
		m.showHelp, m.helpOff = true, 0
		return nil
	}
	if cmd, ok := m.replayKey(msg); ok {
		return cmd
	}
	switch {
	case key.Matches(msg, k.Narrower):
		return m.stepWindow(-1)
	case key.Matches(msg, k.Wider):
		return m.stepWindow(+1)
	case key.Matches(msg, k.Pause):
		return m.togglePause()
	case key.Matches(msg, k.Theme):
		t, _ := themes.ByName(themes.Next(m.cfg.Styles.Theme.Name))
		m.setStyles(themes.NewStyles(t))
		m.note = "theme " + t.Name
		return nil
	case key.Matches(msg, k.Capacity) || m.showCapacity && key.Matches(msg, k.Close):
		m.showCapacity = !m.showCapacity && key.Matches(msg, k.Capacity)
		return nil
	case m.showCapacity:
		return nil // the capacity view has no keys of its own
	case m.drilling:
		return m.drillKey(msg)
	case key.Matches(msg, k.Targets):
		m.showTargets = !m.showTargets
		return nil
	case m.showTargets:
		return m.targetsKey(msg)
	}
	return m.dashboardKey(msg)
}

// targetsKey handles the keys of the targets view: esc goes back, a panel
// key (tab, 1-6, z, /) goes back and acts, the rest scroll the view.
func (m *Model) targetsKey(msg tea.KeyMsg) tea.Cmd {
	k := m.keys
	switch {
	case key.Matches(msg, k.Close):
		m.showTargets = false
		return nil
	case key.Matches(msg, k.Next, k.Prev, k.Jump, k.Zoom, k.Filter, k.Drill):
		m.showTargets = false
		return m.dashboardKey(msg)
	}
	return m.updateFocused(msg)
}

// dashboardKey handles the keys of the panel grid (or tabs, or zoom).
func (m *Model) dashboardKey(msg tea.KeyMsg) tea.Cmd {
	k := m.keys
	switch {
	case key.Matches(msg, k.Close):
		switch {
		case m.zoom:
			m.zoom = false
			m.layout()
		case !m.filter.Empty():
			m.setFilter(panels.Filter{})
		}
		return nil
	}
	switch {
	case key.Matches(msg, k.Next):
		m.setFocus(m.focus + 1)
		return nil
	case key.Matches(msg, k.Prev):
		m.setFocus(m.focus - 1)
		return nil
	case key.Matches(msg, k.Jump):
		m.setFocus(int(msg.String()[0] - '1'))
		return nil
	case key.Matches(msg, k.Zoom):
		m.zoom = !m.zoom
		m.layout()
		return nil
	case key.Matches(msg, k.Filter):
		return m.startFilter()
	case key.Matches(msg, k.Drill):
		return m.openDrill()
	}
	return m.updateFocused(msg)
}

// togglePause freezes or resumes the view; scraping goes on either way.
// Resuming shows the newest snapshot once, rebuilt first when the window
// changed while paused.
func (m *Model) togglePause() tea.Cmd {
	m.paused = !m.paused
	if m.paused || m.latest == nil {
		return nil
	}
	if m.latest.Window != m.cfg.Window {
		return m.build()
	}
	return m.show(m.latest)
}

func (m *Model) setFocus(i int) {
	n := len(m.panels)
	if n == 0 {
		return
	}
	m.focus = ((i % n) + n) % n
	m.applyFocus()
	m.layout()
}

// setStyles switches every component to st (the T key).
func (m *Model) setStyles(st *themes.Styles) {
	m.cfg.Styles = st
	h := &m.help.Styles
	h.ShortKey, h.ShortDesc, h.ShortSeparator = st.HelpKey, st.HelpDesc, st.HelpSep
	h.FullKey, h.FullDesc, h.FullSeparator = st.HelpKey, st.HelpDesc, st.HelpSep
	h.Ellipsis = st.HelpSep
	for _, p := range m.panels {
		if n, ok := p.(panels.Navigator); ok {
			n.SetStyles(st)
		}
	}
	m.drill.SetStyles(st)
	if n, ok := m.targets.(panels.Navigator); ok {
		n.SetStyles(st)
	}
	m.input.PromptStyle, m.input.TextStyle = st.Accent, st.Cell
}

// helpKey closes the help overlay, or scrolls it when it is taller than
// the screen.
func (m *Model) helpKey(msg tea.KeyMsg) {
	k, sk := m.keys, m.helpScroll
	switch {
	case key.Matches(msg, k.Help) || key.Matches(msg, k.Close):
		m.showHelp = false
	case key.Matches(msg, sk.Up):
		m.helpOff--
	case key.Matches(msg, sk.Down):
		m.helpOff++
	case key.Matches(msg, sk.PageUp):
		m.helpOff -= max(1, m.height-4)
	case key.Matches(msg, sk.PageDown):
		m.helpOff += max(1, m.height-4)
	case key.Matches(msg, sk.Home):
		m.helpOff = 0
	case key.Matches(msg, sk.End):
		m.helpOff = m.helpMax
	}
	m.helpOff = clamp(m.helpOff, 0, m.helpMax)
}
