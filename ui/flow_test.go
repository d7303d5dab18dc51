package ui

import (
	"bytes"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/sources/sim"
	"github.com/pdtop/pdtop/sources/store"
	"github.com/pdtop/pdtop/themes"
)

// staticBackend serves snapshots and details of a finished demo run at a
// fixed time: flows are deterministic however long they take.
type staticBackend struct {
	st  *store.Store
	now time.Time
}

func (b *staticBackend) Round() []sources.Job { return nil }
func (b *staticBackend) Busy(string)          {}
func (b *staticBackend) Now() time.Time       { return b.now }
func (b *staticBackend) Snapshot(w time.Duration) *sources.Snapshot {
	return b.st.Snapshot(b.now, w)
}
func (b *staticBackend) Detail(id string, at time.Time, w time.Duration) *sources.WorkerDetail {
	return b.st.Detail(at, id, w)
}

// flowBackend is one demo run with a restart, shared by the flows (it is
// read-only once built; building it is most of a flow's time under -race).
func flowBackend(t *testing.T) *staticBackend {
	t.Helper()
	flowOnce.Do(func() {
		r := newFleetRun(t, sim.Config{Seed: 5, Prefill: 2, Decode: 2, Replicas: 2, Gateway: sim.GatewayLegacy, Scenario: "steady"})
		r.advance(30)
		r.fleet.Restart("prefill-1")
		r.advance(30)
		flowShared = &staticBackend{st: r.store, now: r.now}
	})
	return flowShared
}

var (
	flowOnce   sync.Once
	flowShared *staticBackend
)

// startFlow runs the root model under teatest at w×h with the mono theme
// and waits until the first snapshot is on screen.
func startFlow(t *testing.T, b *staticBackend, w, h int) *teatest.TestModel {
	t.Helper()
	m := New(Config{Backend: b, Interval: time.Hour, Window: time.Minute, Styles: themes.NewStyles(themes.Mono())})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(w, h))
	tm.Send(snapMsg{snap: b.Snapshot(time.Minute)})
	waitFor(t, tm, "prefill-0")
	return tm
}

func waitFor(t *testing.T, tm *teatest.TestModel, text string) {
	t.Helper()
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte(text)) },
		teatest.WithDuration(5*time.Second), teatest.WithCheckInterval(5*time.Millisecond))
}

// finish quits and returns the final model's view.
func finish(t *testing.T, tm *teatest.TestModel) (*Model, string) {
	t.Helper()
	if err := tm.Quit(); err != nil {
		t.Fatal(err)
	}
	m := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(*Model)
	return m, m.View()
}

func press(s string) tea.KeyMsg {
	switch s {
	case "enter":
		return tea.KeyMsg{Type: tea.KeyEnter}
	case "esc":
		return tea.KeyMsg{Type: tea.KeyEsc}
	case "down":
		return tea.KeyMsg{Type: tea.KeyDown}
	case "tab":
		return tea.KeyMsg{Type: tea.KeyTab}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s)}
}

// TestFlowDrillDown: enter on the selected worker opens its details with
// every signal's source metric, the restart with its reason and the
// replicas' view; esc goes back to the same panel.
func TestFlowDrillDown(t *testing.T) {
	b := flowBackend(t)
	tm := startFlow(t, b, 120, 40)
	tm.Send(press("down")) // prefill-1, which restarted
	tm.Send(press("enter"))
	waitFor(t, tm, "p99 per step") // the backend's detail has arrived
	m, v := finish(t, tm)
	checkSize(t, v, 120, 40)
	for _, want := range []string{"Worker prefill-1 · prefill", "sglang:num_queue_reqs", "Restarts",
		"new scheduler pid", "Gateway replicas' view", "predicted"} {
		if !strings.Contains(v, want) && !strings.Contains(scrolledDrill(m), want) {
			t.Errorf("drill-down lacks %q:\n%s", want, v)
		}
	}
	golden(t, "testdata/flow_drilldown_120x40.golden", stable(v))
	m.Update(press("esc"))
	if m.drilling || !strings.Contains(m.View(), "▶ Prefill queueing") {
		t.Fatalf("esc did not go back to the focused panel:\n%s", m.View())
	}
}

