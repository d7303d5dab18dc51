package ui

import "github.com/charmbracelet/bubbles/key"

// KeyMap holds the application-wide keys. Panel-specific keys live in each
// panel's own KeyMap; the help overlay shows both.
type KeyMap struct {
	Quit  key.Binding
	Help  key.Binding
	Next  key.Binding
	Prev  key.Binding
	Zoom  key.Binding
	Pause key.Binding
	Jump  key.Binding
	Close key.Binding
	// Targets toggles the full-screen targets view.
	Targets key.Binding
}

// DefaultKeyMap returns pdtop's default keys.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		Quit:    key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
		Help:    key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		Next:    key.NewBinding(key.WithKeys("tab", "right", "l"), key.WithHelp("tab", "next panel")),
		Prev:    key.NewBinding(key.WithKeys("shift+tab", "left", "h"), key.WithHelp("shift+tab", "previous panel")),
		Zoom:    key.NewBinding(key.WithKeys("enter", "z"), key.WithHelp("enter", "zoom panel")),
		Pause:   key.NewBinding(key.WithKeys("p", " "), key.WithHelp("p", "pause/resume view")),
		Jump:    key.NewBinding(key.WithKeys("1", "2", "3", "4", "5", "6"), key.WithHelp("1-6", "jump to panel")),
		Close:   key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back")),
		Targets: key.NewBinding(key.WithKeys("t"), key.WithHelp("t", "targets")),
	}
}

// ShortHelp is the footer line.
func (k KeyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Help, k.Next, k.Zoom, k.Pause, k.Quit, k.Targets}
}

// FullHelp is the help overlay's application column.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{{k.Next, k.Prev, k.Jump, k.Zoom, k.Close}, {k.Targets, k.Pause, k.Help, k.Quit}}
}
