package panels

import (
	"testing"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/themes"
)

// benchFrame renders all six panels at w×h each with a fresh snapshot
// every iteration (SetSnapshot drops the cached view, so every View draws
// for real), plus the summary line.
func benchFrame(b *testing.B, profile termenv.Profile, w, h int, snap *sources.Snapshot) {
	lipgloss.SetColorProfile(profile)
	defer lipgloss.SetColorProfile(termenv.Ascii)
	st := themes.Default()
	ps := All(st)
	for _, p := range ps {
		p.SetSize(w, h)
	}
	state := SummaryState{Interval: time.Second, Window: 5 * time.Minute, Now: sampleTime, LastTick: sampleTime}
	b.ReportAllocs()
	b.ResetTimer()
	n := 0
	for i := 0; i < b.N; i++ {
		for _, p := range ps {
			p.SetSnapshot(snap)
			n += len(p.View())
		}
		n += len(Summary(snap, st, w, state))
	}
	b.ReportMetric(float64(n)/float64(b.N), "bytes/frame")
}

// BenchmarkAllPanels200x60 renders all six panels, each at 200×60 (six
// times the cells of one 200×60 screen), in 16 colours and without colour.
func BenchmarkAllPanels200x60(b *testing.B) {
	snap := sampleSnapshot()
	b.Run("ansi16", func(b *testing.B) { benchFrame(b, termenv.ANSI, 200, 60, snap) })
	b.Run("ascii", func(b *testing.B) { benchFrame(b, termenv.Ascii, 200, 60, snap) })
}

// BenchmarkGridFrame200x60 renders one 200×60 screen as the ui lays it
// out: six panels of 66×29 in a 3×2 grid, plus the summary line.
func BenchmarkGridFrame200x60(b *testing.B) {
	snap := sampleSnapshot()
	b.Run("ansi16", func(b *testing.B) { benchFrame(b, termenv.ANSI, 66, 29, snap) })
	b.Run("ansi16-40workers", func(b *testing.B) { benchFrame(b, termenv.ANSI, 66, 29, bigSnapshot(20)) })
}

// BenchmarkCachedView is the cost of View when nothing changed (the ui
// calls it on every key and tick).
func BenchmarkCachedView(b *testing.B) {
	ps := All(themes.Default())
	snap := sampleSnapshot()
	for _, p := range ps {
		p.SetSize(200, 60)
		p.SetSnapshot(snap)
		p.View()
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, p := range ps {
			_ = p.View()
		}
	}
}
