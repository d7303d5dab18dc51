package ui

import (
	"strconv"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/pdtop/pdtop/panels"
)

// newFilterInput is the / line's text input. Its cursor does not blink:
// a blinking cursor would redraw the line twice a second over SSH.
func newFilterInput() textinput.Model {
	in := textinput.New()
	in.Prompt = "/ "
	in.Placeholder = "name, role, stale, over, gap>0.2 …"
	in.CharLimit = 200
	in.Cursor.SetMode(cursor.CursorStatic)
	return in
}

// startFilter opens the filter line with the current filter to edit.
func (m *Model) startFilter() tea.Cmd {
	wasShown := m.filterShown()
	m.editing = true
	m.input.SetValue(m.filter.Text())
	m.input.CursorEnd()
	m.filterErr = ""
	if !wasShown {
		m.layout()
	}
	return m.input.Focus()
}

// filterKey handles a key while the filter is typed: enter keeps it, esc
// clears it, anything else edits it and re-filters as you type (a term
// that does not parse yet keeps the last good filter and says why).
func (m *Model) filterKey(msg tea.KeyMsg) tea.Cmd {
	switch {
	case msg.Type == tea.KeyCtrlC:
		return tea.Quit
	case msg.Type == tea.KeyEnter:
		m.editing = false
		m.input.Blur()
		if m.filterErr != "" {
			m.note = "filter not applied: " + m.filterErr
			m.filterErr = ""
		}
		m.layout()
		return nil
	case key.Matches(msg, m.keys.Close):
		m.editing = false
		m.input.Blur()
		m.filterErr = ""
		m.setFilter(panels.Filter{})
		return nil
	}
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(msg)
	f, err := panels.ParseFilter(m.input.Value())
	if err != nil {
		m.filterErr = err.Error()
		return cmd
	}
	m.filterErr = ""
	m.setFilter(f)
	return cmd
}

// setFilter applies f to every panel.
func (m *Model) setFilter(f panels.Filter) {
	wasShown := m.filterShown()
	m.filter = f
	for _, p := range m.panels {
		if n, ok := p.(panels.Navigator); ok {
			n.SetFilter(f)
		}
	}
	if m.filterShown() != wasShown {
		m.layout()
	}
}

// filterShown reports whether the filter line takes a row.
func (m *Model) filterShown() bool {
	return !m.drilling && !m.showTargets && (m.editing || !m.filter.Empty())
}

// filterLine is the / line: the input while typing, else the filter in
// force, with how many workers match and how to change it.
func (m *Model) filterLine() string {
	st := m.cfg.Styles
	match, total := m.filter.Count(m.shown)
	count := strconv.Itoa(match) + " of " + strconv.Itoa(total) + " workers"
	if m.editing {
		hint := count + " · enter keeps · esc clears"
		if m.filterErr != "" {
			hint = m.filterErr
		}
		// The input has no width: it is as wide as what is typed, never
		// scrolls, and the hint follows it.
		l := m.input.View()
		if m.filterErr != "" {
			return l + "  " + st.Warn.Render(hint)
		}
		return l + "  " + st.Muted.Render(hint)
	}
	return st.Accent.Render("filter: ") + st.Cell.Render(m.filter.Text()) + "  " +
		st.Muted.Render(count+" · / edits · esc clears")
}
