package ui

import (
	"sort"
	"time"

	tea "github.com/charmbracelet/bubbletea"
)

// defaultWindows are the steps of [ and ]; the store keeps 15 minutes.
var defaultWindows = []time.Duration{time.Minute, 5 * time.Minute, 15 * time.Minute}

// windowSteps returns the sorted steps with the configured window among
// them.
func windowSteps(steps []time.Duration, window time.Duration) []time.Duration {
	if len(steps) == 0 {
		steps = defaultWindows
	}
	out := append([]time.Duration(nil), steps...)
	found := false
	for _, s := range out {
		if s == window {
			found = true
		}
	}
	if !found && window > 0 {
		out = append(out, window)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// stepWindow moves the time window one step shorter (-1) or longer (+1)
// and derives a snapshot for it at once. While paused the frozen view
// stays; the summary says the new window applies on resume.
func (m *Model) stepWindow(dir int) tea.Cmd {
	ws := m.cfg.Windows
	i := 0
	for j, w := range ws {
		if w <= m.cfg.Window {
			i = j
		}
	}
	i += dir
	if i < 0 || i >= len(ws) {
		m.note = "window is already the " + map[bool]string{true: "shortest", false: "longest"}[dir < 0]
		return nil
	}
	m.cfg.Window = ws[i]
	if m.paused {
		return nil
	}
	return m.build()
}
