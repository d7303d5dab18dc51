package ui

import (
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
)

// handleKey applies app-wide keys first; anything else goes to the
// focused panel.
func (m *Model) handleKey(msg tea.KeyMsg) tea.Cmd {
	k := m.keys
	switch {
	case key.Matches(msg, k.Quit):
		return tea.Quit
	case key.Matches(msg, k.Help):
		m.showHelp = !m.showHelp
		return nil
	case m.showHelp && key.Matches(msg, k.Close):
		m.showHelp = false
		return nil
	case key.Matches(msg, k.Targets):
		m.showTargets = !m.showTargets
		return nil
	case m.showTargets && key.Matches(msg, k.Close):
		m.showTargets = false
		return nil
	case m.showTargets && key.Matches(msg, k.Next, k.Prev, k.Jump, k.Zoom):
		m.showTargets = false // back to the panels, then act on the key
		return m.handleKey(msg)
	case m.showTargets && !key.Matches(msg, k.Pause):
		return m.updateFocused(msg) // scroll the targets view
	case m.zoom && key.Matches(msg, k.Close):
		m.zoom = false
		m.layout()
		return nil
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
	case key.Matches(msg, k.Pause):
		m.paused = !m.paused
		if !m.paused && m.latest != nil {
			m.show(m.latest) // resume catches up once
		}
		return nil
	}
	return m.updateFocused(msg)
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
