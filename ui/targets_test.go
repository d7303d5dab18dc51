package ui

import (
	"io"
	"log"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/pdtop/pdtop/sources/sim"
)

func press(m *Model, k string) {
	var msg tea.KeyMsg
	switch k {
	case "esc":
		msg = tea.KeyMsg{Type: tea.KeyEsc}
	case "down":
		msg = tea.KeyMsg{Type: tea.KeyDown}
	default:
		msg = tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)}
	}
	m.Update(msg)
}

// t opens the targets view over the whole body, ? lists t and the view's
// own keys, esc (or t) goes back to the panels.
func TestTargetsViewKey(t *testing.T) {
	r := newFleetRun(t, sim.Config{Seed: 3, Prefill: 2, Decode: 2, Replicas: 1, Scenario: "steady"})
	r.advance(3)
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		m := newModel(r, size[0], size[1])
		m.Update(snapMsg{snap: r.snapshot()})
		if strings.Contains(m.View(), "Targets ━") {
			t.Fatal("targets view open before t")
		}
		press(m, "t")
		v := m.View()
		checkSize(t, v, size[0], size[1])
		for _, want := range []string{"▶ Targets", "gateway-0", "prefill-1", "decode-1", "smg gateway", "sglang worker", "up"} {
			if !strings.Contains(v, want) {
				t.Errorf("%dx%d targets view lacks %q:\n%s", size[0], size[1], want, v)
			}
		}
		press(m, "?")
		h := m.View()
		if !strings.Contains(h, "t targets") || !strings.Contains(h, "Targets keys") {
			t.Errorf("help over the targets view lacks t or the view's keys:\n%s", h)
		}
		press(m, "esc") // closes help
		press(m, "down")
		press(m, "esc") // closes the targets view
		if strings.Contains(m.View(), "▶ Targets") {
			t.Errorf("esc did not close the targets view:\n%s", m.View())
		}
		press(m, "t")
		press(m, "t")
		if strings.Contains(m.View(), "▶ Targets") {
			t.Error("t did not toggle the targets view off")
		}
		press(m, "t")
		press(m, "3") // a panel key leaves the targets view for that panel
		if v := m.View(); strings.Contains(v, "▶ Targets") || !strings.Contains(v, "▶ KV transfer") {
			t.Errorf("3 from the targets view:\n%s", v)
		}
	}
}

func tea_WindowSize(w, h int) tea.WindowSizeMsg { return tea.WindowSizeMsg{Width: w, Height: h} }

func quietLog() *log.Logger { return log.New(io.Discard, "", 0) }
