package sanitize

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

func TestTextEscapes(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain ASCII", "meta-llama/Llama-3.1-8B-Instruct", "meta-llama/Llama-3.1-8B-Instruct"},
		{"empty", "", ""},
		{"printable non-ASCII kept", "模型/Qwen3 – ü ✓", "模型/Qwen3 – ü ✓"},
		// robustness.md §6.7 / §7 escape-injection cases.
		{"OSC 0 window title", "\x1b]0;pwned\x07worker", `\x1b]0;pwned\x07worker`},
		{"OSC 52 clipboard", "\x1b]52;c;ZXZpbA==\x1b\\", `\x1b]52;c;ZXZpbA==\x1b\`},
		{"CSI 2J clear screen", "m\x1b[2J\x1b[H", `m\x1b[2J\x1b[H`},
		{"8-bit C1 CSI", "m\u009b2J", `m\x9b2J`},
		{"8-bit C1 OSC", "\u009d0;t\u009c", `\x9d0;t\x9c`},
		{"CR then fake OK", "worker-7\rFAKE OK", `worker-7\rFAKE OK`},
		{"LF injects a line", "a\nsglang:num_running_reqs 0", `a\nsglang:num_running_reqs 0`},
		{"TAB", "a\tb", `a\tb`},
		{"NUL BEL BS DEL", "\x00\x07\x08\x7f", `\x00\x07\x08\x7f`},
		{"bidi override", "report\u202Etxt.exe", `report\u202etxt.exe`},
		{"bidi embeddings and isolates", "\u202A\u202B\u202C\u202D\u2066\u2067\u2068\u2069", `\u202a\u202b\u202c\u202d\u2066\u2067\u2068\u2069`},
		{"zero-width chars", "a\u200Bb\u200Cc\u200Dd\u200Ee\u200Ff\u2060g\uFEFF", `a\u200bb\u200cc\u200dd\u200ee\u200ff\u2060g\ufeff`},
		{"arabic letter mark and soft hyphen", "x\u061Cy\u00ADz", `x\u061cy\u00adz`},
		{"line separators", "a\u2028b\u2029c", `a\u2028b\u2029c`},
		{"tag characters (ASCII smuggling)", "ok\U000E0041", `ok\U000e0041`},
		{"invalid UTF-8", "a\xffb\xc3", "a\uFFFDb\uFFFD"},
		{"lone 8-bit CSI byte is invalid UTF-8", "\x9b2J", "\uFFFD2J"},
		{"backslash kept", `C:\models\x`, `C:\models\x`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Text(tt.in)
			if got != tt.want {
				t.Fatalf("Text(%q) = %q, want %q", tt.in, got, tt.want)
			}
			assertSafe(t, got)
			if again := Text(got); again != got {
				t.Fatalf("Text is not idempotent: %q → %q", got, again)
			}
		})
	}
}

// Every control character becomes a visible escape: none is deleted.
func TestTextNeverDeletesControls(t *testing.T) {
	for c := 0; c < 0x20; c++ {
		in := "a" + string(rune(c)) + "b"
		got := Text(in)
		if len(got) <= len(in) || !strings.Contains(got, `\`) {
			t.Errorf("control %#x: Text(%q) = %q, want a visible escape", c, in, got)
		}
	}
	for r := rune(0x7f); r <= 0x9f; r++ {
		got := Text(string(r))
		if !strings.HasPrefix(got, `\x`) {
			t.Errorf("control %#x: Text = %q, want a \\x escape", r, got)
		}
	}
}

func TestTextFastPathDoesNotAllocate(t *testing.T) {
	for _, s := range []string{
		"sglang:num_running_reqs",
		"/home/moyun.zty/models/deepseek-ai__DeepSeek-R1",
		"模型/Qwen3 ü",
	} {
		allocs := testing.AllocsPerRun(100, func() { _ = Text(s) })
		if allocs != 0 {
			t.Errorf("Text(%q) allocated %.0f times, want 0", s, allocs)
		}
	}
}

func TestTruncate(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		cells int
		want  string
	}{
		{"fits", "decode-0", 8, "decode-0"},
		{"cut ASCII", "prefill-worker-12", 8, "prefill…"},
		{"zero cells", "abc", 0, ""},
		{"negative cells", "abc", -3, ""},
		{"empty", "", 5, ""},
		{"one cell", "abcdef", 1, "…"},
		{"wide runes never split", "模型模型", 5, "模型…"},
		{"wide runes fit exactly", "模型", 4, "模型"},
		{"wide rune cut to ellipsis", "模型模", 2, "…"},
		{"sanitises before measuring", "\x1b[2Jworker", 6, `\x1b[…`},
		{"combining mark stays with its base", "e\u0301e\u0301e\u0301e\u0301", 3, "e\u0301e\u0301…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Truncate(tt.in, tt.cells)
			if got != tt.want {
				t.Fatalf("Truncate(%q, %d) = %q, want %q", tt.in, tt.cells, got, tt.want)
			}
			if w := ansi.StringWidth(got); w > max(tt.cells, 0) {
				t.Fatalf("width %d > %d", w, tt.cells)
			}
			assertSafe(t, got)
		})
	}
}

// assertSafe fails when s is not valid UTF-8 or carries a control, bidi or
// zero-width character.
func assertSafe(t testing.TB, s string) {
	t.Helper()
	if !utf8.ValidString(s) {
		t.Fatalf("output %q is not valid UTF-8", s)
	}
	for _, r := range s {
		if r < 0x20 || (r >= 0x7f && r <= 0x9f) || needsEscape(r) {
			t.Fatalf("output %q contains %U", s, r)
		}
	}
}

func FuzzText(f *testing.F) {
	for _, s := range []string{
		"", "plain", "\x1b]0;title\x07", "\x1b[2J", "\u009b2J", "ok\rFAKE",
		"a\u202eb", "\xff\xfe", "模型", "e\u0301", "\U0001F600\u200d\U0001F600",
	} {
		f.Add(s, 10)
	}
	f.Fuzz(func(t *testing.T, s string, cells int) {
		out := Text(s)
		assertSafe(t, out)
		if Text(out) != out {
			t.Fatalf("not idempotent on %q", s)
		}
		cells %= 200
		tr := Truncate(s, cells)
		assertSafe(t, tr)
		if w := ansi.StringWidth(tr); w > max(cells, 0) {
			t.Fatalf("Truncate(%q, %d) has width %d", s, cells, w)
		}
		if cells > 0 && ansi.StringWidth(out) <= cells && tr != out {
			t.Fatalf("Truncate cut a string that fits: %q → %q", out, tr)
		}
	})
}
