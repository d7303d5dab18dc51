package ui

import (
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/themes"
)

// flowModel is a mono dashboard on the shared flow run at w×h.
func flowModel(t *testing.T, cfg Config, w, h int) *Model {
	t.Helper()
	b := flowBackend(t)
	if cfg.Backend == nil {
		cfg.Backend = b
	}
	cfg.Interval, cfg.Window, cfg.Styles = time.Hour, time.Minute, themes.NewStyles(themes.Mono())
	m := New(cfg)
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	m.Update(snapMsg{snap: b.Snapshot(time.Minute)})
	m.View()
	return m
}

// TestHelpScrollsWhenSmall: at 40x10 the help is taller than the screen;
// it says how much is hidden, ↓ and end reach its last line, every
// application key is in it somewhere, and no line is cut.
func TestHelpScrollsWhenSmall(t *testing.T) {
	m := flowModel(t, Config{}, 40, 10)
	m.Update(keyMsg("?"))
	v := m.View()
	checkSize(t, v, 40, 10)
	if !strings.Contains(v, "more") || !strings.Contains(v, "↑/↓ scroll") {
		t.Fatalf("a help taller than the screen must say so:\n%s", v)
	}
	var seen strings.Builder
	seen.WriteString(v)
	for i := 0; i < 60; i++ {
		m.Update(keyMsg("down"))
		seen.WriteString(m.View())
	}
	all := seen.String()
	for _, want := range []string{"next panel", "shorter window", "next theme", "capacity and all findings",
		"quit", "esc or ? closes this help"} {
		if !strings.Contains(all, want) {
			t.Errorf("scrolling through the help never shows %q", want)
		}
	}
	last := m.View()
	m.Update(keyMsg("end"))
	if m.View() != last {
		t.Errorf("end after scrolling to the bottom moved the help")
	}
	if !strings.Contains(last, "above") {
		t.Errorf("scrolled help should say what is above:\n%s", last)
	}
	m.Update(keyMsg("home"))
	if m.View() != v {
		t.Errorf("home should return to the top:\n%s", m.View())
	}
	for _, l := range strings.Split(all, "\n") {
		if strings.Contains(l, "…") && !strings.Contains(l, "rebuilding") {
			t.Errorf("help line cut: %q", l)
		}
	}
	m.Update(keyMsg("esc"))
	if strings.Contains(m.View(), "closes this help") {
		t.Errorf("esc should close the help")
	}
	// At 120x40 everything fits: no scrolling, no scroll keys.
	m = flowModel(t, Config{}, 120, 40)
	m.Update(keyMsg("?"))
	if v := m.View(); strings.Contains(v, "↑/↓ scroll") {
		t.Errorf("a help that fits offers no scrolling:\n%s", v)
	}
}

// TestHelpListsReverseSortAndNoEmptyHeading: S is listed wherever s is
// (it works unsorted too); a focused panel with no keys of its own gets
// no heading.
func TestHelpListsReverseSortAndNoEmptyHeading(t *testing.T) {
	m := flowModel(t, Config{}, 120, 40)
	m.Update(keyMsg("?"))
	v := m.View()
	if !strings.Contains(v, "sort by next column") || !strings.Contains(v, "reverse sort") {
		t.Errorf("help on a sortable panel should list s and S:\n%s", v)
	}
	m.Update(keyMsg("esc"))
	before := m.View()
	m.Update(keyMsg("S"))
	if after := m.View(); after == before || !strings.ContainsAny(after, "▼▲") {
		t.Errorf("S on an unsorted list should sort it:\n%s", after)
	}
	m = flowModel(t, Config{}, 120, 40)
	m.Update(keyMsg("6"))
	m.View()
	_, own, title, _ := m.viewKeys()
	m.Update(keyMsg("?"))
	v = m.View()
	if own != nil && !anyEnabled(own) && strings.Contains(v, title) {
		t.Errorf("empty %q heading in help:\n%s", title, v)
	}
	if own != nil && anyEnabled(own) && !strings.Contains(v, title) {
		t.Errorf("%q has keys but no heading:\n%s", title, v)
	}
}

// TestHelpShowsScenario: the demo's help section says what the scenario
// playing should show.
func TestHelpShowsScenario(t *testing.T) {
	m := flowModel(t, Config{Help: func() (string, string) {
		return "Demo: prefill-restart (1:30 in)", "watch Restarts: prefill-0 restarts"
	}}, 120, 40)
	m.Update(keyMsg("?"))
	v := m.View()
	if !strings.Contains(v, "Demo: prefill-restart") || !strings.Contains(v, "watch Restarts") {
		t.Errorf("help lacks the scenario section:\n%s", v)
	}
}

// TestTooSmallFits: the too-small message is whole at any width.
func TestTooSmallFits(t *testing.T) {
	for _, w := range []int{1, 5, 12, 20, 30, 39} {
		msg := tooSmall(w)
		if ansi.StringWidth(msg) > w && w >= 5 {
			t.Errorf("%d: %q is %d cells", w, msg, ansi.StringWidth(msg))
		}
		if w >= 30 && !strings.HasSuffix(msg, ")") && !strings.HasPrefix(msg, "too small") {
			t.Errorf("%d: %q", w, msg)
		}
	}
	m := flowModel(t, Config{}, 30, 8)
	if v := m.View(); !strings.Contains(v, "too small: need 40×10") {
		t.Errorf("30x8: %q", v)
	}
}

