// Package themes holds pdtop's semantic palettes and the lipgloss styles
// built from them. It is the only package with colour values in it: panels
// and ui ask for a role ("muted", "crit", "series 2"), never a colour.
//
// Colours are ANSI indices 0–15, which every terminal maps through its own
// palette, so they read the same over SSH and in tmux where truecolor is
// rarely forwarded. The mono theme uses no colour at all, only text
// attributes; everything a colour says is also said by a word or symbol in
// the panels, so ASCII output (NO_COLOR) loses nothing essential.
package themes

import "github.com/charmbracelet/lipgloss"

// Theme is a semantic palette. Each field is the colour of one role; a
// lipgloss.NoColor{} field means "the terminal's default foreground".
type Theme struct {
	// Name is the theme's identifier for --theme and the T key.
	Name string
	// Text is ordinary values and labels.
	Text lipgloss.TerminalColor
	// Muted is secondary figures, units, legends and stale values.
	Muted lipgloss.TerminalColor
	// Accent marks headings and the selected tab.
	Accent lipgloss.TerminalColor
	// OK, Warn and Crit colour healthy, degraded and failing values.
	OK, Warn, Crit lipgloss.TerminalColor
	// Border is an unfocused panel's frame; FocusedBorder the focused one.
	Border, FocusedBorder lipgloss.TerminalColor
	// Title is the panel title in its frame.
	Title lipgloss.TerminalColor
	// Series are chart line colours in order: 0 p50 / actual, 1 p99 /
	// predicted, 2 and 3 for further lines.
	Series [4]lipgloss.TerminalColor
	// NoColor makes NewStyles use text attributes (bold, faint, reverse,
	// underline) instead of colours.
	NoColor bool
	// Strong makes emphasis louder for projectors and low vision: no faint
	// text, critical values in reverse video.
	Strong bool
}

// ansi returns the ANSI palette colour n (0–15).
func ansi(n string) lipgloss.TerminalColor { return lipgloss.Color(n) }

// def is the terminal's default foreground.
var def lipgloss.TerminalColor = lipgloss.NoColor{}

// Dark is the default theme for dark terminal backgrounds.
func Dark() Theme {
	return Theme{
		Name:          "dark",
		Text:          def,
		Muted:         ansi("8"),
		Accent:        ansi("6"),
		OK:            ansi("2"),
		Warn:          ansi("3"),
		Crit:          ansi("9"),
		Border:        ansi("8"),
		FocusedBorder: ansi("6"),
		Title:         def,
		Series:        [4]lipgloss.TerminalColor{ansi("6"), ansi("5"), ansi("3"), ansi("2")},
	}
}

// Light is for light terminal backgrounds: no bright yellow or cyan, which
// vanish on white.
func Light() Theme {
	return Theme{
		Name:          "light",
		Text:          def,
		Muted:         ansi("8"),
		Accent:        ansi("4"),
		OK:            ansi("2"),
		Warn:          ansi("5"),
		Crit:          ansi("1"),
		Border:        ansi("8"),
		FocusedBorder: ansi("4"),
		Title:         def,
		Series:        [4]lipgloss.TerminalColor{ansi("4"), ansi("5"), ansi("1"), ansi("2")},
	}
}

// HighContrast uses only bright colours and the default foreground, never
// grey, so it survives projectors and washed-out palettes.
func HighContrast() Theme {
	return Theme{
		Name:          "high-contrast",
		Text:          def,
		Muted:         def,
		Accent:        ansi("14"),
		OK:            ansi("10"),
		Warn:          ansi("11"),
		Crit:          ansi("9"),
		Border:        def,
		FocusedBorder: ansi("11"),
		Title:         def,
		Series:        [4]lipgloss.TerminalColor{ansi("14"), ansi("13"), ansi("11"), ansi("10")},
		Strong:        true,
	}
}

// Mono uses no colour at all (NO_COLOR, TERM=dumb, monochrome terminals):
// faint for muted, bold for emphasis, reverse for critical.
func Mono() Theme {
	return Theme{
		Name:          "mono",
		Text:          def,
		Muted:         def,
		Accent:        def,
		OK:            def,
		Warn:          def,
		Crit:          def,
		Border:        def,
		FocusedBorder: def,
		Title:         def,
		Series:        [4]lipgloss.TerminalColor{def, def, def, def},
		NoColor:       true,
	}
}

// Names lists the themes in the order the T key cycles through them.
func Names() []string {
	return []string{"dark", "light", "high-contrast", "mono"}
}

// ByName returns the theme called name (as listed by Names) and true, or
// Dark and false for an unknown name.
func ByName(name string) (Theme, bool) {
	switch name {
	case "dark":
		return Dark(), true
	case "light":
		return Light(), true
	case "high-contrast", "highcontrast", "hc":
		return HighContrast(), true
	case "mono", "none", "monochrome":
		return Mono(), true
	}
	return Dark(), false
}

// Next returns the name of the theme after name in Names' cycle order
// (the first one for an unknown name).
func Next(name string) string {
	names := Names()
	for i, n := range names {
		if n == name {
			return names[(i+1)%len(names)]
		}
	}
	return names[0]
}
