package ui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/pdtop/pdtop/panels"
)

// Minimum terminal size for anything but the "too small" line.
const (
	minWidth  = 40
	minHeight = 10
)

type layoutMode int

const (
	modeTooSmall layoutMode = iota
	modeTabs                // one panel at a time with a tab bar (80x24)
	modeGrid2               // two columns, three rows (100–160 wide)
	modeGrid3               // three columns, two rows (≥ 160x45)
	modeZoom                // the focused panel alone
)

func (m *Model) mode() layoutMode {
	switch {
	case m.width < minWidth || m.height < minHeight:
		return modeTooSmall
	case m.zoom || m.drilling:
		return modeZoom
	case m.width >= 160 && m.height >= 45:
		return modeGrid3
	case m.width >= 100 && m.height >= 30:
		return modeGrid2
	}
	return modeTabs
}

// split divides n cells into k parts whose sizes differ by at most one.
func split(n, k int) []int {
	out := make([]int, k)
	for i := range out {
		out[i] = n / k
		if i < n%k {
			out[i]++
		}
	}
	return out
}

// bodyTop is the first row of the panels: under the summary line, the
// filter line when shown and the tab bar in tab mode.
func (m *Model) bodyTop() int {
	y := 1
	if m.filterShown() {
		y++
	}
	if m.mode() == modeTabs {
		y++
	}
	return y
}

// bodyHeight is the height left for panels between bodyTop and the footer
// (and a replay's progress line).
func (m *Model) bodyHeight() int {
	return max(0, m.height-m.bodyTop()-1-m.replayLines())
}

// layout sizes every panel for the current mode.
func (m *Model) layout() {
	h := m.bodyHeight()
	switch m.mode() {
	case modeGrid3, modeGrid2:
		cols := 2
		if m.mode() == modeGrid3 {
			cols = 3
		}
		rows := (len(m.panels) + cols - 1) / cols
		ws, hs := split(m.width, cols), split(h, rows)
		for i, p := range m.panels {
			p.SetSize(ws[i%cols], hs[i/cols])
		}
	case modeTabs, modeZoom:
		for _, p := range m.panels {
			p.SetSize(m.width, h)
		}
	}
	m.drill.SetSize(m.width, h)
	m.targets.SetSize(m.width, max(0, m.height-2))
	m.targets.SetFocused(true)
}

// View draws exactly width × height cells.
func (m *Model) View() string {
	if m.width <= 0 || m.height <= 0 {
		return ""
	}
	if m.mode() == modeTooSmall {
		msg := fmt.Sprintf("terminal too small (need %d×%d)", minWidth, minHeight)
		return fit(msg, m.width, m.height)
	}
	st := m.cfg.Styles
	var b strings.Builder
	win := m.cfg.Window
	if m.shown != nil {
		win = m.shown.Window
	}
	b.WriteString(panels.Summary(m.shown, st, m.width, panels.SummaryState{
		Paused: m.paused, Interval: m.cfg.Interval, Window: win, NextWindow: m.cfg.Window,
		Now: m.now(), LastTick: m.lastTick, Label: m.replayMode(),
	}))
	b.WriteByte('\n')
	if m.filterShown() {
		b.WriteString(m.filterLine())
		b.WriteByte('\n')
	}
	h := m.bodyHeight()
	switch {
	case m.showHelp:
		if m.mode() == modeTabs {
			h++ // the help replaces the tab bar too
		}
		b.WriteString(m.helpView(h))
	case m.showCapacity:
		if m.mode() == modeTabs {
			h++ // the capacity view replaces the tab bar too
		}
		b.WriteString(m.capacityView(h))
	case m.drilling:
		b.WriteString(m.drill.View())
	case m.showTargets:
		b.WriteString(m.targets.View())
	case m.mode() == modeTabs:
		b.WriteString(m.tabBar())
		b.WriteByte('\n')
		b.WriteString(m.panels[m.focus].View())
	case m.mode() == modeZoom:
		b.WriteString(m.panels[m.focus].View())
	default:
		cols := 2
		if m.mode() == modeGrid3 {
			cols = 3
		}
		var rows []string
		for r := 0; r*cols < len(m.panels); r++ {
			var cells []string
			for c := 0; c < cols && r*cols+c < len(m.panels); c++ {
				cells = append(cells, m.panels[r*cols+c].View())
			}
			rows = append(rows, lipgloss.JoinHorizontal(lipgloss.Top, cells...))
		}
		b.WriteString(lipgloss.JoinVertical(lipgloss.Left, rows...))
	}
	b.WriteByte('\n')
	if m.replayLines() > 0 {
		b.WriteString(m.progressLine())
		b.WriteByte('\n')
	}
	b.WriteString(m.footer())
	return fit(b.String(), m.width, m.height)
}

// tabBar lists the panels with the focused one marked by style and by
// brackets (never by colour alone). Titles shorten to fit the width.
func (m *Model) tabBar() string { return strings.Join(m.tabItems(), "") }

// tabItems are the tab bar's tabs, rendered.
func (m *Model) tabItems() []string {
	st := m.cfg.Styles
	for _, short := range []int{0, 1, 2} {
		parts := make([]string, len(m.panels))
		width := 0
		for i, p := range m.panels {
			name := fmt.Sprintf("%d %s", i+1, tabTitle(p.Title(), short))
			if i == m.focus {
				parts[i] = st.TabActive.Render("[" + name + "]")
			} else {
				parts[i] = st.TabInactive.Render(" " + name + " ")
			}
			width += ansi.StringWidth(parts[i])
		}
		if width <= m.width || short == 2 {
			return parts
		}
	}
	return nil
}

// tabTitle shortens a panel title: 0 = full, 1 = first word(s) before
// ":" or "&", 2 = just the number.
func tabTitle(t string, level int) string {
	switch level {
	case 0:
		return t
	case 1:
		if i := strings.IndexAny(t, ":&"); i > 0 {
			t = t[:i]
		}
		if f := strings.Fields(t); len(f) > 1 && len(t) > 8 {
			if f[0] == "KV" || f[0] == "Token" {
				return strings.Join(f[:2], " ")
			}
			return f[0]
		}
		return strings.TrimSpace(t)
	}
	return ""
}

var helpLegend = []string{
	"—   not exposed by this version (or none counted yet)",
	"STALE / DOWN   scrape failing: last good values, with their age",
	"↻   restarted inside the window · !  at or over its threshold",
	"▸   the selected worker (enter opens its details)",
}

// fit forces s to exactly w×h cells: lines are truncated or padded, extra
// lines dropped, missing ones added.
func fit(s string, w, h int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > h {
		lines = lines[:h]
	}
	for len(lines) < h {
		lines = append(lines, "")
	}
	for i, l := range lines {
		if lw := ansi.StringWidth(l); lw > w {
			l = ansi.Truncate(l, w, "")
		}
		if pad := w - ansi.StringWidth(l); pad > 0 {
			l += strings.Repeat(" ", pad)
		}
		lines[i] = l
	}
	return strings.Join(lines, "\n")
}
