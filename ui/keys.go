package ui

import "github.com/charmbracelet/bubbles/key"

// KeyMap holds the application-wide keys. Panel-specific keys live in each
// panel's own KeyMap; the help overlay shows both, as they work in the
// current view.
type KeyMap struct {
	Quit   key.Binding
	Help   key.Binding
	Next   key.Binding
	Prev   key.Binding
	Jump   key.Binding
	Zoom   key.Binding
	Drill  key.Binding
	Filter key.Binding
	// Close leaves the drill-down, zoom or help, or clears the filter.
	Close key.Binding
	// Narrower and Wider step the time window through Windows.
	Narrower key.Binding
	Wider    key.Binding
	Pause    key.Binding
	Theme    key.Binding
	// Down is the scroll key as the drill-down's footer names it.
	Down key.Binding
	// Capacity opens and closes the capacity view.
	Capacity key.Binding
	// Targets toggles the full-screen targets view.
	Targets key.Binding
}

// DefaultKeyMap returns pdtop's default keys.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		Quit:     key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
		Help:     key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		Next:     key.NewBinding(key.WithKeys("tab", "right", "l"), key.WithHelp("tab/→", "next panel")),
		Prev:     key.NewBinding(key.WithKeys("shift+tab", "left", "h"), key.WithHelp("shift+tab/←", "previous panel")),
		Jump:     key.NewBinding(key.WithKeys("1", "2", "3", "4", "5", "6"), key.WithHelp("1-6", "jump to panel")),
		Zoom:     key.NewBinding(key.WithKeys("z"), key.WithHelp("z", "zoom panel")),
		Drill:    key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "worker details")),
		Filter:   key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter workers")),
		Close:    key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back")),
		Narrower: key.NewBinding(key.WithKeys("["), key.WithHelp("[", "shorter window")),
		Wider:    key.NewBinding(key.WithKeys("]"), key.WithHelp("]", "longer window")),
		Pause:    key.NewBinding(key.WithKeys("p", " "), key.WithHelp("p", "pause view")),
		Theme:    key.NewBinding(key.WithKeys("T"), key.WithHelp("T", "next theme")),
		Down:     key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "scroll down")),
		Capacity: key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "capacity view")),
		Targets:  key.NewBinding(key.WithKeys("t"), key.WithHelp("t", "targets view")),
	}
}

// ShortHelp is the footer line of the dashboard.
func (k KeyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Help, k.Next, k.Drill, k.Filter, k.Zoom, k.Pause, k.Quit}
}

// FullHelp lists every application key.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{{k.Next, k.Prev, k.Jump, k.Zoom, k.Drill, k.Filter, k.Close},
		{k.Targets, k.Capacity, k.Narrower, k.Wider, k.Pause, k.Theme, k.Help, k.Quit}}
}

// bindings is a help.KeyMap over a fixed list, for the per-view key lists.
type bindings [][]key.Binding

func (b bindings) ShortHelp() []key.Binding {
	var out []key.Binding
	for _, col := range b {
		out = append(out, col...)
	}
	return out
}

func (b bindings) FullHelp() [][]key.Binding { return b }

// with returns a copy of b with its help text replaced.
func with(b key.Binding, k, desc string) key.Binding {
	b.SetHelp(k, desc)
	return b
}
