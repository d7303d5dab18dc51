package panels

import (
	"sort"
	"strings"

	"github.com/pdtop/pdtop/sources"
)

// navIn is the navigation state a render starts from: the sort column,
// the filter and the selection (by target ID, with the row index as the
// fallback when that target left the list).
type navIn struct {
	sortKey string // column name; "" = the snapshot's order
	desc    bool
	match   *matcher
	selID   string
	selIdx  int
	focused bool // draw the cursor
}

// navOut is what a render learned: the selectable rows in display order,
// the selected row and the sortable columns on screen.
type navOut struct {
	ids      []string
	sel      int
	sortable []string
	has      bool // the panel drew a selectable table
}

// keep returns the workers the filter lets through, in order.
func (c *drawCtx) keep(ws []*sources.WorkerView) []*sources.WorkerView {
	if c.nav.match == nil {
		return ws
	}
	out := make([]*sources.WorkerView, 0, len(ws))
	for _, w := range ws {
		if c.nav.match.worker(w) {
			out = append(out, w)
		}
	}
	return out
}

// noMatch is the line a filtered table shows when no row is left.
func (c *drawCtx) noMatch(what string) string {
	if c.nav.match == nil {
		return ""
	}
	return "no " + what + " matches the filter \"" + clean(c.nav.match.f.text, 40) + "\""
}

// sortRows orders the rows (and their ids) by the named column: figures
// first, highest first when desc, then text; rows without either last,
// in their original order. The column's header gets ▼ or ▲.
func (t *table) sortRows(key string, desc bool) {
	if key == "" {
		return
	}
	col := -1
	for i := range t.cols {
		if t.cols[i].name == key && !t.cols[i].nosort {
			col = i
			break
		}
	}
	if col < 0 {
		return
	}
	t.cols[col].arrow = "▲"
	if desc {
		t.cols[col].arrow = "▼"
	}
	type row struct {
		cells []cell
		id    string
	}
	rows := make([]row, len(t.rows))
	for i := range t.rows {
		rows[i].cells = t.rows[i]
		if i < len(t.ids) {
			rows[i].id = t.ids[i]
		}
	}
	get := func(r row) cell {
		if col < len(r.cells) {
			return r.cells[col]
		}
		return cell{}
	}
	sort.SliceStable(rows, func(a, b int) bool {
		ca, cb := get(rows[a]), get(rows[b])
		ra, rb := sortRank(ca), sortRank(cb)
		if ra != rb {
			return ra < rb
		}
		switch ra {
		case 0:
			if desc {
				return ca.v > cb.v
			}
			return ca.v < cb.v
		case 1:
			ta, tb := strings.ToLower(ca.text), strings.ToLower(cb.text)
			if desc {
				return ta > tb
			}
			return ta < tb
		}
		return false
	})
	for i := range rows {
		t.rows[i] = rows[i].cells
		if i < len(t.ids) {
			t.ids[i] = rows[i].id
		}
	}
}

// sortRank puts figures first, then text, then empty or absent cells.
func sortRank(c cell) int {
	switch {
	case c.hasV:
		return 0
	case c.text != "" && c.text != markAbsent && c.text != markPending:
		return 1
	}
	return 2
}

// sortable lists the names of the columns on screen that s cycles
// through.
func (t *table) sortable(w int) []string {
	idx, _, _ := t.columns(w)
	var out []string
	for _, i := range idx {
		if c := t.cols[i]; c.name != "" && !c.nosort {
			out = append(out, c.name)
		}
	}
	return out
}

// selectRow resolves the selection after sorting and filtering: the row
// of the selected target (the one at the remembered index when a target
// has several rows), else the remembered index clamped to the list.
func (c *drawCtx) selectRow(ids []string) int {
	if len(ids) == 0 {
		return -1
	}
	in := c.nav
	if in.selIdx >= 0 && in.selIdx < len(ids) && ids[in.selIdx] == in.selID {
		return in.selIdx
	}
	if in.selID != "" {
		for i, id := range ids {
			if id == in.selID {
				return i
			}
		}
	}
	return clamp(in.selIdx, 0, len(ids)-1)
}

// selectablePart is the panel's per-worker table: sorted, with the
// cursor kept on screen, reporting its rows and sortable columns.
func selectablePart(c *drawCtx, t *table, prio int) part {
	if t.ids == nil {
		t.ids = []string{}
	}
	t.sortRows(c.nav.sortKey, c.nav.desc)
	if c.print {
		t.ids = nil // no cursor gutter on paper
		return tablePart(c, t, prio)
	}
	t.fitTo(c.w)
	sel := c.selectRow(t.ids)
	t.sel = -1
	if c.nav.focused {
		t.sel = sel
	}
	c.out = navOut{ids: t.ids, sel: sel, sortable: t.sortable(c.w), has: true}
	p := tablePart(c, t, prio)
	draw := p.draw
	p.draw = func(h int) []string {
		room := max(0, h-t.headerLines()-len(t.foot))
		if sel >= 0 && room > 0 {
			// Keep the cursor on screen: scroll just enough.
			if sel < c.offset {
				c.offset = sel
			} else if sel >= c.offset+room {
				c.offset = sel - room + 1
			}
		}
		lines := draw(h)
		c.offset = c.above
		return lines
	}
	return p
}
