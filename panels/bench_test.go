package panels

import (
	"testing"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/themes"
)

// benchFrame renders one frame: the summary line and the six panels at
// the given sizes, with SetSnapshot before every View so each panel draws
// for real (a new snapshot drops the cached view, as each refresh does).
func benchFrame(b *testing.B, profile termenv.Profile, w int, sizes [NumPanels][2]int, snap *sources.Snapshot) {
	lipgloss.SetColorProfile(profile)
	defer lipgloss.SetColorProfile(termenv.Ascii)
	st := themes.Default()
	ps := All(st)
	for i, p := range ps {
		p.SetSize(sizes[i][0], sizes[i][1])
	}
	state := SummaryState{Interval: time.Second, Window: 5 * time.Minute, Now: sampleTime, LastTick: sampleTime}
	b.ReportAllocs()
	b.ResetTimer()
	n := 0
	for i := 0; i < b.N; i++ {
		n += len(Summary(snap, st, w, state))
		for _, p := range ps {
			p.SetSnapshot(snap)
			n += len(p.View())
		}
	}
	b.ReportMetric(float64(n)/float64(b.N), "bytes/frame")
}

// grid200x60 is how a 200×60 terminal is laid out: the summary line, then
// the six panels in three columns and two rows.
var grid200x60 = [NumPanels][2]int{{66, 29}, {67, 29}, {67, 29}, {66, 30}, {67, 30}, {67, 30}}

// BenchmarkAllPanels200x60 is one full 200×60 frame: all six panels in
// their grid cells plus the summary, in 16 colours, without colour, and
// with 44 workers.
func BenchmarkAllPanels200x60(b *testing.B) {
	snap := sampleSnapshot()
	b.Run("ansi16", func(b *testing.B) { benchFrame(b, termenv.ANSI, 200, grid200x60, snap) })
	b.Run("ascii", func(b *testing.B) { benchFrame(b, termenv.Ascii, 200, grid200x60, snap) })
	b.Run("ansi16-44workers", func(b *testing.B) { benchFrame(b, termenv.ANSI, 200, grid200x60, bigSnapshot(20)) })
}

// BenchmarkEachPanelFull200x60 renders every panel at the full 200×60
// (six times a screen's cells: the cost of zooming into each in turn).
func BenchmarkEachPanelFull200x60(b *testing.B) {
	var full [NumPanels][2]int
	for i := range full {
		full[i] = [2]int{200, 60}
	}
	b.Run("ansi16", func(b *testing.B) { benchFrame(b, termenv.ANSI, 200, full, sampleSnapshot()) })
}

// BenchmarkCachedView is the cost of View when nothing changed (the ui
// calls it on every key press and tick).
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
