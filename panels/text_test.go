package panels

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
)

// TestWidthMatchesANSI checks the fast width against ansi.StringWidth on
// every symbol panels draw, with and without colour codes, and on text
// that must take the slow path (wide and combining characters).
func TestWidthMatchesANSI(t *testing.T) {
	var syms []string
	for r := rune(0x2500); r <= 0x259f; r++ {
		syms = append(syms, string(r))
	}
	for r := rune(0x2800); r <= 0x28ff; r += 7 {
		syms = append(syms, string(r))
	}
	for r := rune(0x2190); r <= 0x21ff; r++ {
		syms = append(syms, string(r))
	}
	syms = append(syms, "—", "…", "·", "≠", "−", "÷", "µ", "▶", "≥", "×", "│",
		"plain ascii 123", "工作节点", "e\u0301", "🙂", "a\tb", "\x1b]0;t\x07x")
	for _, s := range syms {
		for _, v := range []string{s, "\x1b[1;31m" + s + "\x1b[0m", "ab" + s + "\x1b[90mcd\x1b[0m"} {
			if got, want := width(v), ansi.StringWidth(v); got != want {
				t.Errorf("width(%q) = %d, ansi.StringWidth = %d", v, got, want)
			}
		}
	}
}

func TestFitNeverCutsWideCharacters(t *testing.T) {
	s := "ab工作节点cd"
	for w := 0; w <= 14; w++ {
		got := fit(s, w)
		if width(got) != w {
			t.Fatalf("fit(%q, %d) = %q, width %d", s, w, got, width(got))
		}
		if strings.ContainsRune(got, '\uFFFD') {
			t.Fatalf("fit cut a character: %q", got)
		}
	}
}

func TestCleanStripsControls(t *testing.T) {
	got := clean("a\x1b[31mb\x07c\x9bd\ne", 0)
	if strings.ContainsAny(got, "\x1b\x07\n\u009b") {
		t.Fatalf("clean left control characters: %q", got)
	}
	if got := clean(strings.Repeat("x", 50), 10); width(got) != 10 {
		t.Fatalf("clean did not cut to 10: %q", got)
	}
}

func TestFormats(t *testing.T) {
	cases := []struct{ got, want string }{
		{num(0), "0"}, {num(0.004), "<0.01"}, {num(0.05), "0.05"}, {num(2.5), "2.5"},
		{num(3), "3"}, {num(42.4), "42"}, {num(1234), "1.2k"}, {num(35000), "35k"},
		{num(1.2e6), "1.2M"}, {num(999.7), "1.0k"},
		{pct(0.41), "41%"}, {pct(0.045), "4.5%"}, {pct(0), "0%"}, {pct(0.0004), "<0.1%"},
		{pp(0.22), "+22pp"}, {pp(-0.05), "-5pp"},
		{secs(0.00042), "420µs"}, {secs(0.0085), "8.5ms"}, {secs(0.085), "85ms"},
		{secs(1.4), "1.40s"}, {secs(12.5), "12.5s"}, {secs(125), "2m05s"},
		{inUnit(48, "ms"), "48ms"}, {span(5 * 60e9), "5m"}, {span(90e9), "90s"},
	}
	for i, c := range cases {
		if c.got != c.want {
			t.Errorf("case %d: got %q, want %q", i, c.got, c.want)
		}
	}
}

// TestSinceIsCoarse: ages on a live screen change at most every 5 s after
// the first 10 s, and every minute after the first minute.
func TestSinceIsCoarse(t *testing.T) {
	for d, want := range map[time.Duration]string{
		3 * time.Second: "3s", 12 * time.Second: "10s", 59 * time.Second: "55s",
		61 * time.Second: "1m", 193 * time.Second: "3m", 2*time.Hour + 10*time.Minute: "2h10m",
	} {
		if got := since(d); got != want {
			t.Errorf("since(%v) = %q, want %q", d, got, want)
		}
	}
}
