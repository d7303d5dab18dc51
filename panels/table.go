package panels

import (
	"sort"
	"strings"

	"github.com/pdtop/pdtop/themes"
)

// column describes one table column. Columns are dropped from the highest
// prio down when the table does not fit; prio 0 columns always stay (the
// name column shrinks instead).
type column struct {
	name string // header, e.g. "waiting"
	unit string // unit line under the header, e.g. "req"
	left bool   // left-aligned (names); numbers are right-aligned
	prio int
	max  int  // cap on the width (0 = as wide as the content)
	flex bool // takes whatever width is left (cut), once other columns fit
	// nosort leaves the column out of the s key's cycle (trends).
	nosort bool
	// arrow is the sort mark after the name ("▼" / "▲"), set by sortRows.
	arrow string
}

// header is the column's name with its sort mark.
func (c *column) header() string {
	if c.arrow == "" {
		return c.name
	}
	return c.name + c.arrow
}

// table is a header, scrollable rows and pinned footer rows (pool totals).
type table struct {
	cols []column
	rows [][]cell
	foot [][]cell
	w    int // width the table is laid out for (set by fitTo)

	// ids, when set, makes the table selectable: the target ID of each
	// row. Such a table has a one-cell gutter that shows the cursor.
	ids []string
	// sel is the selected row (-1: none shown).
	sel int
	// empty is shown in place of rows when there are none (a filter
	// matched no worker).
	empty string

	// layout cache for w
	laid          bool
	idx, widths   []int
	gap, laidForW int
}

// fitTo sets the width the table will be drawn at.
func (t *table) fitTo(w int) *table {
	t.w = w
	return t
}

// gutter is the width of the cursor column: 1 for selectable tables.
func (t *table) gutter() int {
	if t.ids != nil {
		return 1
	}
	return 0
}

// columns returns the layout for width w, computed once per width.
func (t *table) columns(w int) ([]int, []int, int) {
	w -= t.gutter()
	if !t.laid || t.laidForW != w {
		t.idx, t.widths, t.gap = t.layout(w)
		t.laid, t.laidForW = true, w
	}
	return t.idx, t.widths, t.gap
}

// headerLines is how many lines the header takes: the name line, and the
// unit line when a column shown at the table's width has a unit.
func (t *table) headerLines() int {
	idx, _, _ := t.columns(t.w)
	for _, i := range idx {
		if t.cols[i].unit != "" {
			return 2
		}
	}
	return 1
}

// minHeight is the smallest useful height: header, one row and the footer.
func (t *table) minHeight() int {
	n := t.headerLines() + len(t.foot)
	if len(t.rows) > 0 || t.empty != "" {
		n++
	}
	return n
}

// fullHeight is the height that shows every row.
func (t *table) fullHeight() int {
	n := t.headerLines() + len(t.rows) + len(t.foot)
	if len(t.rows) == 0 && t.empty != "" {
		n++
	}
	return n
}

