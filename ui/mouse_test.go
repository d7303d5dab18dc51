package ui

import (
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/pdtop/pdtop/sources/sim"
	"github.com/pdtop/pdtop/themes"
)

// TestMouse: with --mouse a click focuses the panel under the pointer (in
// the grid) or the tab (at 80x24), the wheel moves that panel's cursor,
// and without --mouse mouse events do nothing.
func TestMouse(t *testing.T) {
	r := newFleetRun(t, sim.Config{Seed: 3, Prefill: 8, Decode: 8, Replicas: 1, Scenario: "steady"})
	r.advance(10)
	snap := r.snapshot()
	mk := func(mouse bool, w, h int) *Model {
		m := New(Config{Backend: &staticBackend{st: r.store, now: r.now}, Interval: time.Hour, Window: time.Minute,
			Styles: themes.NewStyles(themes.Mono()), Mouse: mouse})
		m.Update(tea.WindowSizeMsg{Width: w, Height: h})
		m.Update(snapMsg{snap: snap})
		m.View()
		return m
	}
	click := func(x, y int) tea.MouseMsg {
		return tea.MouseMsg{X: x, Y: y, Button: tea.MouseButtonLeft, Action: tea.MouseActionPress}
	}
	// 200x60: three columns of ~67 cells, two rows under the summary.
	m := mk(true, 200, 60)
	m.Update(click(150, 45)) // bottom right: Restarts & retries
	if m.focus != 5 {
		t.Fatalf("click at (150,45) focused panel %d, want 6", m.focus+1)
	}
	m.Update(click(10, 5)) // top left: Prefill queueing
	if m.focus != 0 {
		t.Fatalf("click at (10,5) focused panel %d, want 1", m.focus+1)
	}
	m.View()
	m.Update(tea.MouseMsg{X: 10, Y: 10, Button: tea.MouseButtonWheelDown, Action: tea.MouseActionPress})
	m.View()
	if id, _ := m.panels[0].(interface{ Selected() (string, bool) }).Selected(); !strings.Contains(id, m.shown.Workers[3].ID) {
		t.Errorf("wheel down should move the cursor three rows, to %s; at %s", m.shown.Workers[3].Name, id)
	}
	// 80x24: the tab bar is row 1.
	m = mk(true, 80, 24)
	bar := m.tabBar()
	x := strings.Index(bar, "Decode")
	m.Update(click(len([]rune(bar[:x])), 1))
	if m.focus != 3 {
		t.Fatalf("click on the Decode tab focused panel %d", m.focus+1)
	}
	// Without --mouse nothing happens.
	m = mk(false, 200, 60)
	m.Update(click(150, 45))
	if m.focus != 0 {
		t.Fatal("a click moved focus without --mouse")
	}
}
