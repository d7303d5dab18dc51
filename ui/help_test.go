package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/pdtop/pdtop/sources/sim"
	"github.com/pdtop/pdtop/themes"
)

// keyMsg turns a binding's key name into the message a terminal sends.
func keyMsg(k string) tea.KeyMsg {
	named := map[string]tea.KeyType{"tab": tea.KeyTab, "shift+tab": tea.KeyShiftTab, "left": tea.KeyLeft,
		"right": tea.KeyRight, "up": tea.KeyUp, "down": tea.KeyDown, "pgup": tea.KeyPgUp, "pgdown": tea.KeyPgDown,
		"home": tea.KeyHome, "end": tea.KeyEnd, "enter": tea.KeyEnter, "esc": tea.KeyEsc, "ctrl+c": tea.KeyCtrlC,
		"ctrl+u": tea.KeyCtrlU, "ctrl+d": tea.KeyCtrlD}
	if t, ok := named[k]; ok {
		return tea.KeyMsg{Type: t}
	}
	if k == " " {
		return tea.KeyMsg{Type: tea.KeySpace, Runes: []rune(" ")}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)}
}

// TestEveryKeyInHelpWorks: in each view, every key the help lists (app
// and focused component) does something: it changes the screen or quits.
// And the help lists no key that is disabled.
func TestEveryKeyInHelpWorks(t *testing.T) {
	r := newFleetRun(t, sim.Config{Seed: 3, Prefill: 8, Decode: 8, Replicas: 1, Scenario: "steady"})
	r.advance(20)
	snap := r.store.Snapshot(r.now, 5*time.Minute)
	views := map[string]func(m *Model){
		"dashboard": func(m *Model) { m.Update(keyMsg("down")); m.View(); m.Update(keyMsg("s")) },
		"zoomed":    func(m *Model) { m.Update(keyMsg("z")); m.View(); m.Update(keyMsg("down")) },
		"filtered": func(m *Model) {
			m.Update(keyMsg("/"))
			m.Update(keyMsg("decode"))
			m.Update(keyMsg("enter"))
		},
		"restarts panel": func(m *Model) { m.Update(keyMsg("6")) },
		"drill-down":     func(m *Model) { m.Update(keyMsg("enter")); m.View(); m.Update(keyMsg("down")) },
		"typing filter":  func(m *Model) { m.Update(keyMsg("/")) },
		"help":           func(m *Model) { m.Update(keyMsg("?")) },
	}
	for name, setup := range views {
		fresh := func() *Model {
			m := New(Config{Backend: &staticBackend{st: r.store, now: r.now}, Interval: time.Hour, Window: 5 * time.Minute,
				Styles: themes.NewStyles(themes.Mono())})
			m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
			m.Update(snapMsg{snap: snap})
			m.View()
			setup(m)
			m.View()
			return m
		}
		m := fresh()
		app, own, _, short := m.viewKeys()
		all := append([]key.Binding(nil), short...)
		for _, col := range app.FullHelp() {
			all = append(all, col...)
		}
		if own != nil {
			for _, col := range own.FullHelp() {
				all = append(all, col...)
			}
		}
		for _, b := range all {
			if !b.Enabled() {
				continue // the help component skips these
			}
			// Any of the binding's keys may show it works (1-6 on panel 1:
			// "1" does nothing, "2" moves).
			works := false
			for _, k := range b.Keys() {
				m := fresh()
				before := m.View()
				_, cmd := m.Update(keyMsg(k))
				if cmd != nil {
					if _, quit := cmd().(tea.QuitMsg); quit {
						works = true
					}
				}
				if m.View() != before {
					works = true
				}
			}
			if !works {
				t.Errorf("%s: %q (%s) listed in help but changed nothing", name, b.Help().Key, b.Help().Desc)
			}
		}
		if name == "restarts panel" {
			for _, b := range all {
				if b.Enabled() && (b.Help().Key == "enter" || strings.Contains(b.Help().Desc, "sort")) {
					t.Errorf("restarts panel without restarts lists %q", b.Help().Desc)
				}
			}
		}
	}
}

// TestKeyBurstsAreEveryKey: keys typed faster than the terminal is read
// arrive as one message ("]]", "/dec"); each rune acts as its own key, and
// once "/" opens the filter the rest is its text.
func TestKeyBurstsAreEveryKey(t *testing.T) {
	r := newFleetRun(t, sim.Config{Seed: 3, Prefill: 2, Decode: 2, Replicas: 1, Scenario: "steady"})
	r.advance(5)
	m := New(Config{Backend: &staticBackend{st: r.store, now: r.now}, Interval: time.Second, Window: time.Minute,
		Styles: themes.NewStyles(themes.Mono())})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	one := New(Config{Backend: &staticBackend{st: r.store, now: r.now}, Interval: time.Second, Window: time.Minute,
		Styles: themes.NewStyles(themes.Mono())})
	one.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	m.Update(keyMsg("]]"))
	one.Update(keyMsg("]"))
	one.Update(keyMsg("]"))
	if m.cfg.Window != one.cfg.Window || m.cfg.Window <= 2*time.Minute {
		t.Fatalf("']]' as one message: window %s, two ']' keys: %s", m.cfg.Window, one.cfg.Window)
	}
	m.Update(keyMsg("/dec"))
	if !m.editing || m.input.Value() != "dec" {
		t.Fatalf("'/dec' as one message: editing %v, filter text %q", m.editing, m.input.Value())
	}
}