// layout chooses which columns fit in w cells and their widths; it
// returns the column indexes in display order, their widths and the gap.
func (t *table) layout(w int) (idx []int, widths []int, gap int) {
	n := len(t.cols)
	natural := make([]int, n)
	for i, c := range t.cols {
		cw := 0
		for _, rs := range [][][]cell{t.rows, t.foot} {
			for _, r := range rs {
				if i < len(r) {
					cw = max(cw, width(r[i].text))
				}
			}
		}
		if cw > 0 || len(t.rows) == 0 {
			// A column with nothing in it is left out, header and all.
			cw = max(cw, width(c.header()), width(c.unit))
		}
		if c.max > 0 && cw > c.max {
			cw = c.max
		}
		natural[i] = cw
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return t.cols[order[a]].prio < t.cols[order[b]].prio })
	// By priority with a one-cell gap; empty columns take no room. Once
	// an optional column does not fit, no less important one is added, so
	// a narrower table always shows a subset of a wider one's columns.
	keep := make([]bool, n)
	used, count := 0, 0
	full := false
	for _, i := range order {
		if natural[i] == 0 || t.cols[i].flex {
			continue
		}
		add := natural[i]
		if count > 0 {
			add++
		}
		if t.cols[i].prio > 0 && (full || used+add > w) {
			full = true
			continue
		}
		keep[i] = true
		used += add
		count++
	}
	gap = 1
	if count > 1 && used+(count-1) <= w {
		gap = 2
	}
	// A flex column (a message) takes the room left, if that is useful.
	for i, c := range t.cols {
		if !c.flex || natural[i] == 0 {
			continue
		}
		sum := used - max(count-1, 0) // widths without the gaps
		room := w - sum - count*gap
		if room >= min(natural[i], 12) {
			keep[i] = true
			natural[i] = min(natural[i], room)
			used += natural[i] + 1
			count++
		}
	}
	for i := range t.cols {
		if keep[i] {
			idx = append(idx, i)
			widths = append(widths, natural[i])
		}
	}
	// Too wide even with only prio-0 columns: shrink left (name) columns.
	total := (len(idx) - 1) * gap
	for _, cw := range widths {
		total += cw
	}
	for k := range idx {
		if total <= w {
			break
		}
		if t.cols[idx[k]].left {
			cut := min(total-w, widths[k]-min(widths[k], 8))
			if cut > 0 {
				widths[k] -= cut
				total -= cut
			}
		}
	}
	return idx, widths, gap
}

// render draws the table in exactly w cells wide and at most h lines,
// showing rows from offset on. It returns the lines and how many rows are
// hidden above and below, and the largest useful offset.
func (t *table) render(st *themes.Styles, w, h, offset int) (lines []string, above, below, maxOff int) {
	if w <= 0 || h <= 0 || len(t.cols) == 0 {
		return nil, 0, 0, 0
	}
	idx, widths, gap := t.columns(w)
	sep := spaces(gap)
	p := painterFor(st)
	line := func(cells []cell, head bool, unit bool, gutter string) string {
		var b strings.Builder
		b.WriteString(gutter)
		for k, i := range idx {
			if k > 0 {
				b.WriteString(sep)
			}
			c := t.cols[i]
			var s string
			tn := toneText
			raw := false
			switch {
			case head:
				s, tn = c.header(), toneHeader
			case unit:
				s, tn = c.unit, toneUnit
			case i < len(cells):
				s, tn, raw = cells[i].text, cells[i].tone, cells[i].raw
			}
			var padded string
			if c.left {
				padded = fit(s, widths[k])
			} else {
				padded = fitLeft(s, widths[k])
			}
			if raw || strings.TrimSpace(padded) == "" {
				b.WriteString(padded)
			} else {
				b.WriteString(p.paint(tn, padded))
			}
		}
		return fit(b.String(), w)
	}
	hl := t.headerLines()
	if h < hl {
		hl = h
	}
	blank := spaces(t.gutter())
	lines = append(lines, line(nil, true, false, blank))
	if hl == 2 {
		lines = append(lines, line(nil, false, true, blank))
	}
	room := h - hl - len(t.foot)
	if room < 0 {
		room = 0
	}
	maxOff = max(0, len(t.rows)-room)
	offset = clamp(offset, 0, maxOff)
	end := min(len(t.rows), offset+room)
	for i, r := range t.rows[offset:end] {
		g := blank
		if offset+i == t.sel && t.ids != nil {
			g = p.paint(toneSelected, markCursor)
			r = append([]cell(nil), r...)
			if len(r) > 0 && !r[0].raw {
				r[0].tone = toneSelected
			}
		}
		lines = append(lines, line(r, false, false, g))
	}
	if len(t.rows) == 0 && t.empty != "" && room > 0 {
		lines = append(lines, paint(st, toneMuted, fit(blank+t.empty, w)))
	}
	for _, r := range t.foot {
		if len(lines) >= h {
			break
		}
		lines = append(lines, line(r, false, false, blank))
	}
	return lines, offset, len(t.rows) - end, maxOff
}
