package themes

import "github.com/charmbracelet/lipgloss"

// Styles holds every lipgloss style the panels and the ui draw with, built
// once from a Theme by NewStyles. Styles only colour or emphasise text;
// sizes, padding and borders are laid out by the caller.
type Styles struct {
	// Theme is the palette these styles were built from.
	Theme Theme

	// FrameBorder is the box an unfocused panel is drawn in (rounded, thin);
	// FocusedBorder is the focused panel's box (thick), so focus shows
	// without colour.
	FrameBorder, FocusedBorder lipgloss.Border
	// Frame and FocusedFrame colour the border runes.
	Frame, FocusedFrame lipgloss.Style
	// Title and FocusedTitle are the panel title inside the top border.
	Title, FocusedTitle lipgloss.Style

	// Header is a table's column names; Unit is the unit line beneath them.
	Header, Unit lipgloss.Style
	// Cell is an ordinary value; Muted a secondary or stale one; Accent a
	// highlighted label (pool totals, section names).
	Cell, Muted, Accent lipgloss.Style
	// OK, Warn and Crit are values and state words by severity.
	OK, Warn, Crit lipgloss.Style
	// BarFill and BarEmpty draw usage bars (KV usage).
	BarFill, BarEmpty lipgloss.Style
	// Series are chart lines in order (see Theme.Series).
	Series [4]lipgloss.Style
	// Error is the text of a panel that failed to render.
	Error lipgloss.Style

	// Selected is the name of the selected row in the focused panel
	// (reverse video: visible without colour; a ▸ also marks the row).
	Selected lipgloss.Style

	// TabActive and TabInactive are the tab bar at small terminal sizes.
	TabActive, TabInactive lipgloss.Style
	// Summary is the fleet summary line; SummaryLabel its field names.
	Summary, SummaryLabel lipgloss.Style
	// HelpKey, HelpDesc and HelpSep style the help overlay (copy them into
	// a bubbles help.Styles).
	HelpKey, HelpDesc, HelpSep lipgloss.Style
}

// NewStyles builds every style from t. Call it once per theme change and
// share the result; styles are read-only afterwards.
func NewStyles(t Theme) *Styles {
	fg := func(c lipgloss.TerminalColor) lipgloss.Style {
		return lipgloss.NewStyle().Foreground(c)
	}
	s := &Styles{
		Theme:         t,
		FrameBorder:   lipgloss.RoundedBorder(),
		FocusedBorder: lipgloss.ThickBorder(),
		Frame:         fg(t.Border),
		FocusedFrame:  fg(t.FocusedBorder).Bold(true),
		Title:         fg(t.Title).Bold(true),
		FocusedTitle:  fg(t.FocusedBorder).Bold(true),
		Header:        fg(t.Text).Bold(true),
		Unit:          fg(t.Muted),
		Cell:          fg(t.Text),
		Muted:         fg(t.Muted),
		Accent:        fg(t.Accent).Bold(true),
		OK:            fg(t.OK),
		Warn:          fg(t.Warn).Bold(true),
		Crit:          fg(t.Crit).Bold(true),
		BarFill:       fg(t.Accent),
		BarEmpty:      fg(t.Muted),
		Error:         fg(t.Crit).Bold(true),
		Selected:      lipgloss.NewStyle().Bold(true).Reverse(true),
		TabActive:     fg(t.Accent).Bold(true).Reverse(true),
		TabInactive:   fg(t.Muted),
		Summary:       fg(t.Text),
		SummaryLabel:  fg(t.Muted),
		HelpKey:       fg(t.Accent).Bold(true),
		HelpDesc:      fg(t.Text),
		HelpSep:       fg(t.Muted),
	}
	for i, c := range t.Series {
		s.Series[i] = fg(c)
	}
	if t.Strong {
		s.Crit = s.Crit.Reverse(true)
		s.Error = s.Error.Reverse(true)
		s.Header = s.Header.Underline(true)
		s.BarEmpty = lipgloss.NewStyle()
	}
	if t.NoColor {
		plain := lipgloss.NewStyle()
		bold := plain.Bold(true)
		faint := plain.Faint(true)
		s.Frame = plain
		s.FocusedFrame = bold
		s.Title = bold
		s.FocusedTitle = bold.Reverse(true)
		s.Header = bold.Underline(true)
		s.Unit = faint
		s.Cell = plain
		s.Muted = faint
		s.Accent = bold
		s.OK = plain
		s.Warn = bold
		s.Crit = bold.Reverse(true)
		s.BarFill = plain
		s.BarEmpty = faint
		s.Error = bold.Reverse(true)
		s.TabActive = bold.Reverse(true)
		s.TabInactive = plain
		s.Summary = plain
		s.SummaryLabel = faint
		s.HelpKey = bold
		s.HelpDesc = plain
		s.HelpSep = faint
		s.Series = [4]lipgloss.Style{bold, plain, faint, plain.Underline(true)}
	}
	return s
}

// Default returns the styles of the dark theme, for tests and callers that
// have not chosen a theme.
func Default() *Styles { return NewStyles(Dark()) }
