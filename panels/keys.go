package panels

import "github.com/charmbracelet/bubbles/key"

// KeyMap is a panel's own keys: they move the cursor through its worker
// list (or scroll a list without a cursor) and sort it. The ui sends them
// to the focused panel after its own global keys.
type KeyMap struct {
	Up       key.Binding
	Down     key.Binding
	PageUp   key.Binding
	PageDown key.Binding
	Home     key.Binding
	End      key.Binding
	// Sort cycles the sort column through the columns on screen; Reverse
	// flips its direction.
	Sort    key.Binding
	Reverse key.Binding
}

// DefaultKeyMap returns the scroll keys: ↑/k, ↓/j, pgup, pgdn, home/g,
// end/G.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		Up:       key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "scroll up")),
		Down:     key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "scroll down")),
		PageUp:   key.NewBinding(key.WithKeys("pgup", "ctrl+u"), key.WithHelp("pgup", "page up")),
		PageDown: key.NewBinding(key.WithKeys("pgdown", "ctrl+d"), key.WithHelp("pgdn", "page down")),
		Home:     key.NewBinding(key.WithKeys("home", "g"), key.WithHelp("home/g", "first row")),
		End:      key.NewBinding(key.WithKeys("end", "G"), key.WithHelp("end/G", "last row")),
		Sort:     key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "sort by next column")),
		Reverse:  key.NewBinding(key.WithKeys("S"), key.WithHelp("S", "reverse sort")),
	}
}

// ShortHelp returns the keys for the one-line help (help.KeyMap).
func (k KeyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Up, k.Down}
}

// FullHelp returns the keys for the full help overlay (help.KeyMap).
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{{k.Up, k.Down, k.PageUp, k.PageDown}, {k.Home, k.End, k.Sort, k.Reverse}}
}

// forState returns the keys as they work now: "select" when the panel
// shows a selectable worker list, "scroll" when it has rows hidden, none
// of the movement keys when everything fits; the sort keys only when
// there is a column to sort by (reverse only once sorted).
func (k KeyMap) forState(selectable, scrollable, sortable, sorted bool) KeyMap {
	verb := "scroll"
	if selectable {
		verb = "select"
	}
	k.Up.SetHelp(k.Up.Help().Key, verb+" up")
	k.Down.SetHelp(k.Down.Help().Key, verb+" down")
	for _, b := range []*key.Binding{&k.Up, &k.Down, &k.PageUp, &k.PageDown, &k.Home, &k.End} {
		b.SetEnabled(selectable || scrollable)
	}
	k.Sort.SetEnabled(sortable)
	k.Reverse.SetEnabled(sortable && sorted)
	return k
}
