package ui

import (
	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"

	"github.com/pdtop/pdtop/panels"
)

// viewKeys are the keys that work in the current view (see
// baseViewKeys): the capacity view's own, or the dashboard's and drill-
// down's with the playback keys added while replaying.
func (m *Model) viewKeys() (app bindings, own help.KeyMap, ownTitle string, short []key.Binding) {
	k := m.keys
	if m.showCapacity && !m.editing && !m.showHelp {
		back := key.NewBinding(key.WithKeys("esc", "c"), key.WithHelp("esc/c", "back to the panels"))
		common := []key.Binding{k.Narrower, k.Wider, m.pauseKey(), k.Theme, k.Help, k.Quit}
		app = bindings{{back}, common}
		short = []key.Binding{k.Help, with(back, "esc", "back"), m.shortPause(), k.Quit}
	} else {
		app, own, ownTitle, short = m.baseViewKeys()
	}
	if _, ok := m.player(); ok && !m.editing && !m.showHelp {
		app = append(app, m.replayKeys.FullHelp()...)
		if len(short) > 0 {
			short = append([]key.Binding{short[0], m.replayKeys.SeekHints, m.replayKeys.Faster}, short[1:]...)
		}
	}
	return app, own, ownTitle, short
}

// capacityView draws the capacity view in the body's h lines.
func (m *Model) capacityView(h int) string {
	return panels.CapacityView(m.shown, m.cfg.Styles, m.width, h)
}
