package panels

import (
	"strings"

	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/themes"
)

// printMaxHeight bounds a printed panel (a fleet of hundreds of workers
// still prints every row up to this).
const printMaxHeight = 5000

// Print draws panel id for a text snapshot (pdtop snapshot): in a frame
// exactly w cells wide and as tall as its content, every row shown, no
// charts or trend sparklines (a snapshot covers seconds; they would be
// empty). With the ASCII colour profile the result is plain text.
func Print(id ID, s *sources.Snapshot, st *themes.Styles, w int) string {
	if st == nil {
		st = themes.Default()
	}
	if id < 0 || id >= NumPanels || w < 2 {
		return ""
	}
	sp := specs[id]
	if s == nil {
		return strings.Join(frame(st, sp.title, false, w, 3, []string{"no data"}, ""), "\n")
	}
	c := &drawCtx{s: s, st: st, w: w - 2, h: printMaxHeight, print: true, nav: navIn{selIdx: -1}}
	body := sp.draw(c)
	for len(body) > 0 && strings.TrimSpace(stripANSI(body[len(body)-1])) == "" {
		body = body[:len(body)-1]
	}
	return strings.Join(frame(st, sp.title, false, w, len(body)+2, body, ""), "\n")
}

// stripANSI drops SGR sequences, for testing whether a line is blank.
func stripANSI(s string) string {
	if !strings.Contains(s, "\x1b") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '[' {
			j := i + 2
			for j < len(s) && (s[j] < 0x40 || s[j] > 0x7e) {
				j++
			}
			i = j
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