// stable masks what differs between runs of the same demo: loopback
// ports and scrape timings.
func stable(v string) string {
	v = regexp.MustCompile(`127\.0\.0\.1:\d+`).ReplaceAllStringFunc(v, func(s string) string {
		return "127.0.0.1:" + strings.Repeat("N", len(s)-len("127.0.0.1:"))
	})
	// The scrape's duration changes the line's length: mask the line.
	return regexp.MustCompile(`(?m)^┃scrape health:.*$`).ReplaceAllString(v, "┃scrape health: (varies from run to run)")
}

// scrolledDrill is the whole drill-down, scrolled page by page.
func scrolledDrill(m *Model) string {
	var all strings.Builder
	for i := 0; i < 20; i++ {
		all.WriteString(m.drill.View())
		m.drill.Update(tea.KeyMsg{Type: tea.KeyPgDown})
	}
	return all.String()
}

// TestFlowSortAndFilter: s sorts the focused panel's workers by the next
// column (▼ in the header); / filters every panel as you type; esc clears.
func TestFlowSortAndFilter(t *testing.T) {
	b := flowBackend(t)
	tm := startFlow(t, b, 120, 40)
	tm.Send(press("4")) // Decode admission
	tm.Send(press("s")) // worker ▲
	tm.Send(press("s")) // running ▼
	waitFor(t, tm, "running▼")
	tm.Send(press("/"))
	tm.Type("decode-1")
	waitFor(t, tm, "1 of 4 workers")
	tm.Send(press("enter"))
	waitFor(t, tm, "filter: decode-1")
	m, v := finish(t, tm)
	checkSize(t, v, 120, 40)
	if strings.Contains(v, "decode-0") || !strings.Contains(v, "decode-1") {
		t.Errorf("filter decode-1 should hide decode-0:\n%s", v)
	}
	if !strings.Contains(v, "no prefill worker matches") {
		t.Errorf("the prefill panel should say nothing matches:\n%s", v)
	}
	golden(t, "testdata/flow_filter_120x40.golden", v)
	m.Update(press("esc"))
	if v := m.View(); strings.Contains(v, "filter:") || !strings.Contains(v, "decode-0") {
		t.Fatalf("esc did not clear the filter:\n%s", v)
	}
}

// TestFlowZoomPauseResize: z zooms the focused panel and esc unzooms; p
// freezes the view while newer snapshots arrive and resuming shows the
// newest once; resizing to 80x24 and back keeps focus and the cursor.
func TestFlowZoomPauseResize(t *testing.T) {
	b := flowBackend(t)
	tm := startFlow(t, b, 200, 60)
	tm.Send(press("3"))
	tm.Send(press("z"))
	waitFor(t, tm, "unzoom")
	tm.Send(press("esc"))
	tm.Send(press("p"))
	waitFor(t, tm, "PAUSED")
	later := b.st.Snapshot(b.now, time.Minute)
	later.Workers[0].Health, later.Workers[0].Age = sources.Stale, 5*time.Second
	tm.Send(snapMsg{snap: later})
	tm.Send(press("down"))
	tm.Send(tea.WindowSizeMsg{Width: 80, Height: 24})
	waitFor(t, tm, "[3 KV transfer]")
	tm.Send(tea.WindowSizeMsg{Width: 200, Height: 60})
	m, v := finish(t, tm)
	checkSize(t, v, 200, 60)
	if m.zoom || m.focus != 2 || !m.paused {
		t.Fatalf("zoom %v focus %d paused %v", m.zoom, m.focus, m.paused)
	}
	if m.shown == later || strings.Contains(v, "STALE 5s") {
		t.Fatal("paused view changed when a snapshot arrived")
	}
	if id, _ := m.panels[2].(interface{ Selected() (string, bool) }).Selected(); !strings.Contains(id, ":") || m.panels[2].View() == "" {
		t.Fatalf("selection lost: %q", id)
	}
	if sel := selectedName(m.panels[2].View()); sel != "prefill-1" {
		t.Errorf("cursor after ↓ and two resizes is on %q, want prefill-1", sel)
	}
	m.Update(press("p"))
	if m.shown != later || !strings.Contains(m.View(), "STALE 5s") {
		t.Fatal("resume did not catch up with the newest snapshot")
	}
}

// selectedName is the worker on the ▸ row of a panel view.
func selectedName(v string) string {
	for _, l := range strings.Split(v, "\n") {
		if i := strings.Index(l, "▸"); i >= 0 {
			if f := strings.Fields(l[i+len("▸"):]); len(f) > 0 {
				return f[0]
			}
		}
	}
	return ""
}
