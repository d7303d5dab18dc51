// Package sanitize is pdtop's single terminal-safety choke point. Every
// string that comes from the network (label names and values, metric names,
// HELP text, HTTP status text, HTML titles, error messages, URLs) passes
// through Text before it is stored, and through Truncate before it is laid
// out, so nothing a target sends can move the cursor, change the window
// title, write the clipboard, reorder text or hide characters.
//
// The policy follows robustness.md §6.7: invalid UTF-8 becomes U+FFFD;
// C0 controls (including TAB, CR and LF), DEL and C1 controls become visible
// escapes such as `\x1b`, `\r`, `\n`, `\x9b`; bidi controls, zero-width and
// other invisible format characters become visible `\u202e`-style escapes.
// Nothing is deleted silently: an operator must be able to see that a value
// carried something odd.
package sanitize

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

const hexDigits = "0123456789abcdef"

// Text returns s with everything that could act on a terminal, or hide from
// the reader, replaced by a visible escape:
//
//   - invalid UTF-8 bytes → U+FFFD (one per bad byte);
//   - TAB, LF, CR → `\t`, `\n`, `\r`; other C0 controls, DEL and the C1
//     controls U+0080–U+009F → `\xHH` (e.g. ESC → `\x1b`, 8-bit CSI → `\x9b`);
//   - bidi embeddings/overrides/isolates (U+202A–U+202E, U+2066–U+2069),
//     zero-width characters (U+200B–U+200F, U+2060, U+FEFF), every other
//     Unicode format character (category Cf, e.g. U+061C, U+00AD, tag
//     characters) and the line/paragraph separators U+2028/U+2029 →
//     `\uHHHH` (or `\UHHHHHHHH` above U+FFFF).
//
// Backslashes are kept as they are, so Text is idempotent. When s is all
// printable ASCII it is returned unchanged without allocating. Text never
// fails.
func Text(s string) string {
	i := 0
	for i < len(s) && s[i] >= 0x20 && s[i] < 0x7f {
		i++
	}
	if i == len(s) {
		return s
	}
	// Slower path: printable non-ASCII text is common (model names, paths),
	// so check whether anything actually needs escaping before allocating.
	if clean(s[i:]) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c < 0x7f {
				b.WriteByte(c)
			} else {
				writeASCIIEscape(&b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteRune(utf8.RuneError)
		case needsEscape(r):
			writeRuneEscape(&b, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// clean reports whether s needs no change at all.
func clean(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || needsEscape(r) {
			return false
		}
		i += size
	}
	return true
}

// needsEscape reports whether the non-ASCII rune r must be shown as an
// escape: C1 controls, invisible format characters and line separators.
func needsEscape(r rune) bool {
	switch {
	case r >= 0x80 && r <= 0x9f: // C1 controls (8-bit CSI, OSC, ...)
		return true
	case r >= 0x200b && r <= 0x200f, // zero-width space/joiners, LRM, RLM
		r >= 0x202a && r <= 0x202e, // bidi embeddings and overrides
		r >= 0x2060 && r <= 0x206f, // word joiner, invisible operators, bidi isolates
		r == 0x2028, r == 0x2029,   // line and paragraph separators
		r == 0xfeff: // zero-width no-break space / BOM
		return true
	}
	return unicode.Is(unicode.Cf, r)
}

func writeASCIIEscape(b *strings.Builder, c byte) {
	switch c {
	case '\t':
		b.WriteString(`\t`)
	case '\n':
		b.WriteString(`\n`)
	case '\r':
		b.WriteString(`\r`)
	default:
		b.WriteString(`\x`)
		b.WriteByte(hexDigits[c>>4])
		b.WriteByte(hexDigits[c&0xf])
	}
}

func writeRuneEscape(b *strings.Builder, r rune) {
	switch {
	case r <= 0x9f: // C1 controls, shown like the byte escapes above
		b.WriteString(`\x`)
		b.WriteByte(hexDigits[(r>>4)&0xf])
		b.WriteByte(hexDigits[r&0xf])
	case r <= 0xffff:
		b.WriteString(`\u`)
		for shift := 12; shift >= 0; shift -= 4 {
			b.WriteByte(hexDigits[(r>>shift)&0xf])
		}
	default:
		b.WriteString(`\U`)
		for shift := 28; shift >= 0; shift -= 4 {
			b.WriteByte(hexDigits[(r>>shift)&0xf])
		}
	}
}

// Ellipsis is the tail Truncate appends when it cuts a string (one cell).
const Ellipsis = "…"

// Truncate returns Text(s) cut to at most cells terminal cells, ending in
// Ellipsis when anything was cut. Width is measured per grapheme cluster
// the way lipgloss measures it (East Asian wide characters and emoji take
// two cells), and a cluster is never split, so the result is always valid
// UTF-8 and never wider than cells. cells ≤ 0 yields "". Because it
// sanitises first, Truncate is safe on untrusted input, but it must not be
// used on strings that carry intended styling (their escape sequences would
// be shown, not executed).
func Truncate(s string, cells int) string {
	if cells <= 0 {
		return ""
	}
	s = Text(s)
	// Fast path: printable ASCII is one cell per byte.
	if len(s) <= cells && isPrintableASCII(s) {
		return s
	}
	return ansi.Truncate(s, cells, Ellipsis)
}

func isPrintableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] >= 0x7f {
			return false
		}
	}
	return true
}
