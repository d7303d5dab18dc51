package ui

import (
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
)

// handleMouse (only with --mouse): a left click focuses the panel or tab
// under the pointer; the wheel scrolls the panel under the pointer (the
// drill-down when open).
func (m *Model) handleMouse(msg tea.MouseMsg) tea.Cmd {
	if !m.cfg.Mouse || m.showHelp || m.editing {
		return nil
	}
	wheel := msg.Button == tea.MouseButtonWheelUp || msg.Button == tea.MouseButtonWheelDown
	click := msg.Button == tea.MouseButtonLeft && msg.Action == tea.MouseActionPress
	if !wheel && !click {
		return nil
	}
	if m.showTargets {
		if wheel {
			return m.updateFocused(msg) // scrolls the targets view
		}
		return nil
	}
	if m.drilling {
		if wheel {
			var cmd tea.Cmd
			m.drill, cmd = m.drill.Update(msg)
			return cmd
		}
		return nil
	}
	if click && m.mode() == modeTabs && msg.Y == m.bodyTop()-1 {
		if i := m.tabAt(msg.X); i >= 0 {
			m.setFocus(i)
		}
		return nil
	}
	i := m.panelAt(msg.X, msg.Y)
	if i < 0 {
		return nil
	}
	if click {
		if i != m.focus {
			m.setFocus(i)
		}
		return nil
	}
	p, cmd := m.panels[i].Update(msg)
	m.panels[i] = p
	return cmd
}

// panelAt is the panel drawn at cell (x, y), or -1.
func (m *Model) panelAt(x, y int) int {
	top, h := m.bodyTop(), m.bodyHeight()
	if y < top || y >= top+h || x < 0 || x >= m.width {
		return -1
	}
	switch m.mode() {
	case modeTabs, modeZoom:
		return m.focus
	case modeGrid2, modeGrid3:
		cols := 2
		if m.mode() == modeGrid3 {
			cols = 3
		}
		rows := (len(m.panels) + cols - 1) / cols
		c := indexIn(split(m.width, cols), x)
		r := indexIn(split(h, rows), y-top)
		if i := r*cols + c; c >= 0 && r >= 0 && i < len(m.panels) {
			return i
		}
	}
	return -1
}

// indexIn returns which of the consecutive sizes holds offset v.
func indexIn(sizes []int, v int) int {
	for i, s := range sizes {
		if v < s {
			return i
		}
		v -= s
	}
	return -1
}

// tabAt is the tab under column x of the tab bar, or -1.
func (m *Model) tabAt(x int) int {
	for i, t := range m.tabItems() {
		w := ansi.StringWidth(t)
		if x < w {
			return i
		}
		x -= w
	}
	return -1
}