// TestTabBarReadable: at every width from 40 to 100 each tab shows at
// least its number, the focused one in brackets, and no "[1 ]".
func TestTabBarReadable(t *testing.T) {
	m := flowModel(t, Config{}, 60, 20)
	bar := strings.Split(m.View(), "\n")[1]
	if !strings.Contains(bar, "[1 Prefill]") || !strings.Contains(bar, "2 Cache") || !strings.Contains(bar, "6 Restarts") {
		t.Errorf("60x20 tab bar: %q", bar)
	}
	for w := 40; w <= 100; w++ {
		m.Update(tea.WindowSizeMsg{Width: w, Height: 20})
		bar := strings.TrimRight(strings.Split(m.View(), "\n")[1], " ")
		if strings.Contains(bar, " ]") || !strings.HasPrefix(bar, "[1") || ansi.StringWidth(bar) > w {
			t.Errorf("%d: tab bar %q", w, bar)
		}
		for _, n := range []string{"2", "3", "4", "5", "6"} {
			if !strings.Contains(bar, n) {
				t.Errorf("%d: tab %s missing: %q", w, n, bar)
			}
		}
	}
}

// TestRecordingShown: --record shows ● REC and the file in the summary.
func TestRecordingShown(t *testing.T) {
	m := flowModel(t, Config{Recording: "demo.pdrec"}, 120, 40)
	if first := strings.Split(m.View(), "\n")[0]; !strings.Contains(first, "● REC demo.pdrec") {
		t.Errorf("summary: %q", first)
	}
	m.Update(tea.WindowSizeMsg{Width: 40, Height: 10})
	if first := strings.Split(m.View(), "\n")[0]; !strings.Contains(first, "● REC") {
		t.Errorf("40 wide: %q", first)
	}
}

// fakePlayer is a recording backend at a fixed position, for the
// progress line.
type fakePlayer struct {
	*staticBackend
	pr sources.PlayProgress
}

func (p *fakePlayer) Progress() sources.PlayProgress { return p.pr }
func (p *fakePlayer) SetPaused(b bool)               { p.pr.Paused = b }
func (p *fakePlayer) Seek(time.Duration)             {}
func (p *fakePlayer) SetSpeed(s float64)             { p.pr.Speed = s }

// TestProgressLineFits: a damaged recording's progress line is whole at
// 120 columns (it was cut mid-parenthesis) and sheds parts, not
// characters, when narrower.
func TestProgressLineFits(t *testing.T) {
	b := flowBackend(t)
	start := b.now.Add(-5 * time.Minute)
	p := &fakePlayer{staticBackend: b, pr: sources.PlayProgress{File: "corrupt-recording.pdrec", Start: start,
		End: b.now, Pos: b.now.Add(-time.Minute), Speed: 1,
		Damage: "damaged at byte 409600 (record 1234 fails its checksum)"}}
	for _, w := range []int{200, 120, 100, 80, 60, 45} {
		m := flowModel(t, Config{Backend: p}, w, 30)
		line := m.progressLine()
		if got := ansi.StringWidth(line); got > w {
			t.Errorf("%d: progress line is %d cells: %q", w, got, line)
		}
		if strings.Count(line, "(") != strings.Count(line, ")") {
			t.Errorf("%d: unbalanced parenthesis: %q", w, line)
		}
		if w >= 80 && !strings.Contains(line, "stops here") {
			t.Errorf("%d: the damage must stay: %q", w, line)
		}
		if w == 120 && !strings.Contains(line, "fails its checksum)") {
			t.Errorf("120: the reason fits: %q", line)
		}
	}
}

// TestFooterNoticeGivesWay: the demo's notice (scenario, clock and what
// happens) is shortened before "? help" is pushed off a narrow footer,
// and never cut silently.
func TestFooterNoticeGivesWay(t *testing.T) {
	m := flowModel(t, Config{}, 120, 40)
	s := flowBackend(t).Snapshot(time.Minute)
	s.Notice = "demo: announcement 0:03 — a company-wide email links 100 new documents (1:00)"
	m.Update(snapMsg{snap: s})
	footer := func() string {
		l := strings.Split(m.View(), "\n")
		return l[len(l)-1]
	}
	if f := footer(); !strings.Contains(f, s.Notice) || !strings.Contains(f, "? help") {
		t.Errorf("120: %q", f)
	}
	for _, w := range []int{80, 60, 40} {
		m.Update(tea.WindowSizeMsg{Width: w, Height: 24})
		f := footer()
		if !strings.Contains(f, "? help") || !strings.Contains(f, "demo: announcement") {
			t.Errorf("%d: %q", w, f)
		}
		if strings.Contains(f, "a company") && !strings.Contains(f, s.Notice) {
			t.Errorf("%d: description cut mid-way: %q", w, f)
		}
		m.Update(keyMsg("?"))
		if f := footer(); !strings.Contains(f, "esc/? close help") {
			t.Errorf("%d, help open: %q", w, f)
		}
		m.Update(keyMsg("esc"))
	}
}

func TestWrapKeepsFlagsWhole(t *testing.T) {
	got := wrap("the demo cycles ('pdtop demo -h' lists them; --scenario NAME plays one)", 20)
	for _, l := range strings.Split(got, "\n") {
		if ansi.StringWidth(l) > 20 {
			t.Errorf("line %q wider than 20", l)
		}
	}
	if !strings.Contains(got, "--scenario") {
		t.Errorf("flag broken at its hyphen:\n%s", got)
	}
	if got := wrap(strings.Repeat("x", 25), 10); got != "xxxxxxxxxx\nxxxxxxxxxx\nxxxxx" {
		t.Errorf("long word: %q", got)
	}
}
