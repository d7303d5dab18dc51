package panels

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// width is the number of terminal cells s occupies (escape codes
// excluded). Lines made of ASCII, SGR colour codes and the one-cell
// symbols panels draw (box drawing, blocks, braille, arrows, marks) are
// counted directly; anything else goes to ansi.StringWidth, which is exact
// but costs a grapheme segmentation per call.
func width(s string) int {
	n := 0
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == 0x1b && i+1 < len(s) && s[i+1] == '[':
			j := i + 2
			for j < len(s) && (s[j] < 0x40 || s[j] > 0x7e) {
				j++
			}
			i = j + 1
		case c >= 0x20 && c < 0x7f:
			n++
			i++
		case c < 0x80:
			return ansi.StringWidth(s)
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			if !narrow(r) {
				return ansi.StringWidth(s)
			}
			n++
			i += size
		}
	}
	return n
}

// narrow reports whether r is one of the symbols panels draw that always
// take one cell.
func narrow(r rune) bool {
	switch {
	case r >= 0x2500 && r <= 0x259f: // box drawing, block elements
		return true
	case r >= 0x2800 && r <= 0x28ff: // braille
		return true
	case r >= 0x2190 && r <= 0x21ff: // arrows: ↑ ↓ ↻
		return true
	}
	switch r {
	case '—', '…', '·', '≠', '−', '÷', 'µ', '▶', '▸', '▼', '▲', '≥', '×', '│':
		return true
	}
	return false
}

// fit truncates s to at most w cells (never cutting a wide character in
// half: a character that would not fit is dropped) and pads it with spaces
// to exactly w cells. Escape codes are kept intact.
func fit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	sw := width(s)
	if sw > w {
		s = ansi.Truncate(s, w, "…")
		sw = width(s)
	}
	if sw < w {
		s += spaces(w - sw)
	}
	return s
}

// fitLeft right-aligns s in exactly w cells (truncating on the right).
func fitLeft(s string, w int) string {
	if w <= 0 {
		return ""
	}
	sw := width(s)
	if sw >= w {
		return fit(s, w)
	}
	return spaces(w-sw) + s
}

// center places s in the middle of exactly w cells.
func center(s string, w int) string {
	sw := width(s)
	if sw >= w {
		return fit(s, w)
	}
	l := (w - sw) / 2
	return fit(spaces(l)+s, w)
}

const blanks = "                                                                                                                                "

// spaces returns n spaces (none for n ≤ 0).
func spaces(n int) string {
	if n <= 0 {
		return ""
	}
	if n <= len(blanks) {
		return blanks[:n]
	}
	return strings.Repeat(" ", n)
}

// block returns exactly h lines of exactly w cells: lines are fitted, missing
// lines are blank, extra lines are dropped.
func block(lines []string, w, h int) []string {
	if h <= 0 {
		return nil
	}
	out := make([]string, h)
	for i := range out {
		if i < len(lines) {
			out[i] = fit(lines[i], w)
		} else {
			out[i] = spaces(w)
		}
	}
	return out
}

// clean makes a label from the outside world safe to draw: control
// characters (including ESC) become "?", and it is cut to max runes.
func clean(s string, max int) string {
	ok := true
	for _, r := range s {
		if r < 0x20 || (r >= 0x7f && r < 0xa0) || r == unicode.ReplacementChar {
			ok = false
			break
		}
	}
	if !ok {
		s = strings.Map(func(r rune) rune {
			if r < 0x20 || (r >= 0x7f && r < 0xa0) || r == unicode.ReplacementChar {
				return '?'
			}
			return r
		}, s)
	}
	if max > 0 && len(s) > max {
		rs := []rune(s)
		if len(rs) > max {
			s = string(rs[:max-1]) + "…"
		}
	}
	return s
}

// clamp bounds v to [lo, hi] (lo wins when hi < lo).
func clamp(v, lo, hi int) int {
	if v > hi {
		v = hi
	}
	if v < lo {
		v = lo
	}
	return v
}

// joinLine concatenates parts separated by sep, stopping before the part
// that would make the line wider than w; it reports how many parts it
// consumed (empty parts are skipped but count as consumed).
func joinLine(parts []string, sep string, w int) (string, int) {
	var b strings.Builder
	used, n := 0, 0
	sw := width(sep)
	for i, p := range parts {
		if p == "" {
			continue
		}
		add := width(p)
		if n > 0 {
			add += sw
		}
		if used+add > w {
			return b.String(), i
		}
		if n > 0 {
			b.WriteString(sep)
		}
		b.WriteString(p)
		used += add
		n++
	}
	return b.String(), len(parts)
}
