package panels

import (
	"regexp"
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/themes"
)

func render(id ID, s *sources.Snapshot, w, h int) string {
	p := New(id, themes.Default())
	p.SetSize(w, h)
	p.SetSnapshot(s)
	return p.View()
}

// rowOf returns the first line of v containing name.
func rowOf(v, name string) string {
	for _, l := range strings.Split(v, "\n") {
		if strings.Contains(l, name) {
			return l
		}
	}
	return ""
}

// TestAbsentIsNeverZero gives a worker no readings at all: every value
// cell must be "—", never a 0.
func TestAbsentIsNeverZero(t *testing.T) {
	s := sampleSnapshot()
	w := &s.Workers[0]
	w.Name = "bare-worker"
	w.Readings = sources.Readings{}
	w.Dists = nil
	w.Hit = sources.HitRatio{}
	w.Router = nil
	for _, id := range []ID{PrefillQueue, Cache, KVTransfer} {
		row := rowOf(render(id, s, 120, 40), "bare-worker")
		if row == "" {
			t.Fatalf("%v: no row for the worker", id)
		}
		if regexp.MustCompile(`\b0\b`).MatchString(strings.TrimPrefix(row, "│bare-worker")) {
			t.Errorf("%v: absent values drawn as 0: %q", id, row)
		}
		if !strings.Contains(row, markAbsent) {
			t.Errorf("%v: no %s in %q", id, markAbsent, row)
		}
		if !strings.Contains(render(id, s, 120, 40), "not exposed by this version") {
			t.Errorf("%v: legend for %s missing", id, markAbsent)
		}
	}
}

func TestStateWordsNotColour(t *testing.T) {
	s := sampleSnapshot()
	checks := []struct {
		id   ID
		want []string
	}{
		{PrefillQueue, []string{"prefill-1 ↻", "2/2 up"}},
		{Cache, []string{"req >30% match", "not exposed (smg)", "1.1M of 2.6M tok", "CB half", "+22pp≠"}},
		{KVTransfer, []string{"~31ms", "12ms/48ms", "STALE 10s"}},
		{DecodeAdmission, []string{"STALE 10s", "93%!", "4.5%"}},
		{TokenCadence, []string{"ITL p50 36ms p99 120ms", "last 5m", "now"}},
		{RestartsRetries, []string{"timeout", "10s ago", "new scheduler pid 4242", "3m13s ago"}},
	}
	for _, c := range checks {
		v := render(c.id, s, 120, 40)
		for _, w := range c.want {
			if !strings.Contains(v, w) {
				t.Errorf("%v at 120x40: missing %q", c.id, w)
			}
		}
	}
	if v := render(DecodeAdmission, s, 40, 10); !strings.Contains(v, "STALE") {
		t.Errorf("stale word must survive at 40x10:\n%s", v)
	}
}

// TestNoEscapesWithoutColour: with the ASCII profile (NO_COLOR) nothing
// but text reaches the terminal, even from hostile label values.
func TestNoEscapesWithoutColour(t *testing.T) {
	for _, p := range All(themes.Default()) {
		p.SetSize(100, 30)
		p.SetSnapshot(weirdSnapshot())
		v := p.View()
		for _, r := range v {
			if r < 0x20 && r != '\n' || r >= 0x7f && r < 0xa0 {
				t.Fatalf("%s: control character %U in output", p.Title(), r)
			}
		}
	}
}

// TestMonoUsesNoColour renders under a 256-colour profile with the mono
// theme: only bold/faint/underline/reverse may appear.
func TestMonoUsesNoColour(t *testing.T) {
	lipgloss.SetColorProfile(termenv.ANSI256)
	defer lipgloss.SetColorProfile(termenv.Ascii)
	st := themes.NewStyles(themes.Mono())
	sgr := regexp.MustCompile(`\x1b\[([0-9;]*)m`)
	for _, p := range All(st) {
		p.SetSize(120, 40)
		p.SetFocused(true)
		p.SetSnapshot(sampleSnapshot())
		for _, m := range sgr.FindAllStringSubmatch(p.View(), -1) {
			for _, code := range strings.Split(m[1], ";") {
				switch code {
				case "", "0", "1", "2", "4", "7", "22", "24", "27":
				default:
					t.Fatalf("%s: colour code %q in mono output", p.Title(), m[0])
				}
			}
		}
	}
}

// TestFocusVisibleWithoutColour: the focused frame differs in plain text.
func TestFocusVisibleWithoutColour(t *testing.T) {
	p := New(Cache, themes.Default())
	p.SetSize(60, 12)
	p.SetSnapshot(sampleSnapshot())
	a := p.View()
	p.SetFocused(true)
	b := p.View()
	if a == b || !strings.Contains(b, "▶") || !strings.Contains(b, "┏") {
		t.Fatalf("focused frame must differ in shape and marker:\n%s\n%s", a, b)
	}
}
