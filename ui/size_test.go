package ui

import (
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/pdtop/pdtop/sources/sim"
	"github.com/pdtop/pdtop/themes"
)

// TestViewExactSizeEverySize resizes one model through widths 0–230 and
// heights 0–62 in every view (grid, tabs, zoom, filter line, drill-down,
// help): every frame is exactly the terminal's size, with no character
// cut in half, and focus, cursor and drill target survive the resizing.
func TestViewExactSizeEverySize(t *testing.T) {
	r := newFleetRun(t, sim.Config{Seed: 4, Prefill: 3, Decode: 3, Replicas: 2, Scenario: "steady"})
	r.advance(15)
	snap := r.snapshot()
	m := New(Config{Backend: &staticBackend{st: r.store, now: r.now}, Interval: time.Hour, Window: time.Minute,
		Styles: themes.NewStyles(themes.Dark())})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	m.Update(snapMsg{snap: snap})
	m.View()
	m.Update(keyMsg("2"))
	m.View()
	m.Update(keyMsg("down"))
	m.View()
	sel, _ := m.panels[1].(interface{ Selected() (string, bool) }).Selected()
	views := []func(){
		func() {},
		func() { m.Update(keyMsg("z")) },
		func() { m.Update(keyMsg("z")); m.Update(keyMsg("/")); m.Update(keyMsg("prefill")) },
		func() { m.Update(keyMsg("enter")); m.Update(keyMsg("esc")); m.Update(keyMsg("enter")) },
		func() { m.Update(keyMsg("?")) },
	}
	for vi, enter := range views {
		enter()
		for w := 0; w <= 230; w += 7 {
			for _, h := range []int{0, 1, 9, 10, 23, 24, 29, 30, 40, 44, 45, 62} {
				m.Update(tea.WindowSizeMsg{Width: w, Height: h})
				v := m.View()
				if w == 0 || h == 0 {
					if v != "" {
						t.Fatalf("view %d at %dx%d: %q", vi, w, h, v)
					}
					continue
				}
				checkSize(t, v, w, h)
				if strings.ContainsRune(v, '\uFFFD') {
					t.Fatalf("view %d at %dx%d: a cut character", vi, w, h)
				}
			}
		}
	}
	m.Update(keyMsg("esc")) // help
	m.Update(keyMsg("esc")) // drill-down
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	m.View()
	if m.focus != 1 || m.drilling {
		t.Fatalf("after resizing: focus %d drilling %v", m.focus, m.drilling)
	}
	if now, _ := m.panels[1].(interface{ Selected() (string, bool) }).Selected(); now != sel {
		t.Fatalf("cursor moved from %s to %s while resizing", sel, now)
	}
}
