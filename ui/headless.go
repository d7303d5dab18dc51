package ui

import (
	tea "github.com/charmbracelet/bubbletea"

	"github.com/pdtop/pdtop/sources"
)

// Frame draws the whole dashboard (summary line, every panel in the
// layout for width×height, footer) for snapshot s without a terminal: the
// frame a user would see right after s arrived. It is for headless use —
// benchmarks and non-interactive output — and leaves the model showing s.
func (m *Model) Frame(s *sources.Snapshot, width, height int) string {
	if width != m.width || height != m.height {
		m.Update(tea.WindowSizeMsg{Width: width, Height: height})
	}
	m.latest = s
	m.lastTick = m.now()
	m.show(s)
	return m.View()
}
