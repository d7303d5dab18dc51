package ui

import (
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/pdtop/pdtop/panels"
)

// ViewKeyMap holds the keys that open whole-screen views in place of the
// panels.
type ViewKeyMap struct {
	// Capacity toggles the capacity view (pool load in units of work).
	Capacity key.Binding
}

// DefaultViewKeyMap returns the view keys.
func DefaultViewKeyMap() ViewKeyMap {
	return ViewKeyMap{
		Capacity: key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "capacity view")),
	}
}

// viewKey toggles a whole-screen view; esc closes an open one.
func (m *Model) viewKey(msg tea.KeyMsg) bool {
	switch {
	case key.Matches(msg, m.viewKeys.Capacity):
		m.showCapacity = !m.showCapacity
		return true
	case m.showCapacity && key.Matches(msg, m.keys.Close):
		m.showCapacity = false
		return true
	}
	return false
}

// capacityView draws the capacity view in the body's h lines.
func (m *Model) capacityView(h int) string {
	return panels.CapacityView(m.shown, m.cfg.Styles, m.width, h)
}
