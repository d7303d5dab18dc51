package ui

import (
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/pdtop/pdtop/panels"
	"github.com/pdtop/pdtop/sources"
)

// detailMsg carries one worker's detail from the backend.
type detailMsg struct{ detail *sources.WorkerDetail }

// openDrill opens the drill-down on the focused panel's selected worker.
func (m *Model) openDrill() tea.Cmd {
	n, ok := m.panels[m.focus].(panels.Navigator)
	if !ok {
		return nil
	}
	id, ok := n.Selected()
	if !ok {
		m.note = "no worker selected here"
		return nil
	}
	if !m.isWorker(id) {
		m.note = "details are per worker; this row is a gateway replica"
		return nil
	}
	m.drilling = true
	m.drill.SetTarget(id)
	m.drill.SetSnapshot(m.shown)
	m.layout()
	return m.fetchDetail()
}

// isWorker reports whether id is a worker of the shown snapshot.
func (m *Model) isWorker(id string) bool {
	if m.shown == nil {
		return false
	}
	for i := range m.shown.Workers {
		if m.shown.Workers[i].ID == id {
			return true
		}
	}
	return false
}

// drillKey handles the drill-down's own keys: esc goes back, the rest
// scroll.
func (m *Model) drillKey(msg tea.KeyMsg) tea.Cmd {
	if key.Matches(msg, m.keys.Close) {
		m.drilling = false
		m.layout()
		return nil
	}
	var cmd tea.Cmd
	m.drill, cmd = m.drill.Update(msg)
	return cmd
}

// fetchDetail asks a DetailBackend for the drilled worker's history at the
// shown snapshot's time, off the UI goroutine; one request at a time.
func (m *Model) fetchDetail() tea.Cmd {
	db, ok := m.cfg.Backend.(sources.DetailBackend)
	if !ok || !m.drilling {
		return nil
	}
	if m.detailBusy {
		m.detailPending = true
		return nil
	}
	m.detailBusy = true
	id, window := m.drill.Target(), m.cfg.Window
	at := m.now()
	if m.shown != nil {
		at, window = m.shown.Time, m.shown.Window
	}
	return func() tea.Msg { return detailMsg{detail: db.Detail(id, at, window)} }
}

// detailArrived hands the detail to the view and runs a request that
// waited.
func (m *Model) detailArrived(msg detailMsg) tea.Cmd {
	m.detailBusy = false
	m.drill.SetDetail(msg.detail)
	if m.detailPending {
		m.detailPending = false
		return m.fetchDetail()
	}
	return nil
}
