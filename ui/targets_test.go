package ui

import (
	"io"
	"log"
	"regexp"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/pdtop/pdtop/sources/sim"
)

// hit sends one key to m, as typed.
func hit(m *Model, k string) { m.Update(press(k)) }

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
		hit(m, "?")
		if h := m.View(); !regexp.MustCompile(`\bt\s+targets view`).MatchString(h) {
			t.Errorf("help on the dashboard does not list t:\n%s", h)
		}
		hit(m, "esc")
		hit(m, "t")
		v := m.View()
		checkSize(t, v, size[0], size[1])
		for _, want := range []string{"▶ Targets", "gateway-0", "prefill-1", "decode-1", "smg gateway", "sglang worker", "up"} {
			if !strings.Contains(v, want) {
				t.Errorf("%dx%d targets view lacks %q:\n%s", size[0], size[1], want, v)
			}
		}
		hit(m, "?")
		h := m.View()
		if !strings.Contains(h, "esc/t back to the panels") || strings.Contains(h, "Targets keys") {
			t.Errorf("help over the targets view lacks t or the view's keys:\n%s", h)
		}
		hit(m, "esc") // closes help
		hit(m, "down")
		hit(m, "esc") // closes the targets view
		if strings.Contains(m.View(), "▶ Targets") {
			t.Errorf("esc did not close the targets view:\n%s", m.View())
		}
		hit(m, "t")
		hit(m, "t")
		if strings.Contains(m.View(), "▶ Targets") {
			t.Error("t did not toggle the targets view off")
		}
		hit(m, "t")
		hit(m, "3") // a panel key leaves the targets view for that panel
		if v := m.View(); strings.Contains(v, "▶ Targets") || !strings.Contains(v, "▶ KV transfer") {
			t.Errorf("3 from the targets view:\n%s", v)
		}
	}
}

func tea_WindowSize(w, h int) tea.WindowSizeMsg { return tea.WindowSizeMsg{Width: w, Height: h} }

func quietLog() *log.Logger { return log.New(io.Discard, "", 0) }
