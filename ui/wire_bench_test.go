package ui

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/sources/collect"
	"github.com/pdtop/pdtop/sources/sim"
	"github.com/pdtop/pdtop/themes"
)

// countWriter counts the bytes the renderer writes to the "terminal".
type countWriter struct{ n atomic.Int64 }

func (c *countWriter) Write(p []byte) (int, error) { c.n.Add(int64(len(p))); return len(p), nil }

// builtBackend is the live backend that says when a snapshot was derived.
type builtBackend struct {
	*collect.Live
	built chan *sources.Snapshot
}

func (b *builtBackend) Snapshot(w time.Duration) *sources.Snapshot {
	s := b.Live.Snapshot(w)
	// As pdtop demo does: the scenario and its clock in the footer, a
	// line that changes every second.
	el := int(s.Time.Sub(start) / time.Second)
	s.Notice = fmt.Sprintf("demo: steady %d:%02d", el/60, el%60)
	b.built <- s
	return s
}

// BenchmarkWireBytes measures what pdtop writes to the terminal at a
// steady 1 s refresh: the real bubbletea program and renderer (FPS 20, as
// cmd runs it) under a 256-colour profile (xterm-256color over SSH),
// drawing the demo fleet scraped over loopback HTTP with pdtop demo's
// footer clock, at 120x40 with the
// dark and the mono theme and at 200x60. Each iteration is one simulated
// second: the fleet steps, a tick starts a scrape round, the snapshot is
// drawn, the frame is flushed. B/s is bytes written per refresh, i.e. per
// second; full-frame-B is one complete repaint, for comparison. Run with
// -benchtime=60x.
func BenchmarkWireBytes(b *testing.B) {
	for _, c := range []struct {
		name  string
		w, h  int
		theme themes.Theme
	}{
		{"120x40-dark", 120, 40, themes.Dark()},
		{"120x40-mono", 120, 40, themes.Mono()},
		{"200x60-dark", 200, 60, themes.Dark()},
	} {
		b.Run(c.name, func(b *testing.B) { benchWire(b, c.w, c.h, c.theme) })
	}
}

func benchWire(b *testing.B, w, h int, theme themes.Theme) {
	lipgloss.SetColorProfile(termenv.ANSI256)
	defer lipgloss.SetColorProfile(termenv.Ascii)
	r := newFleetRun(b, sim.Config{Seed: 1, Prefill: 2, Decode: 2, Replicas: 1})
	r.advance(90) // charts and sparklines have history
	be := &builtBackend{
		Live:  &collect.Live{Store: r.store, Scraper: r.scraper, Clock: func() time.Time { return r.now }, Spread: time.Nanosecond},
		built: make(chan *sources.Snapshot, 4),
	}
	m := New(Config{Backend: be, Interval: time.Hour, Window: time.Minute, Styles: themes.NewStyles(theme)})
	out := &countWriter{}
	p := tea.NewProgram(m, tea.WithOutput(out), tea.WithInput(nil), tea.WithoutSignalHandler(), tea.WithFPS(20))
	done := make(chan struct{})
	go func() { p.Run(); close(done) }()
	p.Send(tea.WindowSizeMsg{Width: w, Height: h})
	second := func() {
		r.fleet.Step(time.Second)
		r.now = r.now.Add(time.Second)
		p.Send(tickMsg{gen: 0})
		<-be.built
		time.Sleep(120 * time.Millisecond) // two frames: the new view is flushed
	}
	for i := 0; i < 5; i++ { // the first frames paint everything
		second()
	}
	start := out.n.Load()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		second()
	}
	b.StopTimer()
	p.Quit()
	<-done
	full := len(m.View())
	b.ReportMetric(float64(out.n.Load()-start)/float64(b.N), "B/s")
	b.ReportMetric(float64(full), "full-frame-B")
}
