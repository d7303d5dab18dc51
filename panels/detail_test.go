package panels

import (
	"math"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/themes"
)

// sampleDetail is a backend's detail for the sample's first worker.
func sampleDetail(s *sources.Snapshot) *sources.WorkerDetail {
	w := &s.Workers[0]
	d := &sources.WorkerDetail{TargetID: w.ID, Time: s.Time, Step: 3 * time.Second, Span: 5 * time.Minute,
		History: map[sources.Signal][]float64{}, P50: map[sources.Signal][]float64{}, P99: map[sources.Signal][]float64{},
		Restarts: []sources.Restart{{Time: s.Time.Add(-time.Minute), Reason: "new scheduler pid 4242"}},
		Sources:  map[sources.Signal]string{}}
	for sig := range w.Readings {
		d.History[sig] = wave(100, 5, 3, 20, 40, 45)
	}
	for sig := range w.Dists {
		d.P99[sig] = wave(100, 0.2, 0.1, 30, -1, -1)
	}
	d.HitHistory = wave(100, 0.5, 0.3, 25, -1, -1)
	return d
}

// drillText is the whole drill-down at w×h, scrolled page by page.
func drillText(d *Detail, h int) string {
	var b strings.Builder
	for i := 0; i < 50; i++ {
		b.WriteString(d.View() + "\n")
		d, _ = d.Update(tea.KeyMsg{Type: tea.KeyPgDown})
	}
	return b.String()
}

// TestDetailShowsEverySignalWithItsSource: at 80 and 140 columns every
// reading and distribution of the worker is listed with its raw metric
// name, and the restart, the replicas' view and the predicted hit are
// there.
func TestDetailShowsEverySignalWithItsSource(t *testing.T) {
	s := sampleSnapshot()
	w := &s.Workers[0]
	for _, width := range []int{80, 140} {
		d := NewDetail(themes.Default())
		d.SetTarget(w.ID)
		d.SetSnapshot(s)
		d.SetDetail(sampleDetail(s))
		d.SetSize(width, 24)
		all := drillText(d, 24)
		for sig, r := range w.Readings {
			if !strings.Contains(all, sig.Info().Name) || r.Source != "" && !strings.Contains(all, r.Source) {
				t.Errorf("%d cols: %s (%s) missing", width, sig.Info().Name, r.Source)
			}
		}
		for sig, q := range w.Dists {
			if q.Present && !strings.Contains(all, q.Source) {
				t.Errorf("%d cols: distribution %s source %q missing", width, sig.Info().Name, q.Source)
			}
		}
		for _, want := range []string{"new scheduler pid 4242", "gw-a", "predicted", "replica-wide", "scrape health", "circuit", "closed"} {
			if !strings.Contains(all, want) {
				t.Errorf("%d cols: %q missing", width, want)
			}
		}
	}
}

// TestDetailExactSizeEverywhere: any size, any data, exactly w×h cells.
func TestDetailExactSizeEverywhere(t *testing.T) {
	snaps := invariantSnapshots()
	for name, s := range snaps {
		d := NewDetail(themes.Default())
		if s != nil && len(s.Workers) > 0 {
			d.SetTarget(s.Workers[0].ID)
			d.SetDetail(&sources.WorkerDetail{TargetID: s.Workers[0].ID,
				History: map[sources.Signal][]float64{sources.SigRunning: {math.NaN(), math.Inf(1), -1, 1e300}}})
		} else {
			d.SetTarget("gone")
		}
		d.SetSnapshot(s)
		for _, sz := range sizes() {
			if sz[1] > 30 && sz[0]%7 != 0 {
				continue
			}
			d.SetSize(sz[0], sz[1])
			checkBlock(t, name+"/detail/"+itoa(sz[0])+"x"+itoa(sz[1]), d.View(), sz[0], sz[1])
		}
	}
}

// TestDetailGoldenAndScroll: the drill-down at 80x24, and scrolling stops
// at the end.
func TestDetailGoldenAndScroll(t *testing.T) {
	s := sampleSnapshot()
	d := NewDetail(themes.NewStyles(themes.Mono()))
	d.SetTarget(s.Workers[0].ID)
	d.SetSnapshot(s)
	d.SetDetail(sampleDetail(s))
	d.SetSize(80, 24)
	golden(t, "detail_80x24", d.View())
	d, _ = d.Update(tea.KeyMsg{Type: tea.KeyEnd})
	end := d.View()
	d, _ = d.Update(tea.KeyMsg{Type: tea.KeyDown})
	if d.View() != end || strings.Contains(lastLine(end), "more") {
		t.Fatalf("scrolling past the end:\n%s", end)
	}
}
