package panels

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/themes"
)

var update = flag.Bool("update", false, "rewrite panels/testdata/*.golden from the current output")

func TestMain(m *testing.M) {
	flag.Parse()
	// Goldens and most tests compare plain text: no colour, no attributes.
	lipgloss.SetColorProfile(termenv.Ascii)
	os.Exit(m.Run())
}

// golden compares got with testdata/name.golden (or rewrites it with
// -update).
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./panels -update to create it)", err)
	}
	if string(want) != got+"\n" {
		t.Errorf("%s differs from %s (review, then go test ./panels -update)\n--- got\n%s\n--- want\n%s", name, path, got, want)
	}
}

// slug turns a panel title into a file name part.
func slug(s string) string {
	s = strings.ToLower(s)
	var b strings.Builder
	dash := false
	for _, r := range s {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimRight(b.String(), "-")
}

func TestGoldenPanels(t *testing.T) {
	st := themes.Default()
	for _, p := range All(st) {
		for _, sz := range [][2]int{{40, 10}, {80, 24}, {120, 40}} {
			p.SetSize(sz[0], sz[1])
			p.SetFocused(false)
			p.SetSnapshot(sampleSnapshot())
			name := slug(p.Title()) + "_" + itoa(sz[0]) + "x" + itoa(sz[1])
			golden(t, name, p.View())
		}
	}
}

// TestGoldenStates covers the frame states: focused, waiting for the
// first scrape, an empty fleet, too small, and a scrolled long list.
func TestGoldenStates(t *testing.T) {
	st := themes.Default()
	p := New(PrefillQueue, st)
	p.SetSize(80, 24)
	p.SetFocused(true)
	p.SetSnapshot(sampleSnapshot())
	golden(t, "state_focused_80x24", p.View())

	p.SetFocused(false)
	p.SetSnapshot(nil)
	golden(t, "state_no_data_80x10", sized(p, 80, 10))

	p.SetSnapshot(&sources.Snapshot{})
	golden(t, "state_empty_fleet_80x10", sized(p, 80, 10))

	golden(t, "state_too_small_20x4", sized(p, 20, 4))

	big := New(DecodeAdmission, st)
	big.SetSnapshot(bigSnapshot(20))
	big.SetSize(80, 24)
	for i := 0; i < 5; i++ {
		big, _ = big.Update(keyDown)
	}
	golden(t, "state_scrolled_80x24", big.View())
}

func sized(p Panel, w, h int) string {
	p.SetSize(w, h)
	return p.View()
}

func TestGoldenSummary(t *testing.T) {
	st := themes.Default()
	state := SummaryState{Interval: time.Second, Window: 5 * time.Minute,
		Now: sampleTime.Add(300 * time.Millisecond), LastTick: sampleTime}
	for _, w := range []int{80, 120, 200} {
		golden(t, "summary_"+itoa(w), Summary(sampleSnapshot(), st, w, state))
	}
	paused := state
	paused.Paused, paused.Now = true, sampleTime.Add(42*time.Second)
	late := state
	late.Now = sampleTime.Add(5 * time.Second)
	golden(t, "summary_states_120", strings.Join([]string{
		Summary(nil, st, 120, state),
		Summary(sampleSnapshot(), st, 120, paused),
		Summary(sampleSnapshot(), st, 120, late),
	}, "\n"))
}
