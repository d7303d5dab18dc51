package diagnose_test

import (
	"strings"
	"testing"

	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/sources/diagnose"
	"github.com/pdtop/pdtop/sources/sim"
)

// TestRestartOneFigure plays the demo's prefill-restart (smg, one
// replica, as `pdtop demo --scenario prefill-restart`) second by second
// from just before prefill-0 goes down (1:30) until its cache has warmed
// for a minute, and checks on every snapshot:
//   - while it does not answer, its verdict says so ("stale: …"), never a
//     comparison drawn from its last figures;
//   - once back, its row hit (WorkerView.Hit) counts since the restart
//     event, is n/a until enough tokens have been seen, and is the very
//     figure its verdict judges;
//   - the verdict's "restarted Ns ago" is the age of the restart event
//     (TargetStatus.LastRestart), formatted as the panels format it.
func TestRestartOneFigure(t *testing.T) {
	t.Parallel()
	r := newFleetRun(t, sim.Config{Seed: 1, Prefill: 2, Decode: 2, Replicas: 1,
		Gateway: sim.GatewaySMG, Scenario: sim.ScenarioPrefillRestart})
	r.advance(85)
	var stale, na, judged int
	for sec := 86; sec <= 180; sec++ {
		r.advance(1)
		s := r.snapshot()
		w := workerOf(t, s, "prefill-0")
		v := verdictOf(t, s, "prefill-0")
		switch {
		case w.Health != sources.Up:
			stale++
			if !strings.HasPrefix(v.Verdict, w.Health.String()+":") || v.GapKnown || len(v.Causes) > 0 {
				t.Fatalf("%ds: %s worker judged on its last figures: %+v", sec, w.Health, v)
			}
		case w.Restarted:
			var ev *sources.Event
			for i := range s.Events {
				if e := &s.Events[i]; e.Kind == "restart" && e.TargetID == w.ID {
					ev = e
				}
			}
			if ev == nil || !w.Hit.Since.Equal(ev.Time) || !w.LastRestart.Equal(ev.Time) {
				t.Fatalf("%ds: hit since %v, last restart %v, restart event %+v: want one time", sec, w.Hit.Since, w.LastRestart, ev)
			}
			if v.Actual != w.Hit {
				t.Fatalf("%ds: the verdict judges %+v, the row shows %+v", sec, v.Actual, w.Hit)
			}
			if !w.Hit.Present {
				na++
				if w.Hit.Total >= sources.MinTokensSinceRestart || !strings.Contains(v.Verdict, "since the restart") {
					t.Fatalf("%ds: n/a hit with %v tokens, verdict %q", sec, w.Hit.Total, v.Verdict)
				}
				continue
			}
			judged++
			if w.Hit.Total < sources.MinTokensSinceRestart {
				t.Fatalf("%ds: hit shown from %v tokens", sec, w.Hit.Total)
			}
			if !strings.Contains(v.Verdict, "hit "+diagnose.Pct(w.Hit.Ratio)+" since the restart") {
				t.Fatalf("%ds: row hit %s, verdict %q", sec, diagnose.Pct(w.Hit.Ratio), v.Verdict)
			}
			// The window figure (old warm cache + new cold one) stays
			// apart, for the pool's sums; early on it spans many more
			// tokens.
			if w.HitWindow.Total < w.Hit.Total || sec < 130 && w.HitWindow.Total < 2*w.Hit.Total {
				t.Fatalf("%ds: window %+v should span more tokens than since the restart %+v", sec, w.HitWindow, w.Hit)
			}
			if want := "restarted " + sources.FormatAge(s.Time.Sub(w.LastRestart)) + " ago"; strings.Contains(v.Verdict, "restarted ") && !strings.Contains(v.Verdict, want) {
				t.Fatalf("%ds: verdict %q does not say %q", sec, v.Verdict, want)
			}
		}
	}
	// The scenario passes through every phase.
	if stale == 0 || na == 0 || judged == 0 {
		t.Fatalf("phases seen: stale %d, n/a %d, judged %d", stale, na, judged)
	}
}

func workerOf(t *testing.T, s *sources.Snapshot, name string) *sources.WorkerView {
	t.Helper()
	for i := range s.Workers {
		if s.Workers[i].Name == name {
			return &s.Workers[i]
		}
	}
	t.Fatalf("no worker %s", name)
	return nil
}
