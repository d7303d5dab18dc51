package panels

import (
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/pdtop/pdtop/themes"
)

var (
	keyDown = tea.KeyMsg{Type: tea.KeyDown}
	keyUp   = tea.KeyMsg{Type: tea.KeyUp}
	keyEnd  = tea.KeyMsg{Type: tea.KeyEnd}
	keyHome = tea.KeyMsg{Type: tea.KeyHome}
	keyPgDn = tea.KeyMsg{Type: tea.KeyPgDown}
)

func lastLine(v string) string {
	l := strings.Split(v, "\n")
	return l[len(l)-1]
}

func TestScrollKeys(t *testing.T) {
	p := New(PrefillQueue, themes.Default())
	p.SetSnapshot(bigSnapshot(20)) // 22 prefill workers
	p.SetSize(80, 16)
	v := p.View()
	if !strings.Contains(lastLine(v), "↓") || strings.Contains(lastLine(v), "↑") {
		t.Fatalf("top of list: bottom border should say ↓ N more only: %q", lastLine(v))
	}
	// ↓ moves the cursor; the list scrolls once the cursor leaves the page.
	p, _ = p.Update(keyDown)
	if v := p.View(); strings.Contains(lastLine(v), "↑") {
		t.Fatalf("after one ↓ the cursor is still on the first page: %q", lastLine(v))
	}
	p, _ = p.Update(keyPgDn)
	p, _ = p.Update(keyPgDn)
	if v := p.View(); !strings.Contains(lastLine(v), "above") {
		t.Fatalf("after two pages down: %q", lastLine(v))
	}
	p, _ = p.Update(keyEnd)
	v = p.View()
	if strings.Contains(lastLine(v), "↓") || !strings.Contains(lastLine(v), "↑") {
		t.Fatalf("after end: %q", lastLine(v))
	}
	if !strings.Contains(v, "prefill-21") {
		t.Fatalf("after end the last worker must be visible:\n%s", v)
	}
	// Scrolling past the end stays at the end.
	before := p.View()
	p, _ = p.Update(keyDown)
	p, _ = p.Update(keyPgDn)
	if p.View() != before {
		t.Fatal("scrolling past the end changed the view")
	}
	p, _ = p.Update(keyHome)
	if v := p.View(); strings.Contains(lastLine(v), "↑") {
		t.Fatalf("after home: %q", lastLine(v))
	}
	p, _ = p.Update(keyUp)
	if v := p.View(); strings.Contains(lastLine(v), "↑") {
		t.Fatalf("up at the top: %q", lastLine(v))
	}
}

func TestKeyMapHelp(t *testing.T) {
	p := New(Cache, themes.Default())
	km := p.KeyMap()
	if len(km.ShortHelp()) == 0 || len(km.FullHelp()) == 0 {
		t.Fatal("key map must list its keys for the help overlay")
	}
	for _, b := range km.ShortHelp() {
		if b.Help().Key == "" || b.Help().Desc == "" {
			t.Fatalf("binding without help text: %+v", b.Keys())
		}
	}
}

func TestRecoverShowsErrorInFrame(t *testing.T) {
	p := &panel{id: PrefillQueue, st: themes.Default(), keys: DefaultKeyMap(),
		spec: spec{title: "Boom", minW: 10, minH: 3, draw: func(*drawCtx) []string { panic("kaboom\nsecond line") }}}
	p.SetSize(40, 5)
	p.SetSnapshot(sampleSnapshot())
	v := p.View()
	checkBlock(t, "recovered", v, 40, 5)
	if !strings.Contains(v, "render error: kaboom second line") {
		t.Fatalf("error cell missing:\n%s", v)
	}
}

func TestIDsAndTitles(t *testing.T) {
	ps := All(themes.Default())
	if len(ps) != int(NumPanels) {
		t.Fatalf("All returned %d panels", len(ps))
	}
	for i, p := range ps {
		if p.ID() != ID(i) || p.Title() == "" || p.Title() != ID(i).String() {
			t.Errorf("panel %d: id %d title %q", i, p.ID(), p.Title())
		}
	}
}
