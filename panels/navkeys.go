package panels

import (
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/pdtop/pdtop/themes"
)

// Navigator is what a panel with a per-worker list offers beyond Panel:
// the ui sets the fleet-wide filter and the theme on it, and asks which
// worker is selected (for the drill-down). Checked by type assertion, so
// other views need not implement it.
type Navigator interface {
	// SetFilter applies f to the panel's worker rows.
	SetFilter(f Filter)
	// Selected returns the target ID of the selected row.
	Selected() (targetID string, ok bool)
	// Sort returns the sort column's name ("" = snapshot order) and
	// whether it is descending.
	Sort() (column string, desc bool)
	// SetStyles switches the panel to another theme's styles.
	SetStyles(st *themes.Styles)
}

var _ Navigator = (*panel)(nil)

// SetFilter applies f to the panel's worker rows.
func (p *panel) SetFilter(f Filter) {
	if f.text != p.filter.text {
		p.filter, p.valid = f, false
	}
}

// Selected returns the target ID of the row under the cursor, as of the
// last render.
func (p *panel) Selected() (string, bool) {
	if !p.last.has || len(p.last.ids) == 0 || p.selID == "" {
		return "", false
	}
	return p.selID, true
}

// Sort returns the sort column and direction.
func (p *panel) Sort() (string, bool) { return p.sortKey, p.desc }

// SetStyles switches the panel's theme.
func (p *panel) SetStyles(st *themes.Styles) {
	if st != nil && st != p.st {
		p.st, p.valid = st, false
	}
}

// navigate moves the cursor on the movement keys and the wheel, and cycles
// or reverses the sort on s / S.
func (p *panel) navigate(msg tea.Msg) {
	n := len(p.last.ids)
	sel := p.selIdx
	switch msg := msg.(type) {
	case tea.KeyMsg:
		switch {
		case key.Matches(msg, p.keys.Up):
			sel--
		case key.Matches(msg, p.keys.Down):
			sel++
		case key.Matches(msg, p.keys.PageUp):
			sel -= max(1, p.page)
		case key.Matches(msg, p.keys.PageDown):
			sel += max(1, p.page)
		case key.Matches(msg, p.keys.Home):
			sel = 0
		case key.Matches(msg, p.keys.End):
			sel = n - 1
		case key.Matches(msg, p.keys.Sort):
			p.sortKey, p.desc = nextSort(p.last.sortable, p.sortKey)
			p.valid = false
			return
		case key.Matches(msg, p.keys.Reverse):
			if p.sortKey != "" {
				p.desc = !p.desc
				p.valid = false
			}
			return
		}
	case tea.MouseMsg:
		switch msg.Button {
		case tea.MouseButtonWheelUp:
			sel -= 3
		case tea.MouseButtonWheelDown:
			sel += 3
		}
	}
	if n == 0 {
		return
	}
	sel = clamp(sel, 0, n-1)
	if sel != p.selIdx || p.last.ids[sel] != p.selID {
		p.selIdx, p.selID, p.valid = sel, p.last.ids[sel], false
	}
}

// nextSort is the column after cur in the cycle (snapshot order first,
// then each column on screen): names sort A→Z, figures highest first.
func nextSort(cols []string, cur string) (string, bool) {
	next := ""
	if cur == "" {
		if len(cols) > 0 {
			next = cols[0]
		}
	} else {
		for i, c := range cols {
			if c == cur && i+1 < len(cols) {
				next = cols[i+1]
			}
		}
	}
	return next, next != "" && !isNameColumn(next)
}

// isNameColumn reports whether a column holds names (sorted A→Z).
func isNameColumn(name string) bool {
	switch name {
	case "worker", "target", "replica", "time", "event", "detail", "role", "restarted":
		return true
	}
	return false
}
