package panels

import "sort"

// part is one vertical section of a panel body (a table, a chart, a line
// of gateway figures). stack gives each part at least min lines, in prio
// order (0 first), skips parts that do not fit, then grows parts towards
// want in the same order. Parts are drawn in slice order.
type part struct {
	min, want int
	least     int // when min does not fit, take what is left if ≥ least
	prio      int
	gap       bool // a blank line before it, when there is room to spare
	draw      func(h int) []string
	alt       *part // drawn instead when this part does not fit at all
}

// stack lays parts out in exactly h lines (each at most w cells; the
// frame pads them).
func stack(w, h int, parts []part) []string {
	parts = append([]part(nil), parts...)
	alloc := make([]int, len(parts))
	order := make([]int, len(parts))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return parts[order[a]].prio < parts[order[b]].prio })
	left := h
	for _, i := range order {
		p := parts[i]
		for {
			switch {
			case p.min > 0 && p.min <= left:
				alloc[i] = p.min
			case p.least > 0 && p.least <= left:
				alloc[i] = left
			}
			if alloc[i] > 0 || p.alt == nil {
				break
			}
			p = *p.alt
			p.gap = parts[i].gap
			parts[i] = p
		}
		left -= alloc[i]
	}
	for _, i := range order {
		if alloc[i] == 0 {
			continue
		}
		extra := min(parts[i].want-alloc[i], left)
		if extra > 0 {
			alloc[i] += extra
			left -= extra
		}
	}
	gaps := make([]bool, len(parts))
	seen := false
	for i, p := range parts {
		if alloc[i] == 0 {
			continue
		}
		if seen && p.gap && left > 0 {
			gaps[i] = true
			left--
		}
		seen = true
	}
	out := make([]string, 0, h)
	for i, p := range parts {
		if alloc[i] == 0 {
			continue
		}
		if gaps[i] {
			out = append(out, "")
		}
		// Exactly alloc[i] lines; widths are fitted once, by the frame.
		lines := p.draw(alloc[i])
		for k := 0; k < alloc[i]; k++ {
			if k < len(lines) {
				out = append(out, lines[k])
			} else {
				out = append(out, "")
			}
		}
	}
	for len(out) < h {
		out = append(out, "")
	}
	return out[:h]
}

// tablePart is the panel's scrolling table: its rows scroll with the
// panel's keys and the hidden counts go to the bottom border.
func tablePart(c *drawCtx, t *table, prio int) part {
	t.fitTo(c.w)
	rows := min(len(t.rows), 3)
	if len(t.rows) == 0 && t.empty != "" {
		rows = 1
	}
	return part{
		min:   t.headerLines() + len(t.foot) + rows,
		least: t.minHeight(),
		want:  t.fullHeight(),
		prio:  prio,
		draw: func(h int) []string {
			lines, above, below, maxOff := t.render(c.st, c.w, h, c.offset)
			c.above, c.below, c.maxOff = above, below, maxOff
			c.page = max(1, h-t.headerLines()-len(t.foot))
			return lines
		},
	}
}

// fixedTablePart is a table that does not scroll (gateway replicas): it
// shows as many rows as fit.
func fixedTablePart(c *drawCtx, t *table, prio int) part {
	t.fitTo(c.w)
	return part{
		min:   t.headerLines() + len(t.foot) + min(len(t.rows), 3),
		least: t.minHeight(),
		want:  t.fullHeight(),
		prio:  prio,
		draw: func(h int) []string {
			lines, _, _, _ := t.render(c.st, c.w, h, 0)
			return lines
		},
	}
}

// linesPart is a fixed list of lines that may be cut short.
func linesPart(lines []string, min, prio int, gap bool) part {
	if len(lines) == 0 {
		return part{}
	}
	return part{
		min: min, want: len(lines), prio: prio, gap: gap,
		draw: func(int) []string { return lines },
	}
}
